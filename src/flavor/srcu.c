/* SPDX-License-Identifier: MIT */
/*
 * The srcu flavor: per-CPU lock/unlock counter pairs for two indexes, flipped every grace period
 * (the OLS 2002 paper's rcu-preempt counters, Linux's SRCU), incremented with rseq (seed 004).
 *
 * State. A domain (struct srcu_struct) has, for every possible CPU c and index i in {0, 1}:
 *   lock[i], unlock[i]    incremented only by rseq critical sections running on c;
 *   alock[i], aunlock[i]  incremented with atomic RMWs by threads that cannot use rseq, any CPU;
 * and `idx`, whose bit 0 names the index new readers use. Counters only grow (64-bit: they do
 * not wrap in the life of a process). L_i and U_i below are the sums over all CPUs of
 * lock[i] + alock[i] and unlock[i] + aunlock[i].
 *
 * Reader. srcu_read_lock: i = idx & 1; lock[i]++ on the current CPU (one rseq commit, or an
 * atomic add); return i. srcu_read_unlock(i): unlock[i]++ with release on the CPU it runs on now
 * (any CPU: the sums do not care where). The inline path reads `cur` instead of idx: a pointer
 * to CPU 0's lock[i], which the flip updates together with idx; bit 3 of its address is i. A
 * reader may see idx and cur disagree for an instant around a flip: each reader uses one of them
 * consistently, and nothing below depends on which index a reader picks. In "fast" mode
 * (membarrier available) the reader executes no fence at all: only compiler barriers. In fence
 * mode (no membarrier: old kernels, seccomp, TSan, GRACE_NO_MEMBARRIER=1) it executes smp_mb
 * after the lock increment (B) and before the unlock increment (C).
 *
 * Grace period (srcu_wait_readers, run by the domain's single driver, see core/gp.c):
 *   M.  heavy barrier: membarrier(PRIVATE_EXPEDITED), smp_mb in fence mode.
 *   S1. wait until index j = !(idx & 1), the one new readers do NOT use, is balanced.
 *   F.  flip: idx := idx + 1 (new readers now use j).
 *   S2. wait until index !j, the one they used, is balanced.
 * where "index k is balanced" is one check: read U_k with acquire loads, then read L_k, and
 * compare. If not balanced, re-check (spin, then sleep; see "Waiting").
 *
 * Claim 1 (a balanced check is sound). Let a check of index k read U_k then L_k and find them
 * equal. Then every reader R that incremented lock[k] "before M" (see Claim 2) has finished its
 * section, and R's section happens before the updater's next step.
 *  (a) Unlocks seen imply locks seen. If the unlock scan counted the unlock of a reader Y, the
 *      lock scan counts Y's lock: Y's lock increment precedes its unlock increment, which is a
 *      release (stlr on aarch64; every store on x86; an atomic release RMW in the fallback; a
 *      migration between them is a context switch, a full barrier), and the updater read the
 *      unlock counter with an acquire load before reading any lock counter. So the set of
 *      sections whose unlock was counted is a subset of those whose lock was counted.
 *  (b) Counters only grow and each increment is counted once, so U_k = |unlocks counted| and
 *      L_k = |locks counted|. With (a), L_k == U_k means every section whose lock was counted
 *      also had its unlock counted: none of them is still running.
 *  (c) Each such unlock was read by an acquire load and is a release increment: the section's
 *      accesses happen before the updater goes on (core/gp.c then fences and publishes the end
 *      of the grace period).
 * Sections whose lock increment the check did not count are the subject of Claim 2.
 *
 * Claim 2 (readers the scans miss are new). Consider reader R and the point m where barrier M
 * executes in R's instruction stream (membarrier runs a full barrier on every CPU running a
 * thread of the process, and threads not running pass through the scheduler's barrier; in
 * fence mode, use R's own barrier B instead: store-buffering with full fences on both sides).
 *  - If R's lock increment comes before m, it is visible to every scan after M returns: S1 or S2,
 *    whichever checks R's index, counts it, and by Claim 1 waits until R's section has ended.
 *  - If it comes after m, the section's loads come after m too (compiler barrier after the
 *    increment; smp_mb B in fence mode), and m is after the updater's removal (core/gp.c argument
 *    (1)): R sees the new state and cannot hold what the updater removed. Scans may or may not
 *    count R; either way is safe.
 * Since S1 and S2 both run after M and cover both indexes, every reader that began before the
 * grace period (its lock increment before m) is waited for. This is why a grace period needs two
 * waits, not one: a reader may load idx before one grace period's flip and increment the counter
 * of the old index after that grace period's scan of it (it was new for that grace period). Such
 * a reader may still run when the next grace period starts and is on the index that grace period
 * does not flip away from; S1 catches it. Linux's SRCU has the same two scans for the same reason.
 *
 * Forward progress. S1 waits on the index new readers do not use: only readers that loaded idx
 * before the previous flip can still increment it, at most one per thread, so it drains. After
 * F, S2's index gets no new readers except those that loaded idx before F (again at most one per
 * thread). A continuous stream of readers therefore cannot starve a grace period; a single reader
 * that never leaves its section blocks its own domain only (and is reported as a stall).
 *
 * Waiting (wait_idx). Re-check for a bounded spin (20 us, 200 us expedited: a short section on
 * another CPU ends within it), then sleep: set the futex word of the domain's wake slot to
 * SLEEPING and bit k of the slot's `waiting`, barrier W (heavy barrier), re-check, and sleep on
 * the futex. A reader's unlock loads the slot's address from the domain, increments, then
 * (compiler barrier; smp_mb in fence mode) loads the slot's `waiting`; if bit k is set it
 * exchanges the futex word and wakes the driver. Store-buffering again: either the reader's load
 * follows W's barrier in its stream and sees the bit, or its increment precedes it and the
 * re-check after W counts it. Only readers of the index being waited for wake the driver;
 * readers of the other index never touch the futex. The futex wait has a timeout only until the
 * stall report is due (grace__stall_timeout_ns()); there is no polling loop on the normal path.
 *
 * Wake slots (the end of a domain). The unlock increment is the reader's last access that the
 * grace period waits for: once the scans count it, synchronize_srcu() may return and the program
 * may run cleanup_srcu_struct() and free the memory that holds the srcu_struct, while the reader
 * has yet to load `waiting` and perhaps wake the driver. So nothing the reader touches after the
 * increment may be the domain's or its state's: the flag and the futex word live in a wake slot
 * (struct srcu_slot below), library memory that is never freed (a static table, then chunks
 * that are never freed), taken when the domain's state is set up and put on a free list when
 * cleanup_srcu_struct() frees the state. The reader loads the slot's address (pad_[0] inline,
 * st->slot out of line) before its increment, while its open section keeps the domain alive;
 * the increment is a release, so that load cannot follow it. Claims 1 and 2 do not involve the
 * slot; only the wake-up does.
 *  - A slot given to a new domain while a late reader of the old one has still to load its
 *    `waiting`: the late reader may see a bit the new domain's driver set and wake it. Such a
 *    wake is spurious, and harmless: grace__wait_for_readers() re-checks after every futex
 *    wait and, when the index is not balanced, sets SLEEPING, arms, runs W, re-checks and
 *    sleeps again (core/wait.c); a wake that lands between the re-check and FUTEX_WAIT makes
 *    that wait return at once, to the same loop. Each late reader wakes at most once, so this
 *    ends. It cannot lose a wake-up of the new domain: its own readers follow the protocol
 *    above on the same slot.
 *  - One waiter per wait queue (core/wait.h) holds: a slot belongs to one domain at a time, and
 *    a domain has one grace-period driver.
 *  - Programs built against 0.2.0's header inline the old unlock: it loads ssp->waiting after
 *    the increment and calls grace__srcu_unlock_wake(ssp), which loads ssp->state. The driver
 *    still sets and clears ssp->waiting for them, and grace__srcu_unlock_wake() does nothing
 *    once the state is gone; their window (a load of freed memory if the program frees the
 *    domain at once) stays until they are rebuilt.
 *
 * The polled API and call_srcu share the grace-period sequence (core/gp.h) with
 * synchronize_srcu; callbacks run on the callback engine (engine/callback.h), one worker thread
 * per domain, started on the first call_srcu or start_poll.
 *
 * fork(): the child's only thread keeps working. Sections that other threads of the parent held
 * at the fork never end in the child; a grace period of such a domain in the child then stalls
 * (and is reported), as it would in the parent if those threads never unlocked.
 */
