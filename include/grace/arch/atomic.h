/* SPDX-License-Identifier: MIT */
/*
 * The one atomics header: thin wrappers over GCC's __atomic builtins, valid in C11 and C++.
 * Public structures hold plain integers and pointers (no _Atomic in any layout), and every
 * shared access goes through these wrappers, so the memory order of each access is explicit
 * at its call site (DPDK's rte_stdatomic.h lesson).
 */
#ifndef GRACE_ARCH_ATOMIC_H
#define GRACE_ARCH_ATOMIC_H

#include <grace/compiler.h>

#define grace_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define grace_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define grace_load_seq_cst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define grace_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define grace_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define grace_store_seq_cst(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
/* With the memory order as an argument, for macros whose order depends on a build mode. */
#define grace_load_mo(p, mo) __atomic_load_n((p), (mo))
#define grace_store_mo(p, v, mo) __atomic_store_n((p), (v), (mo))
#define grace_xchg(p, v, mo) __atomic_exchange_n((p), (v), (mo))
#define grace_cmpxchg(p, expp, v, mo) \
	__atomic_compare_exchange_n((p), (expp), (v), 0, (mo), __ATOMIC_RELAXED)
/* Compare-and-exchange with an explicit order for the failure case too. */
#define grace_cmpxchg_mo(p, expp, v, mo_ok, mo_fail) \
	__atomic_compare_exchange_n((p), (expp), (v), 0, (mo_ok), (mo_fail))
#define grace_fetch_add(p, v, mo) __atomic_fetch_add((p), (v), (mo))
#define grace_fetch_sub(p, v, mo) __atomic_fetch_sub((p), (v), (mo))
#define grace_fetch_or(p, v, mo) __atomic_fetch_or((p), (v), (mo))
#define grace_fetch_and(p, v, mo) __atomic_fetch_and((p), (v), (mo))


/* Compiler barrier: no compiler motion of memory accesses across it; emits no instruction. */
#define grace_barrier() __asm__ __volatile__("" ::: "memory")
/* Full fence (smp_mb). TSan does not model stand-alone fences (and warns about them): in TSan
 * mode a seq_cst read-modify-write of a thread-local word stands in, which is a full barrier on
 * x86, the architecture TSan runs on here. */
#if defined(__SANITIZE_THREAD__) || defined(GRACE_TSAN)
static __thread int grace__tsan_fence_word __attribute__((unused));
#define grace_smp_mb() ((void)__atomic_fetch_add(&grace__tsan_fence_word, 0, __ATOMIC_SEQ_CST))
#else
#define grace_smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__SANITIZE_THREAD__) && !defined(GRACE_TSAN)
#define GRACE_ARCH_TSO_RMW_FENCE 1
#else
#define GRACE_ARCH_TSO_RMW_FENCE 0
#endif
/* Full barrier after an atomic read-modify-write (the kernel's smp_mb__after_atomic()): on x86
 * every locked instruction already is one, so only the compiler is stopped; elsewhere a fence. */
#if GRACE_ARCH_TSO_RMW_FENCE
#define grace_smp_mb_after_rmw() grace_barrier()
#else
#define grace_smp_mb_after_rmw() grace_smp_mb()
#endif
/* Acquire fence: loads before it (relaxed ones included) are ordered before every access after
 * it; with a relaxed load that read a release store, it completes the synchronizes-with edge.
 * TSan rejects stand-alone fences: there it is the full-barrier stand-in above (TSan runs on
 * x86, where loads are ordered anyway). */
#if defined(__SANITIZE_THREAD__) || defined(GRACE_TSAN)
#define grace_fence_acquire() grace_smp_mb()
#else
#define grace_fence_acquire() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/* Is the architecture TSO (x86)? Then plain stores are release stores and plain loads are
 * acquire loads, which some algorithms use to skip a fence; elsewhere they must not. */
#if defined(__x86_64__) || defined(__i386__)
#define GRACE_ARCH_TSO 1
#else
#define GRACE_ARCH_TSO 0
#endif

GRACE_INLINE void grace_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	grace_barrier();
#endif
}

#endif /* GRACE_ARCH_ATOMIC_H */
