/* SPDX-License-Identifier: MIT */
/*
 * The one way grace waits for readers: spin for a bounded time, then announce the sleep, run
 * the heavy barrier and sleep on a futex until the last reader the wait needs wakes it, with a
 * stall report when that takes too long. Used by the reader registry (default flavor and QSBR,
 * core/registry.c) and by srcu (flavor/srcu.c); what "done" means and how readers are told to
 * wake the waiter is theirs, given as a struct grace__wait_ops.
 *
 * The sleep protocol and its lost-wake-up argument (store-buffering, the flavors' readers on
 * the other side):
 *   waiter:  futex := SLEEPING; arm() (flag each reader it waits for, release);
 *            barrier W (grace__heavy_barrier); recheck(); futex wait while the word is SLEEPING
 *   reader:  store "I am done" (release); compiler barrier (smp_mb without membarrier);
 *            load the flag; if set: grace__wait_wake(futex)
 * membarrier W runs a full barrier in every running reader's instruction stream (a context
 * switch for the others). If that point follows the reader's "done" store, recheck() sees the
 * store and the waiter does not sleep on that reader; if it precedes it, the reader's later
 * load sees the flag and it wakes the waiter. The wake is an exchange of the futex word, so a
 * wake that lands between recheck() and FUTEX_WAIT makes the wait return at once. A reader can
 * start holding the wait up after arm() flagged the others (see recheck()): then the waiter
 * flags again and runs W again before sleeping.
 */
#ifndef GRACE_SRC_WAIT_H
#define GRACE_SRC_WAIT_H

#include <stdbool.h>
#include <stdint.h>

/* Spin budgets before sleeping: long enough to catch a short section running on another CPU,
 * short enough not to burn a CPU that a preempted reader needs. */
#define GRACE__WAIT_SPIN_NS 20000ull
#define GRACE__WAIT_SPIN_NS_EXPEDITED 200000ull

#define GRACE__WAIT_SPIN_NS_MIN 1000ull

/* The longest a light sleep (wait.c) lasts before the waiter falls back to barrier W: the bound
 * on the delay a wake-up lost to a stale "blocked" hint can cause. */
#define GRACE__WAIT_LIGHT_NS 1000000ll

#define GRACE__WAIT_AWAKE 0u
#define GRACE__WAIT_SLEEPING 1u

/*
 * What one waiter (a grace-period driver: one at a time per domain) keeps between waits.
 *  futex    the word readers wake: GRACE__WAIT_SLEEPING while the waiter sleeps.
 *  spin_ns  the spin budget, adapted after each wait: to a little more than the wait took when
 *           that was within the maximum budget (spinning would have caught it), halved when
 *           the readers took longer (a reader that is not running, e.g. preempted because
 *           there are more threads than CPUs, cannot end its section while the waiter burns
 *           the CPU it needs). Written by the waiter only; 0 means "not adapted yet".
 * The budget is the slow signal; ops->blocked() is the direct one: a holder last seen on the
 * waiter's CPU cannot run while the waiter spins, whatever the budget says, so the spin ends
 * there (such a wait does not shrink the budget, which stays tuned to readers that do run).
 */
struct grace__waitq {
	uint32_t futex;
	uint32_t spin_ns;
};

#define GRACE__BLOCKED_HERE 1u     /* some holder last ran on the waiter's CPU */
#define GRACE__BLOCKED_ALL_HERE 2u /* every holder did (and there is one) */
#define GRACE__BLOCKED_SHARED 4u   /* two holders last ran on one other CPU */

enum grace__recheck {
	GRACE__RECHECK_DONE,  /* nothing left to wait for */
	GRACE__RECHECK_SLEEP, /* every reader still waited for is flagged: sleep */
	GRACE__RECHECK_AGAIN, /* a reader that is not flagged holds the wait: arm again */
};

