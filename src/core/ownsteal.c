/* SPDX-License-Identifier: MIT */
/* The contended path of the per-thread caches' spin lock (core/ownsteal.h). */
#include "core/ownsteal.h"

#include "core/lock.h"

GRACE_NOINLINE void grace__spin_lock_slow(uint32_t *lock)
{
	/* Inside fork(), past grace's prepare handler, this thread holds every cache's lock:
	 * a call that waits for one waits for itself (core/lock.h, "Self-deadlock"). */
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__fork_holds)))
		grace__self_deadlock("its per-thread cache");
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

GRACE_COLD GRACE_NORETURN void grace__own_take_fatal(const char *call, const char *what)
{
	grace__misuse_fatal(call,
			    "called inside a call of this thread on %s (from a signal handler that "
			    "interrupted it, or from a function that call runs): it would wait for "
			    "that call, which cannot end (deadlock)",
			    what);
}

GRACE_COLD GRACE_NORETURN void grace__own_busy_fatal(const char *call, const char *what)
{
	/* Inside fork(), past grace's prepare handler, the forking thread holds its own cache
	 * (busy held): the call comes from a pthread_atfork() handler registered before grace's
	 * or from a signal handler, which the fork message names (core/lock.h). */
	if (grace_load_relaxed(&grace__fork_holds))
		grace__self_deadlock(what);
	grace__misuse_fatal(call,
			    "called from a signal handler that interrupted a call of this thread: "
			    "%s is not async-signal-safe",
			    what);
}
