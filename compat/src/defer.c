/* SPDX-License-Identifier: MIT */
/*
 * defer_rcu(): per-thread queues of deferrals, run by a callback of the flavor's domain.
 *
 * Shape. Each thread has one queue per grace domain (the default flavors share grace_rcu; QSBR
 * has its own): a chain of 4 KiB blocks of (fct, p) entries, numbered by position. The owner
 * appends with plain stores and one release store, no lock and no atomic read-modify-write, so
 * a defer_rcu() costs a few stores, where one call_rcu() per deferral cost a malloc, a callback
 * and a free. A *consumer* runs a queue's entries, one consumer at a time (`busy`), in order,
 * with no lock held while it calls them (a deferred function may take any lock, and defer
 * again). The consumers are
 *   - the queue's *pass*, a callback of the domain (q->rh): it runs the entries up to the
 *     position recorded when it was posted, records the queue's current end and posts itself
 *     again; when nothing new has arrived it disarms. One grace period serves every deferral
 *     the thread made since the last pass, and the engine's pacing paces the passes;
 *   - rcu_defer_barrier[_thread]() and rcu_defer_unregister_thread(): one synchronize, then they
 *     run what is left up to the position they recorded (or wait for the consumer at work).
 * When DQ_CAP entries are pending (a stalled reader) the owner waits for a grace period, as
 * liburcu's full queue does, and then for the pass to run them (dq_backlog(): bounded, since the
 * owner may hold a lock that a deferred function takes), so memory stays bounded.
 *
 * Correctness argument.
 * (1) An entry runs only after a grace period that began after it was appended. Every consumer
 *     runs only entries below a position it read with acquire loads (dq_end(), barrier A) of
 *     the counts the owner published with release stores after writing the entry; the caller
 *     unpublished p before defer_rcu(). Between reading that position and running the entries,
 *     the consumer either posted q->rh (the engine invokes it after a grace period that started
 *     after the post) or called synchronize. So the unpublication happens before that grace
 *     period starts, and every reader that could still hold p has finished.
 * (2) Each entry runs once, in order: `busy` (under q->lock) admits one consumer; it records
 *     the entry as claimed before calling it and done after, so a fork child whose parent had
 *     another thread inside a call skips that entry (leaked in the child), never runs it twice.
 * (3) No entry is stranded. The owner publishes the entry, then reads `armed`; a pass that
 *     found nothing new clears `armed`, then re-reads the queue's end. Barrier B (the owner's
 *     compiler barrier against the pass's membarrier, or two full fences in the fallback) makes
 *     it impossible for both to read the old value: either the owner sees 0 and arms, or the pass
 *     sees the entry and posts again. Arming is an exchange, so one party posts. The barriers
 *     do not depend on this: they run the entries themselves.
 * (4) Blocks. The owner writes a block only until it links the next one (release store of
 *     `next`, paired with the consumers' acquire loads, barrier C). The busy consumer moves
 *     `head` under q->lock and frees the old block after, once every entry of it has run and its
 *     `next` is set, so never the block the owner fills; dq_end() walks from head under q->lock.
 * (5) Queues outlive their owners. At thread exit (a key destructor) or unregistration the queue
 *     becomes an orphan. It is freed when it is an orphan, empty, not armed, not busy and not
 *     pinned by a barrier, by whoever makes the last of those true, under all_lock (the list of
 *     queues) and q->lock; the barriers pin the queues they recorded (and list what they
 *     pinned on dq_barriers, for a fork child: point 8).
 * (6) An owner waiting for its backlog is woken. It stores `waiting`, then (full fence) loads
 *     `done`; a consumer stores `done`, then (full fence) loads `waiting` and, if set, bumps the
 *     futex word `wake` (barrier D). One of the two sees the other's store. The fences cost once
 *     per run of the consumer and once per wait of the owner, never per entry.
 * (7) No grace worker waits for all_lock. fork()'s prepare handler holds all_lock while
 *     libgrace's (which runs after it) waits for the workers to leave their callbacks, so a
 *     deferred function or a callback that blocked on all_lock would hold every fork() for
 *     libgrace's whole pause and leave its callback half run in the child. A new queue is
 *     therefore not linked under all_lock: dq_create() pushes it on `dq_incoming`, a lock-free
 *     stack (one compare-and-swap, release), and every holder of all_lock moves the whole stack
 *     onto all_queues first (all_lock_take(): one exchange, acquire, paired with the push).
 *     Pushes only, and one taker of the whole stack at a time: no ABA. A queue is pushed once,
 *     by its creator, before its creator appends anything to it; so a barrier that must see
 *     a deferral (made before the barrier was called) sees its queue, on the stack or already
 *     moved, and a queue is on all_queues before anyone orphans or unlinks it (both under
 *     all_lock). The pass only try-locks all_lock; the rest of the work of all_lock's holders
 *     (barriers, exit, unregistration) is the application's threads'.
 * (8) fork(). libgrace pauses its workers between two callbacks, but for FORK_PAUSE_NS at most
 *     (src/engine/callback.c): a pass whose deferred function runs longer is still inside its
 *     callback when the process is copied, and the child's engine counts that callback as run.
 *     The queue records whether its pass is inside its callback holding rh (`in_pass`, under
 *     q->lock, cleared before the pass hands rh back to the engine or disarms), and by which
 *     thread. In the child a queue whose pass was inside its callback in another thread is
 *     disarmed (no pass is posted for it), and a queue left unarmed with entries pending is
 *     re-armed lazily (`dq_stranded`): by the child's next defer_rcu() that arms a queue, or its
 *     next barrier. Not from the child handler itself: libgrace starts its workers in the child
 *     only at the child's next call, not while the fork handlers still run (a pass posted here
 *     would start one, which could run deferred functions before the application's own child
 *     handlers have reset their locks).
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <grace/diag.h>
#include <grace/list.h>

#include "compat.h"

#define DQ_DOMS 2              /* 0: grace_rcu (memb, mb, signal, bp); 1: grace_qsbr */
#define DQ_BLOCK 255           /* entries per block: 16 + 255 * 16 = 4096 bytes */
#define DQ_CAP (64 * 255)      /* pending entries past which the owner waits (256 KiB) */
#define DQ_HURRY (DQ_CAP / 16) /* a pass that leaves more asks for a grace period at once */

