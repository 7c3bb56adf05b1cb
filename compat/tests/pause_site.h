/* SPDX-License-Identifier: MIT */
/*
 * The compat tests that widen a window of the library with a debug pause site
 * (GRACE_TEST_PAUSE, src/core/debug.h): a millisecond sleep, and their main(), which names the
 * site before anything calls the library (the hook reads the variable once). Include after
 * "gtest_lite.h".
 */
#ifndef GRACE_COMPAT_TEST_PAUSE_SITE_H
#define GRACE_COMPAT_TEST_PAUSE_SITE_H
#include <stdlib.h>
#include <time.h>

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* spec: "<site>:<microseconds>". */
#define PAUSE_SITE_MAIN(spec)                          \
	int main(int argc, char **argv)                \
	{                                              \
		setenv("GRACE_TEST_PAUSE", (spec), 1); \
		return gt_main(argc, argv);            \
	}
#endif
