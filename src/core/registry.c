/* SPDX-License-Identifier: MIT */
/*
 * Reader registry (see registry.h). The wait is core/wait.c's; this file supplies its hooks:
 * done (no registered reader holds the grace period), arm (set WAITING in each holder's own
 * cache line), recheck (after barrier W: done, or is every holder flagged?), disarm (nothing:
 * each reader clears its own flag when it wakes the updater, and a flag left on a reader that
 * finished without seeing it costs that reader one wake-up call later) and stall (report the
 * holders once per grace period).
 */
#include "core/registry.h"

#include <stdlib.h>
#include <grace/arch/atomic.h>

#include <grace/internal/rseq.h>

#include "core/annotate.h"
#include "core/diag.h"
#include "core/wait.h"

/* The calling thread's rseq cpu_id word, or NULL when it has no rseq area the kernel updates. */
static const uint32_t *self_cpu_word(void)
{
	return grace__rseq_thread_ready() ? &grace__rseq_area()->cpu_id : NULL;
}

void grace__registry_init(struct grace__registry *reg, uint64_t active_mask, uint64_t cmp_mask,
			  bool done_is_ordered, struct grace__reader *(*self)(void),
			  const char *flavor)
{
	grace__ann_ignore(reg, sizeof(*reg)); /* Valgrind: futex, nthreads are atomics */
	grace__lock_init(&reg->lock);
	reg->slot = NULL;
	reg->cpu = NULL;
	reg->n = reg->cap = 0;
	reg->wq.futex = GRACE__WAIT_AWAKE;
	reg->wq.spin_ns = 0;
	reg->active_mask = active_mask;
	reg->cmp_mask = cmp_mask;
	reg->self = self;
	reg->flavor = flavor;
	reg->nthreads = 0;
	reg->done_is_ordered = done_is_ordered;
}

void grace__registry_add(struct grace__registry *reg, struct grace__reader *r)
{
	/* Called by the thread that registers: its own rseq area (before the lock: the first
	 * call may register the area with the kernel). */
	const uint32_t *cpu = self_cpu_word();

	grace__lock(&reg->lock);
	if (reg->n == reg->cap) {
		unsigned long cap = reg->cap ? reg->cap * 2 : 64;
		/* An array of pointers: the element is a pointer by design. */
		size_t bytes = cap *
			       sizeof(struct grace__reader *); // NOLINT(bugprone-sizeof-expression)
		struct grace__reader **s = (struct grace__reader **)realloc(reg->slot, bytes);
		if (s)
			reg->slot = s;
		const uint32_t **c =
			s ? (const uint32_t **)realloc((void *)reg->cpu, cap * sizeof(*c)) : NULL;
		if (!c)
			grace__fatal("rcu_register_thread",
				     "out of memory registering reader thread %lu of the %s flavor",
				     reg->n + 1, reg->flavor);
		reg->cpu = c;
		reg->cap = cap;
	}
	r->reg_idx = reg->n;
	reg->cpu[reg->n] = cpu;
	reg->slot[reg->n++] = r;
	grace_store_relaxed(&reg->nthreads, reg->n);
	/* Full fence: the count before any read-side access of the new reader. Pairs with the
	 * fence after seq_start (core/gp.c) that precedes grace__registry_alone()'s load: with
	 * full fences on both sides (store-buffering), either the driver sees the new thread or
	 * the thread's first section sees the removal (see memb_wait_readers()). */
	grace_smp_mb();
	grace__unlock(&reg->lock);
}

void grace__registry_del(struct grace__registry *reg, struct grace__reader *r)
{
	grace__lock(&reg->lock);
	/* Move the last reader into r's slot: the array stays dense. */
	unsigned long i = (unsigned long)r->reg_idx;
	struct grace__reader *last = reg->slot[--reg->n];
	reg->slot[i] = last;
	reg->cpu[i] = reg->cpu[reg->n];
	last->reg_idx = i;
	/* Release: the departing thread's last sections happen before a driver that reads the
	 * lower count with acquire and skips the wait (grace__registry_alone), so what it frees
	 * after that is no longer read. The mutex alone would not order the section's loads
	 * before this store on a weakly ordered CPU. */
	grace_store_release(&reg->nthreads, reg->n);
	grace__unlock(&reg->lock);
}

bool grace__registry_alone(struct grace__registry *reg, bool self_alone)
{
	/* Acquire: pairs with the release in grace__registry_del(). */
	unsigned long n = grace_load_acquire(&reg->nthreads);
	return n == 0 || (n == 1 && self_alone);
}

