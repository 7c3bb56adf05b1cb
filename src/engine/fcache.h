/* SPDX-License-Identifier: MIT */
/*
 * The per-thread caches of engine/free.c (free_rcu(), rcu_retire()) and engine/defer.c (the
 * deferred kind: grace-urcu's defer_rcu()): the cache, who touches it, and the block being
 * filled. Private to the engine; the arguments are at the top of those two files.
 */
#ifndef GRACE_ENGINE_FCACHE_H
#define GRACE_ENGINE_FCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include <grace/internal/retire.h>
#include <grace/list.h>
#include <grace/rcu.h>

#include "core/diag.h"
#include "core/flavor.h"
#include "core/gp.h"
#include "core/lock.h"
#include "core/ownsteal.h"
#include "core/wait.h" /* grace__use_membarrier */
#include "engine/freeblk.h"

/* The inline retire appends this many entries (GRACE_RETIRE_RUN, 2) between two slow calls
 * (retire.h), which then free about as many ready entries, plus one (burst()). Short, so that
 * the frees stay interleaved with the caller's mallocs: glibc's tcache holds 7 chunks of a
 * size, and a burst that finds it part full sends the rest to each chunk's own arena. A chunk
 * that another thread's arena gave (the main thread's, for a structure it prefilled) is then
 * lost to this thread, whose own arena grows in its place: with runs of 6 (bursts of 7), the
 * smr hash table of 2^20 keys peaked 9% higher (docs/design.md, "The inline retire"). Set by
 * free_init(); read by the owner in cur_open(). */
extern uint32_t grace__fc_run;
/* A deferred cache's inline append runs this many slots (32 entries) between two slow calls. */
#define DEFER_RUN_SLOTS 96u
#define NSLOT 2 /* flavors with per-thread caches: the default flavor, QSBR (their free_slot) */

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
	struct fblk *spare;        /* empty blocks kept for the next cur (by next; FC_SPARES) */
	uint32_t nspare;           /* blocks on spare */
	size_t held;               /* pointers in cur and the sealed blocks */
	uint64_t wave_seq;         /* the sequence when the owner last counted its ready pointers */
	uint64_t wave_calls;       /* the owner's calls since then */
	uint32_t rate;             /* ready pointers freed per call until the next count, x 256 */
	uint32_t credit;           /* the fraction of a pointer owed, x 256 */
	uint32_t fast_calls;       /* inline appends not yet counted by burst() (cur_sync) */
	uint32_t releasing;        /* the owner runs an entry's function or the free hook: a
				    * retire from there nests (grace__nest_set()) */
	uint32_t run_slots;        /* the owner's window (cur_open()): grace__fc_run entries of the
				    * kind its last slow call appended, in slots */
	struct grace__flavor *f;
	uint64_t mon_calls; /* activity() when the monitor was queued or last looked */
	uint32_t dead;      /* the owner exited: the monitor frees the cache */
	uint32_t waiting;   /* the owner waits in over_limit(): busy, not idle */
	uint32_t mon_idle;  /* monitor runs in a row that found no call */
	uint32_t ghost;     /* fork child: the owner does not exist here; the monitor retires it */
	uint64_t stuck_seq; /* over_limit() gave up at this sequence (owner's; 0: never) */
	uint64_t step_starts; /* grace periods started, when the owner last looked (step_of()) */
	uint64_t step_base;   /* step_sealed then: what no started grace period covers is above */
	uint64_t step_sealed; /* slots sealed, ever (by any holder of c; step_pace()) */
	uint64_t step_mark;   /* step_sealed at the owner's last start (owner, holding c) */
	/* The owner's alone, written after its call lets c go (step_pace()): */
	uint32_t step_len; /* slots that let the owner start one (free.c, step_len_of()) */
	uint64_t step_t;   /* when the owner last started one (ns; 0: never) */
	/* A deferred cache (defer_rcu(): "Deferred caches" below); unused in the others. mon is
	 * its pass. */
	uint32_t deferred;       /* 1: its entries run on its pass, never on the owner */
	uint32_t cons;           /* a consumer (the pass or a barrier) holds `run` (point D2) */
	uint32_t in_pass;        /* the pass is inside its callback (fork child, point D6) */
	uint32_t dwaiting;       /* the owner waits for its backlog (point D5) */
	uint64_t dbacklog_ns;    /* the owner's: when it last waited for its backlog (D8) */
	uint32_t dwake;          /* futex word: a consumer bumps it to wake the owner */
	pthread_t cons_tid;      /* the consumer's thread (fork child) */
	pthread_t pass_tid;      /* the thread inside the pass (fork child) */
	struct fblk *run;        /* detached ready blocks, the consumer's while cons is set */
	struct fblk *dspare;     /* one empty block run to its end, the consumer's (as spare) */
	uint64_t dput;           /* slots appended (cur_sync(); read by the owner only) */
	uint64_t dran;           /* slots run (the consumer's; release, point D5) */
	uint64_t dsealed;        /* blocks sealed (grace__fc_seal(); release) */
	uint64_t dlout;          /* slots a light take moved out, not yet off `held` (D9) */
	struct fblk *dhand;      /* sealed, handed to the consumers, newest first (D9) */
	uint32_t dseal_req;      /* the pass asks the owner to seal cur (point D9) */
	uint64_t dran_blk;       /* blocks run to their end (the consumer's; release) */
	uint64_t gave_up;        /* the owner's: dran when its backlog wait last gave up */
	uint64_t pass_seen;      /* the pass's: dsealed after its last take */
	uint64_t pass_sealed_ns; /* the pass's: when it last sealed cur */
	uint64_t pass_act;       /* the pass's: the owner's calls and appends at its last run */
	uint64_t pass_calls;     /* the pass's: the owner's calls at its last run (point D8) */
	uint64_t pass_blocks;    /* the pass's: dsealed at its last run (point D8) */
	uint32_t pass_wait;      /* the pass's: its last take left sealed blocks to wait for */
	struct rcu_head mon;
	struct grace_list_head link; /* on all_caches, under all_lock */
};

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

