/* SPDX-License-Identifier: MIT */
/*
 * The library's mutex: a pthread mutex that, in debug builds, remembers its owner so that code
 * whose comment says "lock held" can assert it (the kernel's lockdep_assert_held()).
 *
 * Release builds: exactly a pthread_mutex_t and inline calls to it.
 * Debug builds (GRACE_DEBUG): also the owner's thread id, set after lock and cleared before
 * unlock by the owner itself; grace__lock_assert_held() aborts with a message naming the
 * function whose precondition failed when the caller is not the owner.
 *
 * Why two kinds (struct grace__lock, then grace__mutex_lock() on a plain pthread_mutex_t
 * below): a lock inside a public struct is part of the ABI, and its layout cannot grow the owner
 * field (struct grace_idr's `lock`, include/grace/idr.h). For such a mutex the debug build
 * records instead which mutexes the calling thread holds, in a small thread-local array, so that
 * grace__mutex_assert_held() checks the same precondition with no field. Private locks use
 * struct grace__lock (one load to check, no per-thread bound); public ones the grace__mutex_*
 * calls. Release builds of both are the bare pthread calls, but for one thing.
 *
 * Self-deadlock (every build): a lock is tried first, and a thread that finds it taken checks,
 * out of line (grace__lock_wait()), that it is not the holder before it waits. A library that
 * takes its locks in a fixed order can hold one across a call into itself only through a
 * signal handler that interrupted a call of grace on the same thread, or through a program's
 * pthread_atfork() handler that runs inside grace's fork handlers (registered before them, so
 * that they run after grace's prepare handler has taken every lock): both are misuse, reported
 * with a message that says which, and an abort, instead of a hang without a word. The holder is
 * glibc's record of the mutex's owner in release builds (elsewhere no check), the lock's own
 * owner field in debug builds, and the thread's mark of the operation it is inside
 * (grace__lock_op, below), which covers the windows in which the owner lags the lock word. An
 * uncontended lock costs what pthread_mutex_lock() costs, and a thread-local load and two
 * stores.
 */
#ifndef GRACE_SRC_LOCK_H
#define GRACE_SRC_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/sys.h"

/* Non-zero on the thread inside fork(), from the end of grace's prepare handler to the start of
 * its parent or child handler: every lock of the library is held by this thread (src/init.c). */
extern __thread unsigned char grace__fork_holds;

/*
 * The mutex whose lock or unlock this thread is inside (NULL: none). The owner a mutex records
 * (glibc's, or the debug field) lags its lock word: glibc's trylock takes the word before it
 * stores the owner and its unlock clears the owner before it drops the word, and the debug
 * field is written after the lock and cleared before the unlock. A signal handler that
 * interrupts its thread in one of those windows finds the mutex taken and no owner: it waited
 * for its own thread, forever. So every lock, trylock and unlock marks its mutex here for its
 * length (grace__lock_op_enter(), grace__lock_op_leave()), and a lock that finds its mutex taken while the
 * call it interrupted is inside an operation on the same mutex reports the self-deadlock too.
 * Only this thread reads it (its own handlers): signal fences order it.
 */
extern __thread const void *grace__lock_op GRACE_TLS_IE;

/* Start an operation on m: returns the one it interrupted (a signal handler's) or NULL, which
 * grace__lock_op_leave() puts back. The signal fence keeps the mark before the operation, so
 * that a handler of this thread that lands inside it finds the mark: it pairs with the plain
 * load of grace__lock_op at the start of the handler's own operation. */
static inline const void *grace__lock_op_enter(const void *m)
{
	const void *prev = grace__lock_op;
	grace__lock_op = m;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return prev;
}

/* The signal fence keeps the operation before the clear (pairs with the same load). */
static inline void grace__lock_op_leave(const void *prev)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	grace__lock_op = prev;
}

/* The caller found m taken. `owner` (tid, 0: unknown) holds it, or the caller interrupted an
 * operation of its own thread on m (`interrupted`): report a self-deadlock (what names the
 * lock), else wait for m. Out of line, cold. */
void grace__lock_wait(pthread_mutex_t *m, int owner, bool interrupted, const char *what);
/* Report a thread about to wait for something it holds itself (what), saying from where such a
 * call comes, and abort. */
GRACE_NORETURN void grace__self_deadlock(const char *what);

/* Who holds m, as far as the C library says (0: unknown). A hint read without ordering: only the
 * holder's own thread can find its tid there, and it wrote it itself. */
static inline int grace__mutex_owner_hint(pthread_mutex_t *m)
{
#ifdef __GLIBC__
	return __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
#else
	(void)m;
	return 0;
#endif
}

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

/* A lock of a given kind (e.g. PTHREAD_MUTEX_ADAPTIVE_NP): attr as for pthread_mutex_init(). */
static inline void grace__lock_init_attr(struct grace__lock *l, const pthread_mutexattr_t *attr)
{
	pthread_mutex_init(&l->m, attr);
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
	const void *prev = grace__lock_op_enter(&l->m);

	if (GRACE_UNLIKELY(pthread_mutex_trylock(&l->m) != 0)) {
#if GRACE__LIB_DEBUG
		grace__lock_wait(&l->m, grace_load_relaxed(&l->owner), prev == &l->m,
				 "a lock of the library");
#else
		grace__lock_wait(&l->m, grace__mutex_owner_hint(&l->m), prev == &l->m,
				 "a lock of the library");
#endif
	}
#if GRACE__LIB_DEBUG
	/* Relaxed: only the holder writes it; other threads read it only to report. */
	grace_store_relaxed(&l->owner, grace__gettid());
#endif
	grace__lock_op_leave(prev);
}

