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
 *    the sequence, and a request to the engine to run that grace period).
 *  - first..last: sealed blocks, oldest first. Each call frees burst() pointers from the
 *    oldest blocks whose cookies have completed (grace__gp_done: acquire): the ready pointers
 *    of each grace period spread over as many calls as the last one took, so that frees follow
 *    allocations one for one instead of overflowing the allocator's thread cache (burst()).
 *  - a monitor: an rcu_head queued on the flavor's engine while the cache holds pointers. When
 *    the engine invokes it (after a grace period), a cache whose owner has made no call since
 *    the monitor last looked, twice in a row (MON_IDLE_RUNS), is taken: ready pointers are
 *    freed by the worker, the other blocks are handed to the engine as callbacks (grace__fblk_cb). An
 *    owner that keeps calling gets the monitor requeued. So a thread that stops calling does
 *    not keep its objects.
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
 *
 * Deferred caches: grace-urcu's defer_rcu() (compat/src/defer.c is its glue). One more cache
 * per thread and domain (the default flavor's, QSBR's: ftls.d, grace__memb_defer and
 * grace__qsbr_defer), of 4 KiB blocks, filled by the same inline append (function entries of
 * three slots) and the owner's slow call, with a different contract for running the entries:
 * never on the thread that deferred (it may hold a lock that a deferred function takes), one at
 * a time, in the order the thread deferred them wherever it ran, and after it exited. So the
 * owner never pops: the cache's monitor is its *pass* (dpass()), posted by the owner's slow
 * call that finds it disarmed. Each run of the pass takes the cache (steal, as the monitor
 * does), seals cur with a cookie taken then, moves the ready prefix of the sealed blocks onto
 * `run`, lets the cache go, runs `run` in order on the worker and posts itself again; a run
 * that finds nothing left disarms (or frees a dead cache). rcu_defer_barrier[_thread]() and
 * unregistration run entries on the calling thread, as liburcu does (grace__defer_barrier()).
 *  (D1) An entry runs only after a grace period that began after its append: argument (1)
 *       above, for the block's cookie (taken by seal(), by the owner or by a thread that took
 *       the cache after the append), and (2): a consumer moves a block onto `run` only once
 *       grace__gp_done(cookie) returned true in its thread (acquire).
 *  (D2) Once, in order, one at a time: a *consumer* (the pass, or a barrier) claims `cons` with
 *       the cache held (d_claim(): so two claims are ordered by the cache's lock) and only if
 *       no other holds it; it moves blocks from `first` onto the tail of `run` in order, lets
 *       the cache go, runs `run` with nothing held (a deferred function may take any lock,
 *       defer again, or retire), and gives the role up with a release store of `cons` that
 *       the next claimer's acquire load pairs with (so `run`, `dspare` and the counts are
 *       handed over). The owner never touches `run`; the pass is one rcu_head, so one pass at
 *       a time. Before each call the consumer moves the block's head past the entry, so a fork
 *       child whose parent was inside that call skips it (leaked there), never runs it twice.
 *  (D3) No entry is stranded: `mon_armed` is set and cleared only with the cache held: by the
 *       owner's slow call (which posts the pass when it sets it) and by a pass that found
 *       nothing left. A pass seals cur before it looks, which closes the inline append (the
 *       fast path appends only to cur), so the next defer_rcu() after a disarm is a slow call
 *       and posts the pass. No fence pair is needed: the cache's owner/stealer protocol orders
 *       the disarm against every append.
 *  (D4) Barriers and dead caches. A barrier seals each cache it waits for and notes how many
 *       blocks it had sealed (dsealed), one synchronize, then waits until the cache's consumers
 *       have run that many blocks to their end (dran_blk: release, paired with its acquire
 *       loads), claiming the role and running the ready blocks up to that number itself
 *       whenever no other consumer holds it. A thread that exits (or unregisters, after its
 *       own barrier) makes its cache *dead*: the pass runs what is left and then unlinks and
 *       frees it (only a try of all_lock: see the monitor). No dead cache is freed while a
 *       barrier is in flight (g_dbar, under all_lock), so a barrier's list stays valid without
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
 *       disarms; the child handler (dcache_atfork_child()) disarms such a cache, drops the
 *       role of a consumer (a pass or a barrier) whose thread it does not have (its `run`
 *       stays, past the entry in a call: D2), makes the caches of the other threads dead,
 *       frees those left empty and unarmed, and notes a cache left with entries and no pass
 *       (g_dstranded): the child's next slow defer_rcu() (every cache's fast path is closed
 *       there) or barrier posts its pass (dadopt()), not the handler itself (the engine starts
 *       its workers in a child at its first call, not while the fork handlers run). Barriers
 *       in flight in the threads the child does not have are gone: g_dbar becomes the forking
 *       thread's own (d_in_bar). A consumer of another thread (an application thread in a
 *       barrier is not paused by the engine) may have been copied between its stores: the
 *       child counts dran_blk and dran again from the blocks left, and clears the steal marks
 *       of the stealers it does not have and the busy word of an owner it does not have.
 *  (D7) fork() and all_lock: the pass only tries all_lock. A deferred function on a worker may
 *       create its thread's cache, which takes all_lock briefly: fork's prepare handler
 *       (grace__free_atfork_prepare) takes all_lock only after the engine has paused its
 *       workers between callbacks (src/init.c), so a fork does not wait for a callback that
 *       waits for it; a callback past the pause that reaches all_lock waits for the fork to
 *       end in the parent, and is counted as run in the child, as any callback past it.
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
#include "engine/freeblk.h"
#include "flavor/memb.h"
#include "flavor/qsbr.h"

#define BURST_MAX 16u /* ready pointers freed per call, at most */
/* The inline retire appends this many slots between two slow calls (retire.h), which then
 * free RETIRE_RUN + 1 ready entries at the least rate (burst()): glibc's tcache holds 7 chunks
 * of a size. */
