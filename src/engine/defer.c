/* SPDX-License-Identifier: MIT */
/*
 * Deferred caches: grace-urcu's defer_rcu() (compat/src/defer.c is its glue) on libgrace's
 * per-thread deferral, the caches of free_rcu() and rcu_retire() (engine/free.c; the cache and
 * who touches it: engine/fcache.h). One more cache per thread and domain (the default
 * flavor's, QSBR's: dtls, grace__memb_defer and grace__qsbr_defer), of 4 KiB blocks, filled
 * by the same inline append (function entries of three slots) and the owner's slow call,
 * with a different contract for running the entries: never on the thread that deferred (it
 * may hold a lock that a deferred function takes), one at a time, in the order the thread
 * deferred them wherever it ran, and after it exited. So the owner never pops: the cache's
 * monitor is its *pass* (dpass()), posted by the owner's slow call that finds it disarmed
 * (which seals cur first). A run of the pass takes the cache
 * (steal, as the monitor does) when there is something to take (D3), seals cur with a cookie
 * taken then when that is due, moves the ready prefix of the sealed blocks onto `run`, lets
 * the cache go, runs `run` in order on the worker and posts itself again; a run that finds
 * nothing left disarms (or frees a dead cache). rcu_defer_barrier[_thread]() and
 * unregistration run entries on the calling thread, as liburcu does (grace__defer_barrier()).
 * The deferred caches have a list and a lock of their own (d_caches, d_lock): a function that
 * free_rcu_barrier() runs with engine/free.c's all_lock held may create one, so d_lock comes
 * after all_lock (fork's prepare takes both, in that order), never before.
 *  (D1) An entry runs only after a grace period that began after its append: argument (1)
 *       of engine/free.c, for the block's cookie (taken by grace__fc_seal(), by the owner or
 *       by a thread that took the cache after the append), and its (2): a consumer moves a
 *       block onto `run` only once grace__gp_done(cookie) returned true in its thread
 *       (acquire).
 *  (D2) Once, in order, one at a time: a *consumer* (the pass, or a barrier) claims `cons` with
 *       the cache's lock held (d_claim(): so two claims are ordered by it; the whole cache,
 *       but for the pass's light take, point D9) and only if
 *       no other holds it; it moves blocks from `first` onto the tail of `run` in order, lets
 *       the cache go, runs `run` with nothing held (a deferred function may take any lock,
 *       defer again, or retire), and gives the role up with a release store of `cons` that
 *       the next claimer's acquire load pairs with (so `run`, `dspare` and the counts are
 *       handed over). The owner never touches `run`; the pass is one rcu_head, so one pass at
 *       a time. Before each call the consumer moves the block's head past the entry, so a fork
 *       child whose parent was inside that call skips it (leaked there), never runs it twice.
 *  (D3) No entry is stranded: `mon_armed` is set and cleared only with the cache held: set by
 *       the owner right after a slow call that found it clear, under the cache's lock, with
 *       the post (darm()), and cleared by a pass that found nothing left. A pass disarms
 *       only with cur empty (d_pending()): it sealed cur, which closes the inline append (the fast path appends only to cur), so the next defer_rcu()
 *       after a disarm is a slow call and posts the pass. No fence pair is needed: the
 *       cache's owner/stealer protocol orders the disarm against every append. The rate of
 *       takes (each is a membarrier): a pass skips the take, and posts itself again, only
 *       when the owner made a call or an append since the last pass (so it is not idle), the
 *       last take left no sealed block waiting, no block was sealed since (dsealed, read
 *       relaxed: one missed is seen by a later pass), the cache is live, and its last seal
 *       of a partial cur is less than DEFER_TAKE_NS old. So every entry is sealed at most
 *       DEFER_TAKE_NS after the owner stops, or at its block's end, and runs a grace period
 *       later; N threads that defer all the time cost one take per block or per
 *       DEFER_TAKE_NS each, not one per grace period each.
 *  (D4) Barriers and dead caches. A barrier seals each cache it waits for and notes how many
 *       blocks it had sealed (dsealed), one synchronize, then waits until the cache's consumers
 *       have run that many blocks to their end (dran_blk: release, paired with its acquire
 *       loads), claiming the role and running the ready blocks up to that number itself
 *       whenever no other consumer holds it. A thread that exits (or unregisters, after its
 *       own barrier) makes its cache *dead*: the pass runs what is left and then unlinks and
 *       frees it (only a try of d_lock, point D7). No dead cache is freed while a
 *       barrier is in flight (g_dbar, under d_lock), so a barrier's list stays valid without
 *       its lock, which it never holds across a wait or a deferred function.
 *  (D5) A bounded backlog: the owner whose block fills with DEFER_CAP entries pending (appended,
 *       dput, minus run, dran) waits for a grace period, as liburcu's full queue does, then for
 *       the pass (dbacklog(): never from a deferred function, which may be the consumer), at
 *       most DEFER_STUCK_MS without progress, told once. It stores dwaiting, then (full fence)
 *       loads dran; a consumer stores dran, then (full fence) loads dwaiting and, if set, bumps
 *       and wakes the futex word dwake: one of the two sees the other's store. A pass that
 *       leaves many entries, or ran many, asks for its next grace period without pacing
 *       (hurry): else an owner that defers fast meets DEFER_CAP at every paced grace period.
 *  (D6) fork(). The engine pauses its workers between two callbacks, for a bounded time: a
 *       pass still inside its callback in another thread is counted as run in the child. The
 *       pass says so in `in_pass` (with its thread), cleared before it posts itself again or
 *       disarms, under the cache (its lock when it posts again: drepost()), which fork's
 *       prepare holds before it takes the engine's queues, so the child sees either the pass
 *       in its callback and not posted, or posted and out of it. The owner arms and posts
 *       under that lock too (darm(), and dcache_retire() at exit): a cache is copied unarmed
 *       or armed with its pass posted, never armed with none. The child handler
 *       (dcache_atfork_child()) disarms such a cache, drops the role of a consumer (a pass
 *       or a barrier) whose thread it does not have (its `run` stays, past the entry in a
 *       call: D2), makes the caches of the other threads dead,
 *       frees those left empty and unarmed, and notes a cache left with entries and no pass,
 *       or with its pass inherited queued (g_dstranded): the child's next slow defer_rcu()
 *       (every cache's fast path is closed there) or barrier posts the pass, or starts the
 *       engine for the inherited one (dadopt()), not the handler itself (the engine starts
 *       its workers in a child at its first call, not while the fork handlers run). Barriers
 *       in flight in the threads the child does not have are gone: g_dbar becomes the forking
 *       thread's own (d_in_bar). A consumer of another thread (an application thread in a
 *       barrier is not paused by the engine) may have been copied between its stores: the
 *       child counts dran_blk and dran again from the blocks left, and clears the steal marks
 *       of the stealers it does not have and the busy word of an owner it does not have.
 *  (D7) fork() and d_lock: the pass only tries d_lock. A deferred function on a worker may
 *       create its thread's cache, which takes d_lock briefly: fork's prepare handler
 *       (grace__defer_atfork_prepare()) takes d_lock only after the engine has paused its
 *       workers between callbacks (src/init.c), so a fork does not wait for a callback that
 *       waits for it; a callback past the pause that reaches d_lock waits for the fork to
 *       end in the parent, and is counted as run in the child, as any callback past it.
 *  (D8) Lazy passes. A pass that is not hurried goes to a callback domain of its own per
 *       flavor (d_engine(): one worker, GRACE_POLICY_LAZY with a DEFER_PERIOD_US period), so
 *       the passes of every thread that defers now and then share one grace period and one
 *       wake-up per period, as liburcu's defer thread runs its queues every 100 ms; on the
 *       flavor's own domain, each arming post would cost a grace period and a take. A hurried
 *       pass (a backlog, D5; an owner that filled DEFER_FLOOD_BLOCKS blocks since the last pass
 *       or waited for its backlog within DEFER_FLOOD_NS) goes to the flavor's own domain with
 *       call_rcu_hurry(), where nothing paces it. The pass is one rcu_head on one domain at a
 *       time (it posts itself again only from its callback, or the owner arms it when it is
 *       in none), so D2's "one pass at a time" holds. Both domains are the engine's: fork
 *       pauses, copies and restarts their workers alike (D6; dadopt() starts both for a pass
 *       inherited queued), and the exit drain runs both. The owner's backlog wait presses
 *       the lazy domain (its workers hurry what they hold, as under memory pressure) and
 *       asks it for a grace period before it waits: a request alone ends a lazy wait, but
 *       a pass found after the requested grace period began would wait a period for its own.
 *       The passes drive their blocks' grace periods: a seal takes its cookie without asking
 *       the flavor's engine (grace__fc_seal()), and a pass that finds a sealed block not
 *       ready posts itself again (pass_wait), so the grace period its callback then waits
 *       for, which starts after the post, serves the block; a barrier waits for its own.
 *  (D9) Hand-off and light takes. A sealed block reaches the consumers through dhand, a
 *       stack that a sealer (the owner in its slow call, lock-free, or a thread that holds
 *       the cache) pushes with a release compare-and-swap, once per block, then stores
 *       dsealed (release), and that a holder of the cache's lock empties with an acquire
 *       exchange (d_gather()), reversed onto the end of the sealed list: the list is the
 *       lock holders' alone, in seal order (the pushes are ordered by the stack's own
 *       modification order, which every seal's program or lock order follows). So a pass
 *       with no cur to seal claims the ready blocks holding only the lock, with no steal and
 *       no membarrier (a *light take*): the lock orders it against every other consumer, a
 *       barrier, fork and the full takes, which all hold it, and the acquire exchange gives
 *       it D1's happens-before for the entries and the cookie. It touches none of the words
 *       the owner writes lock-free: not `spare` (the consumer's dspare waits for a full
 *       take), not `held` (the slots it moves out are counted in dlout, which the holders of
 *       the whole cache take off `held`: d_fold()); it never disarms (that needs cur sealed).
 *       And the partial cur of an owner that keeps deferring is sealed by the owner itself
 *       when the pass asks (dseal_req, a relaxed hint; the owner's slow calls come every
 *       DEFER_RUN_SLOTS slots at least, cur_open()), so no take is needed for it either. The
 *       pass asks instead of taking when it would seal (D3), unless the owner stopped, has
 *       not answered the last request, or made fewer than DEFER_ASK_CALLS slow calls since
 *       the last pass: then it takes the cache as before. The lazy domain starts the grace
 *       period of the next pass about a period after the post, so a block the owner seals
 *       soon after a request is served by it, as one the pass sealed would be; a late answer
 *       costs one more pass. So a thread that keeps deferring costs no take, and one that
 *       stops, one.
 */
