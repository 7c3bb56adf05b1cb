/* SPDX-License-Identifier: MIT */
/*
 * Death-test harness shared by every misuse test (tests/unit/test_misuse.c, the data
 * structures', grace-urcu's): each misuse runs in a child process (gt_run_child), and the test
 * checks how the child ended and that its message names the call the program made:
 *   MC_FATAL       message and abort in every build (a deadlock or corruption would follow);
 *   MC_MISUSE      message in every build; abort in debug builds, while in release builds the
 *                  call returns and the program goes on;
 *   MC_DEBUG_ONLY  a debug-build check: message and abort with GRACE_DEBUG, silence without;
 *   MC_DEBUG_HANG  as MC_DEBUG_ONLY, but without the check the misuse really hangs, so the
 *                  child is not run in release builds;
 *   MC_DEBUG_UB    as MC_DEBUG_HANG, for a misuse that is undefined behaviour without the check
 *                  (a double free).
 * The message looked for is MC_WANT_FMT with the call (default "misuse: CALL"; a file may
 * define it before including this one). Every child arms alarm(): a misuse that hangs instead of
 * being diagnosed fails the test. Include after gtest_lite.h.
 */
#ifndef GRACE_TEST_MISUSE_CHILD_H
#define GRACE_TEST_MISUSE_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef GRACE_DEBUG
#define MC_DEBUG_BUILD 1
#else
#define MC_DEBUG_BUILD 0
#endif

#ifndef MC_WANT_FMT
#define MC_WANT_FMT "misuse: %s"
#endif

enum mc_expect { MC_FATAL, MC_MISUSE, MC_DEBUG_ONLY, MC_DEBUG_HANG, MC_DEBUG_UB };

static void (*mc_child_fn)(void);

static void mc_trampoline(void *arg)
{
	(void)arg;
	unsetenv("GRACE_ABORT_ON_MISUSE");
	alarm(20);
	mc_child_fn();
}

/* How the child ended, against e: 0 if as expected. */
static int mc_check(int st, const char *out, enum mc_expect e, const char *call, const char *what)
{
	char want[200];
	bool aborts = e == MC_FATAL || MC_DEBUG_BUILD;
	bool message = e == MC_FATAL || e == MC_MISUSE || MC_DEBUG_BUILD;

	snprintf(want, sizeof(want), MC_WANT_FMT, call);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
		fprintf(stderr, "  %s: the child hung instead of diagnosing the misuse\n", call);
		return 1;
	}
	if (aborts && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)) {
		fprintf(stderr, "  %s: expected abort, got status 0x%x\n", call, st);
		return 1;
	}
	if (!aborts && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		fprintf(stderr, "  %s: expected the program to go on, got status 0x%x\n", call, st);
		return 1;
	}
	if (message && (!strstr(out, want) || (what && !strstr(out, what)))) {
		fprintf(stderr, "  %s: expected a message \"%s...%s\"\n", call, want,
			what ? what : "");
		return 1;
	}
	if (!message && strstr(out, "misuse")) {
		fprintf(stderr, "  %s: release build printed a misuse for a debug-only check\n",
			call);
		return 1;
	}
	return 0;
}

/* Run fn in a child; 0 if it ended as expected (mc_check). */
static int mc_misuse(void (*fn)(void), enum mc_expect e, const char *call, const char *what)
{
	static char out[16384];

	if ((e == MC_DEBUG_HANG || e == MC_DEBUG_UB) && !MC_DEBUG_BUILD) {
		printf("  release build: %s misuse not run (%s without GRACE_DEBUG's check)\n",
		       call, e == MC_DEBUG_UB ? "undefined behaviour" : "it hangs");
		return 0;
	}
	mc_child_fn = fn;
	int st = gt_run_child(mc_trampoline, NULL, out, sizeof(out));
	printf("  child: %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
	if (out[0])
		printf("  stderr: %.400s%s", out, strlen(out) > 400 ? "...\n" : "");
	int r = mc_check(st, out, e, call, what);
	if (r && strlen(out) > 400)
		printf("  full stderr of the child:\n%s\n", out);
	return r;
}

#define EXPECT_MISUSE_CHILD(fn, e, call, what) CHECK(mc_misuse(fn, e, call, what) == 0)

/* A child that must run fn without a word of misuse, fn printing "fine" on stderr at its end:
 * 1 if so (otherwise the status and stderr are printed). */
static __attribute__((unused)) int mc_child_is_fine(void (*fn)(void))
{
	static char out[4096];
	mc_child_fn = fn;
	int st = gt_run_child(mc_trampoline, NULL, out, sizeof(out));
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "fine") &&
		 !strstr(out, "misuse");
	if (!ok)
		fprintf(stderr, "  expected a clean run: status 0x%x, stderr: %s\n", st, out);
	return ok;
}

#endif /* GRACE_TEST_MISUSE_CHILD_H */
