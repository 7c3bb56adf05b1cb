/* SPDX-License-Identifier: MIT */
/*
 * Death-test harness shared by the misuse tests of the data structures and of grace-urcu: each
 * misuse runs in a child process (gt_run_child), and the test checks how the child ended and that
 * its message ("misuse: CALL...") names the call the program made. The expectations are those of
 * tests/unit/test_misuse.c:
 *   MC_FATAL       message and abort in every build (a deadlock or corruption would follow);
 *   MC_DEBUG_ONLY  a debug-build check: message and abort with GRACE_DEBUG, silence without;
 *   MC_DEBUG_HANG  as MC_DEBUG_ONLY, but without the check the misuse really hangs or corrupts,
 *                  so the child is not run in release builds.
 * Every child arms alarm(): a misuse that hangs instead of being diagnosed fails the test.
 * Include after gtest_lite.h.
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

enum mc_expect { MC_FATAL, MC_DEBUG_ONLY, MC_DEBUG_HANG };

static void (*mc_child_fn)(void);

static void mc_trampoline(void *arg)
{
	(void)arg;
	unsetenv("GRACE_ABORT_ON_MISUSE");
	alarm(20);
	mc_child_fn();
}

/* Run fn in a child; 0 if it ended as expected with a message "misuse: CALL: ...WHAT". */
static int mc_misuse(void (*fn)(void), enum mc_expect e, const char *call, const char *what)
{
	static char out[16384];
	char want[200];
	bool aborts = e == MC_FATAL || MC_DEBUG_BUILD;

	if (e == MC_DEBUG_HANG && !MC_DEBUG_BUILD) {
		printf("  release build: %s misuse not run (no check without GRACE_DEBUG)\n", call);
		return 0;
	}
	mc_child_fn = fn;
	int st = gt_run_child(mc_trampoline, NULL, out, sizeof(out));
	printf("  child: %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
	if (out[0])
		printf("  stderr: %.400s%s", out, strlen(out) > 400 ? "...\n" : "");
	snprintf(want, sizeof(want), "misuse: %s", call);
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
	if (aborts && (!strstr(out, want) || (what && !strstr(out, what)))) {
		fprintf(stderr, "  %s: expected a message \"%s...%s\"\n", call, want,
			what ? what : "");
		return 1;
	}
	if (!aborts && strstr(out, "misuse")) {
		fprintf(stderr, "  %s: release build printed a misuse for a debug-only check\n",
			call);
		return 1;
	}
	return 0;
}

#define EXPECT_MISUSE_CHILD(fn, e, call, what) CHECK(mc_misuse(fn, e, call, what) == 0)

#endif /* GRACE_TEST_MISUSE_CHILD_H */