#include <errno.h>
#include <pthread.h>
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
#include "core/lock.h"
#include "core/ownsteal.h"
#include "core/sys.h"
#include "engine/callback.h"
#include "engine/fcache.h"
#include "engine/defer.h"
#include "engine/free.h"

#define DEFER_CAP 16320u             /* entries pending past which the owner waits (64 x 255) */
#define DEFER_HURRY (DEFER_CAP / 16) /* a pass that leaves more asks for its grace period now */
#define DEFER_STUCK_MS 100u          /* the owner's backlog wait gives up past this */
/* The pass takes a cache whose owner sealed no block since its last take at most this often
 * (point D3): a take costs a membarrier, and liburcu runs its queues every 100 ms. */
#define DEFER_TAKE_NS 100000000ull

/*
 * The passes' own callback domain, one per flavor (point D8), created by the first post under
 * the cache's lock: fork's prepare takes every cache's lock before the engine's (src/init.c), so
 * no fork copies a creation half done. d_eng_lock orders two creations; the acquire load pairs
 * with the release store of a domain fully built. Never destroyed: the flavors are static.
 */
/* The passes' lazy period (point D8): liburcu's defer thread's. Quiet run, strace -f -c: 2
 * threads deferring 1000 times a second each for 0.5 s cost 201 membarriers and 176 futex
 * calls at 20 ms, 60 and 53 at 100 ms (45 and 28 once seals stopped asking the engine;
 * liburcu: 16 and 13). */
