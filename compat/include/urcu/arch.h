/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/arch.h>: memory barriers, CPU relax and the cycle counter under liburcu's
 * names. The SMP barriers map to grace's fences; the mandatory (I/O) barriers are the same
 * fences (user space has no weaker ordering for device memory to exploit).
 */
#ifndef GRACE_URCU_ARCH_H
#define GRACE_URCU_ARCH_H

#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <urcu/compiler.h>
#include <urcu/config.h>
/* As liburcu's <urcu/arch.h>: <unistd.h> and the system-call numbers come with it. */
#include <urcu/syscall-compat.h>

#if defined(__x86_64__)
#define URCU_ARCH_X86 1
#define URCU_ARCH_AMD64 1
#elif defined(__i386__)
#define URCU_ARCH_X86 1
#elif defined(__aarch64__)
#define URCU_ARCH_AARCH64 1
#elif defined(__arm__)
#define URCU_ARCH_ARM 1
#elif defined(__powerpc64__)
#define URCU_ARCH_PPC 1
#define URCU_ARCH_PPC64 1
#elif defined(__riscv)
#define URCU_ARCH_RISCV 1
#elif defined(__s390__)
#define URCU_ARCH_S390 1
#endif

/*
 * The padding unit programs size their per-thread data with. liburcu's per-architecture values,
 * not grace's GRACE_CACHE_LINE (64): a program lays out arrays of per-thread structs with it, and
 * at 64 on x86 two threads' entries of a malloc()ed array (16-byte aligned) share a line
 * (liburcu's test_perthreadlock read at half speed). 128 on x86 also keeps neighbours out of
 * the 128-byte pairs that the adjacent-line prefetcher fetches together.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(__s390__)
#define CAA_CACHE_LINE_SIZE 128
#elif defined(__powerpc__) || defined(__sparc__)
#define CAA_CACHE_LINE_SIZE 256
#else
#define CAA_CACHE_LINE_SIZE 64
#endif

/* Full fence: every access before it is ordered before every access after it. */
#define cmm_smp_mb() grace_smp_mb()
/*
 * Read and write fences. On TSO (x86) loads are not reordered with loads, nor stores with
 * stores, so a compiler barrier suffices; elsewhere an acquire fence orders earlier loads
 * before everything after it (what liburcu's read barrier promises, and more), and the write
 * barrier is a full fence (grace has no release-fence wrapper; stronger, never weaker).
 */
#if GRACE_ARCH_TSO
#define cmm_smp_rmb() grace_barrier()
#define cmm_smp_wmb() grace_barrier()
#else
#define cmm_smp_rmb() grace_fence_acquire()
#define cmm_smp_wmb() grace_smp_mb()
#endif
#define cmm_mb() cmm_smp_mb()
#define cmm_rmb() cmm_smp_rmb()
#define cmm_wmb() cmm_smp_wmb()
/* Dependent loads are ordered by the address dependency on every architecture grace supports
 * (not DEC Alpha): a compiler barrier. */
#define cmm_read_barrier_depends() grace_barrier()
#define cmm_smp_read_barrier_depends() grace_barrier()
/* Cache flushes of liburcu's non-coherent-cache ports: coherent everywhere grace runs. */
#define cmm_mc() cmm_barrier()
#define cmm_rmc() cmm_barrier()
#define cmm_wmc() cmm_barrier()
#define cmm_smp_mc() cmm_barrier()
#define cmm_smp_rmc() cmm_barrier()
#define cmm_smp_wmc() cmm_barrier()
#define CONFIG_HAVE_MEM_COHERENCY 1

#define caa_cpu_relax() grace_cpu_relax()

/* A cycle counter: the TSC on x86, the virtual counter on aarch64, else nanoseconds. */
typedef uint64_t caa_cycles_t;
#define HAS_CAA_GET_CYCLES 1
static inline caa_cycles_t caa_get_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	/* clang-format off */
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	/* clang-format on */
	return ((caa_cycles_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	/* clang-format off */
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	/* clang-format on */
	return v;
#else
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (caa_cycles_t)ts.tv_sec * 1000000000u + (caa_cycles_t)ts.tv_nsec;
#endif
}

#endif
