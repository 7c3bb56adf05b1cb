/* SPDX-License-Identifier: MIT */
#include "core/diag.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <grace/arch/atomic.h>

#include "core/options.h"
#include "core/sys.h"

/*
 * Reports are never cancellation points. stdio's write() is one, and the library reports from
 * inside its own operations: a grace-period driver names a stalled reader with the grace period
 * still marked "in progress" (core/gp.c), a caller of free_rcu_mightsleep() warns while its
 * QSBR thread is offline for the wait. A thread cancelled there would unwind out of the library
 * mid-operation and leave that state behind (every later synchronize_rcu() of the process
 * sleeping for ever on a driver that no longer exists). Cancellation is disabled around each
 * report, the stall handler included, and restored after it: a pending cancel then acts at the
 * caller's next cancellation point, outside the library.
 */
static int cancel_off(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static void cancel_restore(int old)
{
	int ignored;

	pthread_setcancelstate(old, &ignored);
}

static void vreport(const char *kind, const char *call, const char *fmt, va_list ap)
{
	char buf[512];
	int n = 0;
	int cs = cancel_off();

	if (call)
		n = snprintf(buf, sizeof(buf), "grace: %s: %s: ", kind, call);
	else
		n = snprintf(buf, sizeof(buf), "grace: %s: ", kind);
	if (n < 0 || n >= (int)sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	/* One fputs of a prepared line: reports from several threads do not interleave. */
	fprintf(stderr, "%s (thread %d)\n", buf, grace__gettid());
	fflush(stderr);
	cancel_restore(cs);
}

void grace__fatal(const char *call, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("fatal", call, fmt, ap);
	va_end(ap);
	abort();
}

void grace__misuse(const char *call, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("misuse", call, fmt, ap);
	va_end(ap);
	if (GRACE__LIB_DEBUG || grace__opt(GRACE__OPT_GRACE_ABORT_ON_MISUSE))
		abort();
}

void grace__misuse_fatal(const char *call, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("misuse", call, fmt, ap);
	va_end(ap);
	abort();
}

void grace__warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning", NULL, fmt, ap);
	va_end(ap);
}

/* ---- stall reports ---- */

static uint32_t stall_ms_set; /* 0: not set by the program yet */
static uint32_t stall_ms_value;
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;
static grace_stall_handler_t stall_fn;
static void *stall_arg;

void grace_set_stall_timeout_ms(unsigned int ms)
{
	grace_store_relaxed(&stall_ms_value, ms);
	grace_store_release(&stall_ms_set, 1u);
}

unsigned int grace_get_stall_timeout_ms(void)
{
	if (grace_load_acquire(&stall_ms_set))
		return grace_load_relaxed(&stall_ms_value);
	return (unsigned int)grace__opt(GRACE__OPT_GRACE_STALL_TIMEOUT_MS);
}

uint64_t grace__stall_timeout_ns(void)
{
	return (uint64_t)grace_get_stall_timeout_ms() * 1000000ull;
}

void grace_set_stall_handler(grace_stall_handler_t fn, void *arg)
{
	pthread_mutex_lock(&stall_lock);
	stall_fn = fn;
	stall_arg = arg;
	pthread_mutex_unlock(&stall_lock);
}

static void report_stall(const struct grace_stall_info *info)
{
	grace_stall_handler_t fn;
	void *arg;
	int cs = cancel_off(); /* see cancel_off(): the handler included */

	pthread_mutex_lock(&stall_lock);
	fn = stall_fn;
	arg = stall_arg;
	pthread_mutex_unlock(&stall_lock);
	if (fn) {
		fn(info, arg);
		cancel_restore(cs);
		return;
	}
	if (info->domain)
		fprintf(stderr,
			"grace: stall warning: %s readers of srcu_struct %p have held grace period %lu "
			"for %.3f s\n",
			info->flavor, info->domain, info->gp_cookie,
			(double)info->duration_ns / 1e9);
	else
		fprintf(stderr,
			"grace: stall warning: %s reader thread %d has held grace period %lu for "
			"%.3f s\n",
			info->flavor, info->tid, info->gp_cookie, (double)info->duration_ns / 1e9);
	fflush(stderr);
	cancel_restore(cs);
}

void grace__report_stall(const char *flavor, int tid, uint64_t duration_ns, unsigned long cookie)
{
	struct grace_stall_info info = { flavor, tid, duration_ns, cookie, NULL };
	report_stall(&info);
}

void grace__report_stall_domain(const char *flavor, const void *domain, uint64_t duration_ns,
				unsigned long cookie)
{
	struct grace_stall_info info = { flavor, -1, duration_ns, cookie, domain };
	report_stall(&info);
}