#define DEFER_PERIOD_US 100000u
#define DEFER_FLOOD_BLOCKS 8u /* blocks sealed between two passes that make a flood (D8) */
/* The owner's slow calls between two passes below which the pass does not ask it to seal cur
 * (point D9): it might not answer within a period. */
#define DEFER_ASK_CALLS 2u
#define DEFER_FLOOD_NS 1000000000ull /* an owner's backlog makes it a flood this long (D8) */
static struct grace__cbdom *d_eng[NSLOT];
static struct grace__lock d_eng_lock = GRACE__LOCK_INIT;

/* The deferred caches, as grace-urcu's defer_rcu() appends to them (internal/retire.h). */
GRACE_API __thread struct grace__retire *grace__memb_defer GRACE_TLS_IE;
GRACE_API __thread struct grace__retire *grace__qsbr_defer GRACE_TLS_IE;
GRACE_API uint32_t grace__defer_fenced; /* internal/retire.h; set by dcache_new() */
static __thread struct fcache *dtls[NSLOT] GRACE_TLS_IE; /* the same, as caches */

/* Every deferred cache, live or dead. d_lock is taken after engine/free.c's all_lock when both
 * are held (fork's prepare; a function that free_rcu_barrier() runs may defer), never before. */
static struct grace__lock d_lock = GRACE__LOCK_INIT;
static GRACE_LIST_HEAD(d_caches);
#define DCACHES_FOR_EACH(c) FCACHE_FOR_EACH(c, &d_caches)
#define DCACHES_FOR_EACH_SAFE(c, head) FCACHE_FOR_EACH_SAFE(c, head)

static uint32_t g_dbar;      /* barriers in flight, under d_lock (point D4) */
static uint32_t g_dstranded; /* a fork child: some deferred cache may need its pass (D6) */
static __thread uint32_t d_in_bar GRACE_TLS_IE; /* this thread is in a barrier (fork: D6) */
static __thread uint32_t d_in_run GRACE_TLS_IE; /* this thread runs deferred functions */

static inline struct grace__retire **d_tls(int dom)
{
	return dom ? &grace__qsbr_defer : &grace__memb_defer;
}

static void dom_sync(int dom)
{
	if (dom)
		grace_qsbr_synchronize();
	else
		grace_rcu_synchronize();
}

static void dpass(struct rcu_head *h);

/* The passes' domain of c's flavor (point D8), created on first use. */
static struct grace__cbdom *d_engine(struct grace__flavor *f)
{
	/* Acquire: pairs with the release store below (the domain is built before it is seen). */
	struct grace__cbdom *d = grace_load_acquire(&d_eng[f->free_slot]);

	if (GRACE_LIKELY(d != NULL))
		return d;
	grace__lock(&d_eng_lock);
	d = d_eng[f->free_slot];
	if (!d) {
		d = grace__cbdom_create(f, 1);
		if (!d)
			grace__fatal("defer_rcu", "out of memory creating the deferral queues");
		(void)grace__cbdom_set_policy(d, GRACE_POLICY_LAZY, DEFER_PERIOD_US);
		/* Release: pairs with the acquire load above. */
		grace_store_release(&d_eng[f->free_slot], d);
	}
	grace__unlock(&d_eng_lock);
	return d;
}

void grace__defer_engine_barrier(struct grace__flavor *f, const char *call)
{
	if (f->free_slot < 0 || f->free_slot >= NSLOT)
		return;
	/* Acquire: pairs with d_engine()'s release store (a domain fully built). */
	struct grace__cbdom *d = grace_load_acquire(&d_eng[f->free_slot]);

	if (d)
		grace__cbdom_barrier(d, call);
}

/* Post the pass (point D8): on the flavor's own domain when `hurry` (a backlog, a flood: its
 * grace period should not wait for pacing), else on the passes' lazy domain. */
static void dpost(struct fcache *c, bool hurry)
{
	if (hurry)
		grace__cbdom_call_hurry(grace__engine_of(c->f, c->f->calls[GRACE__CALL_CALL]),
					&c->mon, dpass);
	else
		grace__cbdom_call(d_engine(c->f), &c->mon, dpass);
}

/*
 * The pass posts itself again (point D6). Under the cache's lock, which fork's prepare takes
 * (steal_take()) before it takes the engine's queues: a fork copies the pass either inside its
 * callback (in_pass set, not posted: the child disarms the cache) or posted (in the queues the
 * child gets) and out of it, never out of it and not posted (armed with no pass: its entries
 * would wait for a barrier). in_pass is cleared before the post: past it, the next pass may run
 * (and set it) at once; that pass's take only tries the lock. The owner never takes it, nor
 * does the engine's call path.
 */
static void drepost(struct fcache *c, bool hurry)
{
	c_lock(c);
	grace_store_relaxed(&c->in_pass, 0u);
	/* Debug builds: a test may hold the pass here while another thread forks (test
	 * compat_defer_fork_repost). */
	GRACE__TEST_PAUSE("defer_repost");
	dpost(c, hurry);
	c_unlock(c);
}

/*
 * The owner arms its disarmed cache and posts the pass, after its call (points D3, D6): under
 * the cache's lock, which the pass's take and fork's prepare (steal_take()) hold too, so
 * `mon_armed` still changes only with the cache held, and a fork copies the cache either
 * unarmed (the child posts the pass: dadopt()) or armed with its pass posted, never armed with
 * none. Only the owner arms a live cache, so it is still unarmed here; a fork child's dadopt()
 * runs on the owner's thread. The post may wait at the engine's hard limit (bounded), holding
 * only this lock: a take tries it, a barrier or fork waits that long.
 */
