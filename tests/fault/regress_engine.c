/* SPDX-License-Identifier: MIT */
/*
 * Regressions of the callback engine's faults found by an independent review (wave 2). Each
 * case runs in a child process (a fresh engine) with a hang limit many times what it needs;
 * the checks are on behaviour (counts, a warning's absence, a call that returns), never on
 * how fast something happens:
 *  1. limits_saturate: grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) means no limit; the
 *     limit times the CPUs wrapped to a negative number and every 32nd call_rcu() waited.
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 60
#define EXIT_TIMEOUT_MS "3000"

static unsigned long ran;

static void count_free(struct rcu_head *h)
{
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
	free(h);
}

static struct rcu_head *head_new(void)
{
	return (struct rcu_head *)calloc(1, sizeof(struct rcu_head));
}

/* Run fn in a child; it must exit with status 7 and print nothing containing `bad`. */
static int run_case(void (*fn)(void *), const char *what, const char *bad)
{
	static char err[16384];
	char how[96];
	struct fault_child c = fault_run(fn, NULL, HANG_S, err, sizeof(err));
	int fails = 0;

	printf("  %s: child %s\n", what, fault_how(&c, how, sizeof(how)));
	if (err[0])
		printf("  stderr: %.600s\n", err);
	if (!fault_exited(&c, 7)) {
		fprintf(stderr, "  %s: expected exit status 7, child %s\n", what, how);
		fails++;
	}
	if (bad && strstr(err, bad)) {
		fprintf(stderr, "  %s: unexpected message containing \"%s\"\n", what, bad);
		fails++;
	}
	return fails;
}

/* ---- 1 ---- */

static void limits_saturate(void *arg)
{
	struct grace_cb_stats st;
	(void)arg;
	if (grace_rcu_set_callback_limits(SIZE_MAX, SIZE_MAX) != 0)
		exit(2);
	for (int i = 0; i < 256; i++)
		call_rcu(head_new(), count_free);
	grace_rcu_callback_stats(&st);
	if (st.waits != 0) {
		fprintf(stderr, "  %llu waits at a hard limit of SIZE_MAX\n",
			(unsigned long long)st.waits);
		exit(3);
	}
	rcu_barrier();
	exit(__atomic_load_n(&ran, __ATOMIC_RELAXED) == 256 ? 7 : 4);
}
TEST(limits_saturate)
{
	CHECK(run_case(limits_saturate, "limits SIZE_MAX", "hard limit") == 0);
}

int main(int argc, char **argv)
{
	setenv("GRACE_EXIT_TIMEOUT_MS", EXIT_TIMEOUT_MS, 1);
	return gt_main(argc, argv);
}
