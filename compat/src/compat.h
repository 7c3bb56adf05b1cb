/* SPDX-License-Identifier: MIT */
/* libgrace-urcu internals shared by its source files. */
#ifndef GRACE_URCU_SRC_COMPAT_H
#define GRACE_URCU_SRC_COMPAT_H

#include <urcu/grace/base.h>
#include <urcu/call-rcu.h>
#include <urcu/defer.h>
#include <urcu/flavor.h>
#include <urcu/rculfhash.h>

/* A warning line in grace's format; returns. */
void grace_urcu__warn(const char *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* libgrace's test hook (src/core/debug.h): with GRACE_TEST_PAUSE=<site>:<us>, debug builds
 * sleep at the named site to widen a race window for a test; release builds compile it out. */
#ifdef GRACE_DEBUG
/* Declared by <grace/rcu.h> in debug builds. */
#define GRACE_URCU__TEST_PAUSE(site) grace__test_pause(site)
#else
#define GRACE_URCU__TEST_PAUSE(site) ((void)0)
#endif

static inline bool grace_urcu__is_qsbr(int flavor)
{
	return flavor == GRACE_URCU_QSBR;
}

#endif
