/* SPDX-License-Identifier: MIT */
/*
 * Debug builds: a set of pointers under its own lock, for the checks that report an object
 * queued twice before it is freed twice (free_rcu() and rcu_retire() in engine/free.c, the
 * hazard pointers' retire in hazptr/hazptr.c). Open addressing with tombstones, grown on demand;
 * when memory for it runs out the check is skipped, never the caller's call. Fork: the owner's
 * prepare handler takes `lock` (grace__lock()) and both the parent's and child's handlers drop it.
 */
#ifndef GRACE_SRC_CORE_PTRSET_H
#define GRACE_SRC_CORE_PTRSET_H

#include <stddef.h>
#include <stdint.h>

#include "core/lock.h"

#if GRACE__LIB_DEBUG
struct grace__ptrset {
	struct grace__lock lock;
	uintptr_t *tab; /* 0 empty, GRACE__PTRSET_TOMB deleted, else a pointer */
	size_t cap, used, live;
};

#define GRACE__PTRSET_INIT                      \
	{                                       \
		GRACE__LOCK_INIT, NULL, 0, 0, 0 \
	}

/* Add p. Returns false, with the lock dropped, when p is in the set already: the caller then
 * reports its misuse. */
bool grace__ptrset_add(struct grace__ptrset *s, const void *p);
/* Remove p (nothing if it is not there). */
void grace__ptrset_del(struct grace__ptrset *s, const void *p);
#endif

#endif /* GRACE_SRC_CORE_PTRSET_H */
