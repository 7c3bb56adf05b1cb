/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu diagnostics: misuse reports in grace's format ("grace: misuse: CALL: ...", then
 * abort), the QSBR debug bookkeeping, and a stall handler that explains grace's stall reports in
 * liburcu's terms (which call the stalled thread is missing).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <grace/diag.h>

#include "compat.h"

GRACE_API __thread unsigned int grace_urcu__qsbr_registered GRACE_TLS_IE;
GRACE_API __thread unsigned int grace_urcu__qsbr_nest GRACE_TLS_IE;

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void vreport(const char *kind, const char *call, const char *fmt, va_list ap)
{
	char buf[640];
	int n = snprintf(buf, sizeof(buf), "grace: %s: %s: ", kind, call);

	if (n < 0 || n >= (int)sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	/* One write of a prepared line: reports from several threads do not interleave. */
	fprintf(stderr, "%s (thread %d)\n", buf, gettid_());
	fflush(stderr);
}

void grace_urcu__misuse(const char *call, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("misuse", call, fmt, ap);
	va_end(ap);
	abort();
}

void grace_urcu__warn(const char *call, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning", call, fmt, ap);
	va_end(ap);
}

void grace_urcu__qsbr_register(void)
{
	grace_qsbr_register_thread();
	grace_urcu__qsbr_registered = 1;
}

/* The liburcu flavors (memb, mb, signal) this thread registered with explicitly: one bit each. */
/* General-dynamic TLS (not initial-exec): registration is no hot path, and dlopen() of this
 * library must not need more of the static TLS block (test compat_lfht_dlclose). */
static __thread unsigned int registered_with;

void grace_urcu__register(int flavor, const char *call)
{
	unsigned int bit = 1u << (unsigned int)flavor;

	(void)call;
	if (registered_with & bit) {
		/* Twice with one flavor: grace's own registration reports it ("thread already
		 * registered", naming rcu_register_thread; abort in debug builds), as liburcu
		 * asserts. */
		grace_rcu_register_thread();
		return;
	}
	if (!registered_with)
		grace_rcu_register_thread();
	registered_with |= bit;
}

void grace_urcu__unregister(int flavor)
{
	unsigned int bit = 1u << (unsigned int)flavor;

	if (!(registered_with & bit))
		return; /* as liburcu: nothing to undo */
	registered_with &= ~bit;
	if (!registered_with)
		grace_rcu_unregister_thread();
}

void grace_urcu__qsbr_unregister(void)
{
	grace_urcu__qsbr_registered = 0;
	grace_urcu__qsbr_nest = 0;
	grace_qsbr_unregister_thread();
}

void grace_urcu__qsbr_bad_reader(const char *call)
{
	if (!grace_urcu__qsbr_registered)
		grace_urcu__misuse(call,
				   "QSBR thread not registered: call rcu_register_thread() "
				   "(urcu_qsbr_register_thread()) first; grace periods do not wait "
				   "for it, so what it reads may be freed under it");
	grace_urcu__misuse(call, "QSBR thread is offline (after rcu_thread_offline()): call "
				 "rcu_thread_online() first; grace periods do not wait for it");
}

/*
 * grace reports a reader that holds a grace period past the stall timeout
 * (GRACE_STALL_TIMEOUT_MS, default 10 s). For a program written for liburcu, say which call
 * the thread is missing: a QSBR thread that never reports a quiescent state (liburcu would wait
 * silently forever), or a reader that stays inside rcu_read_lock(). A program that installs
 * its own handler with grace_set_stall_handler() replaces this one.
 */
static void stall_handler(const struct grace_stall_info *info, void *arg)
{
	double s = (double)info->duration_ns / 1e9;
	char tid[32];

	(void)arg;
	if (info->tid >= 0)
		snprintf(tid, sizeof(tid), "thread %d", info->tid);
	else
		snprintf(tid, sizeof(tid), "a reader");
	if (info->flavor && info->flavor[0] == 'q')
		fprintf(stderr,
			"grace: stall: rcu_quiescent_state: QSBR %s has not reported a quiescent "
			"state for %.1f s: call rcu_quiescent_state() regularly and "
			"rcu_thread_offline() around blocking calls; synchronize_rcu() and "
			"call_rcu() wait for it (grace period %lu)\n",
			tid, s, info->gp_cookie);
	else
		fprintf(stderr,
			"grace: stall: rcu_read_unlock: %s has been inside rcu_read_lock() for %.1f s; "
			"synchronize_rcu() and call_rcu() wait for it (grace period %lu, flavor %s)\n",
			tid, s, info->gp_cookie, info->flavor ? info->flavor : "?");
	fflush(stderr);
}

__attribute__((constructor)) static void grace_urcu_init(void)
{
	grace_set_stall_handler(stall_handler, NULL);
}
