/* SPDX-License-Identifier: MIT */
/*
 * Restartable sequences (rseq(2)): the per-CPU primitives the whole library uses. Internal: the
 * layout is visible only because inline fast paths (srcu.h, the callback engine) call them.
 *
 * What rseq gives (seed 004): the kernel keeps the current CPU number in a per-thread area that
 * user space reads with one load, and restarts ("aborts") a registered critical section whose
 * thread was preempted, migrated or signalled before its last instruction (the commit). A
 * per-CPU update whose commit is one store is then atomic with respect to every other thread
 * that updates the same per-CPU word the same way, without a lock prefix or LL/SC.
 *
 * The rseq area. glibc 2.35+ registers one per thread and publishes it at thread pointer +
 * __rseq_offset (__rseq_size > 0). When glibc did not (older glibc, or
 * GLIBC_TUNABLES=glibc.pthread.rseq=0) grace registers its own area, grace__rseq_own, lazily in
 * each thread on its first per-CPU operation (see src/rseq/rseq.c). grace__rseq_area() finds the
 * area in use with two loads and no branch: &grace__rseq_own + grace__rseq_delta, where the delta
 * (0 until start-up chose glibc's area) is the same in every thread because both areas live in
 * the static TLS block. A thread without a usable registration reads cpu_id < 0 (-1: not tried
 * yet, -2: failed or disabled) and every primitive below then reports "no rseq" (-1) so the
 * caller can fall back; GRACE_NO_RSEQ=1 forces that for the whole process (the tests use it).
 *
 * THE CONTRACT for per-CPU data updated with rseq (the caller's obligations):
 *  1. A word updated by grace__rseq_percpu_add*() or a list head pushed by
 *     grace__rseq_list_push() is written ONLY by rseq critical sections running on its CPU
 *     (and by grace__rseq_list_take() under the protocol below). Never mix in plain or atomic
 *     read-modify-writes from other CPUs: an rseq commit is not atomic with respect to another
 *     CPU, so such a mix loses updates. Threads that cannot use rseq (-1 returned) must use a
 *     separate word updated with atomics: that is why struct grace__rseq_list has two heads and
 *     srcu keeps rseq and atomic counters side by side.
 *  2. Any thread may READ such words at any time (aligned 64-bit loads are single-copy atomic).
 *  3. Index bound: the primitives take the number of per-CPU slots; a CPU number outside it
 *     (which the kernel never reports for arrays sized by grace__rseq_nr_cpus()) makes the
 *     primitive return -1 instead of writing out of bounds.
 *  4. Lists: a list may be consumed (a) from its own CPU, by grace__rseq_list_pop_local(),
 *     which is itself an rseq critical section, or (b) from any CPU by grace__rseq_list_take(),
 *     which switches the list to atomic mode, issues
 *     membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) so that every push that might not have
 *     seen the switch is aborted or committed, takes the head, and switches back. Consumers of
 *     one list must be serialized by the caller (one worker per queue, or a lock).
 *  5. Ordering: a push publishes the node with release semantics (x86: every store is a release;
 *     aarch64: the commit is stlr), so the consumer's acquire (rseq pop: same CPU, program order
 *     across the context switch; take: atomic exchange with acquire) sees the node's fields.
 *     grace__rseq_percpu_add() is relaxed; grace__rseq_percpu_add_release() orders every earlier
 *     access of the thread before the increment (pairs with an acquire load of the word).
 *
 * Supported: x86-64 and aarch64 (inline asm below). Elsewhere, and in TSan mode (TSan cannot see
 * the stores of inline asm, so it would miss the happens-before edges they carry), the per-CPU
 * primitives always report "no rseq" and callers use their atomic fallback; the CPU-number read
 * still works everywhere.
 */
#ifndef GRACE_INTERNAL_RSEQ_H
#define GRACE_INTERNAL_RSEQ_H

#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>
#include <grace/diag.h>