#include <grace/srcu.h>

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>

#include <grace/flavor.h>
#include <grace/list.h>

#include "flavor/srcu.h"
#include "core/debug.h"
#include "core/annotate.h"
#include "core/diag.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/sys.h"
#include "core/wait.h"
#include "engine/callback.h"
#include "engine/free.h"
#include "flavor/update.h"

_Static_assert(sizeof(struct srcu_struct) == 64, "struct srcu_struct is one cache line");
_Static_assert(sizeof(struct grace__srcu_cpu) == 64, "grace__rseq_inc_line() needs 64-byte slots");

struct grace__srcu_state {
	struct grace__gp gp;      /* the domain's grace-period sequence; gp.flavor == this state */
	struct grace__flavor flv; /* the domain as a flavor (core/flavor.h); flv.gp == &gp */
	struct srcu_struct *ssp;
	struct grace__srcu_cpu *cpus;
	unsigned int ncpus;
	struct srcu_slot *slot;                    /* the wake slot (never freed, see the top) */
	uint64_t stall_cookie GRACE_ALIGNED_CACHE; /* grace period already reported (driver only) */
	struct grace_list_head link; /* on srcu_all (every domain, for fork) or srcu_exit_kept */
};

/*
 * A wake slot (see "Wake slots" at the top): the flag readers load after their unlock increment
 * and the futex word they wake, in memory that is never freed. One cache line: readers load
 * `pub.waiting` on every unlock; the driver writes the line only when it sleeps.
 */
struct srcu_slot {
	struct grace__srcu_wake pub; /* first: the header's view (pub.waiting) */
	struct grace__waitq wq;      /* core/wait.h: futex word, spin budget; one waiter */
	struct srcu_slot *next_free; /* free list (under srcu_all_lock) */
} GRACE_ALIGNED_CACHE;

_Static_assert(offsetof(struct srcu_slot, pub) == 0, "readers see the slot as its pub part");

#define SLOT_TABLE 64 /* slots for the first domains; then chunks of as many */
struct srcu_slot_chunk {
	struct srcu_slot slot[SLOT_TABLE];
	struct srcu_slot_chunk *next; /* all chunks, for fork (kept: never freed) */
};
static struct srcu_slot srcu_slot_table[SLOT_TABLE];
static unsigned int srcu_slot_used;         /* of the table, handed out in order */
static struct srcu_slot_chunk *srcu_chunks; /* never freed: late readers may look at them */
static struct srcu_slot *srcu_slot_free;

static pthread_once_t srcu_once = PTHREAD_ONCE_INIT;
static bool srcu_fast;  /* inline fast path usable: rseq ops + membarrier */
static bool srcu_fence; /* readers fence (no membarrier) */
static bool srcu_rseq;  /* rseq critical sections usable in this process (else atomics only) */
static struct grace__lock srcu_all_lock = GRACE__LOCK_INIT;
static GRACE_LIST_HEAD(srcu_all);
/* States cleaned up while the callback engine's exit drain ran (grace__cbdom_destroy() returned
 * 1): kept, linked through next, because the drain may still use them. Under srcu_all_lock. */
static GRACE_LIST_HEAD(srcu_exit_kept);

void grace__srcu_atfork_prepare(void)
{
	grace__lock(&srcu_all_lock);
}

void grace__srcu_atfork_parent(void)
{
	grace__unlock(&srcu_all_lock);
}

static void slot_reset(struct srcu_slot *sl)
{
	sl->pub.waiting = 0;
	sl->wq.futex = GRACE__WAIT_AWAKE;
}

