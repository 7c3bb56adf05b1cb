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

/*
 * Without _LGPL_SOURCE (and without URCU_INLINE_SMALL_FUNCTIONS), as with liburcu, the pointer
 * operations go through functions of the library, rcu_dereference_sym() and the others, so that
 * a program may interpose them and a configure probe finds them. The load itself stays in the
 * caller here (a relaxed atomic load, as inline): the function receives the loaded value and
 * returns it, which also keeps the compiler from guessing the value past the call. The stores,
 * exchanges and compare-and-exchanges are done in the function, with the orders given above.
 * urcu-bp.h uses the same wrappers over liburcu-bp's own urcu_bp_*_sym() functions.
 */
#define GRACE_URCU__DEREF_SYM(fn, p) ((__typeof__(p))fn((void *)rcu_dereference_raw(p)))
#define GRACE_URCU__SET_SYM(fn, pp, v)                           \
	do {                                                     \
		__typeof__(*(pp)) grace_urcu__sv = (v);          \
		(void)fn((void **)(pp), (void *)grace_urcu__sv); \
	} while (0)
#define GRACE_URCU__XCHG_SYM(fn, pp, v) ((__typeof__(*(pp)))fn((void **)(pp), (void *)(v)))
#define GRACE_URCU__CMPXCHG_SYM(fn, pp, old, new_) \
	((__typeof__(*(pp)))fn((void **)(pp), (void *)(old), (void *)(new_)))

GRACE_BEGIN_DECLS
/* Functions of libgrace-urcu in both modes; only programs without _LGPL_SOURCE call them. */
GRACE_API void *rcu_dereference_sym(void *p);
GRACE_URCU__BIND(rcu_dereference_sym);
GRACE_API void *rcu_set_pointer_sym(void **p, void *v);
GRACE_URCU__BIND(rcu_set_pointer_sym);
GRACE_API void *rcu_xchg_pointer_sym(void **p, void *v);
GRACE_URCU__BIND(rcu_xchg_pointer_sym);
GRACE_API void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *new_);
GRACE_URCU__BIND(rcu_cmpxchg_pointer_sym);
GRACE_END_DECLS

/* Inline: the same operations, with _LGPL_SOURCE. */
#define _rcu_dereference(p) rcu_dereference_raw(p)
/* grace's rcu_assign_pointer(): store-release. Kept as it is in both modes. */
#define _rcu_assign_pointer(p, v) rcu_assign_pointer(p, v)
#define _rcu_set_pointer(pp, v)                                             \
	do {                                                                \
		__typeof__(*(pp)) grace_urcu__v = (v);                      \
		/* Publish: store-release, pairs with rcu_dereference(). */ \
		grace_store_release((pp), grace_urcu__v);                   \
	} while (0)
#define _rcu_xchg_pointer(pp, v) uatomic_xchg((pp), (v))
#define _rcu_cmpxchg_pointer(pp, old, new_) uatomic_cmpxchg((pp), (old), (new_))

#undef rcu_dereference
#undef rcu_xchg_pointer
#undef rcu_cmpxchg_pointer
#if GRACE_URCU__LGPL || defined(URCU_INLINE_SMALL_FUNCTIONS)
#define rcu_dereference(p) _rcu_dereference(p)
#define rcu_set_pointer(pp, v) _rcu_set_pointer(pp, v)
#define rcu_xchg_pointer(pp, v) _rcu_xchg_pointer(pp, v)
#define rcu_cmpxchg_pointer(pp, old, new_) _rcu_cmpxchg_pointer(pp, old, new_)
#else
#define rcu_dereference(p) GRACE_URCU__DEREF_SYM(rcu_dereference_sym, p)
#define rcu_set_pointer(pp, v) GRACE_URCU__SET_SYM(rcu_set_pointer_sym, pp, v)
#define rcu_xchg_pointer(pp, v) GRACE_URCU__XCHG_SYM(rcu_xchg_pointer_sym, pp, v)
#define rcu_cmpxchg_pointer(pp, old, new_) \
	GRACE_URCU__CMPXCHG_SYM(rcu_cmpxchg_pointer_sym, pp, old, new_)
#endif

#endif
