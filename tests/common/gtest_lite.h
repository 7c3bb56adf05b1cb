/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness shared by grace's tests (C and C++): CHECK macros that report the
 * file, line and expression; TEST() registration; death tests that run a function in a child
 * process and check its exit status and stderr. Each test binary prints one line per test and
 * a closing "N passed, N failed" line.
 */
#ifndef GRACE_TEST_HARNESS_H
#define GRACE_TEST_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
#define GT_EXTERN_C extern "C"
#else
#define GT_EXTERN_C
#endif

typedef void (*gt_fn)(void);
struct gt_test {
	const char *name;
	gt_fn fn;
};
#define GT_MAX_TESTS 256
static struct gt_test gt_tests[GT_MAX_TESTS];
static int gt_ntests;
static int gt_failed_current;

static inline void gt_register(const char *name, gt_fn fn)
{
	if (gt_ntests < GT_MAX_TESTS) {
		gt_tests[gt_ntests].name = name;
		gt_tests[gt_ntests].fn = fn;
		gt_ntests++;
	}
}

#define TEST(name)                                                   \
	static void test_##name(void);                               \
	__attribute__((constructor)) static void gt_reg_##name(void) \
	{                                                            \
		gt_register(#name, test_##name);                     \
	}                                                            \
	static void test_##name(void)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			gt_failed_current = 1;                                                     \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define CHECK_MSG(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			gt_failed_current = 1;                                                     \
			return;                                                                    \
		}                                                                                  \
	} while (0)
/* Check in a helper thread or function that cannot return early: abort the process. */
#define REQUIRE(cond)                                                                        \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                      \
			abort();                                                             \
		}                                                                            \
	} while (0)

static inline uint64_t gt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void gt_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

/* Run fn in a child process; capture stderr. Returns the wait status; *out gets stderr text. */
static inline int gt_run_child(void (*fn)(void *), void *arg, char *out, size_t outsz)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 2);
		signal(SIGABRT, SIG_DFL);
		fn(arg);
		fflush(stderr);
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t k;
	while ((k = read(p[0], out + n, outsz - 1 - n)) > 0) {
		n += (size_t)k;
		if (n >= outsz - 1)
			break;
	}
	out[n] = 0;
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return st;
}

static inline int gt_main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < gt_ntests; i++) {
		if (only && strcmp(only, gt_tests[i].name) != 0)
			continue;
		gt_failed_current = 0;
		uint64_t t0 = gt_now_ns();
		printf("[ RUN  ] %s\n", gt_tests[i].name);
		gt_tests[i].fn();
		double ms = (double)(gt_now_ns() - t0) / 1e6;
		if (gt_failed_current) {
			printf("[ FAIL ] %s (%.1f ms)\n", gt_tests[i].name, ms);
			failed++;
		} else {
			printf("[  OK  ] %s (%.1f ms)\n", gt_tests[i].name, ms);
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define GT_MAIN()                           \
	int main(int argc, char **argv)     \
	{                                   \
		return gt_main(argc, argv); \
	}

#endif
