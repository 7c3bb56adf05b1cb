/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/uatomic.h>: liburcu's atomic operations, on any integer or pointer object of
 * 1, 2, 4 or 8 bytes, through grace's atomics wrappers (<grace/arch/atomic.h>).
 *
 * Ordering, as liburcu documents it:
 *  - uatomic_read/uatomic_set (and uatomic_load/uatomic_store without an order): relaxed.
 *  - uatomic_add, _sub, _inc, _dec, _or, _and: atomic, no ordering (pair them with
 *    cmm_smp_mb__before_uatomic_* / cmm_smp_mb__after_uatomic_*).
 *  - uatomic_cmpxchg, uatomic_xchg, uatomic_add_return, uatomic_sub_return: full barrier before
 *    and after. A seq_cst read-modify-write is that on x86 (locked instruction); elsewhere
 *    (ldaxr/stlxr) an earlier store may still pass a later load, so a full fence follows
 *    (GRACE_URCU__RMW_FENCE), as liburcu 0.15 does for CMM_SEQ_CST_FENCE.
 *  - liburcu 0.15's explicit orders: enum cmm_memorder and the *_mo variants.
 */
#ifndef GRACE_URCU_UATOMIC_H
#define GRACE_URCU_UATOMIC_H

#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>

#define UATOMIC_HAS_ATOMIC_BYTE 1
#define UATOMIC_HAS_ATOMIC_SHORT 1

enum cmm_memorder {
	CMM_RELAXED = __ATOMIC_RELAXED,
	CMM_CONSUME = __ATOMIC_CONSUME,
	CMM_ACQUIRE = __ATOMIC_ACQUIRE,
	CMM_RELEASE = __ATOMIC_RELEASE,
	CMM_ACQ_REL = __ATOMIC_ACQ_REL,
	CMM_SEQ_CST = __ATOMIC_SEQ_CST,
	CMM_SEQ_CST_FENCE = __ATOMIC_SEQ_CST + 1, /* seq_cst, then a full fence */
};

/* The GCC order of a cmm_memorder, and the fence CMM_SEQ_CST_FENCE adds. */
#define GRACE_URCU__MO(mo) ((int)(mo) == (int)CMM_SEQ_CST_FENCE ? __ATOMIC_SEQ_CST : (int)(mo))
#define GRACE_URCU__MO_FENCE(mo)                                      \
	do {                                                          \
		if ((int)(mo) == (int)CMM_SEQ_CST_FENCE)              \
			grace_smp_mb(); /* the trailing full fence */ \
	} while (0)

/* After a seq_cst read-modify-write documented as a full barrier (see above). */
#if GRACE_ARCH_TSO
#define GRACE_URCU__RMW_FENCE() grace_barrier()
#else
#define GRACE_URCU__RMW_FENCE() grace_smp_mb()
#endif

#define GRACE_URCU__T(addr) __typeof__(*(addr))

