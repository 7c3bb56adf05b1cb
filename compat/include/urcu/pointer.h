/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/pointer.h>: RCU pointer primitives under liburcu's names, flavor-independent.
 *
 *  rcu_dereference(p)            load for dereferencing inside a read-side section: one relaxed
 *                                atomic load, ordered for the reader by the address dependency
 *                                (grace's rcu_dereference_raw(); see <grace/pointer.h>). Unlike
 *                                grace's rcu_dereference() it has no debug-build check, because
 *                                liburcu programs also use it on the update side under a lock.
 *  rcu_assign_pointer(p, v)      publish: store-release (pairs with rcu_dereference()).
 *  rcu_set_pointer(pp, v)        the same through a pointer to the pointer.
 *  rcu_xchg_pointer(pp, v)       exchange, full barrier; returns the old value.
 *  rcu_cmpxchg_pointer(pp, o, n) compare-and-exchange, full barrier; returns the value found.
 */
#ifndef GRACE_URCU_POINTER_H
#define GRACE_URCU_POINTER_H

#include <urcu/grace/base.h>
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/uatomic.h>

#undef rcu_dereference
#define rcu_dereference(p) rcu_dereference_raw(p)
#define _rcu_dereference(p) rcu_dereference_raw(p)

/* grace's rcu_assign_pointer(): store-release. Kept as it is. */
#define _rcu_assign_pointer(p, v) rcu_assign_pointer(p, v)
#define rcu_set_pointer(pp, v)                                              \
	do {                                                                \
		__typeof__(*(pp)) grace_urcu__v = (v);                      \
		/* Publish: store-release, pairs with rcu_dereference(). */ \
		grace_store_release((pp), grace_urcu__v);                   \
	} while (0)
#define _rcu_set_pointer(pp, v) rcu_set_pointer(pp, v)

#undef rcu_xchg_pointer
#define rcu_xchg_pointer(pp, v) uatomic_xchg((pp), (v))
#define _rcu_xchg_pointer(pp, v) rcu_xchg_pointer(pp, v)
#undef rcu_cmpxchg_pointer
#define rcu_cmpxchg_pointer(pp, old, new_) uatomic_cmpxchg((pp), (old), (new_))
#define _rcu_cmpxchg_pointer(pp, old, new_) rcu_cmpxchg_pointer(pp, old, new_)

#endif