#define RETIRE_RUN 6u
#define BURST_OUT 32u /* entries one call takes out of the blocks, at most */
#define THREAD_HARD 65536u
#define HARD_WAIT_NS 1000000000ull /* least wait of one call past THREAD_HARD */
/* The monitor takes a cache whose owner made no call during this many of its runs (one grace
 * period apart): more than one, so that an owner merely preempted (by the very worker that runs
 * the monitor, on a busy machine) keeps its cache. */
#define MON_IDLE_RUNS 2u

/* ---- what the descriptor says ---- */

#define NSLOT 2 /* flavors with per-thread caches: the default flavor, QSBR (their free_slot) */

static inline int slot_of(const struct grace__flavor *f)
{
	return f->free_slot;
}

/* ---- per-thread caches ---- */

struct fcache {
	/* Written by the owner at each call. The owner enters with `busy` (no lock, no atomic
	 * read-modify-write: "Who touches a cache", below); any other thread steals the cache
	 * first and then holds `lock`. `calls`, `dead` and `waiting` are also read by the
	 * monitor before it steals (relaxed: a hint it checks again once it holds the cache). */
	/* busy: the owner is in a call, without the lock; steal: threads stealing the cache (or
	 * stolen); n, lim, slot: the block being filled, as the inline retire sees it (cur_sync,
	 * below). First on the line: the owner's TLS pointer is the cache's address. */
	struct grace__retire rt GRACE_ALIGNED_CACHE;
	uint32_t lock;             /* 0 free, 1 held */
	uint32_t mon_armed;        /* the monitor is queued on the engine */
	uint64_t calls;            /* the owner's calls, for the monitor's idle test */
	struct fblk *cur;          /* being filled (NULL: none) */
	uint64_t cur_seq;          /* the sequence when cur got its first pointer */
	struct fblk *first, *last; /* sealed, oldest first */
	struct fblk *spare;        /* one empty block, kept for the next cur */
	size_t held;               /* pointers in cur and the sealed blocks */
	uint64_t wave_seq;         /* the sequence when the owner last counted its ready pointers */
	uint64_t wave_calls;       /* the owner's calls since then */
	uint32_t rate;             /* ready pointers freed per call until the next count, x 256 */
	uint32_t credit;           /* the fraction of a pointer owed, x 256 */
	uint32_t fast_calls;       /* inline appends not yet counted by burst() (cur_sync) */
	uint32_t releasing;        /* the owner runs released entries: a retire from one nests */
	struct grace__flavor *f;
	uint64_t mon_calls; /* activity() when the monitor was queued or last looked */
	uint32_t dead;      /* the owner exited: the monitor frees the cache */
	uint32_t waiting;   /* the owner waits in over_limit(): busy, not idle */
	uint32_t mon_idle;  /* monitor runs in a row that found no call */
	uint32_t ghost;     /* fork child: the owner does not exist here; the monitor retires it */
	uint64_t stuck_seq; /* over_limit() gave up at this sequence (owner's; 0: never) */
	/* A deferred cache (defer_rcu(): "Deferred caches" below); unused in the others. mon is
	 * its pass. */
	uint32_t deferred;   /* 1: its entries run on its pass, never on the owner */
	uint32_t cons;       /* a consumer (the pass or a barrier) holds `run` (point D2) */
	uint32_t in_pass;    /* the pass is inside its callback (fork child, point D6) */
	uint32_t dwaiting;   /* the owner waits for its backlog (point D5) */
	uint32_t dwake;      /* futex word: a consumer bumps it to wake the owner */
	pthread_t cons_tid;  /* the consumer's thread (fork child) */
	pthread_t pass_tid;  /* the thread inside the pass (fork child) */
	struct fblk *run;    /* detached ready blocks, the consumer's while cons is set */
	struct fblk *dspare; /* one empty block run to its end, the consumer's (as spare) */
	uint64_t dput;       /* slots appended (cur_sync(); read by the owner only) */
	uint64_t dran;       /* slots run (the consumer's; release, point D5) */
	uint64_t dsealed;    /* blocks sealed (seal()) */
	uint64_t dran_blk;   /* blocks run to their end (the consumer's; release) */
	uint64_t gave_up;    /* the owner's: dran when its backlog wait last gave up */
	struct rcu_head mon;
	struct grace_list_head link; /* on all_caches, under all_lock */
};

static struct grace__lock all_lock = GRACE__LOCK_INIT; /* taken before any cache's lock */
static GRACE_LIST_HEAD(all_caches);
/* Walk a list of caches. struct fcache is cache-line aligned, so no pointer to one is formed
 * from the list's head, as list.h's typed iterators do to detect the end (UBSan rightly calls
 * that a misaligned object). The _SAFE form lets the body unlink c. */
#define CACHES_FOR_EACH(c)                                                                \
	for (struct grace_list_head *it_ = all_caches.next;                               \
	     it_ != &all_caches && ((c) = grace_list_entry(it_, struct fcache, link), 1); \
	     it_ = it_->next)
#define CACHES_FOR_EACH_SAFE(c, head)                                                \
	for (struct grace_list_head *it_ = (head)->next, *nx_ = it_->next;           \
	     it_ != (head) && ((c) = grace_list_entry(it_, struct fcache, link), 1); \
	     it_ = nx_, nx_ = it_->next)
static uint32_t g_exiting; /* process exit began: every free goes to the engine */
static bool g_worker_mode; /* GRACE_FREE_WORKER=1 */
static bool g_ready;       /* the thread-exit key exists */

