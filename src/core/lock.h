/* SPDX-License-Identifier: MIT */
/*
 * The library's mutex: a pthread mutex that, in debug builds, remembers its owner so that code
 * whose comment says "lock held" can assert it (the kernel's lockdep_assert_held()).
 *
 * Release builds: exactly a pthread_mutex_t and inline calls to it.
 * Debug builds (GRACE_DEBUG): also the owner's thread id, set after lock and cleared before
 * unlock by the owner itself; grace__lock_assert_held() aborts with a message naming the
 * function whose precondition failed when the caller is not the owner.
 */
#ifndef GRACE_SRC_LOCK_H
#define GRACE_SRC_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/sys.h"

struct grace__lock {
	pthread_mutex_t m;
#if GRACE__LIB_DEBUG
	int owner; /* tid of the holder, 0 when free: written only by the holder */
#endif
};

#if GRACE__LIB_DEBUG
#define GRACE__LOCK_INIT                     \
	{                                    \
		PTHREAD_MUTEX_INITIALIZER, 0 \
	}
#else
#define GRACE__LOCK_INIT                  \
	{                                 \
		PTHREAD_MUTEX_INITIALIZER \
	}
#endif

static inline void grace__lock_init(struct grace__lock *l)
{
	pthread_mutex_init(&l->m, NULL);
#if GRACE__LIB_DEBUG
	l->owner = 0;
#endif
}

static inline void grace__lock_destroy(struct grace__lock *l)
{
	pthread_mutex_destroy(&l->m);
}

static inline void grace__lock(struct grace__lock *l)
{
	pthread_mutex_lock(&l->m);
#if GRACE__LIB_DEBUG
	/* Relaxed: only the holder writes it; other threads read it only to report. */
	grace_store_relaxed(&l->owner, grace__gettid());
#endif
}

static inline bool grace__trylock(struct grace__lock *l)
{
	if (pthread_mutex_trylock(&l->m) != 0)
		return false;
#if GRACE__LIB_DEBUG
	grace_store_relaxed(&l->owner, grace__gettid());
#endif
	return true;
}

static inline void grace__unlock(struct grace__lock *l)
{
#if GRACE__LIB_DEBUG
	grace_store_relaxed(&l->owner, 0);
#endif
	pthread_mutex_unlock(&l->m);
}

/* fork() child: the lock may be held by a thread that does not exist here; make it free. */
static inline void grace__lock_reinit(struct grace__lock *l)
{
	grace__lock_init(l);
}

#if GRACE__LIB_DEBUG
#define grace__lock_assert_held(l)                                                           \
	do {                                                                                 \
		if (grace_load_relaxed(&(l)->owner) != grace__gettid())                      \
			grace__fatal(__func__, "called without holding %s (held by %d)", #l, \
				     grace_load_relaxed(&(l)->owner));                       \
	} while (0)
#else
#define grace__lock_assert_held(l) ((void)(l))
#endif

#endif