GRACE_BEGIN_DECLS

/* The kernel ABI (struct rseq of linux/rseq.h), registered with the original 32-byte size. */
struct grace__rseq_abi {
	uint32_t cpu_id_start; /* kernel: current CPU, always a valid CPU number */
	uint32_t cpu_id;       /* kernel: current CPU, or < 0 (as int32) when not registered */
	uint64_t rseq_cs;      /* user: address of the running critical section's descriptor */
	uint32_t flags;
	uint32_t node_id;
	uint32_t mm_cid;
	uint32_t pad_;
} __attribute__((aligned(32)));

#define GRACE__RSEQ_CPU_UNINIT ((uint32_t)-1) /* registration not tried in this thread */
#define GRACE__RSEQ_CPU_FAILED ((uint32_t)-2) /* registration failed, or rseq disabled */

#if defined(__x86_64__)
#define GRACE__RSEQ_SIG 0x53053053u
#elif defined(__aarch64__)
#define GRACE__RSEQ_SIG 0xd428bc00u /* brk #0x45e0, as glibc's RSEQ_SIG for aarch64 */
#endif

#if (defined(__x86_64__) || defined(__aarch64__)) && !GRACE__TSAN_MODE
#define GRACE__RSEQ_OPS 1
#else
#define GRACE__RSEQ_OPS 0
#endif

/* Where grace__rseq_inc_line() finds the rseq area and how many per-CPU slots it may touch. */
struct grace__rseq_ref {
	int32_t off;    /* the area's offset from the thread pointer: grace__rseq_tp_offset() */
	uint32_t bound; /* per-CPU slots of the array (0: never commit) */
};

/* grace's own area (used when glibc registered none) and the delta to the area in use. */
GRACE_API extern __thread struct grace__rseq_abi grace__rseq_own GRACE_TLS_IE;
GRACE_API extern intptr_t grace__rseq_delta;

/* Out of line (src/rseq/rseq.c). */
/* Register the calling thread if it can be; returns the current CPU (sched_getcpu() without rseq,
 * 0 if even that fails). Never fails. */
GRACE_API int grace__rseq_cpu_slow(void);
/* Can the calling thread run rseq critical sections now? Registers it if needed. */
GRACE_API int grace__rseq_thread_ready(void);
/* Number of possible CPUs: size per-CPU arrays with it (every CPU number is below it). */
GRACE_API unsigned int grace__rseq_nr_cpus(void);
/* Does the process use rseq (glibc's or grace's area; not disabled)? Individual threads may still
 * lack it (registration refused): the primitives report that per call. */
GRACE_API int grace__rseq_enabled(void);
/* The rseq area's offset from the thread pointer (the same in every thread); meaningful only when
 * grace__rseq_enabled(). For grace__rseq_inc_line(). */
GRACE_API intptr_t grace__rseq_tp_offset(void);
/* Retry loops of the inline primitives below (same contract and return values). */
GRACE_API int grace__rseq_percpu_add_slow(uint64_t *base, size_t stride, unsigned int nslots,
					  uint64_t v, int release);
struct grace__rseq_list;
GRACE_API int grace__rseq_list_push_slow(struct grace__rseq_list *base, size_t stride,
					 unsigned int nslots, struct rcu_head *node);

/** The area of the calling thread (glibc's or grace's own). */
GRACE_INLINE struct grace__rseq_abi *grace__rseq_area(void)
{
	return (struct grace__rseq_abi *)((uintptr_t)&grace__rseq_own +
					  (uintptr_t)grace_load_relaxed(&grace__rseq_delta));
}

/**
 * grace__rseq_cpu() - the CPU the calling thread runs on (it may move right after).
 * Cost: two loads and a branch with rseq (0.28 ns on the reference machine, against 1.75 ns for
 * sched_getcpu() and 103 ns for the getcpu system call: docs/figures/srcu.md); otherwise the
 * registration attempt (once per thread) or sched_getcpu().
 */
