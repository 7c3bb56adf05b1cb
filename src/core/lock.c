/* SPDX-License-Identifier: MIT */
/* The contended path of the library's mutexes: the self-deadlock check (core/lock.h). */
#include "core/lock.h"

#include <grace/arch/atomic.h>

__thread unsigned char grace__fork_holds;
__thread const void *grace__lock_op GRACE_TLS_IE;

GRACE_NORETURN void grace__self_deadlock(const char *what)
{
	if (grace_load_relaxed(&grace__fork_holds))
		grace__misuse_fatal(
			"fork",
			"a call of grace from inside fork() would wait for %s, which this thread "
			"holds: the library's fork handlers hold every lock of grace until fork() "
			"returns, and this call comes from a pthread_atfork() handler registered "
			"before grace's (prepare handlers run in the reverse order of registration, "
			"so it runs inside them) or from a signal handler",
			what);
	grace__misuse_fatal("signal handler",
			    "a call of grace would wait for %s, which this thread holds: it comes "
			    "from a signal handler that interrupted a call of grace on this thread "
			    "(grace's calls are not async-signal-safe)",
			    what);
}

GRACE_NOINLINE void grace__lock_wait(pthread_mutex_t *m, int owner, bool interrupted,
				     const char *what)
{
	/* interrupted: this call comes from a signal handler inside its thread's own lock or
	 * unlock of m (core/lock.h, grace__lock_op), which may hold m with no owner recorded
	 * yet, or any more. */
	if (interrupted || (owner != 0 && owner == grace__gettid()))
		grace__self_deadlock(what);
	pthread_mutex_lock(m);
}