static void darm(struct fcache *c)
{
	/* Point D8: an owner that waited for its backlog within the last DEFER_FLOOD_NS floods;
	 * its pass is not lazy. dbacklog_ns is the owner's own (only it stores it; the pass's
	 * relaxed load is a hint), so this plain load reads its own last store. */
	bool hurry = grace__now_ns() - c->dbacklog_ns < DEFER_FLOOD_NS;

	own_lock(c); /* busy held: this thread's signal handlers (core/ownsteal.h) */
	GRACE__TEST_PAUSE("defer_arm");
	if (!c->mon_armed) {
		c->mon_armed = 1;
		dpost(c, hurry);
	}
	own_unlock(c);
}

/* Anything not run yet? The cache held (owner in no call, or stolen); `run` read only with cons
 * clear (acquire, pairs with drun()'s release). Every slot `held` counts is in cur, on dhand
 * or on the sealed list, so their pointers say it all. Relaxed load of dhand: the caller holds
 * the cache, so no seal runs, and its own or the last holder's pushes happen before. */
static inline bool d_pending(struct fcache *c)
{
	return c->cur || c->first || grace_load_relaxed(&c->dhand) || c->run;
}

/* Light takes moved dlout slots to `run` without touching `held`, which the owner updates in
 * its lock-free calls (point D9): the whole cache held, take them off now. */
static inline void d_fold(struct fcache *c)
{
	c->held -= c->dlout;
	c->dlout = 0;
}

/* Move the blocks handed over on dhand to the end of the sealed list, oldest first (point D9).
 * The cache's lock held (every consumer of the list holds it). */
static void d_gather(struct fcache *c)
{
	/* Acquire: pairs with the release of each push in grace__fc_seal() (the entries and the
	 * cookie of every block on the stack are visible). */
	struct fblk *b = grace_xchg(&c->dhand, (struct fblk *)NULL, __ATOMIC_ACQUIRE), *l = NULL;

	if (!b)
		return;
	struct fblk *tail = b; /* the oldest, last on the stack: the new list's end */

	while (b) {
		struct fblk *nx = b->next;
		b->next = l;
		l = b;
		b = nx;
	}
	if (c->last)
		c->last->next = l;
	else
		c->first = l;
	c->last = tail;
}

/* Claim the consumer's role and move the ready prefix of the sealed blocks onto run, at most
 * up to block number `upto` (a barrier) or all of it (UINT64_MAX, the pass). cons clear, and
 * either the whole cache held or, `light`, only its lock (point D9: the owner's words are not
 * touched). true: the caller is the consumer and runs `run` once it has let the cache go. */
static bool d_claim(struct fcache *c, uint64_t upto, bool light)
{
	struct fblk *tail = c->run, *b;
	/* Relaxed: only consumers store it, and the last one's release of cons, which the caller
	 * acquired, ordered its stores before this. */
	uint64_t nb = grace_load_relaxed(&c->dran_blk);

	/* The last consumer's empty block becomes one of the owner's spares (cons clear: its store of
	 * dspare happens before, by drun()'s release of cons and our acquire of it). Not in a
	 * light take: the owner takes its spare in its lock-free calls. */
	if (c->dspare && !light) {
		if (!spare_keep(c, c->dspare))
			free(c->dspare);
		c->dspare = NULL;
	}
	if (!light)
		d_fold(c);
	d_gather(c);
	for (b = tail; b; b = b->next) {
		tail = b;
		nb++;
	}
	while ((b = c->first) != NULL && nb < upto) {
		/* Acquire (point D1): the entries run after the grace period of the cookie. */
		if (!b->done && !grace__gp_done(c->f->gp, b->cookie))
			break;
		b->done = 1;
		c->first = b->next;
		if (!c->first)
			c->last = NULL;
		if (light)
			c->dlout += b->n - b->head;
		else
			c->held -= b->n - b->head;
		b->next = NULL;
		if (tail)
			tail->next = b;
		else
			c->run = b;
		tail = b;
		nb++;
	}
	if (!c->run)
		return false;
	c->cons_tid = pthread_self();
	grace_store_relaxed(&c->cons, 1u); /* read by others only with the cache held */
	return true;
}

/* The consumer runs `run` in order, with nothing held (point D2), then gives the role up.
 * Returns the number of entries it ran. */
static uint64_t drun(struct fcache *c)
{
	uint64_t from = c->dran;
	struct fblk *b;

	d_in_run++;
	while ((b = c->run) != NULL) {
		while (b->head < b->n) {
			struct fent e;

			/* Past the entry before its call: a fork child whose parent was inside
			 * this call skips it, never runs it twice (point D6). */
			b->head = grace__fblk_ent_at(b, b->head, &e);
			if (GRACE_LIKELY(e.fn != NULL)) /* always (defer_rcu() checks fct) */
				e.fn(e.p);
			/* Release: the call's effects before the count; pairs with the owner's
			 * acquire in dbacklog(). */
			grace_store_release(&c->dran, c->dran + 3u);
		}
		c->run = b->next;
		/* Release: the block's calls before the count; pairs with the barriers'
		 * acquire loads. */
		grace_store_release(&c->dran_blk, c->dran_blk + 1u);
		if (c->dspare)
			free(b);
		else
			c->dspare = b;
	}
	d_in_run--;
	/* Barrier D5: the stores of dran, then the load of dwaiting; pairs with the full fence in
	 * dbacklog() between its store of dwaiting and its load of dran. */
	grace_smp_mb();
	if (grace_load_relaxed(&c->dwaiting)) {
		/* Release: pairs with the owner's acquire load of dwake. */
		grace_fetch_add(&c->dwake, 1u, __ATOMIC_RELEASE);
		grace__futex_wake(&c->dwake, 1);
	}
	uint64_t ran = (c->dran - from) / 3u; /* dran is ours until the release below */

	/* Release: run, dspare and the counts before the role is free; pairs with the acquire
	 * load of cons by the next taker of the cache. */
	grace_store_release(&c->cons, 0u);
	return ran;
}

/* Unlink and free a dead cache that nothing refers to: d_lock and the cache held, no barrier
 * in flight (g_dbar: a barrier keeps the caches it listed). The caller frees it after letting
 * the cache go. */