GRACE_INLINE int grace__rseq_cpu(void)
{
	int32_t c = (int32_t)grace_load_relaxed(&grace__rseq_area()->cpu_id);

	if (GRACE_LIKELY(c >= 0))
		return c;
	return grace__rseq_cpu_slow();
}

#if GRACE__RSEQ_OPS
/*
 * Critical-section building blocks. Each critical section is one asm statement with numeric
 * local labels: 1 start, 2 post-commit, 3 descriptor (struct rseq_cs, in section
 * __grace_rseq_cs), 4 abort handler (in section __grace_rseq_abort, preceded by the signature
 * the kernel checks before jumping there). The abort handler is outside [1, 2), as the ABI
 * requires, and jumps to a C label of the asm goto.
 */
#define GRACE__RSEQ_DESC                                                                    \
	".pushsection __grace_rseq_cs, \"aw\"\n\t"                                          \
	".balign 32\n\t"                                                                    \
	"3:\n\t"                                                                            \
	".long 0x0, 0x0\n\t"                                                                \
	".quad 1f, (2f - 1f), 4f\n\t"                                                       \
	".popsection\n\t"

#if defined(__x86_64__)
#define GRACE__RSEQ_START(rseq_cs)                                                          \
	"leaq 3b(%%rip), %%rax\n\t"                                                         \
	"movq %%rax, " rseq_cs "\n\t"                                                       \
	"1:\n\t"
/* ud1 SIG(%rip), %edi: the four bytes before label 4 are the signature. */
#define GRACE__RSEQ_ABORT(target)                                                           \
	".pushsection __grace_rseq_abort, \"ax\"\n\t"                                       \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                                        \
	".long 0x53053053\n\t"                                                              \
	"4:\n\t"                                                                            \
	"jmp " target "\n\t"                                                                \
	".popsection\n\t"
#else /* aarch64 */
#define GRACE__RSEQ_START(rseq_cs)                                                          \
	"adrp x17, 3b\n\t"                                                                  \
	"add x17, x17, :lo12:3b\n\t"                                                        \
	"str x17, " rseq_cs "\n\t"                                                          \
	"1:\n\t"
#define GRACE__RSEQ_ABORT(target)                                                           \
	".pushsection __grace_rseq_abort, \"ax\"\n\t"                                       \
	".inst 0xd428bc00\n\t"                                                              \
	"4:\n\t"                                                                            \
	"b " target "\n\t"                                                                  \
	".popsection\n\t"
#endif

/*
 * One attempt: *p += v if the thread still runs on `cpu`. 0 on commit, -1 if the section was
 * aborted or the thread is not on `cpu` (or not registered: cpu_id < 0 never equals cpu).
 * release: the commit orders the thread's earlier accesses before it (aarch64 stlr; on x86 every
 * store is a release, and the asm is a compiler barrier).
 */
GRACE_INLINE int grace__rseq_add_on(struct grace__rseq_abi *rs, uint64_t *p, uint64_t v,
				    uint32_t cpu, int release)
{
#if defined(__x86_64__)
	(void)release;
	__asm__ __volatile__ goto(
		GRACE__RSEQ_DESC
		GRACE__RSEQ_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"addq %[v], %[mem]\n\t" /* commit */
		"2:\n\t"
		GRACE__RSEQ_ABORT("%l[aborted]")
		: /* no outputs (asm goto) */
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mem] "m"(*p), [v] "er"(v)
		: "memory", "cc", "rax"
		: aborted);