static inline bool grace__trylock(struct grace__lock *l)
{
	const void *prev = grace__lock_op_enter(&l->m);
	bool got = pthread_mutex_trylock(&l->m) == 0;
#if GRACE__LIB_DEBUG
	if (got)
		grace_store_relaxed(&l->owner, grace__gettid());
#endif
	grace__lock_op_leave(prev);
	return got;
}

static inline void grace__unlock(struct grace__lock *l)
{
	const void *prev = grace__lock_op_enter(&l->m);
#if GRACE__LIB_DEBUG
	grace_store_relaxed(&l->owner, 0);
#endif
	pthread_mutex_unlock(&l->m);
	grace__lock_op_leave(prev);
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

/*
 * A plain pthread_mutex_t that cannot hold an owner (a public struct's, see the top):
 * grace__mutex_lock(), grace__mutex_unlock() and grace__mutex_assert_held(), for mutexes of the
 * default (non-recursive) kind.
 *
 * Release builds: exactly pthread_mutex_lock() and pthread_mutex_unlock(); the assertion is
 * nothing.
 * Debug builds: each thread records the mutexes it holds through these calls in
 * grace__mutex_held (at most GRACE__MUTEX_HELD_MAX at once: a thread holds few), and aborts,
 * naming the calling function, on an assertion for a mutex it does not hold, a lock of one it
 * already holds (a self-deadlock), an unlock of one it does not hold, or a lock past the array's
 * bound (raise GRACE__MUTEX_HELD_MAX; nothing is written past it). A mutex taken with the bare
 * pthread call is not recorded: take and release a mutex through these calls everywhere.
 */
#if GRACE__LIB_DEBUG
#define GRACE__MUTEX_HELD_MAX 8

struct grace__mutex_held {
	unsigned int n;
	const pthread_mutex_t *m[GRACE__MUTEX_HELD_MAX];
};

/*
 * The calling thread's held mutexes: one record per thread for the whole library (a mutex locked
 * in one file is known held in another), defined once, in src/core/debug.c. Not a weak
 * definition here: each file's copy of it would keep its space in the library's static TLS
 * block, which a dlopen() of the library must find room for.
 */
extern __thread struct grace__mutex_held grace__mutex_held;

/* Index of m in the calling thread's record, or -1. */
static inline int grace__mutex_find(const pthread_mutex_t *m)
{
	for (int i = (int)grace__mutex_held.n - 1; i >= 0; i--)
		if (grace__mutex_held.m[i] == m)
			return i;
	return -1;
}

static inline void grace__mutex_lock_dbg(pthread_mutex_t *m, const char *name, const char *func)
{
	struct grace__mutex_held *h = &grace__mutex_held;

	(void)func;
	const void *prev = grace__lock_op_enter(m);
	if (grace__mutex_find(m) >= 0 || prev == m)
		grace__self_deadlock(name);
	if (h->n >= GRACE__MUTEX_HELD_MAX)
		grace__fatal(
			func,
			"grace__mutex_lock(%s): this thread already holds %u mutexes, the most "
			"grace__mutex_held records (raise GRACE__MUTEX_HELD_MAX in core/lock.h)",
			name, h->n);
	pthread_mutex_lock(m);
	h->m[h->n++] = m;
	grace__lock_op_leave(prev);
}

static inline void grace__mutex_unlock_dbg(pthread_mutex_t *m, const char *name, const char *func)
{
	struct grace__mutex_held *h = &grace__mutex_held;
	int i = grace__mutex_find(m);

	if (i < 0)
		grace__fatal(func, "grace__mutex_unlock(%s): this thread does not hold it", name);
	const void *prev = grace__lock_op_enter(m);
	/* Unlocks may come in any order: close the gap. */
	for (unsigned int j = (unsigned int)i + 1; j < h->n; j++)
		h->m[j - 1] = h->m[j];
	h->n--;
	pthread_mutex_unlock(m);
	grace__lock_op_leave(prev);
}

#define grace__mutex_lock(m) grace__mutex_lock_dbg((m), #m, __func__)
#define grace__mutex_unlock(m) grace__mutex_unlock_dbg((m), #m, __func__)
#define grace__mutex_assert_held(m)                                              \
	do {                                                                     \
		if (grace__mutex_find(m) < 0)                                    \
			grace__fatal(__func__, "called without holding %s", #m); \
	} while (0)
#else
static inline void grace__mutex_lock(pthread_mutex_t *m)
{
	const void *prev = grace__lock_op_enter(m);
	if (GRACE_UNLIKELY(pthread_mutex_trylock(m) != 0))
		grace__lock_wait(m, grace__mutex_owner_hint(m), prev == m, "a lock of the library");
	grace__lock_op_leave(prev);
}

static inline void grace__mutex_unlock(pthread_mutex_t *m)
{
	const void *prev = grace__lock_op_enter(m);
	pthread_mutex_unlock(m);
	grace__lock_op_leave(prev);
}

#define grace__mutex_assert_held(m) ((void)(m))
#endif

#endif