/* ---- the wait's hooks ---- */

struct reg_wait {
	struct grace__registry *reg;
	uint64_t cur;
	unsigned long cookie;
};

/*
 * The scan loads each reader's ctr relaxed and orders them all before what follows with one
 * acquire fence after the loop: the same ordering as an acquire load each (they pair with the
 * readers' release stores of a quiescent ctr, so those sections happen before the updater goes
 * on), without serialising the loads on CPUs where an acquire load waits for the one before
 * it (ldar on aarch64). TSan does not model the fence: there each load is an acquire.
 */
#if GRACE__TSAN_MODE
#define SCAN_LOAD(p) grace_load_acquire(p)
#else
#define SCAN_LOAD(p) grace_load_relaxed(p)
#endif

static inline unsigned long holds(const struct grace__registry *reg, uint64_t c, uint64_t cur)
{
	return ((c & reg->active_mask) != 0) & (((c ^ cur) & reg->cmp_mask) != 0);
}

/* Does any registered reader hold cur? Stops at the first holder. */
static bool any_holder(struct grace__registry *reg, uint64_t cur)
{
	struct grace__reader *const *slot = reg->slot;
	unsigned long n = reg->n, h = 0;

	grace__lock_assert_held(&reg->lock);
	/* Eight at a time: independent loads the CPU overlaps, one test per eight. */
	unsigned long i = 0;
	for (; i + 8 <= n && !h; i += 8)
		for (unsigned int k = 0; k < 8; k++)
			h |= holds(reg, SCAN_LOAD(&slot[i + k]->ctr), cur);
	for (; i < n && !h; i++)
		h |= holds(reg, SCAN_LOAD(&slot[i]->ctr), cur);
	grace_fence_acquire(); /* see SCAN_LOAD */
	return h != 0;
}

/* Count readers holding cur, and in *unflagged those without the WAITING flag. */
static unsigned long count_holders(struct grace__registry *reg, uint64_t cur,
				   unsigned long *unflagged)
{
	unsigned long n = 0, u = 0;

	grace__lock_assert_held(&reg->lock);
	for (unsigned long i = 0; i < reg->n; i++) {
		struct grace__reader *r = reg->slot[i];
		if (holds(reg, SCAN_LOAD(&r->ctr), cur)) {
			n++;
			if (!(grace_load_relaxed(&r->waiter) & GRACE__W_WAITING))
				u++;
		}
	}
	grace_fence_acquire(); /* see SCAN_LOAD */
	*unflagged = u;
	return n;
}

static bool reg_done(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	bool any;

	grace__lock(&w->reg->lock);
	any = any_holder(w->reg, w->cur);
	grace__unlock(&w->reg->lock);
	return !any;
}

static void reg_arm(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	struct grace__registry *reg = w->reg;

	grace__lock(&reg->lock);
	for (unsigned long i = 0; i < reg->n; i++) {
		struct grace__reader *r = reg->slot[i];
		if (holds(reg, grace_load_relaxed(&r->ctr), w->cur))
			/* Release: the futex word's SLEEPING before the flag (core/wait.h). */
			grace_fetch_or(&r->waiter, GRACE__W_WAITING, __ATOMIC_RELEASE);
	}
	grace__unlock(&reg->lock);
}

static enum grace__recheck reg_recheck(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	unsigned long u, n;

	/*
	 * A reader can become a holder after the flag loop (a section whose snapshot was loaded
	 * before the grace period's new counter became visible, its lock store delayed or
	 * preempted until now; a QSBR thread coming online): sleeping on an unflagged holder is
	 * a lost wake-up (found by the Promela model, tests/model/memb.pml), so such a holder
	 * sends the wait back to arm(). Bounded: a reader can start at most one such section per
	 * grace period.
	 */
	grace__lock(&w->reg->lock);
	n = count_holders(w->reg, w->cur, &u);
	grace__unlock(&w->reg->lock);
	if (n == 0)
		return GRACE__RECHECK_DONE;
	return u ? GRACE__RECHECK_AGAIN : GRACE__RECHECK_SLEEP;
}

static void reg_disarm(void *ctx)
{
	(void)ctx;
}