struct grace__wait_ops {
	/* Has every reader the wait needs finished? Acquire loads of the readers' "done" stores,
	 * so their sections happen before the waiter goes on. */
	bool (*done)(void *ctx);
	/* Flag every reader that still holds the wait, with release RMWs (they order the futex
	 * word's SLEEPING before the flag, for a reader's grace__wait_wake()). */
	void (*arm)(void *ctx);
	/* After barrier W: done, or is every holder flagged? */
	enum grace__recheck (*recheck)(void *ctx);
	/* The wait is over: clear what arm() set that the readers do not clear themselves. */
	void (*disarm)(void *ctx);
	/* The wait has lasted the stall timeout: name the readers it waits for (once per wait). */
	void (*stall)(void *ctx, uint64_t waited_ns);
	/* Optional (NULL: no hint): where the readers that hold the wait were last seen running,
	 * as GRACE__BLOCKED_* flags. A holder last seen on the waiter's own CPU is not running
	 * (the waiter is) and waits in that CPU's run queue for the waiter to give it up; two
	 * holders last seen on one other CPU cannot both run. Either way spinning does not help,
	 * and a spinning waiter also keeps the load balancer from moving a holder to its CPU. A
	 * hint: a stale answer costs a sleep or a spin, never safety. */
	unsigned int (*blocked)(void *ctx);
	/* done() alone proves the readers finished (their "done" stores are releases that done()
	 * acquires, as QSBR's quiescent states are): barrier W then serves only the wake-up, and
	 * may be a local fence when every holder is blocked (see "light sleep" in wait.c). False
	 * where W is part of the proof (the default flavor: readers store with no fence). */
	bool done_is_ordered;
};

/*
 * Wait until ops->done(ctx). q holds the futex word readers wake (GRACE__WAIT_AWAKE at rest) and
 * the adaptive spin budget; stall reports count from the start of the wait; expedited spins up to GRACE__WAIT_SPIN_NS_EXPEDITED whatever the budget. Returns
 * with q->futex == GRACE__WAIT_AWAKE.
 */
void grace__wait_for_readers(const struct grace__wait_ops *ops, void *ctx, struct grace__waitq *q,
			     bool expedited);

/* Waits that slept light (wait.c), and light sleeps that ran out without a wake-up (a reader
 * slower than GRACE__WAIT_LIGHT_NS, or a wake-up lost to a stale hint). Statistics. */
extern unsigned long grace__wait_nlight, grace__wait_nlight_timeout;

/* Waits whose spin ops->blocked() cut short, since start-up (statistics; the tests check the
 * path is taken). Written by grace-period drivers with a relaxed RMW. */
extern unsigned long grace__wait_nblocked;

/* Reader side: it saw its flag set (by arm(), with a relaxed load): wake the waiter. */
void grace__wait_wake(uint32_t *futex);

/* membarrier(2) usable (chosen once at start-up by src/init.c), else the fence fallback. */
extern bool grace__use_membarrier;
/* Barrier W: a full barrier on every running thread (membarrier), or a local fence in the
 * fallback, where readers fence themselves. */
void grace__heavy_barrier(void);
/* What a caller's heavy barriers cost (wait.c): the running average of their time and the
 * least time seen, ns (0: no sample yet). Relaxed words, racy by design: hints. */
struct grace__barrier_cost {
	uint32_t avg_ns;
	uint32_t least_ns;
};
/* grace__heavy_barrier(), timed into *bc. */
void grace__heavy_barrier_timed(struct grace__barrier_cost *bc);
/* The barrier's weight, ns: its average time, times how far that exceeds the least (wait.c). */
uint64_t grace__barrier_weight(const struct grace__barrier_cost *bc);
/* The pace of a caller that pays one barrier per batch (wait.c): the slots it would add, at
 * the rate of `slots` in `ns`, in `gap` barrier weights (0: no rate yet, ns 0). */
uint64_t grace__barrier_pace(const struct grace__barrier_cost *bc, uint64_t slots, uint64_t ns,
			     unsigned int gap);

#endif
