/* SPDX-License-Identifier: MIT */
/*
 * free_rcu(): free() after a grace period, with no callback function (see free.h).
 *
 * Where the free runs. "Are Your Epochs Too Epic?" (PPoPP 2024) shows that what a deferred free
 * costs is mostly where and how it reaches the allocator: a batch freed in bulk, on a thread
 * that does not allocate, bypasses the allocator's thread caches (glibc: the tcache) and pays
 * the arena's locks and cold cache lines, more than the grace period itself. So for the default
 * flavor and QSBR the free runs on the thread that queued the object, at its later free_rcu()
 * calls, at the rate it allocates: the chunk lands in that thread's tcache, where its next
 * malloc() finds it warm. The engine's worker (call_rcu with a free() callback, or GRACE_FREE_WORKER=1) frees
 * them in bulk, on the worker's CPU, into the worker's tcache, from which nobody allocates.
 * bench/hashtable/free_where.sh counts the instructions of both (callgrind) and times them;
 * docs/guide.md quotes the figures.
 *
 * The per-thread cache (struct fcache, one per thread and flavor):
 *  - cur: the block being filled (FBLK_N pointers). It is sealed when full, or when a grace
 *    period has completed since its first pointer (so that a slow trickle does not wait for a
 *    full block): sealing takes the block's cookie with start_poll (a full fence, then a read of
 *    the sequence, and a request to the engine to run that grace period); with stepping, and
 *    in a deferred cache (whose pass drives its grace periods, engine/defer.c), with
 *    grace__gp_snap() (the same full fence and read, no request).
 *  - first..last: sealed blocks, oldest first. Each call frees burst() pointers from the
 *    oldest blocks whose cookies have completed (grace__gp_done: acquire): the ready pointers
 *    of each grace period spread over as many calls as the last one took, so that frees follow
 *    allocations one for one instead of overflowing the allocator's thread cache (burst()).
 *  - a monitor: an rcu_head queued on the flavor's engine while the cache holds pointers. When
 *    the engine invokes it (after a grace period), a cache whose owner has made no call since
 *    the monitor last looked, twice in a row (MON_IDLE_RUNS), is taken: ready pointers are
 *    freed by the worker, the other blocks are handed to the engine as callbacks (grace__fblk_cb). An
 *    owner that keeps calling gets the monitor requeued. So a thread that stops calling does
 *    not keep its objects. The monitor is a patient callback (grace__engine_call_patient()):
 *    while nothing else waits on the engine, it runs 100 ms after it was queued, not after
 *    the next grace period, so that the threads' monitors do not wake the workers 250 times
 *    a second while the threads step grace periods themselves.
 *  - a thread that exits hands its blocks to the engine; at process exit every cache is
 *    emptied the same way, and the engine's exit drain (registered before our exit handler, so
 *    it runs after it) frees them: nothing leaks. In a fork child the caches of the threads
 *    that do not exist there are ghosts, emptied and freed by their monitors (grace__free_atfork_child()).
 *  - nothing is in flight on a thread's stack across a wait or past the cache's release:
 *    pointers taken out of a cache are freed before it is let go (or handed to the engine), so
 *    free_rcu_barrier(), which takes every cache in turn, finds each object queued before it
 *    either in a cache, on the engine, or freed.
 * Per-thread bound: past THREAD_HARD pointers held, a free_rcu() that may wait (not in a
 * read-side section, not in a callback, not srcu) waits for the oldest block's grace period, at
 * most the stall timeout (at least 1 s), then frees that block, as call_rcu() waits at its hard
 * limit. As there, a wait that gives up says so, and the thread's later calls queue without
 * waiting until a grace period completes again: while grace periods complete a thread never has
 * more than THREAD_HARD (+ one block) waiting; during a stall past the stall timeout, memory
 * grows and the program has been told. Blocks handed to the engine count against the engine's
 * limits, one callback each; the monitor can hand them over only once grace periods complete
 * again, so after a stall the blocks a monitor took (at most a cache's worth) wait for one
 * more grace period.
 *
 * Correctness (no pointer is freed before a grace period that began after its free_rcu call):
 *  (1) The caller removed the object from every reader's view before calling free_rcu(); the
 *      pointer is appended to a block under the cache's lock. A block's cookie is taken by the
 *      thread that holds the lock, after every append to the block: by the owner in program
 *      order, or by a thread that took the lock after the owner released it (release/acquire on
 *      `lock`). So the removal happens before the full fence in grace__gp_snap(), which is all
 *      argument (1) of core/gp.c needs (with happens-before in place of program order, as for
 *      the callback engine's harvest).
 *  (2) A pointer is freed only after grace__gp_done(cookie) returned true in the freeing thread
 *      (an acquire load pairing with the driver's release store of the sequence: every reader
 *      section of that grace period happens before the free), or by grace__fblk_cb() in the engine, for
 *      a block queued after all of its appends (the engine's own argument, callback.c).
 *  (3) Each pointer is freed once: it lives in exactly one block; a block is reachable from one
 *      cache, or from one thread's local list after being detached under the cache's lock, or
 *      from one engine callback; it moves between them only under the cache's lock.
 * The cache's lock is a spin flag: the owner takes it (one uncontended exchange) at each call;
 * the monitor only tries it; a barrier, the exit paths and fork take it briefly. No holder ever
 * blocks while holding it (grace-period waits happen after unlocking).
 *
 * The engine path (srcu domains, callbacks, exiting threads, no memory for a block, or
 * GRACE_FREE_WORKER=1): free_rcu queues the object's own rcu_head with the encoded offset
 * (free.h), and free_rcu_mightsleep a small carrier holding the pointer; with no memory for a
 * carrier it waits for a grace period itself and frees at once.
 *
 * Debug builds (GRACE_DEBUG): every queued pointer is kept in a set until it is freed, so that
 * a pointer queued twice is reported (naming the call) and aborts; freed objects are poisoned
 * with 0x6b bytes first; free_rcu_mightsleep() checks at every call that it could wait.
 */
#include "engine/free.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/arch/atomic.h>
#include <grace/internal/retire.h>
#include <grace/list.h>
#include <grace/qsbr.h>
#include <grace/rcu.h>

#include "core/debug.h"
#include "core/diag.h"
#include "core/flavor.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/lock.h"
#include "core/options.h"
#include "core/sys.h"
#include "core/ownsteal.h"
#include "core/wait.h" /* grace__use_membarrier, grace__heavy_barrier */
#include "engine/callback.h"
#include "engine/defer.h"
#include "engine/fcache.h"
#include "engine/freeblk.h"

#define BURST_MAX 16u /* ready pointers freed per call, at most */
#define BURST_OUT 32u /* entries one call takes out of the blocks, at most */
#define THREAD_HARD 65536u
#define STEP_GAP 64u   /* a thread's starts: at least 64 barrier A's apart (step_pace()) */
#define STEP_LEAST 16u /* the shortest step, in slots (step_pace()), unless the flavor's is set */
#define HARD_WAIT_NS 1000000000ull /* least wait of one call past THREAD_HARD */
/* The monitor takes a cache whose owner made no call during this many of its runs (one grace
 * period apart): more than one, so that an owner merely preempted (by the very worker that runs
 * the monitor, on a busy machine) keeps its cache. */
