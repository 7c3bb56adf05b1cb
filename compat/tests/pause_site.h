/* SPDX-License-Identifier: MIT */
/*
 * The compat tests that widen a window of the library with a debug pause site
 * (GRACE_TEST_PAUSE, src/core/debug.h): a millisecond sleep, and their main(), which names the
 * site before anything calls the library (the hook reads the variable once). Include after
 * "gtest_lite.h".
 */
#ifndef GRACE_COMPAT_TEST_PAUSE_SITE_H
#define GRACE_COMPAT_TEST_PAUSE_SITE_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/urcu-memb.h>

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait up to max_ms for *flag (set with a release store by a deferred function or a thread);
 * returns it. A bound on liveness, not a timing check. Acquire: what the setter did before. */
static inline int wait_flag(const int *flag, long max_ms)
{
	for (long i = 0; i < max_ms && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* The end of a pause-site test: every deferral has run, the thread's registrations are given
 * up. */
static inline void pause_site_test_done(void)
{
	urcu_memb_defer_barrier();
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();
}

/* Release builds: the window the test needs is widened only in debug builds. */
#define PAUSE_SITE_SKIPPED() \
	printf("  skipped: the window is widened only in debug builds (GRACE_TEST_PAUSE)\n")

/* spec: "<site>:<microseconds>". */
#define PAUSE_SITE_MAIN(spec)                          \
	int main(int argc, char **argv)                \
	{                                              \
		setenv("GRACE_TEST_PAUSE", (spec), 1); \
		return gt_main(argc, argv);            \
	}
#endif