struct dq_ent {
	void (*fct)(void *p);
	void *p;
};

struct dq_block {
	struct dq_block *next; /* set once by the owner, release (barrier C) */
	unsigned int n;        /* entries published, owner's release store (barrier A) */
	unsigned int pad;
	uint64_t base; /* position of e[0]; written before the block is linked */
	struct dq_ent e[DQ_BLOCK];
};

struct dq {
	/* The owner's: */
	struct dq_block *fill; /* block being filled */
	uint64_t end;          /* positions appended so far */
	uint64_t gave_up;      /* done when dq_backlog() last gave up waiting */
	unsigned int waiting;  /* the owner waits in dq_backlog() (barrier D) */
	unsigned int wake;     /* futex word: the consumer bumps it to wake the owner */
	unsigned int armed;    /* 1 while rh is posted or its pass runs (exchange, point 3) */
	int dom;
	/* The owner stores end at every call; the consumers take the lock and store done. 64
	 * bytes apart, on different cache lines whatever the 16-byte alignment of calloc() (an
	 * aligned member would make every struct dq, and the list head seen as one, need it). */
	char pad_[64];
	/* Under lock (held briefly, never across a call or a wait): */
	pthread_mutex_t lock;
	bool busy;                  /* a consumer is running entries (point 2) */
	bool orphan;                /* the owner is gone */
	pthread_t busy_tid;         /* that consumer (fork child) */
	unsigned int pins;          /* barriers that recorded this queue (point 5) */
	struct dq_block *head;      /* block holding position done */
	uint64_t snap;              /* the posted pass runs up to here */
	struct grace_list_head all; /* on all_queues (all_lock) */
	bool in_pass;               /* rh is the running pass's: neither posted nor idle (8) */
	pthread_t pass_tid;         /* the thread running that pass (fork child) */
	struct dq *inc_next;        /* on dq_incoming, before all_queues (point 7) */
	/* The busy consumer's: */
	uint64_t claimed; /* entries whose call has started */
	uint64_t done;    /* entries whose call returned; release, read by owner and barriers */
	struct rcu_head rh;
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static GRACE_LIST_HEAD(all_queues);
static struct dq *dq_incoming;   /* new queues, not yet on all_queues (point 7) */
static unsigned int dq_stranded; /* a fork child: some queue may need a pass (point 8) */
static pthread_once_t dq_once = PTHREAD_ONCE_INIT;
static pthread_key_t dq_key[DQ_DOMS];
static bool dq_keys_ok;
static bool dq_fence; /* libgrace runs its fence fallback: so do we (barrier B) */

/* A barrier in flight (defer_wait()): the queues it pinned. On dq_barriers, under all_lock,
 * from before its first pin until after its last unpin, so that a fork child can drop the pins
 * of barriers whose threads it does not have (point 8). */
struct dq_want {
	struct dq *q;
	uint64_t upto;
};

struct dq_bar {
	struct grace_list_head link; /* on dq_barriers (all_lock) */
	pthread_t tid;
	struct dq_want *w; /* w[0..nw) pinned */
	size_t nw;
	bool heap; /* w is realloc()ed (not the barrier's one slot on its stack) */
};

static GRACE_LIST_HEAD(dq_barriers);

static __thread struct dq *my_q[DQ_DOMS];
static __thread unsigned int in_run; /* running deferred functions (nested calls) */

/* rcu_defer_register_thread() count per flavor (liburcu requires it before defer_rcu()). */
static __thread unsigned int defer_registered[GRACE_URCU_NR_FLAVORS];

static int dom_of(int flavor)
{
	return grace_urcu__is_qsbr(flavor) ? 1 : 0;
}

static void dom_synchronize(int dom)
{
	if (dom)
		grace_qsbr_synchronize();
	else
		grace_rcu_synchronize();
}

/* Barrier B, the pass's side: pairs with owner_fence(). */
static void heavy_fence(void)
{
	if (!dq_fence) {
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
			return;
		/* libgrace registered the process at start-up; this cannot fail. */
		grace_urcu__misuse("defer_rcu", "membarrier(PRIVATE_EXPEDITED) failed: %s",
				   strerror(errno));
	}
	grace_smp_mb();
}

/* Barrier B, the owner's side: store of the count, then load of armed. */
static inline void owner_fence(void)
{
	if (dq_fence)
		grace_smp_mb();
	else
		grace_barrier(); /* the pass's membarrier supplies the CPU order */
}

/* The position after the last published entry. q->lock held (head cannot be freed). */
static uint64_t dq_end(struct dq *q)
{
	struct dq_block *b = q->head, *nx;

	/* Acquire (barrier C): pairs with the owner's release store of next. */
	while ((nx = grace_load_acquire(&b->next)) != NULL)
		b = nx;
	/* Acquire (barrier A): pairs with the owner's release store of n; the entries below it,
	 * and the caller's unpublication of p, are visible from here on. */
	return b->base + grace_load_acquire(&b->n);
}

/*
 * Run the entries below upto (point 1: a grace period began after upto was read), unless
 * another consumer is at work (false). Called and returns with q->lock held; drops it while
 * the functions run.
 */
static bool dq_consume(struct dq *q, uint64_t upto)
{
	struct dq_block *b;
	uint64_t pos;

	if (q->busy)
		return false;
	q->busy = true;
	q->busy_tid = pthread_self();
	b = q->head;
	pos = q->done;
	pthread_mutex_unlock(&q->lock);
	in_run++;
	while (pos < upto) {
		uint64_t idx = pos - b->base;

		if (idx == DQ_BLOCK) {
			/* Run to its end; upto > pos, so the owner linked the next (acquire,
			 * barrier C). Point 4: head moves under the lock, then the block goes. */
			struct dq_block *nx = grace_load_acquire(&b->next);

			pthread_mutex_lock(&q->lock);
			q->head = nx;
			pthread_mutex_unlock(&q->lock);
			free(b);
			b = nx;
			continue;
		}
		struct dq_ent e = b->e[idx];

		/* Point 2; relaxed: read only by a fork child, single-threaded. */
		grace_store_relaxed(&q->claimed, pos + 1);
		e.fct(e.p);
		pos++;
		/* Release: the call's effects before done; pairs with the acquire loads of the
		 * owner's cap check and of the barriers. */
		grace_store_release(&q->done, pos);
	}
	in_run--;
	/* Barrier D: the store of done, then the load of waiting (pairs with dq_backlog()). */
	grace_smp_mb();
	if (grace_load_relaxed(&q->waiting)) {
		/* Release: pairs with the owner's acquire load of wake. */
		grace_fetch_add(&q->wake, 1u, __ATOMIC_RELEASE);
		syscall(SYS_futex, &q->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	pthread_mutex_lock(&q->lock);
	/* A block run to its end goes as soon as the owner has moved on. */
	struct dq_block *nx;
	if (pos - b->base == DQ_BLOCK && (nx = grace_load_acquire(&b->next)) != NULL) {
		q->head = nx;
		free(b);
	}
	q->busy = false;
	return true;
}

/* Point 7: a new queue goes on the incoming stack, not on all_queues (no lock: its creator may
 * be a grace worker in a deferred function or a callback). */
static void dq_push_incoming(struct dq *q)
{
	/* Relaxed: a first guess; the compare-and-swap checks it. */
	struct dq *top = grace_load_relaxed(&dq_incoming);

	do {
		q->inc_next = top;
		/* Release: q's fields (lock, dom, first block) and its link before q is reachable
		 * from the stack; pairs with the acquire exchange in dq_take_incoming(). */
	} while (!grace_cmpxchg_mo(&dq_incoming, &top, q, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Move the incoming stack onto all_queues. all_lock held (or the fork child, alone). */
static void dq_take_incoming(void)
{
	/* Acquire: pairs with the release compare-and-swap of every push taken. */
	struct dq *q = grace_xchg(&dq_incoming, (struct dq *)NULL, __ATOMIC_ACQUIRE);

	while (q) {
		struct dq *nx = q->inc_next;

		grace_list_add(&q->all, &all_queues);
		q = nx;
	}
}

/* Take all_lock, as every holder must (point 7): all_queues then holds every queue. */
static void all_lock_take(void)
{
	pthread_mutex_lock(&all_lock);
	dq_take_incoming();
}

static bool all_lock_try(void)
{
	if (pthread_mutex_trylock(&all_lock) != 0)
		return false;
	dq_take_incoming();
	return true;
}

static void dq_pass(struct rcu_head *rh);

/* Post the pass; `hurry`: a flood, whose grace period should not wait for the adaptive
 * policy's pacing (the owner would reach DQ_CAP first and wait). */
static void dq_post_as(struct dq *q, bool hurry)
{
	if (q->dom)
		(hurry ? grace_qsbr_call_hurry : grace_qsbr_call)(&q->rh, dq_pass);
	else
		(hurry ? grace_rcu_call_hurry : grace_rcu_call)(&q->rh, dq_pass);
}

static void dq_post(struct dq *q)
{
	dq_post_as(q, false);
}

static void dq_destroy(struct dq *q)
{
	for (struct dq_block *b = q->head, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Point 5: unlink q if nothing refers to it any more. all_lock and q->lock held; true: the
 * caller destroys it after dropping both. */
static bool dq_unlink_if_unused(struct dq *q)
{
	/* Relaxed: for an orphan, armed changes only under q->lock (the pass's disarm, dq_orphan()'s
	 * arm), which the caller holds. */
	if (!q->orphan || grace_load_relaxed(&q->armed) || q->busy || q->pins ||
	    q->done != dq_end(q))
		return false;
	grace_list_del(&q->all);
	return true;
}

static void dq_pass(struct rcu_head *rh)
{
	struct dq *q = grace_container_of(rh, struct dq, rh);
	uint64_t end;

	pthread_mutex_lock(&q->lock);
	/* Point 8: until it posts rh again or disarms, this pass holds rh. Under q->lock, as every
	 * store of in_pass; read by a fork child only. */
	q->in_pass = true;
	q->pass_tid = pthread_self();
	if (!dq_consume(q, q->snap)) {
		/* Another consumer is at work: look again after the next grace period. */
		q->in_pass = false;
		dq_post(q);
		pthread_mutex_unlock(&q->lock);
		return;
	}
	end = dq_end(q);
	if (end > q->done) {
		/* More arrived since the post: they wait for the next grace period, at once if
		 * they are many (the owner would reach DQ_CAP before a paced one). */
		q->snap = end;
		q->in_pass = false;
		dq_post_as(q, end - q->done > DQ_HURRY);
		pthread_mutex_unlock(&q->lock);
		return;
	}
	if (q->orphan) {
		/* Nobody appends any more: disarm and free the queue unless a barrier holds it
		 * (the last one to unpin it frees it). Lock order: all_lock, then q->lock. Only a
		 * try: fork's prepare holds all_lock while libgrace waits for this callback to end,
		 * so a pass must not wait for it (point 7); it looks again after the next grace
		 * period. in_pass stays set while q->lock is dropped: rh is still this pass's. */
		pthread_mutex_unlock(&q->lock);
		if (!all_lock_try()) {
			pthread_mutex_lock(&q->lock);
			q->in_pass = false;
			dq_post(q);
			pthread_mutex_unlock(&q->lock);
			return;
		}
		pthread_mutex_lock(&q->lock);
		q->in_pass = false;
		/* Relaxed: no owner is left to exchange it; its readers hold q->lock. */
		grace_store_relaxed(&q->armed, 0u);
		bool gone = dq_unlink_if_unused(q);
		pthread_mutex_unlock(&q->lock);
		pthread_mutex_unlock(&all_lock);
		if (gone)
			dq_destroy(q);
		return;
	}
	/* Debug builds: a test may hold the pass here, after it found nothing new and before it
	 * disarms, while the owner appends (it sees armed set and does not post): the re-check
	 * below must find that entry (test compat_defer_disarm). */
	GRACE_URCU__TEST_PAUSE("defer_disarm");
	q->in_pass = false;
	grace_store_relaxed(&q->armed, 0u);
	heavy_fence(); /* barrier B: the store of armed, then the load of the end */
	end = dq_end(q);
	/* Exchange: the owner may arm at the same time, one of the two posts (point 3); what the
	 * post reads is ordered by q->lock, held here and taken by the owner's dq_arm(). */
	if (end > q->done && grace_xchg(&q->armed, 1u, __ATOMIC_ACQ_REL) == 0) {
		q->snap = end;
		dq_post(q);
	}
	/* Past the unlock q may be posted again, and freed by that pass: no more access. */
	pthread_mutex_unlock(&q->lock);
}

/*
 * Point 8, in a fork child: post a pass for every queue left unarmed with entries pending (its
 * pass was lost with the thread running it, or its owner, a thread the child does not have,
 * appended and had not armed yet). all_lock held.
 */
static void dq_adopt_stranded(void)
{
	struct dq *q;

	/* Relaxed: set by the fork child before it had other threads (they start after it, and
	 * pthread_create() orders it); cleared here, under all_lock. */
	if (!grace_load_relaxed(&dq_stranded))
		return;
	grace_store_relaxed(&dq_stranded, 0u);
	grace_list_for_each_entry(q, &all_queues, all) {
		pthread_mutex_lock(&q->lock);
		uint64_t end = dq_end(q);

		/* Exchange: the owner may arm at the same time (point 3), one of the two posts;
		 * q->lock, taken by the owner's dq_arm() too, orders the post. Relaxed load of
		 * done: the busy consumer's, and a stale value only posts a pass that finds
		 * nothing (it disarms). */
		if (grace_load_relaxed(&q->done) < end && grace_load_relaxed(&q->armed) == 0 &&
		    grace_xchg(&q->armed, 1u, __ATOMIC_ACQ_REL) == 0) {
			q->snap = end;
			dq_post(q);
		}
		pthread_mutex_unlock(&q->lock);
	}
}

/* The owner arms its idle queue: the pass will run everything appended so far. */
static void dq_arm(struct dq *q)
{
	pthread_mutex_lock(&q->lock);
	q->snap = q->end;
	dq_post(q);
	pthread_mutex_unlock(&q->lock);
}

/*
 * The owner at DQ_CAP (a stalled reader, or passes that cannot keep up). As liburcu's full
 * queue, it waits for a grace period, which bounds the queue while a reader stalls; then, unlike
 * liburcu, it lets the pass run the backlog rather than running it itself: the owner may hold a
 * lock that a deferred function takes. That second wait is bounded: if no entry has run for
 * DQ_STUCK_MS, the owner goes on (told once), and waits again only once one has.
 */
#define DQ_STUCK_MS 100
static void dq_backlog(struct dq *q)
{
	uint64_t upto = q->end, last = grace_load_acquire(&q->done), d;
	unsigned int waited_ms = 0;
	static int told;

	if (last == q->gave_up)
		return;
	/* An online QSBR thread would hold up the grace period the pass waits for. */
	bool offline = q->dom && grace_qsbr_thread_is_online();
	if (offline)
		grace_qsbr_thread_offline();
	dom_synchronize(q->dom);
	for (;;) {
		unsigned int seq = grace_load_acquire(&q->wake);

		grace_store_relaxed(&q->waiting, 1u);
		/* Barrier D: the store of waiting, then the load of done; pairs with the full
		 * fence in dq_consume() between its store of done and its load of waiting, so
		 * either this load sees the progress or the consumer sees waiting and wakes us.
		 * Acquire: the entries' effects before done. */
		grace_smp_mb();
		d = grace_load_acquire(&q->done);
		if (d >= upto)
			break;
		if (d != last) {
			last = d;
			waited_ms = 0;
		} else if (waited_ms >= DQ_STUCK_MS) {
			q->gave_up = d;
			/* Relaxed: a one-time flag that orders nothing. */
			if (!grace_xchg(&told, 1, __ATOMIC_RELAXED))
				grace_urcu__warn("defer_rcu",
						 "no deferred function has run for %d ms (one may "
						 "wait for a lock this thread holds): the queue "
						 "grows past its bound of %d entries",
						 DQ_STUCK_MS, DQ_CAP);
			break;
		}
		/* Woken by the consumer at the end of a run, or after 1 ms to count time. */
		struct timespec ts = { 0, 1000000 };
		syscall(SYS_futex, &q->wake, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
		waited_ms++;
	}
	/* Relaxed: a consumer that still sees 1 only makes one needless wake-up. */
	grace_store_relaxed(&q->waiting, 0u);
	if (offline)
		grace_qsbr_thread_online();
}

/*
 * Wait until every entry of q (`only`), or of every queue of dom, appended before the call has
 * run: record the positions (pinning the queues), one synchronize, then run what is left, or
 * wait for the consumer at work.
 */
static void defer_wait(int dom, struct dq *only)
{
	struct dq_want *w = NULL, one;
	size_t nw = 0, cap = 0;
	struct dq_bar bar = { .tid = pthread_self(), .heap = only == NULL };

	all_lock_take();
	dq_adopt_stranded();
	grace_list_add(&bar.link, &dq_barriers);
	struct dq *it;

	grace_list_for_each_entry(it, &all_queues, all) {
		struct dq *q = it;

		if (q->dom != dom || (only && q != only))
			continue;
		if (only) {
			w = &one;
		} else if (nw == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct dq_want *nwp = (struct dq_want *)realloc(w, nc * sizeof(*w));

			if (!nwp) {
				/* Out of memory: unpin what we have, then start again. */
				for (size_t i = 0; i < nw; i++) {
					pthread_mutex_lock(&w[i].q->lock);
					w[i].q->pins--;
					pthread_mutex_unlock(&w[i].q->lock);
				}
				grace_list_del(&bar.link);
				pthread_mutex_unlock(&all_lock);
				free(w);
				grace_urcu__warn("rcu_defer_barrier", "out of memory; retrying");
				usleep(1000);
				defer_wait(dom, only);
				return;
			}
			w = nwp;
			cap = nc;
		}
		pthread_mutex_lock(&q->lock);
		q->pins++;
		w[nw].q = q;
		w[nw].upto = dq_end(q);
		pthread_mutex_unlock(&q->lock);
		nw++;
		bar.w = w;
		bar.nw = nw;
	}
	if (!nw) {
		grace_list_del(&bar.link);
		pthread_mutex_unlock(&all_lock);
		return;
	}
	pthread_mutex_unlock(&all_lock);

	dom_synchronize(dom);
	for (size_t i = 0; i < nw; i++) {
		struct dq *q = w[i].q;

		pthread_mutex_lock(&q->lock);
		/* Acquire: pairs with the consumer's release store of done. */
		while (grace_load_acquire(&q->done) < w[i].upto && !dq_consume(q, w[i].upto)) {
			/* Another consumer is running these entries: let it. */
			pthread_mutex_unlock(&q->lock);
			usleep(50);
			pthread_mutex_lock(&q->lock);
		}
		pthread_mutex_unlock(&q->lock);
	}
	/* Unpin; the last user of an orphan frees it (point 5). */
	all_lock_take();
	for (size_t i = 0; i < nw; i++) {
		struct dq *q = w[i].q;

		pthread_mutex_lock(&q->lock);
		q->pins--;
		bool gone = dq_unlink_if_unused(q);
		pthread_mutex_unlock(&q->lock);
		if (gone)
			dq_destroy(q);
	}
	grace_list_del(&bar.link);
	pthread_mutex_unlock(&all_lock);
	if (w != &one)
		free(w);
}

/* The owner leaves (unregistration or thread exit). Point 5. */
static void dq_orphan(struct dq *q)
{
	bool gone;

	all_lock_take();
	pthread_mutex_lock(&q->lock);
	q->orphan = true;
	/* Relaxed: the owner (this thread) is the only one that arms an unarmed queue besides its
	 * pass, which disarms and re-arms under q->lock, held here. */
	if (grace_load_relaxed(&q->armed) == 0 && q->done < q->end) {
		/* Pending, unarmed: hand them to a pass, which frees the queue after them. */
		grace_store_relaxed(&q->armed, 1u);
		q->snap = q->end;
		dq_post(q);
	}
	gone = dq_unlink_if_unused(q);
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_unlock(&all_lock);
	if (gone)
		dq_destroy(q);
}

static void dq_key_gone(void *v)
{
	struct dq *q = (struct dq *)v;

	for (int d = 0; d < DQ_DOMS; d++)
		if (my_q[d] == q)
			my_q[d] = NULL;
	dq_orphan(q);
}

static void dq_prepare(void)
{
	pthread_mutex_lock(&all_lock);
}

static void dq_parent(void)
{
	pthread_mutex_unlock(&all_lock);
}

/*
 * The child (point 8). The forking thread holds all_lock (dq_prepare()); libgrace's child
 * handler has run (registered first, at libgrace's start-up, so its child handler runs before
 * this one). libgrace paused its workers between two callbacks for FORK_PAUSE_NS at most, so a
 * pass may have been inside its callback in a thread the child does not have: libgrace counts
 * that callback as run, so no pass is posted for its queue any more; disarm it. A queue's lock
 * is only ever held for a few stores, never by a thread that forks: re-initialise it. A
 * consumer of another thread that was inside a call is gone: the entry it claimed is skipped
 * (point 2). The queues of threads that do not exist here become orphans; the pins of
 * barriers that were running in those threads are dropped (struct dq_bar), and the orphans
 * left unused are freed here. A queue left unarmed with entries pending gets a pass at the
 * child's next defer_rcu() that arms a queue, or its next barrier (dq_adopt_stranded()); one
 * whose pass was posted keeps it (libgrace runs the parent's queued callbacks in the child),
 * and the pass frees it once it is an empty orphan.
 */
static void dq_child(void)
{
	pthread_t self = pthread_self();

	struct dq *q;

	dq_take_incoming(); /* queues created while the fork was prepared (point 7) */
	grace_list_for_each_entry(q, &all_queues, all) {
		pthread_mutex_init(&q->lock, NULL);
		if (q->busy && !pthread_equal(q->busy_tid, self)) {
			q->busy = false;
			q->done = q->claimed;
		}
		if (q->in_pass && !pthread_equal(q->pass_tid, self)) {
			q->in_pass = false;
			/* Relaxed, as every access here: the child has one thread. */
			grace_store_relaxed(&q->armed, 0u);
		}
		if (q != my_q[0] && q != my_q[1])
			q->orphan = true;
		if (grace_load_relaxed(&q->armed) == 0 && q->done < dq_end(q))
			grace_store_relaxed(&dq_stranded, 1u);
	}
	/* Barriers of threads the child does not have never unpin: drop their pins (the child's
	 * copy of their memory is intact). A barrier of this thread (fork() from a deferred function
	 * it runs) goes on in the child and unpins itself. */
	struct dq_bar *bar, *nb;

	grace_list_for_each_entry_safe(bar, nb, &dq_barriers, link) {
		if (pthread_equal(bar->tid, self))
			continue;
		for (size_t i = 0; i < bar->nw; i++)
			bar->w[i].q->pins--;
		grace_list_del(&bar->link);
		if (bar->heap)
			free(bar->w);
	}
	/* Free what nothing refers to any more (point 5): the orphans made above that are empty,
	 * not armed and no longer pinned. No later event would: their owners and barriers are
	 * gone, and no pass of theirs is posted. */
	struct dq *nq;

	grace_list_for_each_entry_safe(q, nq, &all_queues, all)
		if (dq_unlink_if_unused(q))
			dq_destroy(q);
	pthread_mutex_unlock(&all_lock);
}

static void dq_init(void)
{
	dq_fence = strcmp(grace_membarrier_mode(), "membarrier") != 0;
	dq_keys_ok = pthread_key_create(&dq_key[0], dq_key_gone) == 0 &&
		     pthread_key_create(&dq_key[1], dq_key_gone) == 0;
	if (!dq_keys_ok)
		grace_urcu__warn("rcu_defer_register_thread",
				 "pthread_key_create() failed: deferrals of threads that exit "
				 "without rcu_defer_unregister_thread() run only at a barrier");
	if (pthread_atfork(dq_prepare, dq_parent, dq_child) != 0)
		grace_urcu__warn(
			"rcu_defer_register_thread",
			"pthread_atfork() failed (out of memory): a fork child may inherit "
			"the list of defer queues locked");
}

static struct dq *dq_create(int dom)
{
	struct dq *q;
	struct dq_block *b;

	pthread_once(&dq_once, dq_init);
	q = (struct dq *)calloc(1, sizeof(*q));
	b = (struct dq_block *)calloc(1, sizeof(*b));
	if (!q || !b) {
		free(q);
		free(b);
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	q->dom = dom;
	q->gave_up = UINT64_MAX;
	q->fill = q->head = b;
	/* Not under all_lock: the creator may be a grace worker (point 7). */
	dq_push_incoming(q);
	if (dq_keys_ok)
		pthread_setspecific(dq_key[dom], q);
	my_q[dom] = q;
	return q;
}

/* Append (fct, p): the fast path. */
static void dq_append(int dom, void (*fct)(void *p), void *p)
{
	struct dq *q = my_q[dom];

	if (GRACE_UNLIKELY(!q) && !(q = dq_create(dom))) {
		/* Out of memory: liburcu's full-queue path for this one deferral. */
		dom_synchronize(dom);
		fct(p);
		return;
	}
	struct dq_block *b = q->fill;
	unsigned int n = (unsigned int)(q->end - b->base);

	if (GRACE_UNLIKELY(n == DQ_BLOCK)) {
		/* Bounded backlog, checked once per block (DQ_CAP is a whole number of blocks), so
		 * the owner does not read the consumer's line at every call. Acquire: pairs with
		 * the consumer's release store of done. Not from a deferred function (it may be
		 * this queue's consumer): its queue grows, the passes run it. */
		if (q->end - grace_load_acquire(&q->done) >= DQ_CAP && !in_run)
			dq_backlog(q);
		struct dq_block *nb = (struct dq_block *)malloc(sizeof(*nb));

		if (!nb) {
			/* Out of memory: everything queued before, then this one (from a deferred
			 * function, which may be this queue's consumer: a grace period, then it). */
			if (!in_run)
				defer_wait(dom, q);
			else
				dom_synchronize(dom);
			fct(p);
			return;
		}
		nb->next = NULL;
		nb->n = 0;
		nb->base = q->end;
		/* Release (barrier C): nb's fields before its link; pairs with the consumers'
		 * acquire loads of next. */
		grace_store_release(&b->next, nb);
		q->fill = b = nb;
		n = 0;
	}
	b->e[n].fct = fct;
	b->e[n].p = p;
	/* Release (barrier A): the entry, and the caller's unpublication of p before the call,
	 * before the count; pairs with the acquire in dq_end(). */
	grace_store_release(&b->n, n + 1);
	q->end++;
	owner_fence(); /* barrier B: the count above, then armed below */
	/* Exchange against the pass's re-arm (point 3); dq_arm() takes q->lock, which orders the
	 * post against the pass. */
	if (grace_load_relaxed(&q->armed) == 0 &&
	    grace_xchg(&q->armed, 1u, __ATOMIC_ACQ_REL) == 0) {
		dq_arm(q);
		/* A fork child's stranded queues (point 8): at an arm, not at every call. Only a
		 * try (point 7): this may be a deferred function on a grace worker. Relaxed: see
		 * dq_adopt_stranded(). */
		if (GRACE_UNLIKELY(grace_load_relaxed(&dq_stranded)) && all_lock_try()) {
			dq_adopt_stranded();
			pthread_mutex_unlock(&all_lock);
		}
	}
}

/* Inside a read-side section of the flavor (QSBR: inside rcu_read_lock(), known when the caller
 * was compiled with GRACE_DEBUG)? */
static bool in_section(int flavor)
{
	if (grace_urcu__is_qsbr(flavor))
		return grace_urcu__qsbr_nest != 0;
	return grace_rcu_read_ongoing();
}

void grace_urcu_defer_rcu(int flavor, void (*fct)(void *p), void *p)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS || !fct)
		grace_urcu__misuse("defer_rcu", "%s", !fct ? "NULL function" : "unknown flavor");
#ifdef GRACE_DEBUG
	/* liburcu's contract, which liburcu itself does not check. */
	if (!defer_registered[flavor])
		grace_urcu__misuse("defer_rcu", "thread not registered with "
						"rcu_defer_register_thread()");
	if (in_section(flavor))
		grace_urcu__misuse("defer_rcu",
				   "called inside rcu_read_lock(): defer_rcu() may wait "
				   "for a grace period");
#endif
	dq_append(dom_of(flavor), fct, p);
}

int grace_urcu_defer_register_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return -EINVAL;
	if (!my_q[dom_of(flavor)] && !dq_create(dom_of(flavor)))
		return -ENOMEM;
	defer_registered[flavor]++;
	return 0;
}

static void barrier_checks(const char *call, int flavor)
{
	if (in_section(flavor))
		grace_urcu__misuse(call, "called inside rcu_read_lock(): it waits for "
					 "a grace period (deadlock)");
	if (in_run)
		grace_urcu__misuse(call, "called from a deferred function: it would wait for "
					 "itself (deadlock)");
}

void grace_urcu_defer_unregister_thread(int flavor)
{
	int dom;
	unsigned int left = 0;

	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	if (defer_registered[flavor] == 0)
		grace_urcu__misuse("rcu_defer_unregister_thread",
				   "thread not registered with rcu_defer_register_thread()");
	defer_registered[flavor]--;
	dom = dom_of(flavor);
	for (int f = 0; f < GRACE_URCU_NR_FLAVORS; f++)
		if (dom_of(f) == dom)
			left += defer_registered[f];
	struct dq *q = my_q[dom];
	if (left || !q)
		return;
	barrier_checks("rcu_defer_unregister_thread", flavor);
	/* liburcu runs the thread's deferrals here; so do we, then the queue goes. */
	defer_wait(dom, q);
	my_q[dom] = NULL;
	if (dq_keys_ok)
		pthread_setspecific(dq_key[dom], NULL);
	dq_orphan(q);
}

void grace_urcu_defer_barrier(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	barrier_checks("rcu_defer_barrier", flavor);
	defer_wait(dom_of(flavor), NULL);
}

void grace_urcu_defer_barrier_thread(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		return;
	barrier_checks("rcu_defer_barrier_thread", flavor);
	if (my_q[dom_of(flavor)])
		defer_wait(dom_of(flavor), my_q[dom_of(flavor)]);
}
