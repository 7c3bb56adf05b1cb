/* SPDX-License-Identifier: MIT */
/*
 * Regression of issue 12, fault 9: default-flavor sections nest to 32767 in every mode (the
 * documented limit). With membarrier the inline fast path let the 32768th nested
 * rcu_read_lock() through; the fence fallback stopped at 32767. The test runs in both modes
 * (ctest runs it again with GRACE_NO_MEMBARRIER=1): 32767 nested locks succeed, the next one
 * is reported ("nested deeper than 32767") and aborts.
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

static void nest(void *arg)
{
	(void)arg;
	alarm(20);
	for (int i = 0; i < 32767; i++)
		rcu_read_lock();
	fprintf(stderr, "reached 32767\n");
	rcu_read_lock(); /* one too many */
	fprintf(stderr, "reached 32768\n");
	for (int i = 0; i < 32768; i++)
		rcu_read_unlock();
	exit(0);
}

TEST(nesting_limit_is_32767)
{
	static char err[8192];
	char how[96];
	struct fault_child c = fault_run(nest, NULL, 30, err, sizeof(err));

	printf("  mode %s: child %s\n  stderr: %s", grace_membarrier_mode(),
	       fault_how(&c, how, sizeof(how)), err);
	CHECK(strstr(err, "reached 32767") != NULL);
	CHECK_MSG(strstr(err, "reached 32768") == NULL, "a 32768th nested section was allowed");
	CHECK(!c.hung && WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT);
	CHECK(strstr(err, "rcu_read_lock") && strstr(err, "nested deeper than 32767"));
}

TEST(nesting_32767_then_unwind_works)
{
	for (int i = 0; i < 32767; i++)
		rcu_read_lock();
	CHECK(rcu_read_ongoing());
	for (int i = 0; i < 32767; i++)
		rcu_read_unlock();
	CHECK(!rcu_read_ongoing());
	synchronize_rcu(); /* not inside a section any more */
}

GT_MAIN()