struct ftls {
	struct fcache *c[NSLOT];
	struct fcache *d[NSLOT]; /* the deferred caches (defer_rcu()) */
	int exiting;             /* the thread's exit began: its frees go to the engine */
	int no_cache; /* releasing entries under all_lock: a retire they make takes the engine
		       * path (creating a cache takes all_lock) */
};
static __thread struct ftls ftls GRACE_TLS_IE;
/* The same caches, as the inline retire sees them (retire.h): &c->rt, or NULL. */
GRACE_API __thread struct grace__retire *grace__memb_retire GRACE_TLS_IE;
GRACE_API __thread struct grace__retire *grace__qsbr_retire GRACE_TLS_IE;
/* The deferred caches, as grace-urcu's defer_rcu() appends to them (internal/retire.h). */
GRACE_API __thread struct grace__retire *grace__memb_defer GRACE_TLS_IE;
GRACE_API __thread struct grace__retire *grace__qsbr_defer GRACE_TLS_IE;
static __thread struct grace__flavor *init_flavor GRACE_TLS_IE;
static uint32_t g_dbar; /* deferred caches: barriers in flight, under all_lock (point D4) */
static __thread uint32_t d_in_bar GRACE_TLS_IE; /* this thread is in such a barrier */
static pthread_key_t ftls_key;
static pthread_once_t free_once = PTHREAD_ONCE_INIT;

/*
 * Who touches a cache. The owner calls free_rcu() at every update; another thread touches its
 * cache rarely: the monitor when the owner has gone idle, a barrier, fork, process exit. So the
 * owner pays nothing: the asymmetric Dekker pair of core/ownsteal.h (its argument is there), on
 * the cache's rt.busy and rt.steal, and the cache's spin lock `lock`. An exiting owner frees
 * its cache once it holds the lock (cache_retire): steal_release() drops the count first.
 */
static inline void c_lock(struct fcache *c)
{
	grace__spin_lock(&c->lock);
}

static inline void c_unlock(struct fcache *c)
{
	grace__spin_unlock(&c->lock);
}

static inline bool own_enter(struct fcache *c, const char *call)
{
	return grace__own_enter(&c->rt, &c->lock, call, "the per-thread cache");
}

static inline void own_exit(struct fcache *c, bool fast)
{
	grace__own_exit(&c->rt, &c->lock, fast);
}

/* Stealing: mark every cache wanted, one barrier S for all of them, then take each. */
static inline void steal_mark(struct fcache *c)
{
	grace__steal_mark(&c->rt);
}

static inline void steal_barrier(void)
{
	grace__steal_barrier();
}

static void steal_take(struct fcache *c)
{
	grace__steal_take(&c->rt, &c->lock);
}

/* The monitor's variant: give up if another stealer or the owner's slow path holds the lock. */
static bool steal_trytake(struct fcache *c)
{
	return grace__steal_trytake(&c->rt, &c->lock);
}

static inline void steal_release(struct fcache *c)
{
	grace__steal_release(&c->rt, &c->lock);
}

static inline void steal_unmark(struct fcache *c)
{
	grace__steal_unmark(&c->rt);
}

/* Has a grace period completed since the sequence read seq0? (bits 2+ count completions) */
static inline bool gp_moved(struct grace__gp *gp, uint64_t seq0)
{
	return (grace_load_relaxed(&gp->seq) >> 2) != (seq0 >> 2);
}

/* The TLS pointer of slot s, through which the inline retire finds the thread's cache. */
static inline struct grace__retire **rt_tls(int s)
{
	return s == 0 ? &grace__memb_retire : &grace__qsbr_retire;
}

/*
 * The inline retire appends to cur and counts in rt.n only (retire.h). Before anything reads
 * cur's count or `held`, the owner in a call (lock-free or locked) or a thread that took the
 * cache folds those appends in; each append counts as one of the owner's calls, for the
 * monitor's idle test and for burst(). The stealer's view of the appends comes from its
 * acquire of busy (the owner's release store at the end of each append).
 */
static inline void cur_sync(struct fcache *c)
{
	struct fblk *b = c->cur;

	/* Only while the fast path is open (lim != 0) does rt.n run ahead of cur's count: the
	 * library's own calls close it first (cache_put, put_nested) and count in b->n. */
	if (b && c->rt.lim && c->rt.n != b->n) {
		uint32_t k = c->rt.n - b->n;
		b->n = c->rt.n;
		c->held += k;
		c->dput += k;
		c->fast_calls += k;
	}
}

/* A deferred cache's blocks are 4 KiB (168 entries of three slots), as the queues of defer_rcu()
 * were: the pass seals one block per grace period, not one per 40 entries. */
#define DBLK_BYTES 4096u
#define DBLK_N ((DBLK_BYTES - offsetof(struct fblk, p)) / sizeof(void *))

static inline uint32_t blk_cap(const struct fcache *c)
{
	return c->deferred ? (uint32_t)DBLK_N : (uint32_t)FBLK_N;
}

/* At the end of the owner's call: let the inline retire append up to RETIRE_RUN slots to cur
 * before the next slow call (none without membarrier: the fast path's Dekker pair needs it). */
static inline void cur_open(struct fcache *c)
{
	struct fblk *b = c->cur;

	if (b && GRACE_LIKELY(grace__use_membarrier) && !GRACE__LIB_DEBUG && !GRACE__TSAN_MODE) {
		/* A deferred cache's owner frees nothing at its slow calls: it appends up to the
		 * block's end. */
		uint32_t cap = blk_cap(c), lim = c->deferred ? cap : b->n + RETIRE_RUN;
		c->rt.slot = b->p;
		grace_store_relaxed(&c->rt.n, b->n); /* relaxed: activity() */
		c->rt.lim = lim < cap ? lim : cap;
	} else {
		c->rt.lim = 0;
		grace_store_relaxed(&c->rt.n, 0u);
		c->rt.slot = NULL;
	}
}

/* (A debug library leaves lim at 0: every call takes the slow path, which checks that a pointer
 * is not queued twice.) */

/* cur is gone (sealed or detached): the fast path appends nowhere until the owner's next slow
 * call opens the next one. */
static inline void cur_close(struct fcache *c)
{
	c->cur = NULL;
	c->rt.lim = 0;
	grace_store_relaxed(&c->rt.n, 0u);
	c->rt.slot = NULL;
}

