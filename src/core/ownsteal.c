/* SPDX-License-Identifier: MIT */
/* The contended path of the per-thread caches' spin lock (core/ownsteal.h). */
#include "core/ownsteal.h"

GRACE_NOINLINE void grace__spin_lock_slow(uint32_t *lock)
{
	for (unsigned int i = 0;; i++) {
		/* Acquire: pairs with the holder's release in grace__spin_unlock(). */
		if (grace_load_relaxed(lock) == 0 && grace_xchg(lock, 1u, __ATOMIC_ACQUIRE) == 0)
			return;
		if (i < 128)
			grace_cpu_relax();
		else
			sched_yield(); /* the holder was preempted: let it run */
	}
}