void grace__srcu_atfork_child(void)
{
	/* The driver of a grace period, if any, does not exist in the child: restart grace
	 * periods from "not started" (core/gp.c) and forget that it slept, in the wake slots
	 * (library memory). Nothing here writes a srcu_struct: a domain on the list may be one
	 * whose cleanup was refused and whose memory the program reused, or one freed without
	 * cleanup_srcu_struct(). Its `waiting`, if set, only makes 0.2.0-built readers call
	 * grace__srcu_unlock_wake() for nothing until the next grace period rewrites it.
	 * srcu_all_lock: this thread took it in prepare (src/init.c calls both, always), so it
	 * unlocks it, as in the parent. (Re-initialising a held mutex is undefined, and TSan then
	 * took the child's next lock of it for a second lock by the same thread.) */
	/* No pointer to a state is formed from the list's head: the struct is cache-line
	 * aligned (list.h's typed iterators would, to detect the end). */
	struct grace_list_head *it;
	grace_list_for_each(it, &srcu_all)
		grace__flavor_atfork_child(
			&grace_list_entry(it, struct grace__srcu_state, link)->flv);
	for (unsigned int i = 0; i < srcu_slot_used; i++)
		slot_reset(&srcu_slot_table[i]);
	for (struct srcu_slot_chunk *c = srcu_chunks; c; c = c->next)
		for (unsigned int i = 0; i < SLOT_TABLE; i++)
			slot_reset(&c->slot[i]);
	grace__unlock(&srcu_all_lock);
}

/* A wake slot for a new domain's state, or NULL (no memory). */
static struct srcu_slot *slot_get(void)
{
	struct srcu_slot *sl = NULL;
	struct srcu_slot_chunk *c;

	grace__lock(&srcu_all_lock);
	if (srcu_slot_free) {
		sl = srcu_slot_free;
		srcu_slot_free = sl->next_free;
	} else if (srcu_slot_used < SLOT_TABLE) {
		sl = &srcu_slot_table[srcu_slot_used++];
	}
	grace__unlock(&srcu_all_lock);
	if (!sl) {
		/* A chunk: allocated outside the lock fork holds, linked under it. */
		if (posix_memalign((void **)&c, GRACE_CACHE_LINE, sizeof(*c)) != 0)
			return NULL;
		memset(c, 0, sizeof(*c));
		grace__ann_ignore(c, sizeof(*c));
		grace__lock(&srcu_all_lock);
		c->next = srcu_chunks;
		srcu_chunks = c;
		for (unsigned int i = 1; i < SLOT_TABLE; i++) {
			c->slot[i].next_free = srcu_slot_free;
			srcu_slot_free = &c->slot[i];
		}
		grace__unlock(&srcu_all_lock);
		sl = &c->slot[0];
	}
	/* Relaxed: a late reader of the slot's previous domain may still load `waiting` (0 since
	 * that domain's last wait ended) or exchange the futex word (AWAKE: it leaves it alone);
	 * this domain's driver and readers see the slot only through the release publication of
	 * the state and of `fast`. */
	grace_store_relaxed(&sl->pub.waiting, 0u);
	grace_store_relaxed(&sl->wq.spin_ns, 0u);
	return sl;
}

/* Give a slot back: its domain's state is being freed (no driver, no wait under way). Late
 * readers of that domain may still look at it: it is never freed. */
static void slot_put(struct srcu_slot *sl)
{
	grace__lock(&srcu_all_lock);
	sl->next_free = srcu_slot_free;
	srcu_slot_free = sl;
	grace__unlock(&srcu_all_lock);
}

static void srcu_mode_init(void)
{
	grace__init(); /* membarrier or fence, chosen once for the library */
	srcu_fence = !grace__use_membarrier;
	srcu_rseq = GRACE__RSEQ_OPS && grace__rseq_enabled();
	srcu_fast = srcu_rseq && !srcu_fence;
	/* Valgrind does not see pthread_once()'s ordering: the three modes are read-only now. */
	grace__ann_ignore(&srcu_fast, sizeof(srcu_fast));
	grace__ann_ignore(&srcu_fence, sizeof(srcu_fence));
	grace__ann_ignore(&srcu_rseq, sizeof(srcu_rseq));
	grace__ann_ignore(srcu_slot_table, sizeof(srcu_slot_table)); /* shared atomics */
}

static inline void srcu_init_once(void)
{
	pthread_once(&srcu_once, srcu_mode_init);
}

const char *grace_srcu_mode(void)
{
	bool rseq;

	srcu_init_once();
	rseq = GRACE__RSEQ_OPS && grace__rseq_enabled();
	if (rseq)
		return srcu_fence ? "rseq+fence" : "rseq+membarrier";
	return srcu_fence ? "atomic+fence" : "atomic+membarrier";
}

/* ---- counters ---- */

/* U_k (acquire loads: pair with the readers' release unlock increments, Claim 1). */
static uint64_t sum_unlocks(const struct grace__srcu_state *st, unsigned int k)
{
	uint64_t u = 0;
	for (unsigned int c = 0; c < st->ncpus; c++)
		u += grace_load_acquire(&st->cpus[c].unlock[k]) +
		     grace_load_acquire(&st->cpus[c].aunlock[k]);
	return u;
}

static uint64_t sum_locks(const struct grace__srcu_state *st, unsigned int k)
{
	uint64_t l = 0;
	for (unsigned int c = 0; c < st->ncpus; c++)
		l += grace_load_relaxed(&st->cpus[c].lock[k]) +
		     grace_load_relaxed(&st->cpus[c].alock[k]);
	return l;
}

/* One check of Claim 1: unlocks first, then locks (the acquire loads order them). */
static bool idx_balanced(const struct grace__srcu_state *st, unsigned int k)
{
	uint64_t u = sum_unlocks(st, k);
	/* Debug builds: a test may stop the check here, so that a reader locks and unlocks between
	 * the two sums (what the order of the sums is for; fault_regress_engine srcu_balance). */
	GRACE__TEST_PAUSE("srcu_balance");
	return sum_locks(st, k) == u;
}

