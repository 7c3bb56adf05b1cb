/* SPDX-License-Identifier: MIT */
/*
 * Reader registry (see registry.h). The wait is core/wait.c's; this file supplies its hooks:
 * done (no registered reader holds the grace period), arm (set WAITING in each holder's own
 * cache line), recheck (after barrier W: done, or is every holder flagged?), disarm (nothing:
 * each reader clears its own flag when it wakes the updater, and a flag left on a reader that
 * finished without seeing it costs that reader one wake-up call later) and stall (report the
 * holders once per grace period).
 *
 * Parking (the default flavor with membarrier). The argument for a thread T that the scans no
 * longer read:
 *  - The pass that sets GRACE__W_PARK in T's waiter word (a locked RMW) runs in grace period m0;
 *    the next scanning grace period m runs barrier A (membarrier) after that, then its pass
 *    reads T's ctr: if T is idle and the bit still set, T moves to the parked tail.
 *  - A section of T whose lock store precedes T's barrier point in m is visible to that read:
 *    T was seen idle, so every such section had ended.
 *  - A section whose lock store follows that point has its post-store load of waiter
 *    (rcu_read_lock()) after it too, so it sees the bit (membarrier made the RMW visible to T
 *    before its barrier point; nobody but T clears the bit of a parked thread). That lock
 *    clears the bit, pushes T onto `unpark` (seq_cst compare-and-swap) and runs a full
 *    barrier before the section's first load (grace__memb_lock_flagged()). Every later
 *    section of T follows it in program order.
 *  - Every grace period g starts its pass (or its quiet check) by taking the stack, after
 *    the updater's removal and a full barrier (barrier A; or the fence after seq_start,
 *    core/gp.c). Store buffering with full barriers on both sides: either g's exchange sees
 *    T's push, and g puts T back and scans it, or T's sections after the push read what the
 *    updater published before g.
 * So a parked thread, and one on the stack that g did not take, holds no section g must wait
 * for. A thread that cleared the bit itself while still scanned (PENDING, UNPARKING) stays
 * scanned until the drain; one that the confirmation parks although its push is on the way
 * is put back by the next drain. The bookkeeping (park_state, pk) is the driver's, under the
 * lock; the reader only clears its bit and pushes, with no lock: from a signal handler too.
 * Which threads to park is a heuristic with no bearing on safety: idle, with the same ctr (no
 * section in between), for pk.k passes in a row; k doubles when a parked thread comes back
 * within 8k passes (it reads too often to be worth it) and halves when it stayed away longer.
 */
#include "core/registry.h"

#include <stdlib.h>
#include <grace/arch/atomic.h>

#include <grace/internal/rseq.h>

#include "core/annotate.h"
#include "core/debug.h"
#include "core/diag.h"
#include "core/wait.h"

/* The calling thread's rseq cpu_id word, or NULL when it has no rseq area the kernel updates. */
static const uint32_t *self_cpu_word(void)
{
	return grace__rseq_thread_ready() ? &grace__rseq_area()->cpu_id : NULL;
}

void grace__registry_init(struct grace__registry *reg, uint64_t active_mask, uint64_t cmp_mask,
			  unsigned int flags, struct grace__reader *(*self)(void),
			  const char *flavor)
{
	grace__ann_ignore(reg, sizeof(*reg)); /* Valgrind: futex, nthreads are atomics */
	grace__lock_init(&reg->lock);
	reg->slot = NULL;
	reg->cpu = NULL;
	reg->pk = NULL;
	reg->cbuf = NULL;
	reg->n = reg->cap = reg->n_active = 0;
	reg->nactive_hint = 0;
	reg->pass = 0;
	reg->park = false;
	reg->park_k = 0;
	reg->misuse_mask = 0;
	reg->nparks = reg->nunparks = 0;
	reg->unpark = NULL;
	reg->wq.futex = GRACE__WAIT_AWAKE;
	reg->wq.spin_ns = 0;
	reg->active_mask = active_mask;
	reg->cmp_mask = cmp_mask;
	reg->self = self;
	reg->flavor = flavor;
	reg->nthreads = 0;
	reg->done_is_ordered = (flags & GRACE__REG_ORDERED) != 0;
	reg->seen_mode = (flags & GRACE__REG_SEEN) != 0;
}