static bool d_unused(struct fcache *c)
{
	/* Acquire: pairs with drun()'s release of cons (its run list is read next). Relaxed load
	 * of g_dbar: every store of it is under d_lock, which the caller holds. */
	return c->dead && !c->mon_armed && !grace_load_acquire(&c->cons) && !d_pending(c) &&
	       !grace_load_relaxed(&g_dbar);
}

static void d_free(struct fcache *c)
{
	grace__fc_free_list(spare_detach(c));
	free(c->dspare);
	free(c);
}

/*
 * The pass (point D3): one callback per cache, posted while the cache has entries. Each run
 * seals cur with a cookie taken now, moves the ready prefix onto run, lets the cache go, runs
 * run in order and posts itself again; one that finds nothing disarms (or frees a dead cache).
 */
static void dpass(struct rcu_head *h)
{
	struct fcache *c = grace_container_of(h, struct fcache, mon);
	bool requeue = true, mine = false, destroy = false, hurry = false;

	/* Point D6: a fork child tells a pass inside its callback in another thread by this.
	 * Relaxed: read by the fork child only, after fork's prepare took the cache. */
	c->pass_tid = pthread_self();
	grace_store_relaxed(&c->in_pass, 1u);
	/* Debug builds: a test may hold a pass here, before it takes the cache, while the owner
	 * appends (test compat_defer_disarm). */
	GRACE__TEST_PAUSE("defer_disarm");
	/*
	 * Point D3, the rate of takes (a take costs a membarrier). While the owner keeps
	 * deferring (it made a call or an append since the last pass), the pass seals its partial
	 * cur at most once per DEFER_TAKE_NS, and takes the cache only when that is due; the
	 * blocks the owner seals meanwhile it reads with a light take (point D9: the cache's lock,
	 * no membarrier). So N threads that defer all the time cost about one take per
	 * DEFER_TAKE_NS each, not one per block or per grace period each. An owner that stopped,
	 * or waits for its backlog, is taken, sealed and drained at once. Relaxed loads: hints
	 * (whatever they miss a later pass sees); pass_* are the pass's own (one pass at a time).
	 */
	uint64_t now = grace__now_ns();
	uint64_t calls = grace_load_relaxed(&c->calls);
	uint64_t act = (calls << 10) | grace_load_relaxed(&c->rt.n);
	bool idle = act == c->pass_act;
	bool seal_due = idle || now - c->pass_sealed_ns >= DEFER_TAKE_NS;
	/* Point D8: an owner that filled DEFER_FLOOD_BLOCKS blocks since the last pass, or waits
	 * for its backlog, is not served lazily. Relaxed loads of the owner's words: hints that
	 * order nothing (a stale one costs one lazy or one hurried post). */
	uint64_t nsealed = grace_load_relaxed(&c->dsealed);
	bool flood = nsealed - c->pass_blocks >= DEFER_FLOOD_BLOCKS ||
		     grace_load_relaxed(&c->dwaiting) ||
		     now - grace_load_relaxed(&c->dbacklog_ns) < DEFER_FLOOD_NS;
	/* Point D9: the owner seals cur itself when asked, at its next slow call, unless it
	 * stopped, has not answered the last request, or makes too few slow calls for an
	 * answer within a period (then the pass takes the cache and seals it, as before).
	 * Relaxed loads: hints, as above; a full take re-reads what it needs with the cache
	 * held, and a light one touches nothing they describe. */
	bool full = grace_load_relaxed(&c->dead) || grace_load_relaxed(&c->dwaiting) ||
		    (seal_due && (idle || grace_load_relaxed(&c->dseal_req) ||
				  calls - c->pass_calls < DEFER_ASK_CALLS));

	c->pass_act = act;
	c->pass_calls = calls;
	c->pass_blocks = nsealed;
	if (!seal_due && !flood && !c->pass_wait && nsealed == c->pass_seen && !full) {
		drepost(c, false);
		return;
	}
	if (!full) {
		if (seal_due) {
			/* Relaxed: a request the owner reads at its next slow call (a hint: the
			 * block it then seals reaches us through dhand, point D9). */
			grace_store_relaxed(&c->dseal_req, 1u);
			c->pass_sealed_ns = now;
		}
		/* Point D9, a light take: the blocks sealed and handed over, without cur.
		 * Acquire: pairs with grace__fc_seal()'s release store of dsealed, so the gather
		 * below sees every block that count includes. */
		uint64_t sealed = grace_load_acquire(&c->dsealed);

		if (grace__spin_trylock(&c->lock)) {
			/* Acquire: pairs with drun()'s release of cons. */
			if (!grace_load_acquire(&c->cons)) {
				mine = d_claim(c, UINT64_MAX, true);
				c->pass_seen = sealed;
				/* The list is the lock holders'; relaxed load of dhand: a hint,
				 * as above. */
				c->pass_wait = c->first != NULL ||
					       grace_load_relaxed(&c->dhand) != NULL;
			}
			c_unlock(c);
		} /* else a full take, a barrier or fork holds it: look again later */
		if ((mine && drun(c) >= DEFER_HURRY) || flood)
			hurry = true;
		drepost(c, hurry);
		return;
	}
	steal_mark(c);
	steal_barrier();
	if (!steal_trytake(c)) {
		steal_unmark(c); /* the owner's slow call, a barrier or fork: look again later */
	} else {
		/* Acquire: pairs with drun()'s release of cons. */
		if (!grace_load_acquire(&c->cons)) {
			cur_sync(c);
			d_fold(c);
			if (c->cur && (seal_due || c->dead || c->held >= (size_t)3 * DEFER_HURRY)) {
				/* Its cookie: a grace period that starts after now. */
				grace__fc_seal(c);
				c->pass_sealed_ns = now;
				/* Relaxed: the owner's next call reads it (no request pending). */
				grace_store_relaxed(&c->dseal_req, 0u);
			}
			mine = d_claim(c, UINT64_MAX, false);
			hurry = flood || c->held >= (size_t)3 * DEFER_HURRY;
			c->pass_seen = c->dsealed;
			/* Blocks still on dhand (a barrier held the role) wait too. */
			c->pass_wait = c->first != NULL || grace_load_relaxed(&c->dhand) != NULL;
			if (!mine && !d_pending(c)) {
				if (!c->dead) {
					/* Nothing left: disarm. Under the cache, so the owner's next
					 * call (slow: seal closed the fast path) sees it and posts. */
					c->mon_armed = 0;
					grace_store_relaxed(&c->in_pass, 0u);
					requeue = false;
				} else if (grace__trylock(&d_lock)) {
					/* Only a try, as the monitor's: a callback does not wait for
					 * a lock that a fork() past its pause may hold (point D7). */
					c->mon_armed = 0;
					if (d_unused(c)) {
						grace_list_del(&c->link);
						destroy = true;
						requeue = false;
					} else {
						c->mon_armed = 1;
					}
					grace__unlock(&d_lock);
				}
			}
		}
		steal_release(c);
	}
	if (destroy) {
		d_free(c);
		return;
	}
	/* A pass that ran many entries serves an owner that defers fast: its next grace period
	 * should not wait for the pacing either, or the owner reaches DEFER_CAP and waits. */
	if ((mine && drun(c) >= DEFER_HURRY) || flood)
		hurry = true;
	if (requeue)
		drepost(c, hurry);
}

