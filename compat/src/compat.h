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

static inline bool grace_urcu__is_qsbr(int flavor)
{
	return flavor == GRACE_URCU_QSBR;
}

#endif