/* ---- the array: [0, n_active) scanned, [n_active, n) parked; lock held ---- */

/* After n_active changed (lock held): see nactive_hint. */
static void publish_active(struct grace__registry *reg)
{
	grace_store_relaxed(&reg->nactive_hint, reg->n_active);
}

static void slot_move(struct grace__registry *reg, unsigned long to, unsigned long from)
{
	reg->slot[to] = reg->slot[from];
	reg->cpu[to] = reg->cpu[from];
	reg->pk[to] = reg->pk[from];
	reg->slot[to]->reg_idx = to;
}

static void slot_swap(struct grace__registry *reg, unsigned long i, unsigned long j)
{
	struct grace__reader *r = reg->slot[i];
	const uint32_t *c = reg->cpu[i];
	struct grace__park p = reg->pk[i];

	slot_move(reg, i, j);
	reg->slot[j] = r;
	reg->cpu[j] = c;
	reg->pk[j] = p;
	r->reg_idx = j;
}

static void park_fresh(struct grace__park *p)
{
	p->last = ~0ull; /* matches no ctr: the first pass starts the streak */
	p->streak = 0;
	p->k = 2;
	p->parked_at = 0;
	p->seen = 0; /* holds nothing in the grace period under way: see seen_pass() */
}

/* Grow the arrays for one more thread (registry_add). */
static void grow(struct grace__registry *reg)
{
	unsigned long cap = reg->cap ? reg->cap * 2 : 64;
	/* An array of pointers: the element is a pointer by design. */
	size_t bytes = cap * sizeof(struct grace__reader *); // NOLINT(bugprone-sizeof-expression)
	struct grace__reader **s = (struct grace__reader **)realloc(reg->slot, bytes);
	if (s)
		reg->slot = s;
	const uint32_t **c = s ? (const uint32_t **)realloc((void *)reg->cpu, cap * sizeof(*c))
			       : NULL;
	if (c)
		reg->cpu = c;
	struct grace__park *p = c ? (struct grace__park *)realloc(reg->pk, cap * sizeof(*p)) : NULL;
	if (p)
		reg->pk = p;
	uint64_t *b = p ? (uint64_t *)realloc(reg->cbuf, cap * sizeof(*b)) : NULL;
	if (!b)
		grace__fatal("rcu_register_thread",
			     "out of memory registering reader thread %lu of the %s flavor",
			     reg->n + 1, reg->flavor);
	reg->cbuf = b;
	reg->cap = cap;
}

void grace__registry_add(struct grace__registry *reg, struct grace__reader *r)
{
	/* Called by the thread that registers: its own rseq area (before the lock: the first
	 * call may register the area with the kernel). */
	const uint32_t *cpu = self_cpu_word();

	grace__lock(&reg->lock);
	if (reg->n == reg->cap)
		grow(reg);
	/* A new thread is scanned: it takes the first parked slot's place, which moves to the
	 * end. */
	if (reg->n > reg->n_active)
		slot_move(reg, reg->n, reg->n_active);
	unsigned long i = reg->n_active++;
	reg->n++;
	r->reg_idx = i;
	r->park_state = GRACE__PARK_ACTIVE;
	r->park_next = NULL;
	reg->slot[i] = r;
	reg->cpu[i] = cpu;
	park_fresh(&reg->pk[i]);
	publish_active(reg);
	grace_store_relaxed(&reg->nthreads, reg->n);
	/* Full fence: the count before any read-side access of the new reader. Pairs with the
	 * fence after seq_start (core/gp.c) that precedes grace__registry_alone()'s load: with
	 * full fences on both sides (store-buffering), either the driver sees the new thread or
	 * the thread's first section sees the removal (see memb_wait_readers()). */
	grace_smp_mb();
	grace__unlock(&reg->lock);
}