/* An empty block for cur: the spare, or a new one. c locked. */
static struct fblk *blk_new(struct fcache *c)
{
	struct fblk *b = c->spare;

	if (b)
		c->spare = NULL;
	else if (!(b = (struct fblk *)malloc(c->deferred ? DBLK_BYTES : sizeof(*b))))
		return NULL;
	b->f = c->f;
	b->n = 0;
	b->head = 0;
	b->done = 0;
	b->next = NULL;
	return b;
}

/* Seal cur: its cookie is taken now, after every append to it ((1) at the top), and the engine
 * is asked to run that grace period. c locked. */
static void seal(struct fcache *c)
{
	struct fblk *b = c->cur;

	cur_sync(c);
	b->cookie = grace__engine_start_poll(c->f, c->f->calls[GRACE__CALL_FREE]);
	b->next = NULL;
	if (c->last)
		c->last->next = b;
	else
		c->first = b;
	c->last = b;
	c->dsealed++;
	cur_close(c);
}

/* Take up to max entries whose grace period has ended, oldest first, into out. c locked. */
static inline unsigned int pop_ready(struct fcache *c, unsigned int max, struct fent *out)
{
	unsigned int n = 0;
	struct fblk *b;

	while (n < max && (b = c->first) != NULL) {
		if (!b->done) {
			/* Acquire ((2) at the top): the frees after it follow the grace period. */
			if (!grace__gp_done(c->f->gp, b->cookie))
				break;
			b->done = 1;
		}
		uint32_t h = grace__fblk_ent_at(b, b->head, &out[n++]);
		c->held -= h - b->head;
		b->head = h;
		if (b->head == b->n) {
			c->first = b->next;
			if (!c->first)
				c->last = NULL;
			if (!c->spare)
				c->spare = b;
			else
				free(b);
		}
	}
	return n;
}

/* Empty the cache: every block, sealed ones first, cur last with a cookie taken now. c locked
 * by the caller (the owner at exit, or a thread that took the lock: (1) at the top). */
static struct fblk *detach(struct fcache *c)
{
	struct fblk *l = c->first;