/* The owner locks its own cache outside a call (free.c's over_limit(), defer.c's darm()), with
 * busy held (core/ownsteal.h, GRACE__BUSY_HELD): its own signal handlers' calls are reported. */
static inline void own_lock(struct fcache *c)
{
	grace__own_lock(&c->rt, &c->lock);
}

static inline void own_unlock(struct fcache *c)
{
	grace__own_unlock(&c->rt, &c->lock);
}

/* A barrier's pass over every cache takes the calling thread's own (own: c is it) with busy
 * held, as own_lock() (core/ownsteal.h, grace__steal_take_own()): this thread's signal
 * handlers' calls are reported, rather than wait for the lock their thread holds. */
static inline void steal_take_as(struct fcache *c, bool own, const char *call)
{
	if (own)
		grace__steal_take_own(&c->rt, &c->lock, call, "the per-thread cache");
	else
		grace__steal_take(&c->rt, &c->lock);
}

static inline void steal_release_as(struct fcache *c, bool own)
{
	if (own)
		grace__steal_release_own(&c->rt, &c->lock);
	else
		grace__steal_release(&c->rt, &c->lock);
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

_Static_assert(DBLK_N < 1024, "a deferred block's count fits in 10 bits (engine/defer.c)");

static inline uint32_t blk_cap(const struct fcache *c)
{
	return c->deferred ? (uint32_t)DBLK_N : (uint32_t)FBLK_N;
}

/* At the end of the owner's call: let the inline retire append up to run_slots slots to cur
 * before the next slow call. None without membarrier, where rcu_retire()'s compiler barrier
 * does not make the Dekker pair; a deferred cache's owner then appends with a full barrier
 * (grace__retire_fast_as(), told by grace__defer_fenced), so its fast path stays open. */
static inline void cur_open(struct fcache *c)
{
	struct fblk *b = c->cur;

	if (b && (GRACE_LIKELY(grace__use_membarrier) || c->deferred) && !GRACE__LIB_DEBUG &&
	    !GRACE__TSAN_MODE) {
		/* A deferred cache's owner frees nothing at its slow calls, but answers its
		 * pass's request to seal cur there (engine/defer.c, point D9): one at least
		 * every DEFER_RUN_SLOTS slots. */
		uint32_t cap = blk_cap(c),
			 lim = b->n + (c->deferred ? DEFER_RUN_SLOTS : c->run_slots);
		c->rt.slot = b->p;
		grace_store_relaxed(&c->rt.n, b->n); /* relaxed: activity() */
		grace_store_relaxed(&c->rt.lim, lim < cap ? lim : cap);
	} else {
		grace_store_relaxed(&c->rt.lim, 0u);
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
	/* Relaxed stores of lim here and at every other store: the owner and a thread that took
	 * the cache never race on it (the busy/steal pair orders them), but a look from outside
	 * that pair, as the inline-run contract test takes, must not be a data race. */
	grace_store_relaxed(&c->rt.lim, 0u);
	grace_store_relaxed(&c->rt.n, 0u);
	c->rt.slot = NULL;
}

/* Walk a list of caches (head: its grace_list_head). struct fcache is cache-line aligned, so no
 * pointer to one is formed from the list's head, as list.h's typed iterators do to detect the
 * end (UBSan rightly calls that a misaligned object). The _SAFE form lets the body unlink c. */
#define FCACHE_FOR_EACH(c, head)                                                     \
	for (struct grace_list_head *it_ = (head)->next;                             \
	     it_ != (head) && ((c) = grace_list_entry(it_, struct fcache, link), 1); \
	     it_ = it_->next)
#define FCACHE_FOR_EACH_SAFE(c, head)                                                \
	for (struct grace_list_head *it_ = (head)->next, *nx_ = it_->next;           \
	     it_ != (head) && ((c) = grace_list_entry(it_, struct fcache, link), 1); \
	     it_ = nx_, nx_ = it_->next)

/*
 * Empty blocks kept for the next cur: up to FC_SPARES on c->spare, linked by next. Two, not
 * one: a call whose frees empty two blocks (rcu_retire_fn()'s three-slot entries, sealed by
 * steps every few slots, often do) kept the first and freed the second, and a later call
 * malloc()ed it again. All under the holder of c (the owner in its call, or a thread that took
 * the cache).
 */
#define FC_SPARES 2u
static inline struct fblk *spare_take(struct fcache *c)
{
	struct fblk *b = c->spare;

	if (b) {
		c->spare = b->next;
		c->nspare--;
	}
	return b;
}
/* Keep b (empty) as a spare: false when there are FC_SPARES already (the caller frees it). */
static inline bool spare_keep(struct fcache *c, struct fblk *b)
{
	if (c->nspare >= FC_SPARES)
		return false;
	b->next = c->spare;
	c->spare = b;
	c->nspare++;
	return true;
}
/* Every spare, as a list linked by next, for the caller to free (grace__fc_free_list()). */
static inline struct fblk *spare_detach(struct fcache *c)
{
	struct fblk *l = c->spare;

	c->spare = NULL;
	c->nspare = 0;
	return l;
}
/* free() every block of a list linked by next (empty blocks: nothing in them runs). */
static inline void grace__fc_free_list(struct fblk *l)
{
	while (l) {
		struct fblk *nx = l->next;
		free(l);
		l = nx;
	}
}

/* An empty block for cur: a spare, or a new one. c held. NULL: no memory. */
struct fblk *grace__fc_blk_new(struct fcache *c);
/* Seal cur with a grace-period cookie taken now and queue it on the sealed list (free.c). c
 * held. */
void grace__fc_seal(struct fcache *c);
/* Before a thread's first deferred cache (free.c). */
bool grace__fc_setup(struct grace__flavor *f);

/* cur with room for k more slots (cap: its block's), after sealing a cur without that room
 * (*sealed set) and opening a new block; NULL: no memory for one (cur is then NULL). c held. */
static inline __attribute__((always_inline)) struct fblk *cur_room(struct fcache *c, uint32_t k,
								   uint32_t cap, bool *sealed)
{
	struct fblk *b = c->cur;

	if (b && GRACE_UNLIKELY(b->n + k > cap)) {
		grace__fc_seal(c);
		*sealed = true;
		b = NULL;
	}
	if (GRACE_UNLIKELY(!b)) {
		b = grace__fc_blk_new(c);
		if (!b)
			return NULL;
		c->cur = b;
		c->cur_seq = grace_load_relaxed(&c->f->gp->seq); /* relaxed: gp_moved()'s hint */
	}
	return b;
}

#endif
