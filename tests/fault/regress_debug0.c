/* SPDX-License-Identifier: MIT */
/*
 * Regression of issue 12: GRACE_DEBUG=0 on the compiler command line means "debug checks off".
 * The headers tested the macro with #ifdef, so -DGRACE_DEBUG=0 turned the inline checks on.
 * This file defines GRACE_DEBUG as 0 before any grace header (whatever the build passes) and
 * checks that an inline debug check, rcu_dereference() outside a section, stays silent.
 */
#undef GRACE_DEBUG
#define GRACE_DEBUG 0
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

static int value = 42;
static int *gp = &value;

static void deref_outside(void *arg)
{
	(void)arg;
	alarm(20);
	int *p = rcu_dereference(gp); /* outside any section: a debug build would abort */
	exit(*p == 42 ? 0 : 1);
}

TEST(grace_debug_0_means_off)
{
	static char err[4096];
	char how[96];
	struct fault_child c = fault_run(deref_outside, NULL, 30, err, sizeof(err));
	CHECK_MSG(fault_exited(&c, 0), "child %s: %s", fault_how(&c, how, sizeof(how)), err);
	CHECK(GRACE__DEBUG == 0);
}

GT_MAIN()
