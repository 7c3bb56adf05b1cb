/* SPDX-License-Identifier: MIT */
/*
 * Pointer primitives shared by every flavor: publication and dependency-ordered reads of
 * RCU-protected pointers, and struct rcu_head for deferred callbacks.
 *
 * Memory ordering (see docs/design.md, "Publication and dependent loads"):
 *  - rcu_assign_pointer(p, v) is a store-release: every store that initialised *v is visible to
 *    any thread that sees the new value of p. Pairs with rcu_dereference() on the reader side.
 *  - rcu_dereference(p) is a single load whose result the reader then dereferences: loads through
 *    the returned pointer are ordered after it by the address dependency (on every CPU Linux
 *    supports except DEC Alpha, which grace does not support). This is the OLS 2002 paper's
 *    Appendix B point: the reader needs no fence because its loads depend on the pointer. The
 *    compiler cannot be told about the dependency in C11 (memory_order_consume is promoted to
 *    acquire by GCC), so grace emits a relaxed atomic load, as Linux's READ_ONCE does; do not
 *    compare the result with a known address and then dereference that address instead. In TSan
 *    mode the load is an acquire so the sanitizer sees the ordering.
 *  - rcu_access_pointer(p) reads the value for comparison only; never dereference it.
 *  - rcu_xchg_pointer / rcu_cmpxchg_pointer are full-barrier read-modify-writes: they publish like
 *    rcu_assign_pointer and order later accesses after the exchange.
 */
#ifndef GRACE_POINTER_H
#define GRACE_POINTER_H

#include <stddef.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/internal/annotate.h>

GRACE_BEGIN_DECLS

/* A callback queued with call_rcu() and friends. Embed it in the object to be freed. */
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};
typedef void (*rcu_callback_t)(struct rcu_head *head);

/* Debug builds: is the calling thread inside a read-side section of any flavor? */
GRACE_API int grace_debug_in_read_section(void);
GRACE_API GRACE_NORETURN void grace__debug_deref_outside(const char *call, const char *file,
							 int line);
/* Debug builds of list.h and hlist.h: report list corruption found by an add or delete, then
 * abort (src/ds/list.c). */
GRACE_API GRACE_NORETURN void grace__list_corrupt(const char *call, const void *entry,
						  const char *what);

GRACE_END_DECLS

#define grace_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#ifndef container_of
#define container_of(ptr, type, member) grace_container_of(ptr, type, member)
#endif

#if GRACE__TSAN_MODE
#define GRACE__DEREF_ORDER __ATOMIC_ACQUIRE
#else
#define GRACE__DEREF_ORDER __ATOMIC_RELAXED
#endif

#if GRACE__DEBUG
#define GRACE__DEREF_CHECK(call)                                              \
	do {                                                                  \
		if (!grace_debug_in_read_section())                           \
			grace__debug_deref_outside(call, __FILE__, __LINE__); \
	} while (0)
#else
#define GRACE__DEREF_CHECK(call) \
	do {                     \
	} while (0)
#endif

/* Load an RCU-protected pointer for dereferencing inside a read-side section. */
#define rcu_dereference(p)                                                        \
	__extension__({                                                           \
		__typeof__(p) grace__p = grace_load_mo(&(p), GRACE__DEREF_ORDER); \
		GRACE__ANN_ACQUIRE(&(p));                                         \
		GRACE__DEREF_CHECK("rcu_dereference");                            \
		grace__p;                                                         \
	})
/* rcu_dereference without the debug check: for code that is protected some other way. */
#if GRACE__ANN_INLINE
#define rcu_dereference_raw(p)                                                    \
	__extension__({                                                           \
		__typeof__(p) grace__p = grace_load_mo(&(p), GRACE__DEREF_ORDER); \
		GRACE__ANN_ACQUIRE(&(p));                                         \
		grace__p;                                                         \
	})
#else
#define rcu_dereference_raw(p) (grace_load_mo(&(p), GRACE__DEREF_ORDER))
#endif
/* Update side, with the lock that excludes other updaters held: c documents that lock. */
#define rcu_dereference_protected(p, c) ((void)(c), grace_load_relaxed(&(p)))
/* Read the pointer's value for comparison only: never dereference the result. */
#define rcu_access_pointer(p) (grace_load_relaxed(&(p)))

/* Publish v in p: store-release, pairs with rcu_dereference(). */
#define rcu_assign_pointer(p, v)                     \
	do {                                         \
		__typeof__(p) grace__v = (v);        \
		GRACE__ANN_SHARED(&(p), sizeof(p));  \
		GRACE__ANN_RELEASE(&(p));            \
		grace_store_release(&(p), grace__v); \
	} while (0)
/* Initialise or clear p when no reader can see the difference (NULL, or before publication). */
#if GRACE__ANN_INLINE
#define RCU_INIT_POINTER(p, v)                      \
	do {                                        \
		GRACE__ANN_SHARED(&(p), sizeof(p)); \
		grace_store_relaxed(&(p), (v));     \
	} while (0)
#else
#define RCU_INIT_POINTER(p, v) grace_store_relaxed(&(p), (v))
#endif

/* Exchange *pp with v, returning the old value; full barrier. */
#if GRACE__ANN_INLINE
#define rcu_xchg_pointer(pp, v)                                            \
	__extension__({                                                    \
		__typeof__(*(pp)) grace__xv = (v);                         \
		GRACE__ANN_SHARED((pp), sizeof(*(pp)));                    \
		GRACE__ANN_RELEASE(pp);                                    \
		grace__xv = grace_xchg((pp), grace__xv, __ATOMIC_SEQ_CST); \
		GRACE__ANN_ACQUIRE(pp);                                    \
		grace__xv;                                                 \
	})
#else
#define rcu_xchg_pointer(pp, v) grace_xchg((pp), (v), __ATOMIC_SEQ_CST)
#endif
/* If *pp == old, set it to new; returns the value found (== old on success); full barrier. */
#define rcu_cmpxchg_pointer(pp, old, new_)                                                       \
	__extension__({                                                                          \
		__typeof__(*(pp)) grace__old = (old);                                            \
		GRACE__ANN_SHARED((pp), sizeof(*(pp)));                                          \
		GRACE__ANN_RELEASE(pp);                                                          \
		grace_cmpxchg_mo((pp), &grace__old, (new_), __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		GRACE__ANN_ACQUIRE(pp);                                                          \
		grace__old;                                                                      \
	})

#endif /* GRACE_POINTER_H */