/* ---- loads and stores ---- */
#define grace_urcu__load_mo(addr, mo) grace_load_mo((addr), GRACE_URCU__MO(mo))
#define grace_urcu__load(addr) grace_load_relaxed(addr)
#define grace_urcu__store_mo(addr, v, mo)                                             \
	do {                                                                          \
		grace_store_mo((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                             \
	} while (0)
#define grace_urcu__store(addr, v) grace_store_relaxed((addr), (GRACE_URCU__T(addr))(v))
#define GRACE_URCU__SEL2(a, b, NAME, ...) NAME
#define GRACE_URCU__SEL3(a, b, c, NAME, ...) NAME
/* uatomic_load(addr[, mo]), uatomic_store(addr, v[, mo]) */
#define uatomic_load(...) \
	GRACE_URCU__SEL2(__VA_ARGS__, grace_urcu__load_mo, grace_urcu__load, )(__VA_ARGS__)
#define uatomic_store(...) \
	GRACE_URCU__SEL3(__VA_ARGS__, grace_urcu__store_mo, grace_urcu__store, , )(__VA_ARGS__)
#define uatomic_read(addr) grace_load_relaxed(addr)
#define uatomic_set(addr, v) grace_urcu__store(addr, v)

/* ---- full-barrier read-modify-writes ---- */
#define uatomic_cmpxchg_mo(addr, old, new_, mos, mof)                                   \
	__extension__({                                                                 \
		GRACE_URCU__T(addr) grace_urcu__old = (GRACE_URCU__T(addr))(old);       \
		grace_cmpxchg_mo((addr), &grace_urcu__old, (GRACE_URCU__T(addr))(new_), \
				 GRACE_URCU__MO(mos), GRACE_URCU__MO(mof));             \
		GRACE_URCU__MO_FENCE(mos);                                              \
		grace_urcu__old;                                                        \
	})
#define uatomic_cmpxchg(addr, old, new_)                                                \
	__extension__({                                                                 \
		GRACE_URCU__T(addr) grace_urcu__old = (GRACE_URCU__T(addr))(old);       \
		grace_cmpxchg_mo((addr), &grace_urcu__old, (GRACE_URCU__T(addr))(new_), \
				 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
		GRACE_URCU__RMW_FENCE();                                                \
		grace_urcu__old;                                                        \
	})
#define uatomic_xchg_mo(addr, v, mo)                                                              \
	__extension__({                                                                           \
		GRACE_URCU__T(addr)                                                               \
		grace_urcu__r = grace_xchg((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                                         \
		grace_urcu__r;                                                                    \
	})
#define uatomic_xchg(addr, v)                                                                   \
	__extension__({                                                                         \
		GRACE_URCU__T(addr)                                                             \
		grace_urcu__r = grace_xchg((addr), (GRACE_URCU__T(addr))(v), __ATOMIC_SEQ_CST); \
		GRACE_URCU__RMW_FENCE();                                                        \
		grace_urcu__r;                                                                  \
	})
#define uatomic_add_return_mo(addr, v, mo)                                           \
	__extension__({                                                              \
		GRACE_URCU__T(addr) grace_urcu__v = (GRACE_URCU__T(addr))(v);        \
		GRACE_URCU__T(addr)                                                  \
		grace_urcu__r = (GRACE_URCU__T(addr))(                               \
			grace_fetch_add((addr), grace_urcu__v, GRACE_URCU__MO(mo)) + \
			grace_urcu__v);                                              \
		GRACE_URCU__MO_FENCE(mo);                                            \
		grace_urcu__r;                                                       \
	})
#define uatomic_add_return(addr, v) uatomic_add_return_mo(addr, v, CMM_SEQ_CST_FENCE)
#define uatomic_sub_return_mo(addr, v, mo)                                           \
	__extension__({                                                              \
		GRACE_URCU__T(addr) grace_urcu__v = (GRACE_URCU__T(addr))(v);        \
		GRACE_URCU__T(addr)                                                  \
		grace_urcu__r = (GRACE_URCU__T(addr))(                               \
			grace_fetch_sub((addr), grace_urcu__v, GRACE_URCU__MO(mo)) - \
			grace_urcu__v);                                              \
		GRACE_URCU__MO_FENCE(mo);                                            \
		grace_urcu__r;                                                       \
	})
#define uatomic_sub_return(addr, v) uatomic_sub_return_mo(addr, v, CMM_SEQ_CST_FENCE)

/* ---- read-modify-writes with no ordering ---- */
#define uatomic_add_mo(addr, v, mo)                                                          \
	do {                                                                                 \
		(void)grace_fetch_add((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                                    \
	} while (0)
#define uatomic_sub_mo(addr, v, mo)                                                          \
	do {                                                                                 \
		(void)grace_fetch_sub((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                                    \
	} while (0)
#define uatomic_or_mo(addr, v, mo)                                                          \
	do {                                                                                \
		(void)grace_fetch_or((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                                   \
	} while (0)
#define uatomic_and_mo(addr, v, mo)                                                          \
	do {                                                                                 \
		(void)grace_fetch_and((addr), (GRACE_URCU__T(addr))(v), GRACE_URCU__MO(mo)); \
		GRACE_URCU__MO_FENCE(mo);                                                    \
	} while (0)
#define uatomic_inc_mo(addr, mo) uatomic_add_mo(addr, 1, mo)
#define uatomic_dec_mo(addr, mo) uatomic_sub_mo(addr, 1, mo)
#define uatomic_add(addr, v) uatomic_add_mo(addr, v, CMM_RELAXED)
#define uatomic_sub(addr, v) uatomic_sub_mo(addr, v, CMM_RELAXED)
#define uatomic_or(addr, v) uatomic_or_mo(addr, v, CMM_RELAXED)
#define uatomic_and(addr, v) uatomic_and_mo(addr, v, CMM_RELAXED)
#define uatomic_inc(addr) uatomic_add(addr, 1)
#define uatomic_dec(addr) uatomic_sub(addr, 1)

/*
 * Fences around the unordered read-modify-writes. On x86 the locked instruction is a full
 * barrier already (a compiler barrier keeps the compiler from moving accesses across it);
 * elsewhere a full fence.
 */
#if GRACE_ARCH_TSO
#define GRACE_URCU__UATOMIC_MB() grace_barrier()
#else
#define GRACE_URCU__UATOMIC_MB() grace_smp_mb()
#endif
#define cmm_smp_mb__before_uatomic_add() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_add() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__before_uatomic_sub() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_sub() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__before_uatomic_inc() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_inc() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__before_uatomic_dec() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_dec() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__before_uatomic_or() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_or() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__before_uatomic_and() GRACE_URCU__UATOMIC_MB()
#define cmm_smp_mb__after_uatomic_and() GRACE_URCU__UATOMIC_MB()

#endif
