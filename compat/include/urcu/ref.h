/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/ref.h>: reference counts under liburcu's names. urcu_ref_get() aborts on
 * overflow (liburcu does too); urcu_ref_put() calls release() when the count drops to 0;
 * urcu_ref_get_unless_zero() takes a reference only if the object is still live (for objects
 * found under RCU). The count updates are full barriers (uatomic_add_return and cmpxchg), so
 * everything done with a reference happens before release() runs.
 */
#ifndef GRACE_URCU_REF_H
#define GRACE_URCU_REF_H

/* As liburcu's: assert() comes with it. */
#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu/uatomic.h>

struct urcu_ref {
	long refcount;
};

static inline void urcu_ref_set(struct urcu_ref *ref, long val)
{
	uatomic_set(&ref->refcount, val);
}

static inline void urcu_ref_init(struct urcu_ref *ref)
{
	urcu_ref_set(ref, 1);
}

static inline bool urcu_ref_get_safe(struct urcu_ref *ref)
{
	long old = uatomic_read(&ref->refcount), res;

	for (;;) {
		if (old == LONG_MAX)
			return false; /* would overflow */
		res = uatomic_cmpxchg(&ref->refcount, old, old + 1);
		if (res == old)
			return true;
		old = res;
	}
}

static inline void urcu_ref_get(struct urcu_ref *ref)
{
	if (!urcu_ref_get_safe(ref)) {
		fprintf(stderr, "grace-urcu: urcu_ref_get: reference count overflow\n");
		abort();
	}
}

static inline void urcu_ref_put(struct urcu_ref *ref, void (*release)(struct urcu_ref *))
{
	long res = uatomic_sub_return(&ref->refcount, 1);

	if (res == 0)
		release(ref);
}

static inline bool urcu_ref_get_unless_zero(struct urcu_ref *ref)
{
	long old = uatomic_read(&ref->refcount), res;

	for (;;) {
		if (old == 0 || old == LONG_MAX)
			return false;
		res = uatomic_cmpxchg(&ref->refcount, old, old + 1);
		if (res == old)
			return true;
		old = res;
	}
}

#endif