#else
	if (release) {
		__asm__ __volatile__ goto(
			GRACE__RSEQ_DESC
			GRACE__RSEQ_START("[%[rs], #8]")
			"ldr w17, [%[rs], #4]\n\t"
			"cmp w17, %w[cpu]\n\t"
			"b.ne 4f\n\t"
			"ldr x17, [%[p]]\n\t"
			"add x17, x17, %[v]\n\t"
			"stlr x17, [%[p]]\n\t" /* commit, store-release */
			"2:\n\t"
			GRACE__RSEQ_ABORT("%l[aborted]")
			:
			: [cpu] "r"(cpu), [rs] "r"(rs), [p] "r"(p), [v] "r"(v)
			: "memory", "cc", "x17"
			: aborted);
	} else {
		__asm__ __volatile__ goto(
			GRACE__RSEQ_DESC
			GRACE__RSEQ_START("[%[rs], #8]")
			"ldr w17, [%[rs], #4]\n\t"
			"cmp w17, %w[cpu]\n\t"
			"b.ne 4f\n\t"
			"ldr x17, [%[p]]\n\t"
			"add x17, x17, %[v]\n\t"
			"str x17, [%[p]]\n\t" /* commit */
			"2:\n\t"
			GRACE__RSEQ_ABORT("%l[aborted]")
			:
			: [cpu] "r"(cpu), [rs] "r"(rs), [p] "r"(p), [v] "r"(v)
			: "memory", "cc", "x17"
			: aborted);
	}
#endif
	return 0;
aborted:
	return -1;
}

/*
 * grace__rseq_inc_line() - one attempt at *(base + cpu * 64) += 1 on the current CPU, for arrays
 * of one cache line per CPU. The fastest form, for the srcu read side:
 *  - ref (cached by the caller next to its data) gives the area's offset from the thread pointer,
 *    so the area is addressed %fs-relative without loading a global or a GOT entry, and the
 *    bound, compared straight from memory;
 *  - the CPU number is read inside the critical section (one load: a migration after it aborts
 *    the section), and the bound check also rejects a thread without a registration (cpu_id < 0
 *    is huge unsigned).
 * Returns 0 on commit, -1 otherwise (aborted, CPU >= bound, no rseq): take the slow path.
 * ref->off must come from grace__rseq_tp_offset() after grace__rseq_enabled() said yes: any other
 * value makes the section store into the wrong thread-local word.
 * release: the commit orders the thread's earlier accesses before it (aarch64 stlr).
 */
GRACE_INLINE int grace__rseq_inc_line(const struct grace__rseq_ref *ref, uint64_t *base,
				      int release)
{
#if defined(__x86_64__)
	(void)release;
	__asm__ __volatile__ goto(
		GRACE__RSEQ_DESC
		"movslq %[off], %%rdx\n\t"        /* the area's offset from %fs */
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%%rdx)\n\t"   /* rseq_cs */
		"1:\n\t"
		"movl %%fs:4(%%rdx), %%eax\n\t"   /* cpu_id (zero-extends) */
		"cmpl %[bound], %%eax\n\t"
		"jae 4f\n\t"
		"shlq $6, %%rax\n\t"
		"addq $1, (%[base], %%rax)\n\t"   /* commit */
		"2:\n\t"
		GRACE__RSEQ_ABORT("%l[aborted]")
		:
		: [off] "m"(ref->off), [bound] "m"(ref->bound), [base] "r"(base)
		: "memory", "cc", "rax", "rdx"
		: aborted);
#else
#define GRACE__RSEQ_INC_LINE_ASM(commit)                                                   \
	__asm__ __volatile__ goto(                                                         \
		GRACE__RSEQ_DESC                                                           \
		"ldrsw x17, [%[ref]]\n\t"                                                  \
		"mrs x16, tpidr_el0\n\t"                                                   \
		"add x16, x16, x17\n\t"                                                    \
		"adrp x17, 3b\n\t"                                                         \
		"add x17, x17, :lo12:3b\n\t"                                               \
		"str x17, [x16, #8]\n\t" /* rseq_cs */                                     \
		"1:\n\t"                                                                   \
		"ldr w17, [x16, #4]\n\t" /* cpu_id (zero-extends) */                       \
		"ldr w16, [%[ref], #4]\n\t" /* bound */                                    \
		"cmp w17, w16\n\t"                                                         \
		"b.hs 4f\n\t"                                                              \
		"add x17, %[base], x17, lsl #6\n\t"                                        \
		"ldr x16, [x17]\n\t"                                                       \
		"add x16, x16, #1\n\t"                                                     \
		commit " x16, [x17]\n\t" /* commit */                                      \
		"2:\n\t"                                                                   \
		GRACE__RSEQ_ABORT("%l[aborted]")                                           \
		:                                                                          \
		: [ref] "r"(ref), [base] "r"(base)                                         \
		: "memory", "cc", "x16", "x17"                                             \
		: aborted)
	if (release)
		GRACE__RSEQ_INC_LINE_ASM("stlr");
	else
		GRACE__RSEQ_INC_LINE_ASM("str");