/*
 * Where the holders last ran (core/wait.h, GRACE__BLOCKED_*). The kernel writes a thread's rseq
 * cpu_id each time the thread returns to user space on another CPU, so it names the CPU the
 * thread last ran on. A holder whose word names the waiter's CPU is not running now (the waiter
 * is) and, unless the load balancer moves it, waits in that CPU's run queue for the waiter to
 * give the CPU up: with more runnable threads than CPUs (a QSBR writer beside its readers on 2
 * CPUs), a spin there is spent holding off the very reader it waits for. Two holders that name
 * one other CPU take turns there, so one of them is not running either. Relaxed loads: a hint
 * only (core/wait.h); a stale value costs one sleep or one more spin round.
 */
static unsigned int reg_blocked(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	struct grace__registry *reg = w->reg;
	const uint32_t *mine = self_cpu_word();
	unsigned long held = 0, here = 0;
	uint64_t seen[16] = { 0 }; /* CPUs 0-1023 that a holder elsewhere last ran on */
	unsigned int b = 0;

	if (!mine)
		return 0;
	uint32_t me = grace_load_relaxed(mine);
	grace__lock(&reg->lock);
	for (unsigned long i = 0; i < reg->n; i++) {
		if (!holds(reg, grace_load_relaxed(&reg->slot[i]->ctr), w->cur))
			continue;
		held++; /* a holder without rseq counts: it is not known to be here */
		if (!reg->cpu[i])
			continue;
		uint32_t c = grace_load_relaxed(reg->cpu[i]);
		if (c == me) {
			here++;
		} else if (c < 1024) { /* larger numbers (and the negative codes) are not tracked */
			uint64_t bit = 1ull << (c % 64);
			if (seen[c / 64] & bit)
				b |= GRACE__BLOCKED_SHARED;
			seen[c / 64] |= bit;
		}
	}
	grace__unlock(&reg->lock);
	if (here)
		b |= GRACE__BLOCKED_HERE;
	if (here && here == held)
		b |= GRACE__BLOCKED_ALL_HERE;
	return b;
}

static void reg_stall(void *ctx, uint64_t waited_ns)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	struct grace__registry *reg = w->reg;
	int tids[64];
	unsigned int n = 0;

	/* Collect under the lock, report after it: a stall handler may register threads. */
	grace__lock(&reg->lock);
	for (unsigned long i = 0; i < reg->n && n < 64; i++) {
		struct grace__reader *r = reg->slot[i];
		if (!holds(reg, grace_load_acquire(&r->ctr), w->cur) || r->stall_seq == w->cookie)
			continue;
		r->stall_seq = w->cookie; /* once per stall */
		tids[n++] = r->tid;
	}
	grace__unlock(&reg->lock);
	for (unsigned int i = 0; i < n; i++)
		grace__report_stall(reg->flavor, tids[i], waited_ns, w->cookie);
}

static const struct grace__wait_ops reg_wait_ops = {
	reg_done, reg_arm, reg_recheck, reg_disarm, reg_stall, reg_blocked, false,
};
/* QSBR: quiescent states are release stores that the scan acquires (flavor/qsbr.c). */
static const struct grace__wait_ops reg_wait_ops_ordered = {
	reg_done, reg_arm, reg_recheck, reg_disarm, reg_stall, reg_blocked, true,
};

void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited)
{
	struct reg_wait w = { reg, cur, cookie };

	grace__wait_for_readers(reg->done_is_ordered ? &reg_wait_ops_ordered : &reg_wait_ops, &w,
				&reg->wq, expedited);
}

void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r)
{
	grace_fetch_and(&r->waiter, ~GRACE__W_WAITING, __ATOMIC_RELAXED);
	grace__wait_wake(&reg->wq.futex);
}

/* ---- fork ---- */

void grace__registry_atfork_prepare(struct grace__registry *reg)
{
	grace__lock(&reg->lock);
}

void grace__registry_atfork_parent(struct grace__registry *reg)
{
	grace__unlock(&reg->lock);
}

void grace__registry_atfork_child(struct grace__registry *reg)
{
	struct grace__reader *self = reg->self();

	/* The lock was taken in prepare by this thread (the only one the child has): release it
	 * (which also clears the owner the parent's thread id was recorded as in debug builds),
	 * then keep only this thread's reader. */
	grace__unlock(&reg->lock);
	reg->n = 0;
	reg->wq.futex = GRACE__WAIT_AWAKE;
	if (self->flags & GRACE__F_REGISTERED) {
		self->waiter &= ~GRACE__W_WAITING;
		self->reg_idx = 0;
		reg->cpu[reg->n] = self_cpu_word(); /* the child's TLS: same address */
		reg->slot[reg->n++] = self; /* a registered thread had a slot, so slot != NULL */
	}
	reg->nthreads = reg->n;
}