/* The owner at DEFER_CAP entries pending: a grace period (as liburcu's full queue), then the pass
 * (point D5). Bounded: past DEFER_STUCK_MS without an entry run, it goes on (told once). */
static GRACE_COLD void dbacklog(struct fcache *c, int dom)
{
	uint64_t upto = c->dput, last = grace_load_acquire(&c->dran);
	uint32_t waited_ms = 0;
	static uint32_t told;

	if (last == c->gave_up)
		return;
	bool offline = dom && grace_qsbr_thread_is_online();
	if (offline)
		grace_qsbr_thread_offline();
	/* Point D8: the pass may sit in a lazy wait. Pressure ends it and hurries the pass, which
	 * a worker may find only after the requested grace period began (it then needs one more,
	 * and a lazy domain would start that one a period later: the first backlog of a flood
	 * waited 100 ms); the request starts a grace period at once. And this owner's next
	 * arming post hurries (darm()). */
	grace_store_relaxed(&c->dbacklog_ns, grace__now_ns()); /* read by the pass: a hint */
	grace__cbdom_press(d_engine(c->f));
	grace__cbdom_request_gp(d_engine(c->f), grace__gp_snap(c->f->gp));
	dom_sync(dom);
	for (;;) {
		uint32_t seq = grace_load_acquire(&c->dwake);

		grace_store_relaxed(&c->dwaiting, 1u);
		/* Barrier D5: the store of dwaiting, then the load of dran; pairs with the full fence
		 * in drun() between its stores of dran and its load of dwaiting. Acquire: the
		 * entries' effects before dran. */
		grace_smp_mb();
		uint64_t d = grace_load_acquire(&c->dran);
		if (d >= upto)
			break;
		if (d != last) {
			last = d;
			waited_ms = 0;
		} else if (waited_ms >= DEFER_STUCK_MS) {
			c->gave_up = d;
			/* Relaxed: a one-time flag that orders nothing. */
			if (!grace_xchg(&told, 1u, __ATOMIC_RELAXED))
				grace__warn(
					"defer_rcu: no deferred function has run for %u ms (one "
					"may wait for a lock this thread holds): the queue grows "
					"past its bound of %u entries",
					DEFER_STUCK_MS, DEFER_CAP);
			break;
		}
		/* Woken by a consumer at the end of a run, or after 1 ms to count time. */
		grace__futex_wait(&c->dwake, seq, 1000000);
		waited_ms++;
	}
	/* Relaxed: a consumer that still sees 1 makes one needless wake-up. */
	grace_store_relaxed(&c->dwaiting, 0u);
	if (offline)
		grace_qsbr_thread_online();
}

/* Point D6, in a fork child: post the pass of every deferred cache left with entries and none,
 * and start the engine of every cache whose pass the child inherited queued: the child's
 * workers take up inherited callbacks only once something calls the engine, and the owner of
 * an armed cache does not. d_lock held. */
static void dadopt(void)
{
	struct fcache *c;

	/* Relaxed: set by the child handler before the child had other threads; cleared here. */
	if (!grace_load_relaxed(&g_dstranded))
		return;
	grace_store_relaxed(&g_dstranded, 0u);
	DCACHES_FOR_EACH(c)
	{
		steal_mark(c);
		steal_barrier();
		steal_take(c);
		bool inherited = c->mon_armed, arm = !c->mon_armed && d_pending(c);
		if (arm)
			c->mon_armed = 1;
		steal_release(c);
		if (arm) {
			dpost(c, false);
		} else if (inherited) {
			/* Queued on either domain (point D8): start both. */
			(void)grace__engine_start_poll(c->f, c->f->calls[GRACE__CALL_CALL]);
			grace__cbdom_request_gp(d_engine(c->f), grace__gp_snap(c->f->gp));
		}
	}
}