static void drain(struct grace__registry *reg);

void grace__registry_del(struct grace__registry *reg, struct grace__reader *r)
{
	grace__lock(&reg->lock);
	/* r may be on the unpark stack (it read since it was parked): take the stack first. */
	drain(reg);
	/* Keep both parts dense: a scanned r takes the last scanned thread's place, which takes
	 * the last parked one's; a parked r takes the last parked one's. */
	unsigned long i = (unsigned long)r->reg_idx;
	if (i < reg->n_active) {
		unsigned long la = --reg->n_active;
		if (i != la)
			slot_move(reg, i, la);
		i = la;
	}
	if (i != --reg->n)
		slot_move(reg, i, reg->n);
	publish_active(reg);
	r->park_state = GRACE__PARK_ACTIVE;
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

/*
 * Does slot i's thread, whose ctr reads c, hold the grace period? GRACE__REG_SEEN: it is still
 * in the section the first scan found it in (seen != 0: that scan found it active; same
 * section number, still active). Else the rule of cur. One branch on a field that never
 * changes: predicted.
 */
static inline unsigned long holds_at(const struct grace__registry *reg, unsigned long i, uint64_t c,
				     uint64_t cur)
{
	if (reg->seen_mode) {
		uint64_t s = reg->pk[i].seen;
		return (s != 0) & ((c & reg->active_mask) != 0) & (((c ^ s) & reg->cmp_mask) == 0);
	}
	return holds(reg, c, cur);
}

/* Does any registered reader hold cur? Stops at the first holder. */
static bool any_holder(struct grace__registry *reg, uint64_t cur)
{
	struct grace__reader *const *slot = reg->slot;
	unsigned long n = reg->n_active, h = 0;

	grace__lock_assert_held(&reg->lock);
	/* Eight at a time: independent loads the CPU overlaps, one test per eight. */
	unsigned long i = 0;
	for (; i + 8 <= n && !h; i += 8)
		for (unsigned int k = 0; k < 8; k++)
			h |= holds_at(reg, i + k, SCAN_LOAD(&slot[i + k]->ctr), cur);
	for (; i < n && !h; i++)
		h |= holds_at(reg, i, SCAN_LOAD(&slot[i]->ctr), cur);
	grace_fence_acquire(); /* see SCAN_LOAD */
	return h != 0;
}

/* Count readers holding cur, and in *unflagged those without the WAITING flag. */
static unsigned long count_holders(struct grace__registry *reg, uint64_t cur,
				   unsigned long *unflagged)
{
	unsigned long n = 0, u = 0;

	grace__lock_assert_held(&reg->lock);
	for (unsigned long i = 0; i < reg->n_active; i++) {
		struct grace__reader *r = reg->slot[i];
		if (holds_at(reg, i, SCAN_LOAD(&r->ctr), cur)) {
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
	for (unsigned long i = 0; i < reg->n_active; i++) {
		struct grace__reader *r = reg->slot[i];
		uint64_t c = grace_load_relaxed(&r->ctr);
		if (!holds_at(reg, i, c, w->cur))
			continue;
		/* A holder whose ctr no section can leave (nesting past the limit: an unlock
		 * without a lock borrowed into it) would hold the grace period for ever. */
		if (c & reg->misuse_mask) {
			int tid = r->tid;
			grace__unlock(&reg->lock);
			grace__misuse_fatal("rcu_read_unlock",
					    "thread %d unlocked without a matching rcu_read_lock() "
					    "(found by a grace period)",
					    tid);
		}
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
	 * Under the rule of cur a reader can become a holder after the flag loop (a QSBR thread
	 * coming online with an old counter; the default flavor's readers did too while they took
	 * a snapshot of a shared counter, found by the Promela model, tests/model/memb.pml):
	 * sleeping on an unflagged holder is a lost wake-up, so such a holder sends the wait back
	 * to arm(). Bounded: a reader can start at most one such section per grace period. Under
	 * GRACE__REG_SEEN holders only leave, and every holder was flagged: the count of unflagged
	 * ones stays 0 but for a flag its reader cleared, which it did while waking the updater.
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
	for (unsigned long i = 0; i < reg->n_active; i++) {
		if (!holds_at(reg, i, grace_load_relaxed(&reg->slot[i]->ctr), w->cur))
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
	for (unsigned long i = 0; i < reg->n_active && n < 64; i++) {
		struct grace__reader *r = reg->slot[i];
		if (!holds_at(reg, i, grace_load_acquire(&r->ctr), w->cur) ||
		    r->stall_seq == w->cookie)
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

/* A first scan's loads of every scanned thread's ctr into cbuf: independent of each other (the
 * CPU overlaps the misses), ordered before what follows by one acquire fence, as in
 * any_holder() (see SCAN_LOAD; they pair with the readers' release stores). Lock held. */
static void load_active(struct grace__registry *reg)
{
	for (unsigned long i = 0; i < reg->n_active; i++)
		reg->cbuf[i] = SCAN_LOAD(&reg->slot[i]->ctr);
	grace_fence_acquire(); /* see SCAN_LOAD */
}

/* ---- parking (see the top of this file) ---- */

#define PARK_K_MIN 2u
#define PARK_K_MAX 4096u

void grace__registry_enable_parking(struct grace__registry *reg, uint64_t misuse_mask,
				    unsigned int fixed_k)
{
	reg->park = true;
	reg->misuse_mask = misuse_mask;
	reg->park_k = fixed_k;
}

/*
 * Take the unpark stack and put its threads back among the scanned ones. Lock held; the caller
 * has run a full barrier since the updater's removal (see the top of this file). The relaxed
 * test first: most grace periods find the stack empty, and the exchange is a locked
 * instruction; what the test misses was pushed after the barrier, which the argument covers.
 */
static void drain(struct grace__registry *reg)
{
	if (!grace_load_relaxed(&reg->unpark))
		return;
	/* Acquire: pairs with the pushers' seq_cst compare-and-swap, so their park_next links
	 * are seen. */
	struct grace__reader *t = grace_xchg(&reg->unpark, NULL, __ATOMIC_ACQUIRE);
	while (t) {
		struct grace__reader *next = t->park_next;
		unsigned long i = (unsigned long)t->reg_idx;
		/* Only registered threads hand themselves back (their unregistration runs with
		 * signals blocked, flavor/memb.c): anything else would be linked into the registry
		 * by a stale index. Refuse it by name rather than corrupt the registry. */
		if (GRACE_UNLIKELY(i >= reg->n || reg->slot[i] != t))
			grace__fatal(
				"rcu_read_lock",
				"a thread that is not registered (tid %d) handed itself back to "
				"the %s registry",
				(int)t->tid, reg->flavor);
		struct grace__park *p = &reg->pk[i];
		if (t->park_state == GRACE__PARK_PARKED) {
			/* Back within 8k passes: it reads too often for parking to pay. */
			uint64_t away = reg->pass - p->parked_at;
			if (away < 8ull * p->k)
				p->k = p->k * 2 > PARK_K_MAX ? PARK_K_MAX : p->k * 2;
			else
				p->k = p->k / 2 < PARK_K_MIN ? PARK_K_MIN : p->k / 2;
			p->seen = 0; /* already: the pass that parked it found it idle */
			slot_swap(reg, i, reg->n_active++);
			reg->nunparks++;
		}
		t->park_state = GRACE__PARK_ACTIVE;
		reg->pk[t->reg_idx].streak = 0;
		reg->pk[t->reg_idx].last = ~0ull;
		/* seen is left alone. A thread back from the parked tail has seen == 0 (the pass
		 * that parked it found it idle): it holds nothing in the grace period under way
		 * unless that period's first scan, which drains before it reads, finds it in a
		 * section. A thread that was still scanned (PENDING, UNPARKING) may have pushed
		 * itself from a nested lock inside the very section the first scan recorded: a
		 * drain later in the wait (another thread's grace__registry_del()) must not end
		 * that hold (the Promela model, tests/model/memb.pml DRAIN_RESETS_SEEN). */
		t = next;
	}
	publish_active(reg);
}

/*
 * The first scan of a grace period, after barrier A: take the unpark stack, confirm or undo the
 * parks set by the last pass, update the streaks, set GRACE__W_PARK on threads idle long
 * enough, and tell whether any scanned thread holds cur. Lock held.
 */
static bool park_pass(struct grace__registry *reg, uint64_t cur)
{
	uint64_t *cb = reg->cbuf;
	unsigned long h = 0;

	drain(reg);
	reg->pass++;
	load_active(reg);
	for (unsigned long i = 0; i < reg->n_active;) {
		struct grace__reader *r = reg->slot[i];
		struct grace__park *p = &reg->pk[i];
		uint64_t c = cb[i];
		bool idle = (c & reg->active_mask) == 0;

		if (reg->seen_mode) {
			/* The first scan: what it finds is what the grace period waits for. */
			p->seen = idle ? 0 : c;
			h |= !idle;
		} else {
			h |= holds(reg, c, cur);
		}
		if (r->park_state == GRACE__PARK_PENDING) {
			/* Barrier A of this grace period ran after the bit was set (last pass). */
			if (idle && (grace_load_relaxed(&r->waiter) & GRACE__W_PARK)) {
				unsigned long la = --reg->n_active;
				r->park_state = GRACE__PARK_PARKED;
				p->parked_at = reg->pass;
				cb[i] = cb
					[la]; /* the thread moving into slot i is still to be seen */
				slot_swap(reg, i, la);
				reg->nparks++;
				continue;
			}
			/* In a section: undo. Whoever clears the bit decides: if the thread did, it
			 * pushes itself and stays scanned until the drain takes it. Relaxed: the RMW's
			 * atomicity is all that is needed. Debug builds: tests let the thread clear
			 * it first here, from a nested lock (GRACE_TEST_PAUSE). */
			GRACE__TEST_PAUSE("park_confirm");
			if (grace_fetch_and(&r->waiter, ~GRACE__W_PARK, __ATOMIC_RELAXED) &
			    GRACE__W_PARK)
				r->park_state = GRACE__PARK_ACTIVE;
			else
				r->park_state = GRACE__PARK_UNPARKING;
			p->k = p->k * 2 > PARK_K_MAX ? PARK_K_MAX : p->k * 2;
			p->streak = 0;
			p->last = c;
		} else if (r->park_state == GRACE__PARK_ACTIVE) {
			if (idle && c == p->last) {
				p->streak++;
			} else {
				p->streak = 0;
				p->last = c;
			}
			if (p->streak >= (reg->park_k ? reg->park_k : p->k)) {
				/* Debug builds: tests start a section here, after the scan that found
				 * the thread idle and before its bit is set (GRACE_TEST_PAUSE). */
				GRACE__TEST_PAUSE("park_mark");
				/* Relaxed: the membarrier of the next pass's barrier A orders it before
				 * the confirmation (see the top of this file). */
				grace_fetch_or(&r->waiter, GRACE__W_PARK, __ATOMIC_RELAXED);
				r->park_state = GRACE__PARK_PENDING;
			}
		}
		i++;
	}
	publish_active(reg);
	return h != 0;
}

void grace__registry_stats(struct grace__registry *reg, unsigned long *registered,
			   unsigned long *scanned, unsigned long *parks, unsigned long *unparks)
{
	grace__lock(&reg->lock);
	if (registered)
		*registered = reg->n;
	if (scanned)
		*scanned = reg->n_active;
	if (parks)
		*parks = reg->nparks;
	if (unparks)
		*unparks = reg->nunparks;
	grace__unlock(&reg->lock);
}

void grace__registry_unpark(struct grace__registry *reg, struct grace__reader *r)
{
	struct grace__reader *h = grace_load_relaxed(&reg->unpark);

	/* seq_cst: with the barrier after it, the push is a full barrier between the thread's
	 * lock store and its section's loads, the reader's side of the argument at the top of
	 * this file; it also publishes park_next to the drain's acquire exchange. */
	do
		r->park_next = h;
	while (!grace_cmpxchg(&reg->unpark, &h, r, __ATOMIC_SEQ_CST));
	grace_smp_mb_after_rmw();
}

bool grace__registry_quiet(struct grace__registry *reg, const struct grace__reader *self,
			   bool self_idle)
{
	bool q;

	/* Two or more threads scanned: not quiet, with no lock taken on a busy domain's grace
	 * periods. The hint is only a shortcut to "no", which is always safe: a stale high value
	 * costs this grace period its barrier A, a stale low one takes the exact path below. The
	 * answer "quiet" is decided under the lock, after the drain; its ordering comes from the
	 * caller's full fence and the drain (see the top of this file). */
	if (!reg->park || grace_load_relaxed(&reg->nactive_hint) > 1)
		return false;
	grace__lock(&reg->lock);
	drain(reg);
	q = reg->n_active == 0 || (reg->n_active == 1 && reg->slot[0] == self && self_idle);
	grace__unlock(&reg->lock);
	return q;
}

/*
 * GRACE__REG_SEEN without parking (GRACE_NO_PARK=1, or no membarrier): the first scan of the grace
 * period, after barrier A, records what it reads (the parking pass does the same, with its own
 * bookkeeping). Lock held. Tells whether any thread was found in a section.
 */
static bool seen_pass(struct grace__registry *reg)
{
	uint64_t *cb = reg->cbuf;
	unsigned long h = 0;

	load_active(reg);
	for (unsigned long i = 0; i < reg->n_active; i++) {
		uint64_t c = cb[i];
		bool active = (c & reg->active_mask) != 0;
		reg->pk[i].seen = active ? c : 0;
		h |= active;
	}
	return h != 0;
}

void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited)
{
	struct reg_wait w = { reg, cur, cookie };

	if (reg->park || reg->seen_mode) {
		bool any;
		grace__lock(&reg->lock);
		any = reg->park ? park_pass(reg, cur) : seen_pass(reg);
		grace__unlock(&reg->lock);
		if (!any)
			return;
	}
	grace__wait_for_readers(reg->done_is_ordered ? &reg_wait_ops_ordered : &reg_wait_ops, &w,
				&reg->wq, expedited);
}

bool grace__registry_trylock(struct grace__registry *reg)
{
	return grace__trylock(&reg->lock);
}

void grace__registry_unlock(struct grace__registry *reg)
{
	grace__unlock(&reg->lock);
}

bool grace__registry_first_scan(struct grace__registry *reg, uint64_t cur)
{
	grace__lock_assert_held(&reg->lock);
	return reg->park ? park_pass(reg, cur) : seen_pass(reg);
}

void grace__registry_lock(struct grace__registry *reg)
{
	grace__lock(&reg->lock);
}

/*
 * Asking (see flavor/memb.c, "Asking", for the argument). The drain first, as a first scan does:
 * a thread that handed itself back before it is scanned, so asked; one that pushes after it runs
 * its full barrier after the push and reads what the updater published (the parking argument at
 * the top of this file). Relaxed RMWs: the caller's full barrier since the removal orders them
 * after it, and a reader that sees the bit runs a full barrier before it answers.
 */
void grace__registry_ask(struct grace__registry *reg)
{
	grace__lock_assert_held(&reg->lock);
	drain(reg);
	for (unsigned long i = 0; i < reg->n_active; i++)
		grace_fetch_or(&reg->slot[i]->waiter, GRACE__W_ASK, __ATOMIC_RELAXED);
}

bool grace__registry_answered(struct grace__registry *reg)
{
	uint32_t w = 0;

	grace__lock_assert_held(&reg->lock);
	for (unsigned long i = 0; i < reg->n_active; i++)
		w |= SCAN_LOAD(&reg->slot[i]->waiter);
	/* Pairs with the readers' seq_cst clears of the bit (their release half): the sections
	 * before each answer happen before what follows. See SCAN_LOAD. */
	grace_fence_acquire();
	return (w & GRACE__W_ASK) == 0;
}

/*
 * How the threads that have not answered stand (see registry.h). Relaxed loads: a hint for the
 * driver's choice between spinning and sleeping, never for the end of the grace period, which
 * grace__registry_answered() alone decides. A thread with no rseq area is never "here".
 */
unsigned int grace__registry_ask_state(struct grace__registry *reg)
{
	const uint32_t *mine = self_cpu_word();
	const uint32_t me = mine ? grace_load_relaxed(mine) : UINT32_MAX;
	unsigned int st = GRACE__ASK_SECTIONS, pending = 0;

	grace__lock_assert_held(&reg->lock);
	for (unsigned long i = 0; i < reg->n_active; i++) {
		struct grace__reader *r = reg->slot[i];
		if (!(grace_load_relaxed(&r->waiter) & GRACE__W_ASK))
			continue;
		pending = 1;
		bool in = (grace_load_relaxed(&r->ctr) & reg->active_mask) != 0;
		bool here = mine && reg->cpu[i] && grace_load_relaxed(reg->cpu[i]) == me;
		if (here)
			st |= in ? GRACE__ASK_HERE : GRACE__ASK_HERE | GRACE__ASK_HERE_OUT;
		if (!in)
			st &= ~GRACE__ASK_SECTIONS;
	}
	return pending ? st : 0;
}

/*
 * Flag every thread that has not answered with GRACE__W_WAITING (see registry.h). Release RMWs:
 * the caller's store of SLEEPING into the futex word comes before each flag, so a reader whose
 * answer (a seq_cst RMW on the same word) returns the flag reads SLEEPING after it
 * (grace__wait_wake()). The flag and the answer are RMWs of one word, so one of them comes
 * first: if the answer did, this RMW returns the bit clear, and the flag, which nobody would
 * clear, is taken back; if the flag did, the answer returns it and its thread wakes the driver.
 */
void grace__registry_ask_arm(struct grace__registry *reg)
{
	grace__lock_assert_held(&reg->lock);
	for (unsigned long i = 0; i < reg->n_active; i++) {
		uint32_t *w = &reg->slot[i]->waiter;
		if (!(grace_load_relaxed(w) & GRACE__W_ASK))
			continue;
		/* The take-back is relaxed: it orders nothing. */
		if (!(grace_fetch_or(w, GRACE__W_WAITING, __ATOMIC_RELEASE) & GRACE__W_ASK))
			grace_fetch_and(w, ~GRACE__W_WAITING, __ATOMIC_RELAXED);
	}
}

bool grace__registry_holds(struct grace__registry *reg, uint64_t cur)
{
	return any_holder(reg, cur);
}

void grace__registry_wait_resume(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
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
	reg->n = reg->n_active = 0;
	reg->unpark = NULL; /* the other threads are gone; this one is scanned again */
	reg->wq.futex = GRACE__WAIT_AWAKE;
	if (self->flags & GRACE__F_REGISTERED) {
		self->waiter &= ~(GRACE__W_WAITING | GRACE__W_PARK);
		self->reg_idx = 0;
		self->park_state = GRACE__PARK_ACTIVE;
		self->park_next = NULL;
		reg->cpu[0] = self_cpu_word(); /* the child's TLS: same address */
		park_fresh(&reg->pk[0]);
		reg->slot[0] = self; /* a registered thread had a slot, so slot != NULL */
		reg->n = reg->n_active = 1;
	}
	reg->nthreads = reg->n;
	reg->nactive_hint = reg->n_active;
}