	cur_sync(c);
	if (c->cur) {
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

	/* A first look without stealing (relaxed loads: a hint, checked again below). An owner
	 * that made a call since the last look is active: most runs end here. */
	uint64_t calls = activity(c);
	/* ghost: set in a fork child before any worker existed there (plain). */
	if (!grace_load_relaxed(&c->dead) && !c->ghost) {
		if (calls != c->mon_calls || grace_load_relaxed(&c->waiting)) {
			c->mon_calls = calls;
			c->mon_idle = 0;
			grace__engine_call(c->f, &c->mon, mon_cb);
			return;
		}
		if (++c->mon_idle < MON_IDLE_RUNS) {
			/* idle once: the owner may only have been preempted */
			grace__engine_call(c->f, &c->mon, mon_cb);
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
			spare = c->spare;
			c->spare = NULL;
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
		grace__engine_call(c->f, &c->mon, mon_cb);
	grace__fblk_release_list(ready);
	free(spare);
	if (destroy)
		free(c);
}

static void ftls_destroy(void *arg);
static bool dcache_atfork_child(struct fcache *c);

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
	CACHES_FOR_EACH(c)
	steal_take(c);
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
	steal_release(c);
	grace__unlock(&all_lock);
}

/*
 * The child: every cache but the forking thread's own is a ghost, whose owner does not exist
 * here. None waits in over_limit() (its waiter is gone: clear the flag, or the monitor would
 * see an active owner for ever). A ghost with its monitor armed is retired by the monitor (the
 * child's engine runs the queued monitor; if the fork came between the arming and the queuing,
 * the ghost stays linked and the exit handler empties it). One not armed holds nothing (a cache
 * holding pointers has its monitor armed): it goes now. Deferred caches: dcache_atfork_child().
 * Single-threaded here.
 */
void grace__free_atfork_child(void)
{
	struct fcache *c;
	GRACE_LIST_HEAD(gone);

	/* Barriers of threads the child does not have are gone (point D6). Relaxed: the child has
	 * one thread. */
	grace_store_relaxed(&g_dbar, d_in_bar);
	CACHES_FOR_EACH_SAFE(c, &all_caches)
	{
		grace_store_relaxed(&c->waiting, 0u);
		if (c->deferred) {
			if (dcache_atfork_child(c)) {
				cache_unlink(c);
				grace_list_add(&c->link, &gone);
			}
			continue;
		}
		if (c == ftls.c[0] || c == ftls.c[1])
			continue;
		c->ghost = 1;
		if (!c->mon_armed && !c->held && !c->cur && !c->first) {
			cache_unlink(c);
			grace_list_add(&c->link, &gone);
		}
	}
	grace__free_atfork_parent();
	CACHES_FOR_EACH_SAFE(c, &gone)
	{
		free(c->spare);
		free(c->dspare);
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
	if (!c->deferred)
		steal_mark(c);
	steal_barrier();
	CACHES_FOR_EACH(c)
	{
		if (c->deferred)
			continue; /* its pass runs it (the engine's exit drain runs the pass) */
		steal_take(c);
		dispose(c->f, detach(c), &ready);
		if (c->spare) {
			c->spare->next = spares;
			spares = c->spare;
			c->spare = NULL;
		}
		steal_release(c);
	}
	grace__unlock(&all_lock);
	grace__fblk_release_list(ready);
	grace__fblk_release_list(spares); /* empty blocks: n == 0 */
}

static void free_init(void)
{
	g_worker_mode = grace__opt(GRACE__OPT_GRACE_FREE_WORKER) != 0;
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

static GRACE_COLD struct fcache *cache_new(struct grace__flavor *f, int slot)
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
	grace__lock(&all_lock);
	grace_list_add(&c->link, &all_caches);
	grace_store_relaxed(&f->free_used, 1u); /* the hook is fixed (grace__free_hook) */
	grace__unlock(&all_lock);
	ftls.c[slot] = c;
	*rt_tls(slot) = &c->rt;
	(void)pthread_setspecific(ftls_key, &ftls); /* non-NULL: ftls_destroy runs at exit */
	return c;
}

/* The calling thread's cache for f (slot s = slot_of(f)), created on first use; NULL: use the
 * engine path. */
static inline __attribute__((always_inline)) struct fcache *cache_of(struct grace__flavor *f, int s)
{
	struct fcache *c;

	if (s < 0)
		return NULL;
	c = ftls.c[s];
	/* A thread that owns a cache is not a callback worker (workers never create one). */
	if (GRACE_LIKELY(c != NULL))
		return GRACE_LIKELY(!grace_load_relaxed(&g_exiting)) ? c : NULL;
	return cache_new(f, s);
}

/* The owner's thread exits: hand everything to the engine, unlink, free what we can. */
static void cache_retire(struct fcache *c)
{
	struct fblk *ready = NULL, *spare;
	bool destroy;

	grace__lock(&all_lock);
	c_lock(c);
	dispose(c->f, detach(c), &ready);
	spare = c->spare;
	c->spare = NULL;
	grace_store_relaxed(&c->dead, 1u); /* the monitor's first look reads it unlocked */
	cache_unlink(c);
	destroy = !c->mon_armed; /* else the monitor frees it when it next runs */
	c_unlock(c);
	/* Freed before all_lock is dropped: a free_rcu_barrier() that takes it after us no longer
	 * finds this cache, so it must find these objects freed already. */
	grace__fblk_release_list(ready);
	grace__unlock(&all_lock);
	free(spare);
	if (destroy)
		free(c);
}

static void dcache_retire(struct fcache *c);

static void ftls_destroy(void *arg)
{
	(void)arg;
	ftls.exiting = 1;
	for (int s = 0; s < NSLOT; s++) {
		struct fcache *c = ftls.c[s];
		if (c) {
			ftls.c[s] = NULL;
			*rt_tls(s) = NULL; /* later retires take the engine path */
			cache_retire(c);
		}
		if ((c = ftls.d[s]) != NULL) {
			ftls.d[s] = NULL;
			*(s == 0 ? &grace__memb_defer : &grace__qsbr_defer) = NULL;
			dcache_retire(c);
		}
	}
}

/* Wait until cookie ck has completed (true), at most the stall timeout (at least 1 s): past it,
 * say so once and return false. The engine's worker drives the grace period (the block's seal asked for
 * it). The sleep follows grace__gp_wait(): event read before the check, the sleeper counted
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

/* What a call queues, for over_limit()'s message and its right to wait. */
enum put_kind { PUT_FREE, PUT_FREE_PTR, PUT_RETIRE };

static const char *put_call(struct grace__flavor *f, enum put_kind k)
{
	return f->calls[k == PUT_FREE       ? GRACE__CALL_FREE
			: k == PUT_FREE_PTR ? GRACE__CALL_FREE_PTR
					    : GRACE__CALL_RETIRE];
}

/* More than THREAD_HARD slots held: wait for the oldest block, then free it. */
static GRACE_COLD void over_limit(struct fcache *c, enum put_kind kind)
{
	const char *call = put_call(c->f, kind);
	struct grace__flavor *f = c->f;
	struct fent out[FBLK_N];
	uint64_t ck = 0;
	bool have;
	unsigned int n;

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
	c_lock(c);
	cur_sync(c);
	if (!c->first && c->cur)
		seal(c);
	have = c->first != NULL;
	if (have) {
		ck = c->first->cookie;
		/* the monitor must not take the cache from a waiting owner (its first look reads
		 * this unlocked) */
		grace_store_relaxed(&c->waiting, 1u);
	}
	c_unlock(c);
	if (!have)
		return;
	if (!wait_bounded(f, ck, call))
		c->stuck_seq = grace_load_relaxed(&f->gp->seq) | 1u; /* owner's field; never 0 */
	c_lock(c);
	grace_store_relaxed(&c->waiting, 0u);
	n = pop_ready(c, (unsigned int)FBLK_N, out);
	c->releasing = 1; /* a retire from an entry's function nests (put_nested) */
	for (unsigned int i = 0; i < n; i++)
		grace__fblk_release_ent(f, out[i]); /* before the unlock, as in cache_put() */
	c->releasing = 0;
	c_unlock(c);
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
 * after a run of them frees the run's share at once, RETIRE_RUN + 1 at the least rate, which
 * the tcache still holds. c locked or the owner's.
 */
static inline unsigned int burst(struct fcache *c)
{
	uint64_t seq = grace_load_relaxed(&c->f->gp->seq);
	uint32_t calls = 1u + c->fast_calls;

	c->fast_calls = 0;
	c->wave_calls += calls;
	if ((seq >> 2) != (c->wave_seq >> 2)) {
		size_t ready = 0;
		for (struct fblk *b = c->first; b; b = b->next) {
			/* Acquire ((2) at the top), as in pop_ready. */
			if (!b->done && !grace__gp_done(c->f->gp, b->cookie))
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
	c->rt.lim = 0;
	b = c->cur;
	if (b && b->n + k > FBLK_N) {
		seal(c);
		b = NULL;
	}
	if (!b) {
		b = blk_new(c);
		if (!b) {
			if (open)
				cur_open(c);
			return false;
		}
		c->cur = b;
		c->cur_seq = grace_load_relaxed(&c->f->gp->seq);
	}
	if (fn) {
		b->p[b->n++] = GRACE__RETIRE_FN_MARK;
		b->p[b->n++] = (void *)(uintptr_t)fn;
	}
	b->p[b->n++] = p;
	c->held += k;
	if (b->n == FBLK_N)
		seal(c);
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
	struct fent out[BURST_OUT];
	unsigned int n, k = fn ? 3u : 1u;
	bool arm = false;
	size_t held;
	struct fblk *b;
	bool fast;

	if (GRACE_UNLIKELY(c->releasing))
		return put_nested(c, fn, p);
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
	c->rt.lim = 0;
	b = c->cur;
	if (b && GRACE_UNLIKELY(b->n + k > FBLK_N)) {
		seal(c); /* no room for a function entry's three slots */
		b = NULL;
	}
	if (GRACE_UNLIKELY(!b)) {
		b = blk_new(c);
		if (!b) {
			cur_open(c);
			own_exit(c, fast);
			return false;
		}
		c->cur = b;
		c->cur_seq = grace_load_relaxed(&c->f->gp->seq);
	}
	if (GRACE_UNLIKELY(fn != NULL)) {
		b->p[b->n++] = GRACE__RETIRE_FN_MARK;
		b->p[b->n++] = (void *)(uintptr_t)fn;
	}
	b->p[b->n++] = p;
	c->held += k;
	if (b->n == FBLK_N || gp_moved(c->f->gp, c->cur_seq))
		seal(c);
	n = pop_ready(c, burst(c), out);
	if (c->first && c->first->done && c->first->head < c->first->n &&
	    c->first->p[c->first->head] != GRACE__RETIRE_FN_MARK)
		/* The next call frees this pointer: start the miss on the allocator's header now
		 * (glibc reads the chunk's size word just below it), a call ahead of the free. */
		__builtin_prefetch((char *)c->first->p[c->first->head] - sizeof(void *), 1, 3);
	/* The ready entries are freed before the cache is let go: a barrier that takes it next
	 * (free_rcu_barrier) must find them freed, not in flight on this thread. A function they
	 * run may retire more: it nests (put_nested). */
	if (n) {
		c->releasing = 1;
		for (unsigned int i = 0; i < n; i++)
			grace__fblk_release_ent(c->f, out[i]);
		c->releasing = 0;
	}
	uint64_t calls = c->calls + 1;
	grace_store_relaxed(&c->calls, calls); /* the monitor's first look reads it unlocked */
	held = c->held;
	if (held && !c->mon_armed) {
		c->mon_armed = 1;
		c->mon_calls = calls << 8; /* differs from activity() after any append */
		arm = true;
	}
	cur_open(c);
	own_exit(c, fast);
	if (arm)
		grace__engine_call(c->f, &c->mon, mon_cb);
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
	c = cache_of(f, s);
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
	c = cache_of(f, s);
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
	c = cache_of(f, s);
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
void grace__free_flush(struct grace__flavor *f)
{
	struct fblk *ready = NULL;
	struct fcache *c;

	/* Relaxed: a cache created before the caller's call (its free_used store under all_lock
	 * happens before it) is seen; one created after holds nothing queued before it. */
	if (slot_of(f) < 0 || !grace_load_relaxed(&f->free_used))
		return;
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	if (c->f == f && !c->deferred)
		steal_mark(c);
	steal_barrier();
	CACHES_FOR_EACH(c)
	{
		if (c->f != f || c->deferred)
			continue;
		steal_take(c);
		dispose(f, detach(c), &ready);
		steal_release(c);
	}
	/* Before all_lock is dropped: a barrier that takes it after us finds these caches empty,
	 * so it must find their objects freed. A retire made by a function they run takes the
	 * engine path (creating a cache would take all_lock again). */
	ftls.no_cache = 1;
	grace__fblk_release_list(ready);
	ftls.no_cache = 0;
	grace__unlock(&all_lock);
}

void grace__free_barrier(struct grace__flavor *f)
{
	const char *call = f->calls[GRACE__CALL_FREE_BARRIER];

	if (grace__in_callback())
		grace__misuse_fatal(call, "called from a callback (would deadlock)");
	int tok = f->hooks->enter_wait(f, call);
	grace__free_flush(f);
	f->hooks->leave_wait(f, tok);
	grace__engine_barrier(f, call); /* the engine: hand-offs, engine-path objects, carriers */
}

/* ---- deferred caches: grace-urcu's defer_rcu() (the argument at the top, points D1-D7) ---- */

#define DEFER_CAP 16320u             /* entries pending past which the owner waits (64 x 255) */
#define DEFER_HURRY (DEFER_CAP / 16) /* a pass that leaves more asks for its grace period now */
#define DEFER_STUCK_MS 100u          /* the owner's backlog wait gives up past this */

/* g_dbar: barriers in flight, under all_lock (no dead cache is freed while any). */
static uint32_t g_dstranded; /* a fork child: some deferred cache may need its pass (D6) */
static __thread uint32_t d_in_run GRACE_TLS_IE; /* this thread runs deferred functions */
/* d_in_bar: this thread is in a barrier (a fork child keeps that one). */

static inline struct grace__flavor *dom_flavor(int dom)
{
	return dom ? &grace__qsbr_flavor : &grace__memb_flavor;
}

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

/* Post the pass; `hurry`: a backlog, whose grace period should not wait for pacing. */
static void dpost(struct fcache *c, bool hurry)
{
	struct grace__cbdom *d = grace__engine_of(c->f, c->f->calls[GRACE__CALL_CALL]);

	(hurry ? grace__cbdom_call_hurry : grace__cbdom_call)(d, &c->mon, dpass);
}

/* Anything not run yet? The cache held (owner in no call, or stolen); `run` read only with cons
 * clear (acquire, pairs with drun()'s release). */
static inline bool d_pending(struct fcache *c)
{
	return c->held || c->cur || c->first || c->run;
}

/* Claim the consumer's role and move the ready prefix of the sealed blocks onto run, at most
 * up to block number `upto` (a barrier) or all of it (UINT64_MAX, the pass). The cache held, cons
 * clear. true: the caller is the consumer and runs `run` once it has let the cache go. */
static bool d_claim(struct fcache *c, uint64_t upto)
{
	struct fblk *tail = c->run, *b;
	/* Relaxed: only consumers store it, and the last one's release of cons, which the caller
	 * acquired, ordered its stores before this. */
	uint64_t nb = grace_load_relaxed(&c->dran_blk);

	/* The last consumer's empty block becomes the owner's spare (cons clear: its store of
	 * dspare happens before, by drun()'s release of cons and our acquire of it). */
	if (c->dspare) {
		if (!c->spare)
			c->spare = c->dspare;
		else
			free(c->dspare);
		c->dspare = NULL;
	}
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

/* Unlink and free a dead cache that nothing refers to: all_lock and the cache held, no barrier
 * in flight (g_dbar: a barrier keeps the caches it listed). The caller frees it after letting
 * the cache go. */
static bool d_unused(struct fcache *c)
{
	/* Acquire: pairs with drun()'s release of cons (its run list is read next). Relaxed load
	 * of g_dbar: every store of it is under all_lock, which the caller holds. */
	return c->dead && !c->mon_armed && !grace_load_acquire(&c->cons) && !d_pending(c) &&
	       !grace_load_relaxed(&g_dbar);
}

static void d_free(struct fcache *c)
{
	free(c->spare);
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
	steal_mark(c);
	steal_barrier();
	if (!steal_trytake(c)) {
		steal_unmark(c); /* the owner's slow call, a barrier or fork: look again later */
	} else {
		/* Acquire: pairs with drun()'s release of cons. */
		if (!grace_load_acquire(&c->cons)) {
			cur_sync(c);
			if (c->cur)
				seal(c); /* its cookie: a grace period that starts after now */
			mine = d_claim(c, UINT64_MAX);
			hurry = c->held >= (size_t)3 * DEFER_HURRY;
			if (!mine && !d_pending(c)) {
				if (!c->dead) {
					/* Nothing left: disarm. Under the cache, so the owner's next
					 * call (slow: seal closed the fast path) sees it and posts. */
					c->mon_armed = 0;
					grace_store_relaxed(&c->in_pass, 0u);
					requeue = false;
				} else if (grace__trylock(&all_lock)) {
					/* Only a try, as the monitor's: a callback does not wait for
					 * a lock that a fork() past its pause may hold (point D7). */
					c->mon_armed = 0;
					if (d_unused(c)) {
						cache_unlink(c);
						destroy = true;
						requeue = false;
					} else {
						c->mon_armed = 1;
					}
					grace__unlock(&all_lock);
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
	if (mine && drun(c) >= DEFER_HURRY)
		hurry = true;
	if (requeue) {
		/* Before the post: past it, the next pass may run (and set in_pass) at once. */
		grace_store_relaxed(&c->in_pass, 0u);
		dpost(c, hurry);
	}
}

/* The owner at DEFER_CAP entries pending: a grace period (as liburcu's full queue), then the pass
 * (point D5). Bounded: past DEFER_STUCK_MS without an entry run, it goes on (told once). */
static GRACE_COLD void dbacklog(struct fcache *c, int dom)
{
	uint64_t upto = c->dput, last = grace_load_acquire(&c->dran), d;
	uint32_t waited_ms = 0;
	static uint32_t told;

	if (last == c->gave_up)
		return;
	bool offline = dom && grace_qsbr_thread_is_online();
	if (offline)
		grace_qsbr_thread_offline();
	dom_sync(dom);
	for (;;) {
		uint32_t seq = grace_load_acquire(&c->dwake);

		grace_store_relaxed(&c->dwaiting, 1u);
		/* Barrier D5: the store of dwaiting, then the load of dran; pairs with the full fence
		 * in drun() between its stores of dran and its load of dwaiting. Acquire: the
		 * entries' effects before dran. */
		grace_smp_mb();
		d = grace_load_acquire(&c->dran);
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

/* Point D6, in a fork child: post the pass of every deferred cache left with entries and none.
 * all_lock held. */
static void dadopt(void)
{
	struct fcache *c;

	/* Relaxed: set by the child handler before the child had other threads; cleared here. */
	if (!grace_load_relaxed(&g_dstranded))
		return;
	grace_store_relaxed(&g_dstranded, 0u);
	CACHES_FOR_EACH(c)
	{
		if (!c->deferred)
			continue;
		steal_mark(c);
		steal_barrier();
		steal_take(c);
		bool arm = !c->mon_armed && d_pending(c);
		if (arm)
			c->mon_armed = 1;
		steal_release(c);
		if (arm)
			dpost(c, false);
	}
}

/* The calling thread's deferred cache of dom, created if need be; NULL: no memory. */
static GRACE_COLD struct fcache *dcache_new(int dom)
{
	struct grace__flavor *f = dom_flavor(dom);
	struct fcache *c = NULL;

	init_flavor = f;
	pthread_once(&free_once, free_init);
	/* Unlike the free caches, a callback worker may have one (a deferred function defers):
	 * fork's prepare takes all_lock only after the workers left their callbacks. */
	if (!g_ready || ftls.no_cache)
		return NULL;
	if (posix_memalign((void **)&c, GRACE_CACHE_LINE, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->deferred = 1;
	c->gave_up = UINT64_MAX;
	grace__lock(&all_lock);
	grace_list_add(&c->link, &all_caches);
	grace__unlock(&all_lock);
	ftls.d[dom] = c;
	*d_tls(dom) = &c->rt;
	(void)pthread_setspecific(ftls_key, &ftls); /* non-NULL: ftls_destroy runs at exit */
	return c;
}

int grace__defer_register(int dom)
{
	return ftls.d[dom] || dcache_new(dom) ? 0 : -ENOMEM;
}

bool grace__defer_running(void)
{
	return d_in_run != 0;
}

/* defer_rcu() past its inline fast path. false: no memory (the caller runs fn itself). */
bool grace__defer_slow(int dom, void (*fn)(void *), void *p)
{
	struct fcache *c = ftls.d[dom];
	bool fast, arm = false, full = false, backlog;
	struct fblk *b;

	if (GRACE_UNLIKELY(!c) && !(c = dcache_new(dom)))
		return false;
	fast = own_enter(c, "defer_rcu");
	cur_sync(c);
	c->rt.lim = 0;
	b = c->cur;
	if (b && b->n + 3u > DBLK_N) {
		seal(c); /* full: the pass runs it after its grace period */
		b = NULL;
		full = true;
	}
	if (!b) {
		b = blk_new(c);
		if (!b) {
			cur_open(c);
			own_exit(c, fast);
			return false;
		}
		c->cur = b;
		c->cur_seq = grace_load_relaxed(&c->f->gp->seq);
	}
	b->p[b->n++] = GRACE__RETIRE_FN_MARK;
	b->p[b->n++] = (void *)(uintptr_t)fn;
	b->p[b->n++] = p;
	c->held += 3u;
	c->dput += 3u;
	grace_store_relaxed(&c->calls, c->calls + 1u);
	if (!c->mon_armed) {
		c->mon_armed = 1; /* point D3: under the cache, as the pass disarms */
		arm = true;
	}
	/* Point D5, checked as each block fills. Acquire: pairs with drun()'s release of dran.
	 * Not from a deferred function (this thread may be the cache's consumer). */
	backlog = full && !d_in_run && c->dput - grace_load_acquire(&c->dran) >= 3ull * DEFER_CAP;
	cur_open(c);
	own_exit(c, fast);
	if (arm)
		dpost(c, false);
	/* A fork child's stranded caches (point D6): only a try, this may be a deferred function
	 * on a worker. Relaxed: see dadopt(). */
	if (GRACE_UNLIKELY(grace_load_relaxed(&g_dstranded)) && grace__trylock(&all_lock)) {
		dadopt();
		grace__unlock(&all_lock);
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
void grace__defer_barrier(int dom, bool self)
{
	struct grace__flavor *f = dom_flavor(dom);
	struct fcache *c, *only = self ? ftls.d[dom] : NULL;
	struct dwant *w;
	size_t n = 0, cap = 0;

	if (self && !only)
		return;
	d_in_bar++;
	for (;;) {
		grace__lock(&all_lock);
		dadopt();
		cap = 0;
		CACHES_FOR_EACH(c)
		cap += c->deferred && c->f == f && (!only || c == only);
		if (!cap) {
			grace__unlock(&all_lock); /* no cache: nothing was deferred */
			d_in_bar--;
			return;
		}
		w = (struct dwant *)malloc(cap * sizeof(*w));
		if (w)
			break;
		grace__unlock(&all_lock);
		grace__warn("rcu_defer_barrier: out of memory; retrying");
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	/* Kept until the end (no dead cache is freed while g_dbar is set). */
	g_dbar++;
	CACHES_FOR_EACH(c)
	if (c->deferred && c->f == f && (!only || c == only))
		steal_mark(c);
	steal_barrier();
	CACHES_FOR_EACH(c)
	{
		if (!c->deferred || c->f != f || (only && c != only))
			continue;
		steal_take(c);
		cur_sync(c);
		if (c->cur)
			seal(c); /* after every entry appended before this call (point D1) */
		w[n].c = c;
		w[n].upto = c->dsealed;
		n++;
		steal_release(c);
	}
	grace__unlock(&all_lock);
	dom_sync(dom);
	for (size_t i = 0; i < n; i++) {
		long nap = 50000;

		c = w[i].c;
		/* Acquire: pairs with drun()'s release of dran_blk. */
		while (grace_load_acquire(&c->dran_blk) < w[i].upto) {
			bool mine = false;

			steal_mark(c);
			steal_barrier();
			steal_take(c);
			/* Acquire: pairs with drun()'s release of cons. */
			if (!grace_load_acquire(&c->cons))
				mine = d_claim(c, w[i].upto);
			steal_release(c);
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
	grace__lock(&all_lock);
	if (--g_dbar == 0) {
		/* Dead caches left unarmed while barriers were in flight (a fork child): free. */
		CACHES_FOR_EACH_SAFE(c, &all_caches)
		{
			if (!c->deferred || !c->dead)
				continue;
			c_lock(c);
			bool gone = d_unused(c);
			if (gone)
				cache_unlink(c);
			c_unlock(c);
			if (gone)
				d_free(c);
		}
	}
	grace__unlock(&all_lock);
	d_in_bar--;
}

/* The owner leaves (thread exit, or unregistration after its barrier): the pass runs what is left
 * and frees the cache (point D4). */
static void dcache_retire(struct fcache *c)
{
	bool arm = false, gone;

	grace__lock(&all_lock);
	c_lock(c);
	cur_sync(c);
	c->rt.lim = 0;
	grace_store_relaxed(&c->dead, 1u); /* relaxed: read with the cache held (its lock) */
	gone = d_unused(c);
	if (gone) {
		cache_unlink(c);
	} else if (!c->mon_armed) {
		c->mon_armed = 1;
		arm = true;
	}
	c_unlock(c);
	grace__unlock(&all_lock);
	if (gone)
		d_free(c);
	else if (arm)
		dpost(c, false);
}

void grace__defer_unregister(int dom)
{
	struct fcache *c = ftls.d[dom];

	if (!c)
		return;
	grace__defer_barrier(dom, true); /* liburcu runs the thread's deferrals here */
	ftls.d[dom] = NULL;
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
	c->rt.lim = 0; /* the next defer_rcu() is a slow call, which may post the pass */
	if (c->cons && !pthread_equal(c->cons_tid, self))
		c->cons = 0;
	if (c->in_pass && !pthread_equal(c->pass_tid, self)) {
		/* The engine counts that callback as run here: no pass is posted any more. */
		c->in_pass = 0;
		c->mon_armed = 0;
	}
	if (c != ftls.d[0] && c != ftls.d[1]) {
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
	if (!c->mon_armed && d_pending(c))
		g_dstranded = 1;
	return false;
}