/* The calling thread's deferred cache of dom, created if need be; NULL: no memory. */
static GRACE_COLD struct fcache *dcache_new(struct grace__flavor *f)
{
	int dom = f->free_slot;
	struct fcache *c = NULL;

	/* Unlike the free caches, a callback worker may have one (a deferred function defers):
	 * fork's prepare takes d_lock only after the workers left their callbacks (point D7). A
	 * function that free_rcu_barrier() runs with engine/free.c's all_lock held may come here
	 * too: d_lock is taken after all_lock. */
	if (!grace__fc_setup(f))
		return NULL;
	/* Before the cache's fast path opens (cur_open(), engine/fcache.h): without membarrier
	 * the inline append takes a full barrier. Relaxed: every store writes the same value, and
	 * the owner that reads it wrote it first. */
	grace_store_relaxed(&grace__defer_fenced, grace__use_membarrier ? 0u : 1u);
	if (posix_memalign((void **)&c, GRACE_CACHE_LINE, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->deferred = 1;
	c->gave_up = UINT64_MAX;
	grace__lock(&d_lock);
	grace_list_add(&c->link, &d_caches);
	grace__unlock(&d_lock);
	dtls[dom] = c;
	*d_tls(dom) = &c->rt;
	return c;
}

int grace__dcache_register(struct grace__flavor *f)
{
	return dtls[f->free_slot] || dcache_new(f) ? 0 : -ENOMEM;
}

bool grace__defer_running(void)
{
	return d_in_run != 0;
}

/* defer_rcu() past its inline fast path. false: no memory (the caller runs fn itself). */
bool grace__dcache_slow(struct grace__flavor *f, void (*fn)(void *), void *p)
{
	int dom = f->free_slot;
	struct fcache *c = dtls[dom];
	bool fast, arm = false, full = false, backlog;
	struct fblk *b;

	if (GRACE_UNLIKELY(!c) && !(c = dcache_new(f)))
		return false;
	fast = own_enter(c, "defer_rcu");
	cur_sync(c);
	grace_store_relaxed(&c->rt.lim, 0u);
	/* A full cur is sealed (full): the pass runs it after its grace period. */
	b = cur_room(c, 3u, DBLK_N, &full);
	if (!b) {
		cur_open(c);
		own_exit(c, fast);
		return false;
	}
	b->p[b->n++] = GRACE__RETIRE_FN_MARK;
	b->p[b->n++] = (void *)(uintptr_t)fn;
	b->p[b->n++] = p;
	c->held += 3u;
	c->dput += 3u;
	grace_store_relaxed(&c->calls, c->calls + 1u);
	/* Relaxed: the pass's request (point D9), a hint; only we clear it but for a full
	 * take, which excludes us. */
	bool asked = grace_load_relaxed(&c->dseal_req) != 0;

	if (!c->mon_armed || asked) {
		/* Unarmed: armed after the call (darm()). Sealed now, before the post, so the pass
		 * finds it ready after its grace period and runs it then, rather than taking the
		 * cache once to seal it and once to run it (an owner that defers now and then:
		 * one take per deferral, point D3). Asked: the pass wants cur sealed, and the
		 * owner's seal costs no membarrier (point D9). */
		arm = !c->mon_armed;
		if (asked)
			grace_store_relaxed(&c->dseal_req, 0u);
		grace__fc_seal(c);
	}
	/* Point D5, checked as each block fills. Acquire: pairs with drun()'s release of dran.
	 * Not from a deferred function (this thread may be the cache's consumer). */
	backlog = full && !d_in_run && c->dput - grace_load_acquire(&c->dran) >= 3ull * DEFER_CAP;
	cur_open(c);
	own_exit(c, fast);
	if (arm)
		darm(c);
	/* A fork child's stranded caches (point D6): only a try, this may be a deferred function
	 * on a worker. Relaxed: see dadopt(). */
	if (GRACE_UNLIKELY(grace_load_relaxed(&g_dstranded)) && grace__trylock(&d_lock)) {
		dadopt();
		grace__unlock(&d_lock);
	}
	if (GRACE_UNLIKELY(backlog))
		dbacklog(c, dom);
	return true;
}

/* A barrier's list: the caches it waits for and the block number it waits for in each. */
struct dwant {
	struct fcache *c;
	uint64_t upto;
};

/*
 * rcu_defer_barrier() (self false) and rcu_defer_barrier_thread() (true): every entry of the
 * domain's deferred caches (or the caller's) appended before the call has run when it returns
 * (point D4). Seal each cache's cur and note its block count, one synchronize, then run the
 * ready blocks up to that count on this thread, or wait for the consumer at work.
 */
void grace__dcache_barrier(struct grace__flavor *f, bool self)
{
	int dom = f->free_slot;
	struct fcache *c, *only = self ? dtls[dom] : NULL;
	const char *call = self ? "rcu_defer_barrier_thread" : "rcu_defer_barrier";
	struct dwant *w;
	size_t n = 0;

	if (self && !only)
		return;
	d_in_bar++;
	for (;;) {
		grace__lock(&d_lock);
		dadopt();
		size_t cap = 0;
		DCACHES_FOR_EACH(c)
		cap += c->f == f && (!only || c == only);
		if (!cap) {
			grace__unlock(&d_lock); /* no cache: nothing was deferred */
			d_in_bar--;
			return;
		}
		w = (struct dwant *)malloc(cap * sizeof(*w));
		if (w)
			break;
		grace__unlock(&d_lock);
		grace__warn("rcu_defer_barrier: out of memory; retrying");
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	/* Kept until the end (no dead cache is freed while g_dbar is set). */
	g_dbar++;
	DCACHES_FOR_EACH(c)
	if (c->f == f && (!only || c == only))
		steal_mark(c);
	steal_barrier();
	DCACHES_FOR_EACH(c)
	{
		if (c->f != f || (only && c != only))
			continue;
		bool own = c == dtls[0] || c == dtls[1];
		steal_take_as(c, own, call); /* own: busy held (fcache.h) */
		cur_sync(c);
		if (c->cur)
			grace__fc_seal(
				c); /* after every entry appended before this call (point D1) */
		w[n].c = c;
		w[n].upto = c->dsealed;
		n++;
		steal_release_as(c, own);
	}
	grace__unlock(&d_lock);
	dom_sync(dom);
	for (size_t i = 0; i < n; i++) {
		long nap = 50000;

		c = w[i].c;
		/* Acquire: pairs with drun()'s release of dran_blk. */
		while (grace_load_acquire(&c->dran_blk) < w[i].upto) {
			bool mine = false;

			steal_mark(c);
			steal_barrier();
			bool own = c == dtls[0] || c == dtls[1];
			steal_take_as(c, own, call);
			/* Acquire: pairs with drun()'s release of cons. */
			if (!grace_load_acquire(&c->cons))
				mine = d_claim(c, w[i].upto, false);
			steal_release_as(c, own);
			if (mine) {
				drun(c);
			} else {
				/* Another consumer runs them, or their grace period is not over:
				 * look again, from 50 us to 1 ms apart. */
				struct timespec ts = { 0, nap };
				nanosleep(&ts, NULL);
				nap = nap < 1000000 ? 2 * nap : 1000000;
			}
		}
	}
	free(w);
	grace__lock(&d_lock);
	if (--g_dbar == 0) {
		/* Dead caches left unarmed while barriers were in flight (a fork child): free. */
		DCACHES_FOR_EACH_SAFE(c, &d_caches)
		{
			if (!c->dead)
				continue;
			c_lock(c);
			bool gone = d_unused(c);
			if (gone)
				grace_list_del(&c->link);
			c_unlock(c);
			if (gone)
				d_free(c);
		}
	}
	grace__unlock(&d_lock);
	d_in_bar--;
}

/* The owner leaves (thread exit, or unregistration after its barrier): the pass runs what is left
 * and frees the cache (point D4). */
static void dcache_retire(struct fcache *c)
{
	bool arm = false, gone;

	grace__lock(&d_lock);
	c_lock(c);
	cur_sync(c);
	grace_store_relaxed(&c->rt.lim, 0u);
	grace_store_relaxed(&c->dead, 1u); /* relaxed: read with the cache held (its lock) */
	gone = d_unused(c);
	if (gone) {
		grace_list_del(&c->link);
	} else if (!c->mon_armed) {
		c->mon_armed = 1;
		arm = true;
	}
	grace__unlock(&d_lock);
	/* Armed and posted under the cache's lock (point D6, as darm()): a fork copies the cache
	 * either unarmed or armed with its pass posted. The pass cannot take (or free) the cache
	 * before the unlock. */
	if (arm)
		dpost(c, false);
	c_unlock(c);
	if (gone)
		d_free(c);
}

void grace__dcache_unregister(struct grace__flavor *f)
{
	int dom = f->free_slot;
	struct fcache *c = dtls[dom];

	if (!c)
		return;
	grace__dcache_barrier(f, true); /* liburcu runs the thread's deferrals here */
	dtls[dom] = NULL;
	*d_tls(dom) = NULL;
	dcache_retire(c);
}

/*
 * Fork child (point D6), for each deferred cache, single-threaded: the consumer or the pass of a
 * thread the child does not have is gone (its entry in a call is skipped: drun() moved head past
 * it); a cache whose owner is not here is dead. true: the caller frees it now.
 */
static bool dcache_atfork_child(struct fcache *c)
{
	pthread_t self = pthread_self();

	grace_store_relaxed(&c->dwaiting, 0u);
	cur_sync(c);
	/* the next defer_rcu() is a slow call, which may post the pass */
	grace_store_relaxed(&c->rt.lim, 0u);
	if (c->cons && !pthread_equal(c->cons_tid, self))
		c->cons = 0;
	if (c->in_pass && !pthread_equal(c->pass_tid, self)) {
		/* The engine counts that callback as run here: no pass is posted any more. */
		c->in_pass = 0;
		c->mon_armed = 0;
	}
	if (c != dtls[0] && c != dtls[1]) {
		c->dead = 1;
		/* Its owner is not here: a call it was in (busy stored, not yet cleared, when
		 * the parent's memory was copied) never ends. */
		c->rt.busy = 0;
	}
	/* The stealers of other threads (a barrier's wait, a pass) are gone: only prepare's mark,
	 * which the caller releases next. */
	c->rt.steal = 1;
	/* A consumer of another thread may have been between its two stores (a block taken off
	 * run, not yet counted): count from the blocks themselves. */
	d_fold(c);
	d_gather(c); /* no seal was in flight: prepare waited for the owner, took the lock */
	uint64_t blk = c->dsealed, slots = c->dput - c->held;
	for (struct fblk *b = c->first; b; b = b->next)
		blk--;
	for (struct fblk *b = c->run; b; b = b->next) {
		blk--;
		slots -= b->n - b->head;
	}
	c->dran_blk = blk;
	c->dran = slots;
	if (c->dead && !c->mon_armed && !c->cons && !d_pending(c) && !g_dbar)
		return true;
	if (c->mon_armed || d_pending(c))
		g_dstranded = 1; /* its pass to post, or the inherited one to start (dadopt()) */
	return false;
}

/* The calling thread exits (engine/free.c's thread-exit hook): its deferred caches go dead. */
void grace__defer_thread_exit(void)
{
	for (int dom = 0; dom < NSLOT; dom++) {
		struct fcache *c = dtls[dom];

		if (c) {
			dtls[dom] = NULL;
			*d_tls(dom) = NULL;
			dcache_retire(c);
		}
	}
}

/* fork(): as engine/free.c's caches, and after them (d_lock after all_lock): take every
 * deferred cache. The engine paused its workers first (point D7). */
void grace__defer_atfork_prepare(void)
{
	struct fcache *c;

	grace__lock(&d_lock);
	DCACHES_FOR_EACH(c)
	steal_mark(c);
	steal_barrier();
	DCACHES_FOR_EACH(c) /* the forking thread's own with busy held (fcache.h) */
	steal_take_as(c, c == dtls[0] || c == dtls[1], "fork");
}

void grace__defer_atfork_parent(void)
{
	struct fcache *c;

	DCACHES_FOR_EACH(c)
	steal_release_as(c, c == dtls[0] || c == dtls[1]);
	grace__unlock(&d_lock);
}

/* The child (point D6), single-threaded. */
void grace__defer_atfork_child(void)
{
	struct fcache *c;
	GRACE_LIST_HEAD(gone);

	/* Barriers of threads the child does not have are gone. Relaxed: one thread here. */
	grace_store_relaxed(&g_dbar, d_in_bar);
	DCACHES_FOR_EACH_SAFE(c, &d_caches)
	{
		if (dcache_atfork_child(c)) {
			grace_list_del(&c->link);
			grace_list_add(&c->link, &gone);
		}
	}
	grace__defer_atfork_parent();
	DCACHES_FOR_EACH_SAFE(c, &gone)
	d_free(c);
}