unsigned long grace_srcu_readers_active(struct srcu_struct *ssp)
{
	struct grace__srcu_state *st = grace_load_acquire(&ssp->state);
	if (!st)
		return 0;
	uint64_t u = sum_unlocks(st, 0) + sum_unlocks(st, 1);
	return (unsigned long)(sum_locks(st, 0) + sum_locks(st, 1) - u);
}

/* ---- grace periods ---- */

/* ---- the wait for an index (core/wait.h hooks) ---- */

struct idx_wait {
	struct grace__srcu_state *st;
	unsigned int k;
};

static bool idx_done(void *ctx)
{
	struct idx_wait *w = (struct idx_wait *)ctx;
	return idx_balanced(w->st, w->k);
}

static void idx_arm(void *ctx)
{
	struct idx_wait *w = (struct idx_wait *)ctx;
	/* Release: the futex word's SLEEPING before the bit (core/wait.h; pairs with the acquire
	 * fence of grace__wait_wake()). Only readers of index k look at bit k. The domain's own
	 * `waiting` is for readers built against 0.2.0's header (see "Wake slots"). */
	grace_store_release(&w->st->slot->pub.waiting, 1u << w->k);
	grace_store_release(&w->st->ssp->waiting, 1u << w->k);
}

static enum grace__recheck idx_recheck(void *ctx)
{
	/* One bit covers every reader of the index, old and new: no reader can hold the wait
	 * without seeing it after barrier W. */
	return idx_done(ctx) ? GRACE__RECHECK_DONE : GRACE__RECHECK_SLEEP;
}

static void idx_disarm(void *ctx)
{
	struct idx_wait *w = (struct idx_wait *)ctx;
	grace_store_relaxed(&w->st->slot->pub.waiting, 0u);
	grace_store_relaxed(&w->st->ssp->waiting, 0u);
}

static void idx_stall(void *ctx, uint64_t waited_ns)
{
	struct idx_wait *w = (struct idx_wait *)ctx;
	struct grace__srcu_state *st = w->st;
	uint64_t cookie = (grace_load_relaxed(&st->gp.seq) | GRACE__SEQ_STATE_MASK) + 1;

	if (st->stall_cookie == cookie)
		return; /* once per grace period, not per index */
	st->stall_cookie = cookie;
	grace__report_stall_domain("srcu", st->ssp, waited_ns, (unsigned long)cookie);
}

/* No blocked() hint (per-CPU counters name no thread to locate); W is part of the proof. */
static const struct grace__wait_ops idx_wait_ops = {
	idx_done, idx_arm, idx_recheck, idx_disarm, idx_stall, NULL, false,
};

/* Wait until index k of the domain is balanced (see "Waiting" above). Driver only. */
static void wait_idx(struct grace__srcu_state *st, unsigned int k, unsigned int flags)
{
	struct idx_wait w = { st, k };

	grace__wait_for_readers(&idx_wait_ops, &w, &st->slot->wq, flags & GRACE__GP_EXPEDITED);
}

/* F: new readers use index idx & 1 from now on. Driver only. */
static void srcu_flip(struct grace__srcu_state *st, uint32_t idx)
{
	struct srcu_struct *ssp = st->ssp;

	/* Relaxed: the scans' soundness does not depend on when readers see it (Claim 2); it only
	 * steers new readers away from the index S2 drains. */
	grace_store_relaxed(&ssp->idx, idx);
	/* Full fence: idx before the load of fast (store-buffering with srcu_publish()). */
	grace_smp_mb();
	/* Acquire/release: a reader that sees this cur sees the `rseq` published before fast. */
	if (grace_load_acquire(&ssp->fast))
		grace_store_release(&ssp->cur, &st->cpus[0].lock[idx & 1u]);
}

static void srcu_wait_readers(struct grace__gp *gp, unsigned int flags)
{
	struct grace__srcu_state *st = (struct grace__srcu_state *)gp->flavor;
	struct srcu_struct *ssp = st->ssp;
	uint32_t idx;

	/* Barrier M: every reader's lock increment before this point is visible to the scans
	 * below; every section whose increment follows it sees the updater's removal (Claim 2).
	 * Pairs with the compiler barrier after the reader's lock increment (smp_mb B in fence
	 * mode). */
	grace__heavy_barrier();
	idx = grace_load_relaxed(&ssp->idx); /* only the driver writes it */
	wait_idx(st, (idx + 1) & 1u, flags); /* S1: stragglers of the previous flip */
	srcu_flip(st, idx + 1);              /* F */
	wait_idx(st, idx & 1u, flags);       /* S2 */
	grace__ann_acquire(ssp);             /* race detectors: the readers' unlocks */
}

/* ---- domain set-up ---- */

static const struct grace__flavor_hooks srcu_hooks;
static const char *const srcu_calls[GRACE__CALL_N];

static struct grace__srcu_state *srcu_alloc(struct srcu_struct *ssp)
{
	struct grace__srcu_state *st = NULL;
	struct grace__srcu_cpu *cpus = NULL;
	unsigned int n = grace__rseq_nr_cpus();

	struct srcu_slot *sl = slot_get();

