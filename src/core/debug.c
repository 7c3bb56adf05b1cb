/* SPDX-License-Identifier: MIT */
/* Debug-build checks called from the inline headers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/pointer.h>

#include "core/debug.h"
#include "core/diag.h"
#include "core/lock.h"
#include "core/options.h"

#if GRACE__LIB_DEBUG
/* The mutexes each thread holds through grace__mutex_lock() (core/lock.h): one record for the
 * whole library. The default TLS model of a shared object: not the static block that a
 * dlopen() of the library must find room in. */
__thread struct grace__mutex_held grace__mutex_held;

/* The call whose span this thread is in (NULL: none), for the check and the report. Relaxed,
 * with signal fences: only a handler on this thread reads it; the fences keep the compiler from
 * moving the stores across the span's work (nothing else is ordered). */
static __thread const char *span_call;

void grace__dbg_span_enter(const char *call, const char *what)
{
	const char *in = grace_load_relaxed(&span_call);

	if (in) {
		/* Inside fork, a prepare handler registered before the library's runs inside its
		 * span too (pthread_atfork() runs prepare handlers in reverse order). */
		grace__misuse_fatal(call,
				    "called while this thread is inside %s (from a signal handler "
				    "that interrupted it%s): %s is not async-signal-safe",
				    in, strcmp(in, "fork") == 0 ? ", or from a fork handler" : "",
				    what);
	}
	grace_store_relaxed(&span_call, call);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void grace__dbg_span_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	grace_store_relaxed(&span_call, (const char *)NULL);
}
#endif

/* Other flavors (srcu) count their open sections here in debug builds. */
GRACE_API __thread unsigned int grace__dbg_extra_sections GRACE_TLS_IE;

/* Non-zero when GRACE_TEST_PAUSE, at start-up, names the site "rcu_lock" (debug builds of the
 * library only): the inline rcu_read_lock() of a program compiled with GRACE_DEBUG tests it
 * before calling grace__test_pause("rcu_lock") (rcu.h), so that site costs the others a load.
 * Exported in every build, so such a program also links against a release library, where it
 * stays 0. Written once by start-up (grace__init()), before the program's threads run
 * sections. The other sites read the variable at their first pass (tests set it in a fork
 * child); "rcu_lock" needs it in the environment when the process starts. */
GRACE_API int grace__test_pause_on;

#ifdef GRACE_DEBUG
#define PAUSE_SITES 4
static pthread_once_t pause_once = PTHREAD_ONCE_INIT;
static struct {
	char site[32];
	long us;
} pauses[PAUSE_SITES];

/* GRACE_TEST_PAUSE=<site>:<us>[,<site>:<us>...]: up to PAUSE_SITES sites. A malformed list is
 * ignored as a whole, with a warning (a test that sets it wrong must not half-run). */
static void pause_init(void)
{
	const char *e = grace__opt_str(GRACE__OPT_GRACE_TEST_PAUSE);
	const char *p = e;

	if (!e || !*e)
		return;
	for (int n = 0; *p; n++) {
		const char *colon = strchr(p, ':');
		char *end;

		if (n == PAUSE_SITES || !colon || colon == p ||
		    (size_t)(colon - p) >= sizeof(pauses[n].site) ||
		    memchr(p, ',', (size_t)(colon - p)))
			goto bad;
		long us = strtol(colon + 1, &end, 10);
		if ((*end && (*end != ',' || !end[1])) || end == colon + 1 || us <= 0 ||
		    us > 100000000)
			goto bad;
		memcpy(pauses[n].site, p, (size_t)(colon - p));
		pauses[n].us = us;
		p = *end ? end + 1 : end;
	}
	return;
bad:
	memset(pauses, 0, sizeof(pauses));
	grace__warn("GRACE_TEST_PAUSE=%s: expected <site>:<1..100000000 microseconds>, up to %d "
		    "separated by commas",
		    e, PAUSE_SITES);
}

void grace__test_pause_init(void)
{
	const char *e = grace__opt_str(GRACE__OPT_GRACE_TEST_PAUSE);

	if (e && strstr(e, "rcu_lock:"))
		grace_store_relaxed(&grace__test_pause_on, 1);
}

long grace__test_pause_us(const char *site)
{
	/* pthread_once orders pause_init's stores before these loads, in every thread. */
	pthread_once(&pause_once, pause_init);
	for (int i = 0; i < PAUSE_SITES && pauses[i].us; i++)
		if (strcmp(site, pauses[i].site) == 0)
			return pauses[i].us;
	return 0;
}

GRACE_API void grace__test_pause(const char *site)
{
	/* pthread_once orders pause_init's stores before these loads, in every thread. */
	pthread_once(&pause_once, pause_init);
	for (int i = 0; i < PAUSE_SITES && pauses[i].us; i++) {
		if (strcmp(site, pauses[i].site) == 0) {
			struct timespec ts = { pauses[i].us / 1000000,
					       (pauses[i].us % 1000000) * 1000 };
			nanosleep(&ts, NULL);
			return;
		}
	}
}
#else
GRACE_API void grace__test_pause(const char *site)
{
	(void)site; /* release builds have no pause sites (grace__test_pause_on stays 0) */
}
#endif

void grace__debug_deref_outside(const char *call, const char *file, int line)
{
	grace__misuse_fatal(call,
			    "%s:%d: called outside any read-side section "
			    "(use rcu_dereference_protected() on the update side)",
			    file, line);
}