#define MON_IDLE_RUNS 2u

/* ---- what the descriptor says ---- */

static inline int slot_of(const struct grace__flavor *f)
{
	return f->free_slot;
}

/* ---- per-thread caches ---- */

static struct grace__lock all_lock = GRACE__LOCK_INIT; /* taken before any cache's lock */
static GRACE_LIST_HEAD(all_caches);
#define CACHES_FOR_EACH(c) FCACHE_FOR_EACH(c, &all_caches)
#define CACHES_FOR_EACH_SAFE(c, head) FCACHE_FOR_EACH_SAFE(c, head)
static uint32_t g_exiting;            /* process exit began: every free goes to the engine */
static bool g_worker_mode;            /* GRACE_FREE_WORKER=1 */
static uint32_t g_step_begin = 1024u; /* GRACE_STEP_GARBAGE (step_of()), read by free_init() */
uint32_t grace__fc_run = 2u;          /* GRACE_RETIRE_RUN (fcache.h), read by free_init() */
static bool g_ready;                  /* the thread-exit key exists */

struct ftls {
	struct fcache *c[NSLOT];
	int exiting;  /* the thread's exit began: its frees go to the engine */
	int no_cache; /* a barrier's flush holds all_lock: a retire made on this thread (by an
		       * entry's function, or a signal handler) takes the engine path (creating
		       * a cache takes all_lock) */
};
static __thread struct ftls ftls GRACE_TLS_IE;
/* The same caches, as the inline retire sees them (retire.h): &c->rt, or NULL. */
GRACE_API __thread struct grace__retire *grace__memb_retire GRACE_TLS_IE;
GRACE_API __thread struct grace__retire *grace__qsbr_retire GRACE_TLS_IE;
static __thread struct grace__flavor *init_flavor GRACE_TLS_IE;
static pthread_key_t ftls_key;
static pthread_once_t free_once = PTHREAD_ONCE_INIT;

/* Has a grace period completed since the sequence read seq0? (bits 2+ count completions) */
static inline bool gp_moved(struct grace__gp *gp, uint64_t seq0)
{
	return (grace_load_relaxed(&gp->seq) >> 2) != (seq0 >> 2);
}

/* A step's length (step_len()) of n slots: at least the flavor's least (gp->step_least, else
 * STEP_LEAST), at most g_step_begin (which wins over the least). */
static inline uint32_t step_len_of(const struct grace__gp *gp, uint64_t n)
{
	uint64_t least = gp->step_least ? gp->step_least : STEP_LEAST;

	if (n < least)
		n = least;
	return n < g_step_begin ? (uint32_t)n : g_step_begin;
}

/* The TLS pointer of slot s, through which the inline retire finds the thread's cache. */
static inline struct grace__retire **rt_tls(int s)
{
	return s == 0 ? &grace__memb_retire : &grace__qsbr_retire;
}

/* An empty block for cur: a spare, or a new one. c locked. */
struct fblk *grace__fc_blk_new(struct fcache *c)
{
	struct fblk *b = spare_take(c);

	if (!b && !(b = (struct fblk *)malloc(c->deferred ? DBLK_BYTES : sizeof(*b))))
		return NULL;
	b->f = c->f;
	b->n = 0;
	b->head = 0;
	b->done = 0;
	b->next = NULL;
	return b;
}

/* Seal cur: its cookie is taken now, after every append to it ((1) at the top), and the engine
 * is asked to run that grace period, unless the owner steps grace periods itself (step_of()):
 * then the monitor, queued while the cache holds pointers, is what keeps the engine at work
 * for a thread that stops calling. c locked. */