	if (!sl)
		return NULL;
	if (posix_memalign((void **)&st, GRACE_CACHE_LINE, sizeof(*st)) != 0) {
		slot_put(sl);
		return NULL;
	}
	if (posix_memalign((void **)&cpus, GRACE_CACHE_LINE, n * sizeof(*cpus)) != 0) {
		slot_put(sl);
		free(st);
		return NULL;
	}
	memset(st, 0, sizeof(*st));
	memset(cpus, 0, n * sizeof(*cpus));
	grace__ann_ignore(ssp, sizeof(*ssp)); /* Valgrind: the domain's words are shared atomics */
	grace__ann_ignore(st, sizeof(*st));
	grace__ann_ignore(cpus, n * sizeof(*cpus));
	grace__gp_init(&st->gp, srcu_wait_readers, st, "srcu");
	st->flv.name = "srcu";
	st->flv.calls = srcu_calls;
	st->flv.gp = &st->gp;
	st->flv.hooks = &srcu_hooks;
	st->flv.reg = NULL;
	st->flv.cb_workers = 1; /* one worker per domain: programs may have many domains */
	st->flv.call_may_wait = false;
	st->flv.cb = NULL;
	grace__lock_init(&st->flv.cb_lock);
	st->flv.owner = ssp;
	st->flv.free_slot = -1; /* free_srcu(): on the engine (domains come and go) */
	st->flv.free_fn = NULL; /* free() until grace_srcu_set_free_hook() */
	st->flv.free_used = 0;
	st->flv.exit_in_reader = "exit() was called inside a read-side section";
	st->ssp = ssp;
	st->cpus = cpus;
	st->ncpus = n;
	st->slot = sl;
	grace__ann_release(&st->gp); /* race detectors: set-up before use elsewhere (annotate.h) */
	return st;
}

static void srcu_free(struct grace__srcu_state *st)
{
	slot_put(st->slot);
	grace__lock_destroy(&st->flv.cb_lock);
	free(st->cpus);
	free(st);
}

static void srcu_link(struct grace__srcu_state *st)
{
	grace__lock(&srcu_all_lock);
	grace_list_add(&st->link, &srcu_all);
	grace__unlock(&srcu_all_lock);
}

static void srcu_unlink(struct grace__srcu_state *st)
{
	grace__lock(&srcu_all_lock);
	grace_list_del(&st->link);
	grace__unlock(&srcu_all_lock);
}

/* Make the domain's counters visible to the inline fast path. */
static void srcu_publish(struct srcu_struct *ssp, struct grace__srcu_state *st)
{
	intptr_t off = grace__rseq_tp_offset();

	grace_store_relaxed(&ssp->ncpus, st->ncpus);
	/* The wake slot for the inline unlock: published by the release store of `fast` below. */
	grace_store_relaxed(&ssp->pad_[0], (uint64_t)(uintptr_t)&st->slot->pub);
	/* `rseq` holds a 32-bit offset (a few kB in practice: the area lives in the thread control
	 * block or the static TLS block); otherwise stay on the slow path. */
	if (!srcu_fast || off != (intptr_t)(int32_t)off)
		return;
	grace_store_relaxed(&ssp->rseq.off, (int32_t)off);
	grace_store_relaxed(&ssp->rseq.bound, st->ncpus);
	/* Release: the zeroed counters and `rseq` before `fast` and `cur` (pairs with the readers'
	 * GRACE__SRCU_LOAD of them: TSO order on x86, acquire elsewhere; and with the driver's
	 * acquire load of `fast` in srcu_flip()). */
	grace_store_release(&ssp->fast, st->cpus);
	/*
	 * A grace period of a DEFINE_SRCU() domain may already run (its state was visible before
	 * this): its flip and this choice of `cur` must not leave `cur` on the old index. Store-
	 * buffering with srcu_flip(): this side stores fast, fences, reads idx; the driver stores
	 * idx, fences, reads fast. Either this side reads the new idx, or the driver sees fast and
	 * stores cur itself (then the exchange below fails, or the driver's store lands after it).
	 * Getting it wrong would only slow that grace period (readers on the index it drains),
	 * never make it unsafe; the exchange keeps srcu_read_lock() from ever blocking here.
	 */
	grace_smp_mb();
	uint64_t *want = &st->cpus[0].lock[grace_load_relaxed(&ssp->idx) & 1u], *none = NULL;
	grace_cmpxchg(&ssp->cur, &none, want, __ATOMIC_RELEASE);
}

int grace_srcu_init(struct srcu_struct *ssp)
{
	struct grace__srcu_state *st;

	if (!ssp)
		return -EINVAL;
	srcu_init_once();
	st = srcu_alloc(ssp);
	if (!st)
		return -ENOMEM;
	ssp->cur = NULL;
	ssp->fast = NULL;
	ssp->rseq.off = 0;
	ssp->rseq.bound = 0;
	ssp->idx = 0;
	ssp->waiting = 0;
	ssp->ncpus = 0;
	memset(ssp->pad_, 0, sizeof(ssp->pad_));
	srcu_link(st);
	ssp->magic = GRACE__SRCU_MAGIC_LIVE;
	grace_store_release(&ssp->state, st);
	srcu_publish(ssp, st);
	return 0;
}

