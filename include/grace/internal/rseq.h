/* SPDX-License-Identifier: MIT */
/*
 * Restartable sequences (rseq(2)): the per-CPU primitives the whole library uses. Internal: the
 * layout is visible only because inline fast paths (srcu.h, the callback engine) call them.
 *
 * This header holds what every architecture shares: the kernel ABI, the contract, the
 * pseudo-code of each critical section (below), the out-of-line entry points and the C wrappers
 * that retry or fall back. The critical sections themselves are in one header per architecture,
 * which implements the pseudo-code and is never included directly:
 *   internal/arch/rseq-x86_64.h    x86-64
 *   internal/arch/rseq-aarch64.h   aarch64 (little-endian and big-endian)
 *   internal/arch/rseq-cppcheck.h  plain-C stand-ins seen only by static analysers (cppcheck)
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
 *     primitive return -1 instead of writing out of bounds. Zero slots is a caller bug: the
 *     out-of-line list push reports it and aborts (there is no list to push onto).
 *  4. Lists: a list may be consumed (a) from its own CPU, by grace__rseq_list_pop_local(),
 *     which is itself an rseq critical section, or (b) from any CPU by grace__rseq_list_take(),
 *     which switches the list to atomic mode, issues
 *     membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) so that every push that might not have
 *     seen the switch is aborted or committed, takes the head, and switches back. Consumers of
 *     one list must be serialized by the caller (one worker per queue, or a lock).
 *  5. Ordering: a push publishes the node with release semantics (x86: every store is a release;
 *     aarch64: the commit is stlr), so the consumer's acquire (rseq pop: same CPU, program order
 *     across the context switch; take: atomic exchange with acquire) sees the node's fields.
 *     A push reads the list's mode with acquire (pairs with the release store that ends a take:
 *     the head it then reads is the emptied one). grace__rseq_percpu_add() is relaxed;
 *     grace__rseq_percpu_add_release() orders every earlier access of the thread before the
 *     increment (pairs with an acquire load of the word).
 *  6. Unloading code (dlclose). The descriptor of a critical section (struct rseq_cs) lives in
 *     the object whose code contains the section: for the inline srcu read side that is the
 *     caller's executable or shared object. The kernel reads the area's rseq_cs pointer on the
 *     thread's next return to user space after a preemption, migration or signal, and clears it
 *     only then (lazily) when the thread is outside the section; a pointer into an object that
 *     was unloaded in between makes that read fault, and the kernel kills the thread with
 *     SIGSEGV (si_code SI_KERNEL). So every primitive here leaves rseq_cs at 0 when it returns:
 *     one store after the commit, and the same store on every exit that does not commit (abort
 *     handler, early exits). An object may therefore be unloaded as soon as no thread executes
 *     its code, whatever sections its code ran before. Code that builds its own critical
 *     sections with the arch building blocks must keep the same rule (use the END, EXIT and
 *     ABORT macros of the architecture header).
 *
 *  7. Order. A consumer gets the nodes of each thread in the order that thread pushed them
 *     (grace__rseq_chain_fifo() turns the two LIFO heads into that order: the rseq-pushed
 *     nodes, then the atomically pushed ones), for a thread that stays on one CPU. Threads
 *     without rseq push only to `ahead`. A thread with rseq pushes to `ahead` only while a
 *     take drains the list, and such a push succeeds only while the list still drains: the
 *     take sets GRACE__RSEQ_AHEAD_DRAINING in `ahead` before it switches the mode and clears
 *     it with the exchange that takes `ahead`, and the draining push is a compare-and-swap
 *     that requires the bit (a pusher that read the mode late finds it clear and pushes with
 *     rseq again). So every node a thread pushed to `ahead` during a take is taken by that
 *     take, after every node the thread pushed to `head` before it, and before any node the
 *     thread pushes after it. (Without the bit, a pusher delayed between its load of the mode
 *     and its compare-and-swap lands in `ahead` after the take, and its next push, to `head`,
 *     is taken ahead of it: docs/torture.md, mutation audit, "draining push unconditional".)
 *
 * Supported: x86-64 and aarch64 (the architecture headers). Elsewhere, and in TSan mode (TSan
 * cannot see the stores of inline asm, so it would miss the happens-before edges they carry),
 * the per-CPU primitives always report "no rseq" and callers use their atomic fallback; the
 * CPU-number read still works everywhere.
 *
 * ---- The critical sections each architecture implements (pseudo-code) ----
 *
 * Conventions: area = the calling thread's rseq area; load/store are single-copy atomic;
 * "commit" is the last instruction of the section (the store that publishes); "abort" means
 * the kernel restarted the section or it jumped to its abort handler itself. Every section
 * begins with  store(area->rseq_cs, &descriptor)  and every exit, committed or not, ends with
 * store(area->rseq_cs, 0) (rule 6). A section returns 0 on commit, -1 on abort, 1 on the other
 * early exit it names. Nothing but rseq_cs is written before the commit except where stated.
 *
 *   grace__rseq_add_on(area, p, v, cpu, release)           one attempt at *p += v on `cpu`
 *     if (load(area->cpu_id) != cpu) abort
 *     r = load(*p); r += v
 *     commit: store(*p, r)       relaxed, or release when `release` (aarch64 stlr)
 *
 *   grace__rseq_inc_line(ref, base, release)               one attempt at base[cpu * 64] += 1
 *     area = thread_pointer + ref->off
 *     c = load(area->cpu_id)     (read inside the section: a migration after it aborts)
 *     if (c >= ref->bound) abort (also rejects cpu_id < 0, which is huge unsigned)
 *     r = load(base + c * 64); r += 1
 *     commit: store(base + c * 64, r)   relaxed, or release when `release`
 *
 *   grace__rseq_list_push_on(area, l, node, cpu)           one attempt at pushing node on l
 *     if (load(area->cpu_id) != cpu) abort
 *     if (load(l->mode, acquire) != 0) exit 1 ("atomic mode": not pushed)
 *     h = load(l->head)
 *     store(node->next, h)       (the node is private until the commit)
 *     commit: store(l->head, node, release)
 *
 *   grace__rseq_list_pop_on(area, l, cpu, out)             one attempt at detaching l's chain
 *     if (load(area->cpu_id) != cpu) exit 1 ("not here")
 *     if (load(l->mode) != 0) exit 1
 *     h = load(l->head)
 *     store(*out, h)             (the caller's private word)
 *     commit: store(l->head, NULL)
 *
 * `release` (0: relaxed, 1: release) selects one of the two instantiations of the architecture's
 * asm template, whose commit instruction is the only thing the memory order changes; the inline
 * wrappers below pass constants, so the choice costs nothing on the fast paths.
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

/* Where grace__rseq_inc_line() finds the rseq area and how many per-CPU slots it may touch. */
struct grace__rseq_ref {
	int32_t off;    /* the area's offset from the thread pointer: grace__rseq_tp_offset() */
	uint32_t bound; /* per-CPU slots of the array (0: never commit) */
};