void grace__fc_seal(struct fcache *c)
{
	struct fblk *b = c->cur;

	cur_sync(c);
	/* No request to the engine where something else drives the grace period: the stepping
	 * threads, or a deferred cache's pass, whose own callback (engine/defer.c, point D8)
	 * waits for a grace period that starts after the pass posted itself again, as it does
	 * when it finds a block not ready (pass_wait). A request per deferred block woke one of
	 * the flavor's workers for a grace period and an idle sleep (a membarrier) each. */
	if (c->deferred || c->f->gp->step) {
		b->cookie = grace__gp_snap(c->f->gp);
		if (!c->deferred) {
			c->step_sealed += b->n;
		}
	} else {
		b->cookie = grace__engine_start_poll(c->f, c->f->calls[GRACE__CALL_FREE]);
	}
	if (c->deferred) {
		/* A deferred cache hands the block to its consumers (engine/defer.c, point D9):
		 * pushed on dhand, which a holder of the cache's lock empties with an exchange.
		 * Release (the successful exchange): the block's entries and cookie before the
		 * push; pairs with the acquire exchange in d_gather(). One per block, on the
		 * owner's slow call or a thread that holds the cache. */
		/* Relaxed (the first load, and a failed exchange's reload): only the link to the
		 * current top is written from it, and the top's own contents are the consumer's
		 * to read after its acquire exchange, never ours. */
		struct fblk *top = grace_load_relaxed(&c->dhand);
		do
			b->next = top;
		while (!grace_cmpxchg_mo(&c->dhand, &top, b, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
		/* Release: the push before the count, which the pass loads (acquire) before it
		 * empties dhand (point D9), or reads as a hint that orders nothing (D3). */
		grace_store_release(&c->dsealed, c->dsealed + 1u);
	} else {
		b->next = NULL;
		if (c->last)
			c->last->next = b;
		else
			c->first = b;
		c->last = b;
	}
	cur_close(c);
}

/* b, the first sealed block, is empty: off the list, kept as a spare or freed. c held. */
static inline void drop_first(struct fcache *c, struct fblk *b)
{
	c->first = b->next;
	if (!c->first)
		c->last = NULL;
	if (!spare_keep(c, b))
		free(b);
}

/* Release up to max entries whose grace period has ended, oldest first, straight from their
 * blocks (grace__fblk_release_from(), which moves the head past them after they ran). An emptied
 * block is unlinked after its entries ran (a call they made may have sealed a block behind it:
 * its next is read now) and kept as a spare or freed. c held by the owner (lock-free or
 * locked: over_limit()). `releasing` is set around each entry's function and the free hook
 * alone (freeblk.c), whose retires nest (put_nested()); a signal handler's retire anywhere
 * else in here finds the call busy and is reported, in every build. */
static inline void release_ready(struct fcache *c, struct grace__gp *gp, uint32_t max)
{
	struct fblk *b;

	while (max && (b = c->first) != NULL) {
		if (!b->done) {
			/* Acquire ((2) at the top): the frees after it follow the grace period. */
			if (!grace__gp_done(gp, b->cookie))
				break;
			b->done = 1;
		}
		/* Tests stop a call here (debug builds, GRACE_TEST_PAUSE=release_ready:US), once
		 * per block, inside its own work on the blocks, for a signal handler to interrupt. */
		if (b->head == 0)
			GRACE__TEST_PAUSE("release_ready");
		max -= grace__fblk_release_from(b, max, &c->held, &c->releasing);
		if (b->head < b->n)
			break; /* max reached */
		drop_first(c, b);
	}
}

/* Empty the cache: every block, sealed ones first, cur last with a cookie taken now. c locked
 * by the caller (the owner at exit, or a thread that took the lock: (1) at the top). */
static struct fblk *detach(struct fcache *c)
{
	struct fblk *l = c->first;

	cur_sync(c);
	if (c->cur && c->cur->n == 0) {
		/* Opened after a seal and never appended to (cache_put()): a spare again. */
		if (!spare_keep(c, c->cur))
			free(c->cur);
		cur_close(c);
	} else if (c->cur) {
		struct fblk *b = c->cur;
		b->cookie = grace__gp_snap(c->f->gp);
		b->done = 0;
		b->next = NULL;
		if (c->last)
			c->last->next = b;
		else
			l = b;
		cur_close(c);
	}
	c->first = c->last = NULL;
	c->held = 0;
	return l;
}

/* Detached blocks: those whose grace period has ended go to *ready (freed by the caller once it
 * has dropped the lock); the others are handed to the engine. Called with c locked, so that a
 * barrier that takes the lock after us finds them queued ((3), and grace__free_barrier). */
static void dispose(struct grace__flavor *f, struct fblk *l, struct fblk **ready)
{
	/* A thread's function entries run in the order they were queued (rcu_retire_fn(),
	 * grace-urcu's defer_rcu()). The caller runs its ready list after this returns, so if
	 * one block must go to the engine, all go, and the engine runs them in order (one
	 * queue's callbacks run in push order). Else the list goes ahead of the caller's, in
	 * order. */
	struct fblk *b, *last = NULL;

	for (b = l; b; b = b->next) {
		if (!b->done && !grace__gp_done(f->gp, b->cookie))
			break;
		b->done = 1;
		last = b;
	}
	if (b) {
		while (l) {
			struct fblk *nx = l->next;
			grace__engine_call(f, &l->rh, grace__fblk_cb);
			l = nx;
		}
		return;
	}
	if (last) {
		last->next = *ready;
		*ready = l;
	}
}

static void mon_cb(struct rcu_head *h);

/* Take c off all_caches. all_lock held. */
static void cache_unlink(struct fcache *c)
{
	grace_list_del(&c->link);
}

/* What the monitor compares to tell an active owner: its calls and the inline retire's count
 * (below 256), which moves at each append between two calls. Relaxed loads: a hint, checked
 * again once the monitor holds the cache. */
static inline uint64_t activity(struct fcache *c)
{
	return (grace_load_relaxed(&c->calls) << 8) | grace_load_relaxed(&c->rt.n);
}

/* The monitor (top of the file): runs in the engine's worker, after a grace period. */
static void mon_cb(struct rcu_head *h)
{
	struct fcache *c = grace_container_of(h, struct fcache, mon);
	struct fblk *ready = NULL, *spare = NULL;
	bool requeue = false, destroy = false, retire = false;

	/* The monitor is patient (grace__engine_call_patient()): it only looks for an owner that
	 * stopped calling, so while nothing else waits on the engine the workers run it every
	 * 100 ms, not after every grace period (every 4 ms while threads step; engine/callback.c,
	 * STEP_PATIENT_NS). */
	grace__engine_patient_begun(c->f);

	/* A first look without stealing (relaxed loads: a hint, checked again below). An owner
	 * that made a call since the last look is active: most runs end here. */
	uint64_t calls = activity(c);
	/* ghost: set in a fork child before any worker existed there (plain). */
	if (!grace_load_relaxed(&c->dead) && !c->ghost) {
		if (calls != c->mon_calls || grace_load_relaxed(&c->waiting)) {
			c->mon_calls = calls;
			c->mon_idle = 0;
			grace__engine_call_patient(c->f, &c->mon, mon_cb);
			return;
		}
		if (++c->mon_idle < MON_IDLE_RUNS) {
			/* idle once: the owner may only have been preempted */
			grace__engine_call_patient(c->f, &c->mon, mon_cb);
			return;
		}
	}
	steal_mark(c);
	steal_barrier();
	if (!steal_trytake(c)) {
		steal_unmark(c);
		requeue = true; /* a barrier, fork or the owner's slow call holds it: look later */
	} else {
		if (c->dead) {
			c->mon_armed = 0; /* the owner exited: the cache is empty and unlinked */
			destroy = true;
		} else if (c->ghost) {
			/* Its owner does not exist in this fork child: empty it, then unlink it. */
			dispose(c->f, detach(c), &ready);
			spare = spare_detach(c);
			retire = true;
		} else if (activity(c) != c->mon_calls || c->waiting) {
			c->mon_calls = activity(c); /* the owner is active: look again */
			c->mon_idle = 0;
			requeue = true;
		} else if (c->held) {
			/* No call for MON_IDLE_RUNS grace periods: take its blocks. */
			dispose(c->f, detach(c), &ready);
			c->mon_armed = 0;
			c->mon_idle = 0;
		} else {
			c->mon_armed = 0; /* nothing left to watch: the owner queues us again */
			c->mon_idle = 0;
		}
		steal_release(c);
	}
	if (retire) {
		/* Only a try: fork's prepare takes all_lock and then waits for the workers to leave
		 * their callbacks, this one included. Unlinked under all_lock, the cache is out of
		 * reach of every other stealer (they all hold all_lock), so it can go. */
		if (grace__trylock(&all_lock)) {
			cache_unlink(c);
			grace__unlock(&all_lock);
			destroy = true;
		} else {
			requeue = true; /* empty by now: the next run only unlinks it */
		}
	}
	if (requeue)
		grace__engine_call_patient(c->f, &c->mon, mon_cb);
	grace__fblk_release_list(ready);
	grace__fc_free_list(spare);
	if (destroy)
		free(c);
}

static void ftls_destroy(void *arg);

/* fork(): every lock of this file, taken in prepare and released in the parent and the child
 * (by the thread that took them). No owner is in a call in the child (prepare waited for each
 * to leave it); the caches of the threads that do not exist there are ghosts (the child
 * handler). src/init.c calls these after the engine has paused its workers: a worker inside a
 * callback that frees (dbg_lock in debug builds) or runs a monitor must not find these locks
 * taken, or fork gives up on it and the child counts that callback as run unfinished. */
void grace__free_atfork_prepare(void)
{
	struct fcache *c;

	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	steal_mark(c);
	steal_barrier();
	/* The forking thread's own with busy held: its signal handlers' retires are reported
	 * rather than wait for it (fcache.h, steal_take_as()). */
	CACHES_FOR_EACH(c)
	steal_take_as(c, c == ftls.c[0] || c == ftls.c[1], "fork");
#if GRACE__LIB_DEBUG
	grace__fblk_dbg_lock();
#endif
}

void grace__free_atfork_parent(void)
{
	struct fcache *c;

#if GRACE__LIB_DEBUG
	grace__fblk_dbg_unlock();
#endif
	CACHES_FOR_EACH(c)
	steal_release_as(c, c == ftls.c[0] || c == ftls.c[1]);
	grace__unlock(&all_lock);
}

/*
 * The child: every cache but the forking thread's own is a ghost, whose owner does not exist
 * here. None waits in over_limit() (its waiter is gone: clear the flag, or the monitor would
 * see an active owner for ever). A ghost with its monitor armed is retired by the monitor (the
 * child's engine runs the queued monitor; if the fork came between the arming and the queuing,
 * the ghost stays linked and the exit handler empties it). One not armed holds nothing (a cache
 * holding pointers has its monitor armed): it goes now. Deferred caches: engine/defer.c.
 * Single-threaded here.
 */
void grace__free_atfork_child(void)
{
	struct fcache *c;
	GRACE_LIST_HEAD(gone);

	CACHES_FOR_EACH_SAFE(c, &all_caches)
	{
		grace_store_relaxed(&c->waiting, 0u);
		if (c == ftls.c[0] || c == ftls.c[1])
			continue;
		c->ghost = 1;
		cur_sync(c); /* its owner's inline appends, into held */
		if (!c->mon_armed && !c->held && (!c->cur || !c->cur->n) && !c->first) {
			cache_unlink(c);
			grace_list_add(&c->link, &gone);
		}
	}
	grace__free_atfork_parent();
	CACHES_FOR_EACH_SAFE(c, &gone)
	{
		free(c->cur); /* empty (cache_put() opens one after a seal) */
		grace__fc_free_list(spare_detach(c));
		free(c);
	}
}

/* Process exit: empty every cache (the engine's exit drain, which runs after this handler,
 * frees what is handed to it). */
static void free_at_exit(void)
{
	struct fblk *ready = NULL, *spares = NULL;
	struct fcache *c;

	grace_store_relaxed(&g_exiting, 1u);
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	steal_mark(c);
	steal_barrier();
	CACHES_FOR_EACH(c)
	{
		steal_take(c);
		dispose(c->f, detach(c), &ready);
		for (struct fblk *b; (b = spare_take(c)) != NULL;) {
			b->next = spares;
			spares = b;
		}
		steal_release(c);
	}
	grace__unlock(&all_lock);
	grace__fblk_release_list(ready);
	grace__fc_free_list(spares); /* spares hold no entry to run */
}

static void free_init(void)
{
	g_worker_mode = grace__opt(GRACE__OPT_GRACE_FREE_WORKER) != 0;
	g_step_begin = (uint32_t)grace__opt(GRACE__OPT_GRACE_STEP_GARBAGE);
	grace__fc_run = (uint32_t)grace__opt(GRACE__OPT_GRACE_RETIRE_RUN);
	if (pthread_key_create(&ftls_key, ftls_destroy) != 0)
		return; /* no thread-exit hook: every free goes to the engine */
	/*
	 * Exit order: atexit handlers run last registered first, and the engine registers its exit
	 * drain when it starts its first worker. Start one now (a grace period on this flavor is
	 * requested, harmlessly), then register ours: at exit, ours empties the caches first and the
	 * engine's drain then frees what it was handed.
	 */
	grace__engine_start_poll(init_flavor, init_flavor->calls[GRACE__CALL_FREE]);
	atexit(free_at_exit);
	g_ready = true;
}

/* Debug builds: this thread is in a span of its call that a signal handler's call must not
 * interrupt (core/debug.h, grace__dbg_span_enter()); nothing in release builds. */
static inline void dbg_mark(const char *call)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_enter(call, "the per-thread cache");
#else
	(void)call;
#endif
}

static inline void dbg_unmark(void)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_leave();
#endif
}