static GRACE_COLD struct grace__srcu_state *srcu_setup_slow(struct srcu_struct *ssp,
							    const char *call)
{
	struct grace__srcu_state *st, *cur = NULL;
	uint32_t magic;

	if (!ssp)
		grace__misuse_fatal(call, "NULL srcu_struct");
	magic = grace_load_relaxed(&ssp->magic);
	if (magic == GRACE__SRCU_MAGIC_DEAD)
		grace__misuse_fatal(call, "srcu_struct %p used after cleanup_srcu_struct()",
				    (void *)ssp);
	if (magic != GRACE__SRCU_MAGIC_STATIC)
		grace__misuse_fatal(call,
				    "srcu_struct %p is not initialised "
				    "(init_srcu_struct() or DEFINE_SRCU())",
				    (void *)ssp);
	/* DEFINE_SRCU(): set up on first use. Racing first users: one wins the exchange. */
	srcu_init_once();
	st = srcu_alloc(ssp);
	if (!st)
		grace__fatal(call, "out of memory setting up a DEFINE_SRCU() domain");
	/* The winner's release publishes its initialised state; a loser uses the winner's, so
	 * its failed exchange must acquire too (pairs with that release). A relaxed failure order
	 * here let a loser read the state's fields before their initialisation (TSan:
	 * fault_dlopen_static under load). */
	if (!grace_cmpxchg_mo(&ssp->state, &cur, st, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		srcu_free(st);
		return cur;
	}
	srcu_link(st);
	srcu_publish(ssp, st);
	return st;
}

static inline struct grace__srcu_state *srcu_get(struct srcu_struct *ssp, const char *call)
{
	/* Acquire: pairs with the release publication of the state. */
	struct grace__srcu_state *st = ssp ? grace_load_acquire(&ssp->state) : NULL;

	if (GRACE_LIKELY(st != NULL))
		return st;
	return srcu_setup_slow(ssp, call);
}

/* ---- read side, out of line ---- */

int grace__srcu_read_lock_slow(struct srcu_struct *ssp)
{
	struct grace__srcu_state *st = srcu_get(ssp, "srcu_read_lock");
	unsigned int idx = grace_load_relaxed(&ssp->idx) & 1u;

	/* Debug builds: a test may stop the reader here, after it chose its index and before it
	 * is counted, while grace periods pass (Claim 2's straggler that S1 catches). */
	GRACE__TEST_PAUSE("srcu_lock");
	if (!srcu_rseq ||
	    grace__rseq_percpu_add(&st->cpus[0].lock[idx], sizeof(st->cpus[0]), st->ncpus, 1) < 0) {
		/* No rseq in this thread: the atomic counter of the CPU it runs on (contract rule 1
		 * of internal/rseq.h: never the rseq counter). */
		unsigned int c = (unsigned int)grace__rseq_cpu() % st->ncpus;
		grace_fetch_add(&st->cpus[c].alock[idx], 1u, __ATOMIC_RELAXED);
	}
	if (srcu_fence)
		grace_smp_mb(); /* B: the increment before the section (pairs with M) */
	else
		grace_barrier(); /* as the inline path */
	return (int)idx;
}

void grace__srcu_read_unlock_slow(struct srcu_struct *ssp, int idx)
{
	struct grace__srcu_state *st;
	struct srcu_slot *sl;
	unsigned int k = (unsigned int)idx;

	if (GRACE_UNLIKELY(k > 1u))
		grace__misuse_fatal("srcu_read_unlock",
				    "index %d was not returned by srcu_read_lock()", idx);
	st = ssp ? grace_load_acquire(&ssp->state) : NULL;
	if (GRACE_UNLIKELY(!st))
		grace__misuse_fatal("srcu_read_unlock",
				    "srcu_struct %p has no open section "
				    "(never locked, or cleaned up)",
				    (void *)ssp);
	/* The wake slot, before the increment: after it neither *ssp nor *st may be touched
	 * (see "Wake slots" at the top). The increment is a release (or follows fence C), so
	 * this load stays before it. */
	sl = st->slot;
	grace__ann_release(ssp); /* race detectors: the section ends here */
	if (srcu_fence)
		grace_smp_mb(); /* C: the section before the increment (pairs with the scans) */
	if (!srcu_rseq ||
	    grace__rseq_percpu_add_release(&st->cpus[0].unlock[k], sizeof(struct grace__srcu_cpu),
					   st->ncpus, 1) < 0) {
		unsigned int c = (unsigned int)grace__rseq_cpu() % st->ncpus;
		/* Release: the section before the increment (pairs with the acquire scan). */
		grace_fetch_add(&st->cpus[c].aunlock[k], 1u, __ATOMIC_RELEASE);
	}
	if (srcu_fence)
		grace_smp_mb(); /* the increment before the load of `waiting` (pairs with W) */
	else
		grace_barrier();
	if (grace_load_relaxed(&sl->pub.waiting) & (1u << k))
		grace__wait_wake(&sl->wq.futex);
}

/* The inline unlock saw its bit in the slot's `waiting`. Touches only the slot. */
void grace__srcu_wake_slot(struct grace__srcu_wake *w)
{
	grace__wait_wake(&((struct srcu_slot *)(void *)w)->wq.futex);
}

/*
 * 0.2.0's inline unlock (programs built against that header) saw its bit in ssp->waiting after
 * its increment. It still needs the domain: a cleaned-up domain (state NULL) has no waiter to
 * wake. The load of a domain the program already freed is theirs (see "Wake slots").
 */
void grace__srcu_unlock_wake(struct srcu_struct *ssp)
{
	struct grace__srcu_state *st = grace_load_acquire(&ssp->state);

	if (st)
		grace__wait_wake(&st->slot->wq.futex);
}

/* ---- debug builds: per-thread open sections ---- */

#define DBG_MAX 32
struct dbg_ent {
	const struct srcu_struct *ssp;
	int idx;
};
static __thread struct dbg_ent dbg_stack[DBG_MAX];
static __thread unsigned int dbg_n, dbg_lost;

int grace__srcu_read_lock_dbg(struct srcu_struct *ssp)
{
	int idx = grace__srcu_read_lock_slow(ssp);

	if (dbg_n < DBG_MAX) {
		dbg_stack[dbg_n].ssp = ssp;
		dbg_stack[dbg_n].idx = idx;
		dbg_n++;
	} else {
		dbg_lost++; /* deeper than we track: the checks below give up, never false alarms */
	}
	grace__dbg_extra_sections++;
	return idx;
}

void grace__srcu_read_unlock_dbg(struct srcu_struct *ssp, int idx)
{
	int found = -1, any = 0;

	if ((unsigned int)idx > 1u)
		grace__misuse_fatal("srcu_read_unlock",
				    "index %d was not returned by srcu_read_lock()", idx);
	for (int i = (int)dbg_n - 1; i >= 0; i--) {
		if (dbg_stack[i].ssp != ssp)
			continue;
		any = 1;
		if (dbg_stack[i].idx == idx) {
			found = i;
			break;
		}
	}
	if (found < 0) {
		if (dbg_lost) {
			dbg_lost--;
		} else if (any) {
			grace__misuse_fatal(
				"srcu_read_unlock",
				"index %d does not match the index "
				"srcu_read_lock() returned for any open section of this "
				"srcu_struct",
				idx);
		} else {
			grace__misuse_fatal("srcu_read_unlock",
					    "no srcu_read_lock() section of "
					    "srcu_struct %p is open in this thread",
					    (void *)ssp);
		}
	} else {
		memmove(&dbg_stack[found], &dbg_stack[found + 1],
			(dbg_n - (unsigned int)found - 1) * sizeof(dbg_stack[0]));
		dbg_n--;
	}
	if (grace__dbg_extra_sections)
		grace__dbg_extra_sections--;
	grace__srcu_read_unlock_slow(ssp, idx);
}

int grace__srcu_dbg_held(const struct srcu_struct *ssp)
{
	for (unsigned int i = 0; i < dbg_n; i++)
		if (dbg_stack[i].ssp == ssp)
			return 1;
	return dbg_lost != 0;
}

void grace__srcu_deref_outside(const char *file, int line)
{
	grace__misuse_fatal("srcu_dereference",
			    "%s:%d: called outside a srcu_read_lock() section "
			    "of that srcu_struct",
			    file, line);
}

static void srcu_check_not_reader(const struct srcu_struct *ssp, const char *call)
{
	/* Exact only for sections entered from code built with GRACE_DEBUG. */
	for (unsigned int i = 0; i < dbg_n; i++)
		if (dbg_stack[i].ssp == ssp)
			grace__misuse_fatal(call, "called inside a srcu_read_lock() section of the "
						  "same srcu_struct (would deadlock)");
}

/* ---- the domain as a flavor (core/flavor.h) ---- */

static bool srcu_is_reader(struct grace__flavor *f)
{
	return grace__srcu_dbg_held((const struct srcu_struct *)f->owner) != 0;
}

static int srcu_enter_wait(struct grace__flavor *f, const char *call)
{
	srcu_check_not_reader((const struct srcu_struct *)f->owner, call);
	return 0;
}

static void srcu_leave_wait(struct grace__flavor *f, int token)
{
	(void)f;
	(void)token;
}

static int srcu_read_lock_op(struct grace__flavor *f)
{
	return grace_srcu_read_lock((struct srcu_struct *)f->owner);
}

static void srcu_read_unlock_op(struct grace__flavor *f, int token)
{
	grace_srcu_read_unlock((struct srcu_struct *)f->owner, token);
}

static const struct grace__flavor_hooks srcu_hooks = {
	.is_reader = srcu_is_reader,
	.enter_wait = srcu_enter_wait,
	.leave_wait = srcu_leave_wait,
	.read_lock = srcu_read_lock_op,
	.read_unlock = srcu_read_unlock_op,
	.atfork_child = NULL,
};

static const char *const srcu_calls[GRACE__CALL_N] = {
	[GRACE__CALL_SYNC] = "synchronize_srcu",
	[GRACE__CALL_SYNC_EXP] = "synchronize_srcu_expedited",
	[GRACE__CALL_CALL] = "call_srcu",
	[GRACE__CALL_CALL_HURRY] = "call_srcu_hurry",
	[GRACE__CALL_BARRIER] = "srcu_barrier",
	[GRACE__CALL_COND_SYNC] = "cond_synchronize_srcu",
	[GRACE__CALL_POLL_STATE] = "poll_state_synchronize_srcu",
	[GRACE__CALL_START_POLL] = "start_poll_synchronize_srcu",
	[GRACE__CALL_SET_POLICY] = "grace_srcu_set_policy",
	[GRACE__CALL_SET_LIMITS] = "grace_srcu_set_callback_limits",
	[GRACE__CALL_FREE] = "free_srcu",
	[GRACE__CALL_FREE_PTR] = "free_srcu_mightsleep",
	[GRACE__CALL_FREE_BARRIER] = "free_srcu_barrier",
	[GRACE__CALL_RETIRE] = "srcu_retire",
	[GRACE__CALL_SET_FREE_HOOK] = "grace_srcu_set_free_hook",
};

void grace_flavor_ops_srcu(struct grace_flavor_ops *ops, struct srcu_struct *ssp)
{
	struct grace__srcu_state *st = srcu_get(ssp, "grace_flavor_ops_srcu");
	const struct grace_flavor_ops o = GRACE__FLAVOR_OPS_INIT(&st->flv, "srcu", NULL, NULL, NULL,
								 NULL, NULL);

	if (!ops)
		grace__misuse_fatal("grace_flavor_ops_srcu", "NULL struct grace_flavor_ops");
	*ops = o;
}

/* ---- the update side: the generic functions of flavor/update.c ---- */

void grace_srcu_synchronize(struct srcu_struct *ssp)
{
	grace__flavor_synchronize(&srcu_get(ssp, "synchronize_srcu")->flv, 0);
}

void grace_srcu_synchronize_expedited(struct srcu_struct *ssp)
{
	grace__flavor_synchronize(&srcu_get(ssp, "synchronize_srcu_expedited")->flv,
				  GRACE__GP_EXPEDITED);
}

unsigned long grace_srcu_get_state(struct srcu_struct *ssp)
{
	return grace__flavor_get_state(&srcu_get(ssp, "get_state_synchronize_srcu")->flv);
}

unsigned long grace_srcu_start_poll(struct srcu_struct *ssp)
{
	return grace__flavor_start_poll(&srcu_get(ssp, "start_poll_synchronize_srcu")->flv);
}

bool grace_srcu_poll_state(struct srcu_struct *ssp, unsigned long cookie)
{
	return grace__flavor_poll_state(&srcu_get(ssp, "poll_state_synchronize_srcu")->flv, cookie);
}

void grace_srcu_cond_synchronize(struct srcu_struct *ssp, unsigned long cookie)
{
	grace__flavor_cond_synchronize(&srcu_get(ssp, "cond_synchronize_srcu")->flv, cookie);
}

void grace_srcu_call(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call(&srcu_get(ssp, "call_srcu")->flv, head, func);
}

void grace_srcu_call_hurry(struct srcu_struct *ssp, struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call_hurry(&srcu_get(ssp, "call_srcu_hurry")->flv, head, func);
}

void grace_srcu_barrier(struct srcu_struct *ssp)
{
	grace__flavor_barrier(&srcu_get(ssp, "srcu_barrier")->flv);
}

/* free_srcu() and its twins: the generic ones of engine/free.c. A NULL pointer does nothing,
 * whatever ssp is. */
void grace_srcu_free(struct srcu_struct *ssp, void *ptr, struct rcu_head *head)
{
	if (ptr)
		grace__free(&srcu_get(ssp, "free_srcu")->flv, ptr, head);
}

void grace_srcu_free_ptr(struct srcu_struct *ssp, void *ptr)
{
	if (ptr)
		grace__free_ptr(&srcu_get(ssp, "free_srcu_mightsleep")->flv, ptr);
}

void grace_srcu_free_barrier(struct srcu_struct *ssp)
{
	grace__free_barrier(&srcu_get(ssp, "free_srcu_barrier")->flv);
}

void grace_srcu_retire(struct srcu_struct *ssp, void *ptr)
{
	if (ptr)
		grace__retire(&srcu_get(ssp, "srcu_retire")->flv, NULL, ptr);
}

void grace_srcu_retire_fn(struct srcu_struct *ssp, void (*fn)(void *), void *ptr)
{
	if (ptr)
		grace__retire(&srcu_get(ssp, "srcu_retire_fn")->flv, fn, ptr);
}

int grace_srcu_set_free_hook(struct srcu_struct *ssp, void (*fn)(void *))
{
	return grace__free_hook(&srcu_get(ssp, "grace_srcu_set_free_hook")->flv, fn);
}

int grace_srcu_set_policy(struct srcu_struct *ssp, enum grace_gp_policy policy,
			  unsigned int period_us)
{
	return grace__flavor_set_policy(&srcu_get(ssp, "grace_srcu_set_policy")->flv, policy,
					period_us);
}

int grace_srcu_set_callback_limits(struct srcu_struct *ssp, size_t soft, size_t hard)
{
	return grace__flavor_set_limits(&srcu_get(ssp, "grace_srcu_set_callback_limits")->flv, soft,
					hard);
}

void grace_srcu_callback_stats(struct srcu_struct *ssp, struct grace_cb_stats *stats)
{
	grace__flavor_stats(&srcu_get(ssp, "grace_srcu_callback_stats")->flv, stats);
}

/* ---- cleanup ---- */

void grace_srcu_cleanup(struct srcu_struct *ssp)
{
	static const char call[] = "cleanup_srcu_struct";
	struct grace__srcu_state *st;
	struct grace__cbdom *cb;
	unsigned long readers;
	uint64_t pending;

	if (!ssp) {
		grace__misuse(call, "NULL srcu_struct");
		return;
	}
	st = grace_load_acquire(&ssp->state);
	if (!st) {
		uint32_t magic = grace_load_relaxed(&ssp->magic);
		if (magic == GRACE__SRCU_MAGIC_DEAD)
			grace__misuse(call, "srcu_struct %p cleaned up twice", (void *)ssp);
		else if (magic != GRACE__SRCU_MAGIC_STATIC)
			grace__misuse(call, "srcu_struct %p was never initialised", (void *)ssp);
		return; /* a DEFINE_SRCU() domain never used: nothing to free */
	}
	grace__ann_acquire(&st->gp); /* race detectors: the set-up, before it is torn down */
	cb = grace__flavor_cb_peek(&st->flv);
	/* From one of the domain's own callbacks: its worker runs the caller, and freeing the
	 * domain would join that worker from itself (docs/api.md, cleanup_srcu_struct()). */
	if (grace__in_callback_of(cb)) {
		grace__misuse(call,
			      "called from a callback of srcu_struct %p (its worker runs the "
			      "caller): not freed",
			      (void *)ssp);
		return;
	}
	/* Callbacks first: the most specific advice (srcu_barrier()). */
	if (cb && (pending = grace__cbdom_pending(cb)) != 0) {
		grace__misuse(call,
			      "%llu callback%s queued by call_srcu() on srcu_struct %p not "
			      "invoked yet (call srcu_barrier() first): not freed",
			      (unsigned long long)pending, pending == 1 ? "" : "s", (void *)ssp);
		return;
	}
	readers = grace_srcu_readers_active(ssp);
	if (readers) {
		grace__misuse(call,
			      "%lu reader%s still inside srcu_read_lock() sections of srcu_struct "
			      "%p: not freed",
			      readers, readers == 1 ? " is" : "s are", (void *)ssp);
		return;
	}
	if (grace__gp_in_progress(&st->gp)) {
		grace__misuse(call,
			      "a grace period of srcu_struct %p is under way "
			      "(synchronize_srcu() or callbacks running): not freed",
			      (void *)ssp);
		return;
	}
	int kept = 0;
	if (cb) {
		kept = grace__cbdom_destroy(cb);
		if (kept < 0) {
			grace__misuse(call,
				      "callbacks queued by call_srcu() on srcu_struct %p while "
				      "it was being cleaned up: not freed",
				      (void *)ssp);
			return;
		}
		st->flv.cb = NULL;
	}
	srcu_unlink(st);
	grace_store_relaxed(&ssp->cur, (uint64_t *)NULL);
	grace_store_relaxed(&ssp->fast, (struct grace__srcu_cpu *)NULL);
	grace_store_relaxed(&ssp->rseq.bound, 0u);
	grace_store_relaxed(&ssp->rseq.off, 0);
	grace_store_relaxed(&ssp->ncpus, 0u);
	grace_store_relaxed(&ssp->waiting, 0u);
	grace_store_relaxed(&ssp->pad_[0], (uint64_t)0);
	grace_store_release(&ssp->state, (struct grace__srcu_state *)NULL);
	if (ssp->magic != GRACE__SRCU_MAGIC_STATIC)
		ssp->magic = GRACE__SRCU_MAGIC_DEAD;
	if (kept) {
		/* The exit drain is running and may use the state (its flavor and grace-period
		 * sequence) without a lock: keep it, reachable, until the process ends. */
		grace__lock(&srcu_all_lock);
		grace_list_add(&st->link, &srcu_exit_kept);
		grace__unlock(&srcu_all_lock);
		return;
	}
	srcu_free(st);
}