/*
 * Per-CPU lists of struct rcu_head (LIFO stacks), for the callback engine. One per CPU, at
 * base + cpu * stride in the caller's per-CPU array (initialise each with grace__rseq_list_init();
 * put it on a cache line that other CPUs do not write).
 *  head:  pushed by rseq critical sections on the owning CPU (contract rule 1).
 *  ahead: pushed with compare-and-swap, by threads without rseq, in TSan mode, on other
 *         architectures, and while the list is in atomic mode. Its low bit is
 *         GRACE__RSEQ_AHEAD_DRAINING while a take drains the list (rule 7): consumers strip it.
 *  mode:  0, or GRACE__RSEQ_LIST_ATOMIC: rseq pushers divert to ahead. Set permanently by
 *         grace__rseq_list_init() when remote draining is impossible (no
 *         MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) or rseq is unusable, and temporarily by
 *         grace__rseq_list_take().
 * The architecture headers address the fields by offset (head 0, mode 16): src/rseq/rseq.c
 * checks the layout at compile time.
 */
struct grace__rseq_list {
	struct rcu_head *head;
	struct rcu_head *ahead;
	uint32_t mode;
	uint32_t pad_;
};
#define GRACE__RSEQ_LIST_ATOMIC 1u
/* Low bit of `ahead`: a take is draining the list (contract rule 7). */
#define GRACE__RSEQ_AHEAD_DRAINING ((uintptr_t)1)

/* grace's own area (used when glibc registered none) and the delta to the area in use. */
GRACE_API extern __thread struct grace__rseq_abi grace__rseq_own GRACE_TLS_IE;
GRACE_API extern intptr_t grace__rseq_delta;

/* ---- the architecture's critical sections ---- */

/*
 * Static analysers get plain-C stand-ins: cppcheck cannot parse asm goto. Newer cppcheck defines
 * __CPPCHECK__; cppcheck 2.10 (Debian 12) defines nothing and checks the one configuration that
 * compiler.h's #error leaves it (__GNUC__ alone), which lacks __GNUC_MINOR__, a macro every real
 * GCC and Clang predefines.
 */
#define GRACE__RSEQ_ARCH_INSIDE 1 /* the architecture headers refuse to be included otherwise */
#if defined(__CPPCHECK__) || (defined(__GNUC__) && !defined(__GNUC_MINOR__))
#include <grace/internal/arch/rseq-cppcheck.h>
#elif defined(__x86_64__)
#include <grace/internal/arch/rseq-x86_64.h>
#elif defined(__aarch64__)
#include <grace/internal/arch/rseq-aarch64.h>
#else
#define GRACE__RSEQ_ARCH 0
#endif
#undef GRACE__RSEQ_ARCH_INSIDE