/* What a call queues, for the debug marks' and over_limit()'s messages and its right to wait. */
enum put_kind { PUT_FREE, PUT_FREE_PTR, PUT_RETIRE };

static const char *put_call(struct grace__flavor *f, enum put_kind k)
{
	return f->calls[k == PUT_FREE       ? GRACE__CALL_FREE
			: k == PUT_FREE_PTR ? GRACE__CALL_FREE_PTR
					    : GRACE__CALL_RETIRE];
}

static GRACE_COLD struct fcache *cache_create(struct grace__flavor *f, int slot);

/* The calling thread's first call on f (call: its name) creates its cache. A debug library
 * marks the creation, so that a signal handler's call on this thread that interrupts it is
 * reported (its own creation would wait for all_lock, which this thread may hold, or make a
 * second cache). */
static GRACE_COLD struct fcache *cache_new(struct grace__flavor *f, int slot, const char *call)
{
	dbg_mark(call);
	struct fcache *c = cache_create(f, slot);
	dbg_unmark();
	return c;
}

static GRACE_COLD struct fcache *cache_create(struct grace__flavor *f, int slot)
{
	struct fcache *c = NULL;

	init_flavor = f;
	pthread_once(&free_once, free_init);
	if (!g_ready || g_worker_mode || ftls.exiting || ftls.no_cache ||
	    grace_load_relaxed(&g_exiting) || grace__in_callback())
		return NULL;
	if (posix_memalign((void **)&c, GRACE_CACHE_LINE, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->run_slots = grace__fc_run; /* a run of pointers, until a slow call says otherwise */
	c->step_len = step_len_of(f->gp, 0); /* the least, until the first start (step_pace()) */
	/* Tests stop a thread's first call here (debug builds, GRACE_TEST_PAUSE=cache_new:US), for
	 * a signal handler to interrupt it. */
	GRACE__TEST_PAUSE("cache_new");
	grace__lock(&all_lock);
	grace_list_add(&c->link, &all_caches);
	grace_store_relaxed(&f->free_used, 1u); /* the hook is fixed (grace__free_hook) */
	grace__unlock(&all_lock);
	ftls.c[slot] = c;
	*rt_tls(slot) = &c->rt;
	(void)pthread_setspecific(ftls_key, &ftls); /* non-NULL: ftls_destroy runs at exit */
	return c;
}

/* Before engine/defer.c creates a thread's first deferred cache: the exit order above, and the
 * thread-exit hook (ftls_destroy() gives the deferred caches up too). false: no hook. */
bool grace__fc_setup(struct grace__flavor *f)
{
	init_flavor = f;
	pthread_once(&free_once, free_init);
	if (!g_ready)
		return false;
	(void)pthread_setspecific(ftls_key, &ftls); /* non-NULL: ftls_destroy runs at exit */
	return true;
}

/* The calling thread's cache for f (slot s = slot_of(f)), created on first use; NULL: use the
 * engine path. */
static inline __attribute__((always_inline)) struct fcache *cache_of(struct grace__flavor *f, int s,
								     enum put_kind kind)
{
	struct fcache *c;

	if (s < 0)
		return NULL;
	c = ftls.c[s];
	/* A thread that owns a cache is not a callback worker (workers never create one). */
	if (GRACE_LIKELY(c != NULL))
		return GRACE_LIKELY(!grace_load_relaxed(&g_exiting)) ? c : NULL;
	return cache_new(f, s, put_call(f, kind));
}

/* The owner's thread exits: hand everything to the engine, unlink, free what we can. */
static void cache_retire(struct fcache *c)
{
	struct fblk *ready = NULL, *spare;
	bool destroy;

	grace__lock(&all_lock);
	c_lock(c);
	dispose(c->f, detach(c), &ready);
	spare = spare_detach(c);
	grace_store_relaxed(&c->dead, 1u); /* the monitor's first look reads it unlocked */
	cache_unlink(c);
	destroy = !c->mon_armed; /* else the monitor frees it when it next runs */
	c_unlock(c);
	/* Freed before all_lock is dropped: a free_rcu_barrier() that takes it after us no longer
	 * finds this cache, so it must find these objects freed already. */
	grace__fblk_release_list(ready);
	grace__unlock(&all_lock);
	grace__fc_free_list(spare);
	if (destroy)
		free(c);
}

static void ftls_destroy(void *arg)
{
	(void)arg;
	ftls.exiting = 1;
	grace__defer_thread_exit(); /* the deferred caches (engine/defer.c) */
	for (int s = 0; s < NSLOT; s++) {
		struct fcache *c = ftls.c[s];
		if (c) {
			ftls.c[s] = NULL;
			*rt_tls(s) = NULL; /* later retires take the engine path */
			cache_retire(c);
		}
	}
}

/* Wait until cookie ck has completed (true), at most the stall timeout (at least 1 s): past it,
 * say so once and return false. The engine's worker drives the grace period (the block's seal, or
 * this wait, asked for it). The sleep follows grace__gp_wait(): event read before the check, the sleeper counted
 * with a seq_cst increment and a full barrier before it checks seq, the store-buffering pair of
 * the driver's seq_end and its load of nsleepers in core/gp.c (either we see seq_end, or the
 * driver sees us counted, bumps event and wakes us); the 50 ms timeout bounds any wake-up lost
 * anyway. */
static GRACE_COLD bool wait_bounded(struct grace__flavor *f, uint64_t ck, const char *call)
{
	struct grace__gp *gp = f->gp;
	uint64_t t0 = grace__now_ns(), cap = grace__stall_timeout_ns();
	int tok = f->hooks->enter_wait(f, call);

	if (cap < HARD_WAIT_NS)
		cap = HARD_WAIT_NS;
	/* A block sealed by a stepping owner asked no worker for its grace period: ask now. */
	if (gp->step && !grace__gp_done(gp, ck))
		(void)grace__engine_start_poll(f, call);
	while (!grace__gp_done(gp, ck)) {
		if (grace__now_ns() - t0 > cap) {
			static uint32_t warned;
			if (!grace_xchg(&warned, 1u, __ATOMIC_RELAXED))
				grace__warn(
					"%s: more than %u objects wait for a grace period in one "
					"thread, past the bound for too long: a reader may be "
					"stalled, or blocked on a lock this thread holds; "
					"continuing without waiting for it",
					call, THREAD_HARD);
			f->hooks->leave_wait(f, tok);
			return false;
		}
		uint32_t ev = grace_load_acquire(&gp->event);
		grace_fetch_add(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
		grace_smp_mb_after_rmw(); /* the count before the check of seq (see above) */
		if (!grace__gp_done(gp, ck))
			grace__futex_wait(&gp->event, ev, 50 * 1000000ll);
		grace_fetch_sub(&gp->nsleepers, 1u, __ATOMIC_SEQ_CST);
	}
	f->hooks->leave_wait(f, tok);
	return true;
}

/* More than THREAD_HARD slots held: wait for the oldest block, then free it. */
static GRACE_COLD void over_limit(struct fcache *c, enum put_kind kind)
{
	const char *call = put_call(c->f, kind);
	struct grace__flavor *f = c->f;
	uint64_t ck = 0;
	bool have;

	if (!f->call_may_wait || f->hooks->is_reader(f))
		return; /* waiting could deadlock: as call_rcu, the overshoot is the caller's */
	/* A wait gave up (and said so) and no grace period has completed since: as call_rcu() at
	 * its hard limit, queue without waiting until one does (the program has been told). The
	 * low bits of seq say whether one is under way; completions count from bit 2. */
	if (c->stuck_seq) {
		if (!gp_moved(f->gp, c->stuck_seq))
			return;
		c->stuck_seq = 0;
	}
	/* The owner locks its cache with busy held (core/ownsteal.h, GRACE__BUSY_HELD): a signal
	 * handler's call there would work on the cache beside this one (the owner's lock-free
	 * path does not take the lock), or, past the bound itself, wait for the lock this thread
	 * holds, and every build reports it instead (docs/api.md, rcu_retire(), "Signals"). */
	own_lock(c); /* the seal */
	/* Tests stop a call here (debug builds, GRACE_TEST_PAUSE=over_limit:US), its cache
	 * locked, for a signal handler to interrupt it. */
	GRACE__TEST_PAUSE("over_limit");
	cur_sync(c);
	if (!c->first && c->cur)
		grace__fc_seal(c);
	have = c->first != NULL;
	if (have) {
		ck = c->first->cookie;
		/* the monitor must not take the cache from a waiting owner (its first look reads
		 * this unlocked) */
		grace_store_relaxed(&c->waiting, 1u);
	}
	own_unlock(c);
	if (!have)
		return;
	if (!wait_bounded(f, ck, call))
		c->stuck_seq = grace_load_relaxed(&f->gp->seq) | 1u; /* owner's field; never 0 */
	own_lock(c);
	grace_store_relaxed(&c->waiting, 0u);
	/* An entry's function's retire nests (release_ready() sets `releasing` around it); a
	 * handler's anywhere else finds busy held and is reported, in every build. */
	release_ready(c, f->gp, FBLK_N); /* before the unlock, as in cache_put() */
	own_unlock(c);
}

/*
 * How many ready entries a call frees: the frees follow the owner's calls, one wave at a time.
 * Pointers become ready in waves, one per grace period; at the first call that sees a new one,
 * the ready pointers are counted (a walk over the blocks whose cookies have completed, once per
 * grace period) and spread over as many calls as the last wave took. An updater that allocates
 * once per free_rcu() then frees one chunk per call into the allocator's thread cache, where its
 * next malloc() takes it: glibc's tcache holds 7 chunks per size, and every free past that goes
 * to the arena with an atomic exchange, which cost more than the grace period (bench/hashtable:
 * a free burst of 2-16 per call spent 30% of the process in _int_free and _int_malloc). A
 * backlog (a slow grace period, a burst of deletions) is caught up by the next wave's rate, at
 * most BURST_MAX per call. The inline retire's appends count as calls (cur_sync): the slow call
 * after a run of them frees the run's share at once, GRACE_RETIRE_RUN + 1 at the least rate,
 * well under what the tcache holds. c locked or the owner's.
 */
static inline unsigned int burst(struct fcache *c, struct grace__gp *gp, uint64_t seq)
{
	uint32_t calls = 1u + c->fast_calls;

	c->fast_calls = 0;
	c->wave_calls += calls;
	if ((seq >> 2) != (c->wave_seq >> 2)) {
		size_t ready = 0;
		for (struct fblk *b = c->first; b; b = b->next) {
			/* Acquire ((2) at the top), as in release_ready(). */
			if (!b->done && !grace__gp_done(gp, b->cookie))
				break;
			b->done = 1;
			ready += b->n - b->head;
		}
		/* Fixed point, 8 bits: 1.3 pointers per call frees 1, 1, 2, 1, 1, 2, ... (a rate
		 * rounded up to 2 would drain the wave in half its calls, into the arena). */
		size_t k = (ready << 8) / c->wave_calls;
		c->rate = k < 256                       ? 256u
			  : k > (size_t)BURST_MAX * 256 ? BURST_MAX * 256u
							: (uint32_t)k;
		c->wave_seq = seq;
		c->wave_calls = 0;
	}
	uint64_t cr = c->credit + (uint64_t)(c->rate ? c->rate : 256u) * calls;
	c->credit = (uint32_t)(cr & 255u);
	cr >>= 8;
	return cr < BURST_OUT ? (unsigned int)cr : BURST_OUT;
}

/*
 * Grace periods paced by garbage (core/gp.c, "Stepped grace periods"; flavors with gp->step).
 * The owner's slow call advances grace periods itself, without waiting and without waking a
 * worker: it rescans a STEPPED grace period whenever it finds one (cheap: no system call),
 * and starts one (barrier A: a membarrier) only when step_len() slots it sealed are covered by
 * no grace period started since. So the rate of grace periods follows the volume of garbage,
 * and threads that retire share them. What a thread that stops retiring leaves, its monitor
 * hands to the engine, whose workers drive grace periods again once the steps stop.
 *
 * The length (step_pace(), at each start the owner makes): as many slots as the owner seals in
 * STEP_GAP times barrier A's weight (gp->step_cost, timed by every driver and stepper that
 * runs it: its average time times how far that exceeds the least, core/wait.c), at least
 * STEP_LEAST, at most g_step_begin (GRACE_STEP_GARBAGE, 1024;
 * a smaller GRACE_STEP_GARBAGE wins over STEP_LEAST). So a thread's starts cost at most about
 * 1/STEP_GAP of its time, and within that it keeps as little garbage as it can: the garbage is
 * its working set, which the allocator hands back to its next inserts. One thread running
 * alone pays a membarrier that interrupts no CPU (about 0.4 us): a list thread, which seals a
 * slot every few microseconds, starts one every 16 slots and keeps its garbage small and warm,
 * as an epoch scheme does; a hash-table thread sealing several slots a microsecond starts one
 * every hundred or so. Where barrier A interrupts busy CPUs (5 to 15 us on the 2-CPU VM) the
 * length is the bound, as before. QSBR's barrier A is a fence, not timed: its steps start one
 * every 256 slots (its gp->step_least: each of its grace periods costs the other online
 * threads and the allocator what no timing here sees; src/flavor/qsbr.c). A full block is sealed at any length; a partly filled one at a slow
 * call once it holds the length and no grace period is under way (cache_put()), so that a
 * short length is not held back by FBLK_N. Returns the cookie to step toward (0: no step)
 * and whether the step may start a grace period. c held by the owner.
 */

/* The bounds are applied where the length is set (cache_new(), step_pace()): this is read at
 * every slow call, twice. */
static inline uint32_t step_len(const struct fcache *c)
{
	return c->step_len;
}

/* The owner started (or tried to start) a grace period: the next length, from the ds slots it
 * sealed since its last start (counted while it held c) and the time they took. step_len and
 * step_t are the owner's alone (no other holder of c touches them): written after the call
 * let c go. */
static GRACE_NOINLINE void step_pace(struct fcache *c, const struct grace__gp *gp, uint64_t ds)
{
	uint64_t now = grace__now_ns();
	/* The first start: no rate yet, the least. The cost's words are hints: a stale one only
	 * moves the pace, never what a grace period covers. */
	uint64_t n = c->step_t ? grace__barrier_pace(&gp->step_cost, ds, now - c->step_t, STEP_GAP)
			       : 0;

	c->step_len = step_len_of(gp, n);
	c->step_t = now;
}

static inline uint64_t step_of(struct fcache *c, struct grace__gp *gp, bool *may_begin)
{
	if (!gp->step || !c->last)
		return 0;
	uint64_t sq = grace_load_relaxed(&gp->seq); /* a hint: the step decides under its CAS */
	uint64_t st = sq & GRACE__SEQ_STATE_MASK;
	uint64_t starts = (sq >> 2) + (st != 0);

	if (starts != c->step_starts) {
		c->step_starts = starts;
		c->step_base = c->step_sealed;
	}
	*may_begin = st == 0 && c->step_sealed - c->step_base >= step_len(c);
	return st == GRACE__SEQ_STEPPED || *may_begin ? c->last->cookie : 0;
}

/*
 * A call made while this thread runs entries its own call took out of the cache (a deleter or
 * free hook that retires or frees more): the outer call holds the cache (busy or its lock), so
 * only append. Ready entries wait for the next call. false: no block (no memory).
 */
static GRACE_NOINLINE bool put_nested(struct fcache *c, void (*fn)(void *), void *p)
{
	unsigned int k = fn ? 3u : 1u;
	bool open = c->rt.lim != 0; /* over_limit() runs entries with the fast path open */
	struct fblk *b;

	cur_sync(c);
	grace_store_relaxed(&c->rt.lim, 0u);
	bool sealed = false;
	b = cur_room(c, k, FBLK_N, &sealed);
	if (!b) {
		if (open)
			cur_open(c);
		return false;
	}
	if (fn) {
		b->p[b->n++] = GRACE__RETIRE_FN_MARK;
		b->p[b->n++] = (void *)(uintptr_t)fn;
	}
	b->p[b->n++] = p;
	c->held += k;
	if (b->n == FBLK_N)
		grace__fc_seal(c);
	if (open)
		cur_open(c);
	return true;
}

/* Queue the entry (fn, p) (fn NULL: the object p) in the caller's cache and free a few ready
 * entries. false: no block (no memory). Inlined into each entry point: the whole path is one
 * function. */
static inline __attribute__((always_inline)) bool cache_put(struct fcache *c, void (*fn)(void *),
							    void *p, enum put_kind kind)
{
	unsigned int k = fn ? 3u : 1u;
	bool arm = false;
	size_t held;
	struct fblk *b;
	bool fast;

	if (GRACE_UNLIKELY(c->releasing))
		return put_nested(c, fn, p);
	struct grace__gp *gp = c->f->gp;
	fast = own_enter(c, put_call(c->f, kind));

	/* The slow path may take the lock after the exit handler emptied every cache: a pointer
	 * appended then would stay behind. Relaxed load: the lock's acquire orders it after the
	 * handler's release of the lock, which follows its store of g_exiting. (The fast path
	 * needs no check: a handler that marks the cache waits for this call to end.) */
	if (GRACE_UNLIKELY(!fast) && grace_load_relaxed(&g_exiting)) {
		own_exit(c, fast);
		return false;
	}
	cur_sync(c);
	/* Closed for the call: an inline retire made by a function this call runs (a deleter that
	 * retires what its object points to) takes the nested path instead (put_nested). */
	grace_store_relaxed(&c->rt.lim, 0u);
	bool sealed = false; /* a cur with no room for a function entry's three slots */
	b = cur_room(c, k, FBLK_N, &sealed);
	if (GRACE_UNLIKELY(!b)) {
		cur_open(c);
		own_exit(c, fast);
		return false;
	}
	if (GRACE_UNLIKELY(fn != NULL)) {
		b->p[b->n++] = GRACE__RETIRE_FN_MARK;
		b->p[b->n++] = (void *)(uintptr_t)fn;
	}
	b->p[b->n++] = p;
	c->held += k;
	/* One look at seq for the call's hints (relaxed: it orders nothing): the seal below and
	 * the wave of burst(). A stale value seals early or late, which only moves the cookie,
	 * and moves a rate by one wave. */
	uint64_t seq = grace_load_relaxed(&gp->seq);
	/* Sealed when full, when a grace period ended since its first slot, or (stepping) once it
	 * holds a step's length while none is under way: what the next step may start a grace
	 * period for (step_len()). While one is under way no step can start one, and a block
	 * sealed now waits for the same grace period as one sealed when it ends (which
	 * gp_moved() seals before the step that may start the next): so the block fills
	 * instead. A slow or stalled reader's garbage then costs its slot, not a part-filled
	 * block of 1 KB per step's length (bench/smr --stall: 95 bytes an object, 48 of them
	 * blocks). The seq read above (relaxed) orders nothing: it only chooses when to seal,
	 * a stale value seals early or late, and a later seal only gives a later cookie; the
	 * cookie itself is taken in grace__fc_seal() by grace__gp_snap(), whose full barrier
	 * orders this thread's appends before it (argument (1) at the top). */
	if (b->n == FBLK_N || (seq >> 2) != (c->cur_seq >> 2) ||
	    (gp->step && b->n >= step_len(c) && !(seq & GRACE__SEQ_STATE_MASK)))
		grace__fc_seal(c);
	/* The ready entries are freed before the cache is let go: a barrier that takes it next
	 * (free_rcu_barrier) must find them freed, not in flight on this thread. A function they
	 * run may retire more: it nests (put_nested; `releasing` is set around the function
	 * alone, release_ready()). A signal handler's retire anywhere else in the frees finds
	 * the call busy and is reported, in every build. */
	release_ready(c, gp, burst(c, gp, seq));
	/* A block this call sealed: the next one starts now, from a spare, so that the window
	 * opens on it and the next call stays inline (else the call after each seal went out of
	 * line too: one call in six of bench/free/retire_cost.sh's). A spare only, which
	 * release_ready() has just refilled in the steady state: no malloc() for a thread that
	 * may not retire again. The block stays empty until an append (detach() keeps it as a
	 * spare). Its cur_seq is taken at the end of the call (opened), after the step, which
	 * may end a grace period: taken before, the next call would seal the block at once. */
	bool opened = false;
	if (!c->cur && c->spare) {
		c->cur = grace__fc_blk_new(c);
		opened = true;
	}
	if (c->first && c->first->done && c->first->head < c->first->n &&
	    c->first->p[c->first->head] != GRACE__RETIRE_FN_MARK)
		/* The next call frees this pointer: start the miss on the allocator's header now
		 * (glibc reads the chunk's size word just below it), a call ahead of the free. */
		__builtin_prefetch((char *)c->first->p[c->first->head] - sizeof(void *), 1, 3);
	uint64_t calls = c->calls + 1;
	grace_store_relaxed(&c->calls, calls); /* the monitor's first look reads it unlocked */
	held = c->held;
	if (held && !c->mon_armed) {
		c->mon_armed = 1;
		c->mon_calls = calls << 8; /* differs from activity() after any append */
		arm = true;
	}
	bool may_begin = false;
	uint64_t step_ck = step_of(c, gp, &may_begin);
	uint64_t step_ds = 0;
	if (may_begin) {
		step_ds = c->step_sealed - c->step_mark;
		c->step_mark = c->step_sealed;
	}
	/* The window holds a run of entries of this call's kind: a function entry takes three
	 * slots, and a window of fewer would send every rcu_retire_fn() out of line. */
	c->run_slots = k * grace__fc_run;
	cur_open(c);
	own_exit(c, fast);
	if (step_ck) {
		gp->step(gp, step_ck, may_begin);
		if (may_begin)
			step_pace(c, gp, step_ds);
	}
	/* The owner's alone, as step_len (no thread that takes c reads it): written after the
	 * call let c go. Relaxed: the seal's hint. */
	if (opened)
		c->cur_seq = grace_load_relaxed(&gp->seq);
	if (arm)
		grace__engine_call_patient(c->f, &c->mon, mon_cb);
	if (GRACE_UNLIKELY(held > THREAD_HARD))
		over_limit(c, kind);
	return true;
}

/* ---- the entry points ---- */

static GRACE_COLD GRACE_NORETURN void bad_head(struct grace__flavor *f, void *ptr,
					       struct rcu_head *head)
{
	grace__misuse_fatal(
		f->calls[GRACE__CALL_FREE],
		"the rcu_head %p does not lie within the first %u bytes of the object %p",
		(void *)head, GRACE__FREE_OFFSET_LIMIT, ptr);
}

/* An object of f is queued: its free function is fixed from now on (grace__free_hook). */
static inline void mark_used(struct grace__flavor *f)
{
	if (GRACE_UNLIKELY(!grace_load_relaxed(&f->free_used)))
		grace_store_relaxed(&f->free_used, 1u);
}

/* free_rcu(): s is slot_of(f), a constant in the exported functions. */
static inline __attribute__((always_inline)) void free_head(struct grace__flavor *f, int s,
							    void *ptr, struct rcu_head *head)
{
	uintptr_t off = (uintptr_t)head - (uintptr_t)ptr;
	struct fcache *c;

	if (!ptr)
		return;
	if (GRACE_UNLIKELY(!head || off >= GRACE__FREE_OFFSET_LIMIT))
		bad_head(f, ptr, head);
#if GRACE__LIB_DEBUG
	grace__fblk_dbg_add(ptr, f->calls[GRACE__CALL_FREE]);
#endif
	c = cache_of(f, s, PUT_FREE);
	if (GRACE_LIKELY(c != NULL) && GRACE_LIKELY(cache_put(c, NULL, ptr, PUT_FREE)))
		return;
	/* The engine path: the head carries the offset in place of a function (free.h). */
	mark_used(f);
	grace__engine_call(f, head, (rcu_callback_t)(off + 1));
}

void grace__free(struct grace__flavor *f, void *ptr, struct rcu_head *head)
{
	free_head(f, slot_of(f), ptr, head);
}

#if GRACE__LIB_DEBUG
/* Debug builds: free_*_mightsleep may wait for a grace period; say so at every call made where
 * that would deadlock, not only on the day memory runs out. */
static void check_may_sleep(struct grace__flavor *f, const char *call)
{
	if (grace__in_callback())
		grace__misuse_fatal(call, "called from a callback: it may wait for a grace period, "
					  "which would deadlock");
	int tok = f->hooks->enter_wait(f, call);
	f->hooks->leave_wait(f, tok);
}
#endif

/*
 * The engine path of an entry with no rcu_head (free_rcu_mightsleep, the retires): a carrier.
 * With no memory for one, free_rcu_mightsleep waits for a grace period here and frees at once.
 * A retire may be inside a read-side section or a callback, where that wait would deadlock:
 * when it can wait (outside both, a flavor whose calls may wait) it does as free_rcu_mightsleep;
 * else the entry is dropped, never freed, and the first such loss says so (the promise of
 * docs/api.md: a retire never waits inside a section, even when memory runs out).
 */
static GRACE_NOINLINE void ptr_engine(struct grace__flavor *f, void (*fn)(void *), void *ptr,
				      enum put_kind kind)
{
	struct carrier *k = (struct carrier *)malloc(sizeof(*k));
	const char *call = put_call(f, kind);

	mark_used(f);
	if (k) {
		k->f = f;
		k->e.fn = fn;
		k->e.p = ptr;
		grace__engine_call(f, &k->rh, grace__fblk_carrier_cb);
		return;
	}
	if (kind == PUT_RETIRE &&
	    (!f->call_may_wait || f->hooks->is_reader(f) || grace__in_callback())) {
		static uint32_t warned;
		if (!grace_xchg(&warned, 1u, __ATOMIC_RELAXED))
			grace__warn(
				"%s: out of memory inside a read-side section or a callback: "
				"the object %p is never freed (it cannot wait for a grace period "
				"there); later losses are not reported",
				call, ptr);
#if GRACE__LIB_DEBUG
		grace__fblk_dbg_del(ptr);
#endif
		return;
	}
	/* No memory to queue it: wait for a grace period here, then free (the "mightsleep"). */
	int tok = f->hooks->enter_wait(f, call);
	grace__gp_wait(f->gp, grace__gp_snap(f->gp), 0);
	f->hooks->leave_wait(f, tok);
	grace__fblk_release_ent(f, (struct fent){ fn, ptr });
}

/* free_rcu_mightsleep(): s is slot_of(f). */
static inline __attribute__((always_inline)) void free_ptr(struct grace__flavor *f, int s,
							   void *ptr)
{
	struct fcache *c;

	if (!ptr)
		return;
#if GRACE__LIB_DEBUG
	check_may_sleep(f, f->calls[GRACE__CALL_FREE_PTR]);
	grace__fblk_dbg_add(ptr, f->calls[GRACE__CALL_FREE_PTR]);
#endif
	c = cache_of(f, s, PUT_FREE_PTR);
	if (GRACE_LIKELY(c != NULL) && GRACE_LIKELY(cache_put(c, NULL, ptr, PUT_FREE_PTR)))
		return;
	ptr_engine(f, NULL, ptr, PUT_FREE_PTR);
}

void grace__free_ptr(struct grace__flavor *f, void *ptr)
{
	free_ptr(f, slot_of(f), ptr);
}

/* rcu_retire() and rcu_retire_fn() past their inline fast path (retire.h), and srcu_retire(). */
void grace__retire(struct grace__flavor *f, void (*fn)(void *), void *ptr)
{
	int s = slot_of(f);
	struct fcache *c;

	if (!ptr)
		return;
#if GRACE__LIB_DEBUG
	grace__fblk_dbg_add(ptr, f->calls[GRACE__CALL_RETIRE]);
#endif
	c = cache_of(f, s, PUT_RETIRE);
	if (GRACE_LIKELY(c != NULL) && GRACE_LIKELY(cache_put(c, fn, ptr, PUT_RETIRE)))
		return;
	ptr_engine(f, fn, ptr, PUT_RETIRE);
}

/*
 * The flavor's free function, for every object it frees without a function of the caller's:
 * free_rcu(), free_rcu_mightsleep(), rcu_retire(). Set once, before the first of them on f, so
 * that no object queued for one function reaches another: -EBUSY after (or a second time with
 * another function). NULL goes back to free() under the same rule.
 */
int grace__free_hook(struct grace__flavor *f, void (*fn)(void *))
{
	void (*cur)(void *) = grace_load_relaxed(&f->free_fn);
	int err = 0;

	grace__lock(&all_lock);
	if (grace_load_relaxed(&f->free_used) && cur != fn)
		err = -EBUSY;
	else
		grace_store_relaxed(&f->free_fn, fn);
	grace__unlock(&all_lock);
	return err;
}

/*
 * Every cache of f: take its blocks under its lock (a hand-off made before we took the lock is
 * queued on the engine already: the caller's engine barrier waits for it). Those whose grace
 * period has ended are freed here, the others handed to the engine, which the caller's barrier
 * waits for: nothing is held on this thread's stack across a wait (a fork child, where this
 * thread does not exist, would lose it). Waits for no grace period.
 */
void grace__free_flush(struct grace__flavor *f, const char *call)
{
	struct fblk *ready = NULL;
	struct fcache *c;
	int s = slot_of(f);

	/* Relaxed: a cache created before the caller's call (its free_used store under all_lock
	 * happens before it) is seen; one created after holds nothing queued before it. */
	if (s < 0 || !grace_load_relaxed(&f->free_used))
		return;
	/* Called from the function of an entry that this thread's own call on its cache of f
	 * runs (a deleter, the free hook: releasing is set while the owner's call runs one of
	 * them): the pass would wait for that call to let the cache go, forever (docs/api.md,
	 * rcu_retire_fn()). Every build. The owner's own field: no other thread writes it while
	 * the owner is in a call. */
	c = ftls.c[s];
	if (GRACE_UNLIKELY(c && c->releasing))
		grace__misuse_fatal(
			call, "called from a deleter or the free hook that this thread's own "
			      "retire or free_rcu() call runs: it would wait for the thread's "
			      "cache, which that call holds (deadlock)");
	/* While this thread holds all_lock, a retire made on it takes the engine path instead of
	 * creating a cache, which would take all_lock again: one made by a function the ready
	 * entries run, or by a signal handler's first call. Set before the lock: only this thread
	 * reads it (cache_create(), in its own code or a handler), so the signal fence, which
	 * keeps the compiler from moving the store past the lock, is all the order it needs. */
	ftls.no_cache = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A signal handler's retire while this thread holds its own cache stolen would wait for
	 * it forever: every build reports it (busy held on the thread's own cache below), a debug
	 * library a retire anywhere in the barrier (docs/api.md, rcu_retire(), "Signals"). */
	dbg_mark(f->calls[GRACE__CALL_FREE_BARRIER]);
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	if (c->f == f)
		steal_mark(c);
	steal_barrier();
	CACHES_FOR_EACH(c)
	{
		if (c->f != f)
			continue;
		bool own = c == ftls.c[0] || c == ftls.c[1];
		steal_take_as(c, own, call); /* own: busy held (fcache.h) */
		dispose(f, detach(c), &ready);
		/* Tests stop a barrier here (debug builds, GRACE_TEST_PAUSE=flush:US), holding a
		 * cache (its lock), for a signal handler to interrupt it. */
		GRACE__TEST_PAUSE("flush");
		steal_release_as(c, own);
	}
	dbg_unmark(); /* the entries' functions may retire (they nest) */
	/* Before all_lock is dropped: a barrier that takes it after us finds these caches empty,
	 * so it must find their objects freed. */
	grace__fblk_release_list(ready);
	grace__unlock(&all_lock);
	/* Signal fence: the clear stays after the unlock, so a handler that finds it clear
	 * (cache_create()) never finds all_lock held by this thread. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ftls.no_cache = 0;
}

void grace__free_barrier(struct grace__flavor *f)
{
	const char *call = f->calls[GRACE__CALL_FREE_BARRIER];

	if (grace__in_callback())
		grace__misuse_fatal(call, "called from a callback (would deadlock)");
	int tok = f->hooks->enter_wait(f, call);
	grace__free_flush(f, call);
	f->hooks->leave_wait(f, tok);
	grace__engine_barrier(f, call); /* the engine: hand-offs, engine-path objects, carriers */
}