#undef GRACE__RSEQ_INC_LINE_ASM
#endif
	return 0;
aborted:
	return -1;
}
#endif /* GRACE__RSEQ_OPS */

/*
 * grace__rseq_percpu_add() - add v to the word of the current CPU: *(base + cpu * stride).
 * @base:   the word of CPU 0 (8-byte aligned); @stride: bytes between two CPUs' words.
 * @nslots: number of CPUs the array holds (grace__rseq_nr_cpus()).
 * Returns the CPU whose word was incremented, or -1 when the calling thread cannot use rseq
 * (then nothing was written: the caller updates its atomic fallback word instead).
 * Thread-safety: any thread; see the contract at the top. Context: never blocks; signal-safe.
 * Cost: about 10 instructions, no atomic, no fence: 0.62 ns on the reference machine, against
 * 6.9 ns for sched_getcpu() + lock xadd (bench/rseq, docs/figures/srcu.md).
 */
GRACE_INLINE int grace__rseq_percpu_add_x(uint64_t *base, size_t stride, unsigned int nslots,
					  uint64_t v, int release)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *rs = grace__rseq_area();
	uint32_t cpu = grace_load_relaxed(&rs->cpu_id_start);

	/* One attempt inline; retries (preempted, migrated, signalled), the thread's first
	 * registration and the bound check's failure are handled out of line. */
	uint64_t *p = (uint64_t *)((char *)base + (size_t)cpu * stride);

	if (GRACE_LIKELY(cpu < nslots) &&
	    GRACE_LIKELY(grace__rseq_add_on(rs, p, v, cpu, release) == 0)) {
		if ((int32_t)cpu < 0)
			__builtin_unreachable(); /* CPU numbers are below nslots <= INT_MAX */
		return (int)cpu;
	}
	return grace__rseq_percpu_add_slow(base, stride, nslots, v, release);
#else
	(void)base;
	(void)stride;
	(void)nslots;
	(void)v;
	(void)release;
	return -1;
#endif
}

GRACE_INLINE int grace__rseq_percpu_add(uint64_t *base, size_t stride, unsigned int nslots,
					uint64_t v)
{
	return grace__rseq_percpu_add_x(base, stride, nslots, v, 0);
}

GRACE_INLINE int grace__rseq_percpu_add_release(uint64_t *base, size_t stride, unsigned int nslots,
						uint64_t v)
{
	return grace__rseq_percpu_add_x(base, stride, nslots, v, 1);
}

/* ---- per-CPU lists of struct rcu_head (LIFO stacks), for the callback engine ---- */

/*
 * One per CPU, at base + cpu * stride in the caller's per-CPU array (initialise each with
 * grace__rseq_list_init(); put it on a cache line that other CPUs do not write).
 *  head:  pushed by rseq critical sections on the owning CPU (contract rule 1).
 *  ahead: pushed with compare-and-swap, by threads without rseq, in TSan mode, on other
 *         architectures, and while the list is in atomic mode.
 *  mode:  0, or GRACE__RSEQ_LIST_ATOMIC: rseq pushers divert to ahead. Set permanently by
 *         grace__rseq_list_init() when remote draining is impossible (no
 *         MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) or rseq is unusable, and temporarily by
 *         grace__rseq_list_take().
 */