/* GRACE__RSEQ_ARCH: the architecture has critical sections (and GRACE__RSEQ_SIG, the
 * signature the kernel checks before an abort handler). GRACE__RSEQ_OPS: they are used. */
#if GRACE__RSEQ_ARCH && !GRACE__TSAN_MODE
#define GRACE__RSEQ_OPS 1
#else
#define GRACE__RSEQ_OPS 0
#endif

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
GRACE_API int grace__rseq_list_push_slow(struct grace__rseq_list *base, size_t stride,
					 unsigned int nslots, struct rcu_head *node);
GRACE_API void grace__rseq_list_init(struct grace__rseq_list *l);
/*
 * grace__rseq_list_take() - detach every node of list l (the list of any CPU), from any thread.
 * Returns a NULL-terminated chain in which each thread's nodes are in the order it pushed them
 * (contract rule 7). Acquire: the nodes'
 * fields written before their push are visible. It detaches every node whose push happens
 * before the take; a push that runs at the same time is detached now or left for the next take.
 * Calls to take or pop_local on the same list
 * must be serialized by the caller. Context: issues a membarrier system call (a few
 * microseconds, IPIs to the CPUs running this process) when the rseq head holds nodes, none
 * when it reads empty; never blocks otherwise.
 */
GRACE_API struct rcu_head *grace__rseq_list_take(struct grace__rseq_list *l);

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

/*
 * Reverse the NULL-terminated chain l; *tail gets its last node (the old head), NULL if empty.
 */
GRACE_INLINE struct rcu_head *grace__rseq_chain_reverse(struct rcu_head *l, struct rcu_head **tail)
{
	struct rcu_head *r = NULL;

	*tail = l;
	while (l) {
		struct rcu_head *nx = l->next;
		l->next = r;
		r = l;
		l = nx;
	}
	return r;
}

/*
 * grace__rseq_chain_fifo() - one chain in push order per thread from what a consumer took: the
 * rseq-pushed LIFO chain and the atomically pushed one (its DRAINING bit stripped). Contract
 * rule 7. Cost: one pass over the nodes (their lines are about to be read by the consumer).
 */
GRACE_INLINE struct rcu_head *grace__rseq_chain_fifo(struct rcu_head *rseq_part,
						     struct rcu_head *atomic_part)
{
	struct rcu_head *t1, *t2;
	struct rcu_head *a = (struct rcu_head *)((uintptr_t)atomic_part &
						 ~GRACE__RSEQ_AHEAD_DRAINING);
	struct rcu_head *r = grace__rseq_chain_reverse(rseq_part, &t1);

	a = grace__rseq_chain_reverse(a, &t2);
	if (!r)
		return a;
	t1->next = a;
	return r;
}

GRACE_INLINE void grace__rseq_list_push_atomic(struct grace__rseq_list *l, struct rcu_head *node)
{
	struct rcu_head *old = grace_load_relaxed(&l->ahead);

	do {
		/* The DRAINING bit stays as it is (a take's, rule 7); the link is a plain pointer. */
		grace_store_relaxed(&node->next, (struct rcu_head *)((uintptr_t)old &
								     ~GRACE__RSEQ_AHEAD_DRAINING));
		/* Release: the node's fields before its publication (pairs with the consumer's
		 * acquire exchange in grace__rseq_list_take()). */
	} while (!grace_cmpxchg(&l->ahead, &old,
				(struct rcu_head *)((uintptr_t)node |
						    ((uintptr_t)old & GRACE__RSEQ_AHEAD_DRAINING)),
				__ATOMIC_RELEASE));
}

/*
 * grace__rseq_list_push() - push node onto the list of the CPU the caller runs on.
 * @base: the list of CPU 0; @stride: bytes between two CPUs' lists; @nslots: CPUs in the array
 * (at least 1). node->next is overwritten (the link). Returns the CPU whose list received the
 * node (a thread without rseq pushes atomically onto the list of the CPU sched_getcpu() names).
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
	    GRACE_LIKELY(grace__rseq_list_push_on(rs,
						  (struct grace__rseq_list *)((char *)base +
									      (size_t)cpu * stride),
						  node, cpu) == 0)) {
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
	int r;

	/* Preempted or signalled (-1): the next attempt sees where the thread runs now. */
	while ((r = grace__rseq_list_pop_on(rs, l, cpu, out)) < 0) {
	}
	return r == 0 ? 0 : -1;
#else
	(void)l;
	(void)cpu;
	(void)out;
	return -1;
#endif
}

GRACE_END_DECLS

#endif /* GRACE_INTERNAL_RSEQ_H */