struct grace__rseq_list {
	struct rcu_head *head;
	struct rcu_head *ahead;
	uint32_t mode;
	uint32_t pad_;
};
#define GRACE__RSEQ_LIST_ATOMIC 1u

GRACE_API void grace__rseq_list_init(struct grace__rseq_list *l);
/*
 * grace__rseq_list_take() - detach every node of list l (the list of any CPU), from any thread.
 * Returns a NULL-terminated chain in LIFO order per head (the rseq-pushed nodes, then the
 * atomically pushed ones); the caller restores FIFO order if it needs it. Acquire: the nodes'
 * fields written before their push are visible. Calls to take or pop_local on the same list
 * must be serialized by the caller. Context: may issue a membarrier system call (a few
 * microseconds, IPIs to the CPUs running this process); never blocks otherwise.
 */
GRACE_API struct rcu_head *grace__rseq_list_take(struct grace__rseq_list *l);

GRACE_INLINE void grace__rseq_list_push_atomic(struct grace__rseq_list *l, struct rcu_head *node)
{
	struct rcu_head *old = grace_load_relaxed(&l->ahead);

	do {
		grace_store_relaxed(&node->next, old);
		/* Release: the node's fields before its publication (pairs with the consumer's
		 * acquire exchange in grace__rseq_list_take()). */
	} while (!__atomic_compare_exchange_n(&l->ahead, &old, node, 1, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

#if GRACE__RSEQ_OPS
/* One attempt to push node onto l, the list of `cpu`: 0 committed, 1 list in atomic mode (not
 * pushed), -1 aborted or not on `cpu` (not pushed). */
GRACE_INLINE int grace__rseq_list_push_on(struct grace__rseq_abi *rs, struct grace__rseq_list *l,
					  struct rcu_head *node, uint32_t cpu)
{
#if defined(__x86_64__)
	__asm__ __volatile__ goto(
		GRACE__RSEQ_DESC
		GRACE__RSEQ_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"cmpl $0, %[mode]\n\t"
		"jnz %l[atomic_mode]\n\t"
		"movq %[head], %%rax\n\t"
		"movq %%rax, %[link]\n\t"
		"movq %[node], %[head]\n\t" /* commit */
		"2:\n\t"
		GRACE__RSEQ_ABORT("%l[aborted]")
		:
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mode] "m"(l->mode), [head] "m"(l->head), [link] "m"(node->next), [node] "r"(node)
		: "memory", "cc", "rax"
		: aborted, atomic_mode);
#else
	__asm__ __volatile__ goto(
		GRACE__RSEQ_DESC
		GRACE__RSEQ_START("[%[rs], #8]")
		"ldr w17, [%[rs], #4]\n\t"
		"cmp w17, %w[cpu]\n\t"
		"b.ne 4f\n\t"
		"ldr w17, [%[l], #16]\n\t" /* mode */
		"cbnz w17, %l[atomic_mode]\n\t"
		"ldr x17, [%[l]]\n\t"
		"str x17, [%[node]]\n\t"
		"stlr %[node], [%[l]]\n\t" /* commit, store-release */
		"2:\n\t"
		GRACE__RSEQ_ABORT("%l[aborted]")
		:
		: [cpu] "r"(cpu), [rs] "r"(rs), [l] "r"(l), [node] "r"(node)
		: "memory", "cc", "x17"
		: aborted, atomic_mode);
#endif
	return 0;
aborted:
	return -1;
atomic_mode:
	return 1;
}
#endif

/*
 * grace__rseq_list_push() - push node onto the list of the CPU the caller runs on.
 * @base: the list of CPU 0; @stride: bytes between two CPUs' lists; @nslots: CPUs in the array.
 * node->next is overwritten (the link). Returns the CPU whose list received the node (a thread
 * without rseq pushes atomically onto the list of the CPU sched_getcpu() names).
 * Thread-safety: any thread. Context: never blocks; safe in signal handlers.
 * Cost: about 12 instructions, no atomic, no fence, when rseq is usable.
 */
GRACE_INLINE int grace__rseq_list_push(struct grace__rseq_list *base, size_t stride,
				       unsigned int nslots, struct rcu_head *node)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *rs = grace__rseq_area();
	uint32_t cpu = grace_load_relaxed(&rs->cpu_id_start);

	/* One attempt inline; the rest (retries, atomic mode, no rseq, the thread's first
	 * registration) out of line. */
	if (GRACE_LIKELY(cpu < nslots) &&
	    GRACE_LIKELY(grace__rseq_list_push_on(rs, (struct grace__rseq_list *)((char *)base +
						  (size_t)cpu * stride), node, cpu) == 0)) {
		if ((int32_t)cpu < 0)
			__builtin_unreachable();
		return (int)cpu;
	}
#endif
	return grace__rseq_list_push_slow(base, stride, nslots, node);
}

/*
 * grace__rseq_list_pop_local() - detach the rseq-pushed nodes of the list of CPU `cpu`, if the
 * caller runs on `cpu` (a worker pinned there). On success stores the LIFO chain in *out
 * (possibly NULL) and returns 0. Returns -1 if the caller is not on `cpu`, has no rseq, or the
 * list is in atomic mode: then use grace__rseq_list_take(). The atomically pushed nodes (ahead)
 * are not taken here: exchange them with acquire, or use grace__rseq_list_take().
 * Must be serialized with other consumers of the list. Context: never blocks.
 */
GRACE_INLINE int grace__rseq_list_pop_local(struct grace__rseq_list *l, uint32_t cpu,
					    struct rcu_head **out)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *rs = grace__rseq_area();

	for (;;) {
#if defined(__x86_64__)
		__asm__ __volatile__ goto(
			GRACE__RSEQ_DESC
			GRACE__RSEQ_START("%[rseq_cs]")
			"cmpl %[cpu], %[cpu_id]\n\t"
			"jnz %l[not_here]\n\t"
			"cmpl $0, %[mode]\n\t"
			"jnz %l[not_here]\n\t"
			"movq %[head], %%rax\n\t"
			"movq %%rax, (%[out])\n\t"
			"movq $0, %[head]\n\t" /* commit */
			"2:\n\t"
			GRACE__RSEQ_ABORT("%l[aborted]")
			:
			: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
			  [mode] "m"(l->mode), [head] "m"(l->head), [out] "r"(out)
			: "memory", "cc", "rax"
			: aborted, not_here);
#else
		__asm__ __volatile__ goto(
			GRACE__RSEQ_DESC
			GRACE__RSEQ_START("[%[rs], #8]")
			"ldr w17, [%[rs], #4]\n\t"
			"cmp w17, %w[cpu]\n\t"
			"b.ne %l[not_here]\n\t"
			"ldr w17, [%[l], #16]\n\t" /* mode */
			"cbnz w17, %l[not_here]\n\t"
			"ldr x17, [%[l]]\n\t"
			"str x17, [%[out]]\n\t"
			"str xzr, [%[l]]\n\t" /* commit */
			"2:\n\t"
			GRACE__RSEQ_ABORT("%l[aborted]")
			:
			: [cpu] "r"(cpu), [rs] "r"(rs), [l] "r"(l), [out] "r"(out)
			: "memory", "cc", "x17"
			: aborted, not_here);
#endif
		return 0;
aborted:
		continue; /* preempted or signalled: the next attempt sees where we run now */
not_here:
		return -1;
	}
#else
	(void)l;
	(void)cpu;
	(void)out;
	return -1;
#endif
}

/* grace_rseq_mode(), which rseq area the process uses, is declared in <grace/diag.h>. */

GRACE_END_DECLS

#endif /* GRACE_INTERNAL_RSEQ_H */
