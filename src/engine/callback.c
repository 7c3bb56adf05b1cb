/* SPDX-License-Identifier: MIT */
/*
 * The callback engine (see callback.h for the shape): the call path, the workers, barriers and
 * domains. The structures are in internal.h, a queue's segmented list in segcb.[ch], fork,
 * exit and the workers' pause in lifecycle.c.
 *
 * Queue protocol and its ordering:
 *  - call_*: head->func = func; push head on the list of the CPU it runs on with
 *    grace__rseq_list_push() (an rseq critical section whose commit is a release store: no
 *    atomic read-modify-write; a release CAS for threads without rseq), count it in the CPU's
 *    `pushed` word the same way (relaxed: only the memory bound reads it), then load the
 *    worker's `sleeping` word and wake it if it sleeps idle.
 *  - worker: detach the list (an rseq pop on its own CPU, or grace__rseq_list_take() from
 *    elsewhere) with acquire semantics (contract rule 5 in internal/rseq.h: the callback's
 *    fields and everything the caller did before call_* are visible), then take the cookie
 *    with grace__gp_snap(). The caller's
 *    removal happens before the snap, so the grace period named by the cookie covers every
 *    reader that could hold the removed object (core/gp.c argument (1), with happens-before in
 *    place of program order).
 *  - A harvest puts its chain in push order per thread (grace__rseq_chain_fifo(): one pass
 *    over the nodes, whose lines the invocation reads next). Chains wait in segments ordered
 *    by cookie (segcb.h: later chains never get an earlier cookie, snaps are monotonic), and a
 *    segment's chains in harvest order, so a queue's callbacks run in the order they were
 *    pushed, per thread, from one harvest to the next (docs/api.md: FIFO per CPU queue;
 *    tests/contract/test_order.c). A segment is invoked once
 *    grace__gp_done(cookie) (acquire, pairs with seq_end's release): the readers' sections
 *    happen before the callback.
 *  - rcu_barrier: allocate one marker per queue (a struct barrier owns them: a marker belongs
 *    to one barrier and is queued exactly once, so a barrier that gave up, or a parent's
 *    barrier inherited by a fork child, can never be counted by another), push each started
 *    queue's marker on the queue's request stack (release CAS), and wake its worker; the worker
 *    takes the whole stack by exchange (acquire), harvests again and appends the markers (a
 *    chain of their own) behind everything harvested, and starts the grace periods up to the
 *    markers' cookie at once, without the policy's pacing (worker_flush(); call_*_hurry()
 *    does the same for its queue but keeps the least gap after a grace period that just
 *    ended). Every callback whose call_* returned
 *    before the barrier began was pushed before the request was seen, so its chain is ahead of
 *    the marker; the barrier returns when its own markers have all run. Barriers never wait
 *    for one another (each has its own markers), so the exit drain's timed barrier cannot be
 *    held up by a barrier stuck behind a reader. The last of the barrier's caller and its
 *    markers to let go of it frees it (refs, under the domain's bar_lock, which fork takes).
 *  - A worker invokes a batch from its own struct worker (the chains, a cursor, the count
 *    invoked so far), never from its stack, so that fork() finds it (lifecycle.c).
 *  - Sleep/wake: the worker stores sleeping, executes membarrier (fence in the fallback), then
 *    re-checks its lists before sleeping on the futex; a pusher loads sleeping after its push
 *    (fence first in the fallback). Store-buffering argument in worker_sleep().
 *  - Memory bound: every CHECK_EVERY calls a thread sums the backlog (pushed - invoked over all
 *    CPUs); past soft x CPUs it expedites the grace period and wakes the workers (it never
 *    drives a grace period itself: that has no time bound, and call_* promises one); past
 *    hard x CPUs it waits for progress, at most the call's bound (check_backlog()).
 *    Bound: hard x CPUs + CHECK_EVERY per thread queuing at that moment (+ the callbacks of
 *    threads that queue from inside a read-side section or a callback, which cannot wait),
 *    except while the callbacks make no progress at all (a reader stuck in its section): then
 *    one call waits for its bound, the program is told, and later calls queue without waiting
 *    until a callback runs again.
 *  - Fork and exit: lifecycle.c.
 */
#include "engine/internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "core/annotate.h"
#include "core/debug.h"
#include "core/diag.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/sys.h"
#include "core/wait.h"
#include "engine/defer.h"
#include "engine/free.h"

/* internal.h: which domain this thread invokes, which worker it is, every domain. */
__thread struct grace__cbdom *grace__cb_invoking GRACE_TLS_IE;
__thread struct worker *grace__cb_self_worker GRACE_TLS_IE;
struct grace__lock grace__cb_all_lock = GRACE__LOCK_INIT;
struct grace__cbdom *grace__cb_all_domains;
static __thread uint32_t calls_since_check GRACE_TLS_IE;
#define CHECK_EVERY 32u /* call_* looks at the backlog every CHECK_EVERY calls of a thread */

bool grace__in_callback(void)
{
	return grace__cb_invoking != NULL;
}

bool grace__in_callback_of(const struct grace__cbdom *d)
{
	return d && grace__cb_invoking == d;
}

static unsigned int current_cpu(const struct grace__cbdom *d)
{
	int c = grace__rseq_cpu();
	if (GRACE_UNLIKELY(c < 0))
		c = 0;
	return (unsigned int)c % d->ncpu;
}

static inline uint64_t queue_pushed(const struct cbq *q)
{
	return grace_load_relaxed(&q->pushed) + grace_load_relaxed(&q->pushed_atomic);
}

/* Callbacks queued on the domain and not yet invoked. */
static int64_t domain_backlog(const struct grace__cbdom *d)
{
	uint64_t p = 0, i = 0;
	/* Invoked first: a callback is counted as pushed just after its push, so it may be
	 * invoked (and counted) a moment before it is counted as pushed; read the other way the
	 * difference could be negative by more than the pushes in flight. */
	for (unsigned int c = 0; c < d->ncpu; c++)
		i += grace_load_acquire(&d->q[c].invoked);
	for (unsigned int c = 0; c < d->ncpu; c++)
		p += queue_pushed(&d->q[c]);
	return (int64_t)(p - i);
}

/* ---- worker side ---- */

/* Move what was pushed on q into its segments. q->lock held. */
/* Returns true if it found callbacks. */
static bool harvest(struct grace__cbdom *d, struct cbq *q, uint64_t now)
{
	struct rcu_head *l = NULL;

	/* On the queue's own CPU (the pinned worker): an rseq pop, no atomic, plus the atomically
	 * pushed nodes by exchange (acquire: pairs with their release CAS). Elsewhere: take, which
	 * drains rseq pushes safely with membarrier(..._RSEQ). Both see the nodes' fields
	 * (contract rule 5 of internal/rseq.h). */
	/* Debug builds: tests push callbacks here, while a grace period runs, to check that the
	 * cookie is taken after the chain is detached (GRACE_TEST_PAUSE). */
	GRACE__TEST_PAUSE("harvest");
	if (grace__rseq_list_pop_local(&q->list, q->cpu, &l) == 0) {
		/* No take drains the list now (the queue's lock serializes its consumers), so
		 * ahead holds the pushes of threads without rseq only: in push order per thread
		 * after the rseq part (contract rule 7 of internal/rseq.h). */
		struct rcu_head *a = grace_xchg(&q->list.ahead, (struct rcu_head *)NULL,
						__ATOMIC_ACQUIRE);
		l = grace__rseq_chain_fifo(l, a);
	} else {
		l = grace__rseq_list_take(&q->list); /* in push order per thread too */
	}
	if (!l)
		return false;
	/* The cookie is taken after the harvest: see the argument at the top. */
	grace__segcb_enqueue(&q->cb, l, grace__gp_snap(d->gp), now);
	return true;
}

/* Drop n references to b (under bar_lock); free it on the last. */
void grace__cb_barrier_put(struct grace__cbdom *d, struct barrier *b, uint32_t n)
{
	bool last;

	grace__lock(&d->bar_lock);
	b->refs -= n;
	last = b->refs == 0;
	if (last)
		grace_list_del(&b->link);
	grace__unlock(&d->bar_lock);
	if (last)
		free(b);
}

static void marker_fn(struct rcu_head *h)
{
	struct bmark *m = grace_container_of(h, struct bmark, h);
	struct barrier *b = m->b;

	/* Release: the callbacks invoked before this marker happen before the barrier's return
	 * (pairs with the acquire load of done in grace__cb_barrier_timed()). */
	grace__ann_release(&b->done); /* race detectors: the callbacks ahead of it ran */
	grace_fetch_add(&b->done, 1u, __ATOMIC_RELEASE);
	grace__futex_wake(&b->done, INT_MAX);
	grace__cb_barrier_put(b->d, b, 1); /* the marker's reference: b may be freed now */
}

/* Publish q->invoked = total (the queue's callbacks run so far; only its worker writes it) and
 * wake threads waiting for progress. Release: the callbacks ran before anyone who reads the
 * count with acquire (barrier users via pending counts, the hard-limit waiters, stats). */
static void publish_invoked(struct grace__cbdom *d, struct cbq *q, uint64_t total)
{
	if (total == q->invoked)
		return;
	grace_store_release(&q->invoked, total);
	grace_fetch_add(&d->progress, 1u, __ATOMIC_SEQ_CST);
	if (grace_load_seq_cst(&d->progress_waiters))
		grace__futex_wake(&d->progress, INT_MAX);
}

/* The chains in w->inv[0..n) are ready: they are now w's batch (q->lock held). */
static void batch_take(struct worker *w, struct cbq *q, unsigned int n)
{
	grace__lock_assert_held(&q->lock);
	w->inv_q = q;
	w->inv_ci = 0;
	w->inv_next = w->inv[0];
	w->inv_base = q->invoked;
	w->inv_done = 0;
	/* Relaxed atomic: a barrier of a fork child reads it (worker not started). */
	grace_store_relaxed(&w->inv_n, n);
}

/*
 * Invoke w's batch from its cursor, in order (a fork child's new worker resumes an inherited
 * batch the same way). The count of the callbacks ahead of a barrier marker is published
 * before the marker signals, so a thread that returns from the barrier sees them counted.
 */
static void invoke(struct worker *w)
{
	struct grace__cbdom *d = w->d;
	struct cbq *q = w->inv_q;
	uint64_t n = w->inv_done;
	unsigned int nchains = grace_load_relaxed(&w->inv_n);
	struct rcu_head *l = w->inv_next;

	grace__cb_invoking = d;
	grace__cb_batch_enter();
	for (unsigned int ci = w->inv_ci; ci < nchains;) {
		while (l) {
			struct rcu_head *nx = l->next;
			/* The next callback is cold: start the miss now. */
			if (nx)
				__builtin_prefetch(nx);
			if (GRACE_UNLIKELY(grace_load_relaxed(&grace__cb_engine.attn) != 0))
				grace__cb_worker_pause();
			/* Cursor: l has started (a fork child counts it as run), nx is next. */
			w->inv_next = nx;
			if (l->func == marker_fn) {
				publish_invoked(d, q, w->inv_base + n);
				marker_fn(l);
			} else if (grace__free_is_offset(l->func)) {
				/* free_rcu() on the engine path (engine/free.h): no function, the
				 * head's offset in the object to free(). */
				w->inv_done = ++n;     /* as below: a fork child counts it as run */
				grace__ann_consume(l); /* race detectors: see grace__cbdom_call() */
				grace__free_head(d->f, l);
			} else {
				w->inv_done = ++n;
				grace__ann_consume(l); /* race detectors: see grace__cbdom_call() */
				l->func(l);
			}
			l = nx;
		}
		if (++ci < nchains) {
			l = w->inv[ci];
			w->inv_next = l;
		}
		w->inv_ci = ci;
	}
	publish_invoked(d, q, w->inv_base + n);
	grace_store_relaxed(&w->inv_n, 0u);
	grace__cb_batch_leave();
	grace__cb_invoking = NULL;
}

/* Is there a reason not to begin a sleep of this mode (see the enum of modes)? */
static bool worker_has_work(struct worker *w, uint32_t mode)
{
	struct grace__cbdom *d = w->d;
	const bool only_urgent = mode != IDLE_SLEEP;

	if (grace_load_relaxed(&d->stop) || grace_load_relaxed(&d->urgent))
		return true;
	if (mode == GAP_SLEEP)
		return false;
	/* Memory pressure under LAZY (grace__policy_pressure()): the next pass hurries what
	 * waits. A worker asleep until a push holds nothing that waits. */
	if (mode == TIMED_SLEEP && grace__policy_pressure_gen(&d->pol) != w->pressure_seen)
		return true;
	for (unsigned int i = w->idx; i < d->ncpu; i += d->nworkers) {
		struct cbq *q = &d->q[i];
		/* Both are taken by the worker's next pass (queue_collect()): never a reason that
		 * outlives the pass, so a worker never spins on them. */
		if (grace_load_relaxed(&q->barrier_req) != NULL || grace_load_relaxed(&q->hurry))
			return true;
		if (!only_urgent &&
		    (grace_load_relaxed(&q->list.head) || grace_load_relaxed(&q->list.ahead)))
			return true;
	}
	/* A polled request: a reason for every sleep but the gap, except a timed sleep under
	 * BATCH (the request's own deadline, which grace__policy_decide() chose). LAZY never
	 * chooses a timed sleep for a request (it starts its grace period at once), so a request
	 * that finds the worker in one, a lazy wait or nap, ends it (grace__cbdom_request_gp()). */
	if ((!only_urgent ||
	     (mode == TIMED_SLEEP && grace_load_relaxed(&d->pol.kind) == GRACE_POLICY_LAZY)) &&
	    !grace__gp_done(d->gp, grace_load_relaxed(&d->gp_req)))
		return true;
	return false;
}

static void worker_sleep(struct worker *w, uint32_t mode, int64_t timeout_ns)
{
	/* Store sleeping, barrier, re-check the queues: store-buffering pair with a pusher's
	 * push followed by its load of sleeping. The pusher has no fence (its push is an rseq
	 * store), so this side uses membarrier: every pusher executes a full barrier somewhere
	 * in its instruction stream; before its push, it then sees `mode`; after, its push is
	 * visible to the re-check. In the fence fallback the pusher fences itself. */
	grace_store_relaxed(&w->sleeping, mode);
	/* A timed sleep is never ended by a plain push, only by grace__cb_wake_worker() (urgent, hurry,
	 * barrier, stop, policy change, memory pressure), which stores its reason and then exchanges the futex
	 * word (a full barrier): a local fence here is the other half of that store-buffering
	 * pair, so the re-check below sees the reason or the exchange ends the futex wait. */
	if (mode == IDLE_SLEEP)
		grace__heavy_barrier();
	else
		grace_smp_mb();
	if (!worker_has_work(w, mode))
		grace__futex_wait(&w->sleeping, mode, timeout_ns);
	grace_store_relaxed(&w->sleeping, (uint32_t)AWAKE);
}

void grace__cb_wake_worker(struct worker *w)
{
	if (grace_xchg(&w->sleeping, (uint32_t)AWAKE, __ATOMIC_SEQ_CST) != AWAKE)
		grace__futex_wake(&w->sleeping, 1);
}

/* What a worker's queues wait for after one pass over them. */
struct pass {
	bool waiting;    /* callbacks or a polled request wait for a grace period */
	bool harvested;  /* new callbacks were found */
	bool requested;  /* a polled request waits */
	uint64_t need;   /* the earliest cookie they wait for */
	uint64_t oldest; /* when the oldest of them was harvested (requested) */
};

static void pass_note(struct pass *ps, uint64_t cookie, uint64_t t_ns)
{
	if (!ps->waiting || cookie_before(cookie, ps->need))
		ps->need = cookie;
	if (t_ns < ps->oldest)
		ps->oldest = t_ns;
	ps->waiting = true;
}

/* Start the grace periods up to cookie c without pacing (worker-private state). */
static void worker_hurry(struct worker *w, uint64_t c)
{
	if (!w->hurrying || cookie_before(w->hurry_gp, c))
		w->hurry_gp = c;
	w->hurrying = true;
}

/* Start the grace periods up to cookie c at once, for a barrier (worker-private state). A
 * barrier is not spaced like a flood of hurried callbacks: a program that calls rcu_barrier()
 * back to back would wait the least gap in each (60 us against 7 us per barrier, measured). */
static void worker_flush(struct worker *w, uint64_t c)
{
	if (!w->flushing || cookie_before(w->flush_gp, c))
		w->flush_gp = c;
	w->flushing = true;
}

/* Harvest q (stamping what it finds with `now`), answer a barrier request, take out into
 * ready[] the chains of the segments whose grace period has completed, and note what the rest
 * waits for; `pressed`: memory pressure (LAZY), hurry everything that waits, as a
 * call_*_hurry() on q would. Returns how many chains are ready. q->lock held. */
static unsigned int queue_collect(struct grace__cbdom *d, struct cbq *q, uint64_t now,
				  struct rcu_head **ready, struct pass *ps, bool pressed)
{
	unsigned int nready;

	grace__lock_assert_held(&q->lock);
	/* Acquire, before the harvest: pairs with the seq_cst exchange of a hurrying caller,
	 * which follows its push, so the hurried callback is harvested now (or was before). */
	bool hurried = grace_load_relaxed(&q->hurry) &&
		       grace_xchg(&q->hurry, 0u, __ATOMIC_ACQUIRE) != 0;
	if (harvest(d, q, now))
		ps->harvested = true;
	/* The hurried callback waits in one of the segments, all of them at most the last one's
	 * cookie (or it has already been taken to be invoked, and waits for nothing). */
	if ((hurried || pressed) && !grace__segcb_empty(&q->cb))
		worker_hurry(q->w, grace__segcb_last_cookie(&q->cb));
	GRACE__TEST_PAUSE("collect"); /* a call and a barrier may land here: see below */
	if (grace_load_relaxed(&q->barrier_req)) {
		/* Acquire: the markers' fields and links (pairs with the release CAS in
		 * barrier_push()). Taken by exchange: each marker is queued once, the stack as one
		 * chain behind everything harvested (markers run in any order among themselves). */
		struct bmark *m = grace_xchg(&q->barrier_req, (struct bmark *)NULL,
					     __ATOMIC_ACQUIRE);
		if (m) {
			/* Harvest again: a callback pushed after the harvest above by a thread
			 * that then pushed this barrier must be ahead of the marker (the acquire
			 * exchange made that push visible). Test: fault_regress_engine
			 * barrier_after_harvest, which widens the window with the pause above. */
			harvest(d, q, now);
			uint64_t c = grace__gp_snap(d->gp);
			grace__segcb_enqueue(&q->cb, &m->h, c, now);
			/* A barrier (rcu_barrier(), the exit drain) flushes what is queued: every
			 * policy's pacing is skipped for the grace periods it waits for, as Linux's
			 * rcu_barrier() flushes lazy callbacks (a BATCH period may be 10 s). */
			worker_flush(q->w, c);
		}
	}
	nready = grace__segcb_take_ready(&q->cb, d->gp, ready);
	if (!grace__segcb_empty(&q->cb))
		pass_note(ps, grace__segcb_first_cookie(&q->cb), grace__segcb_first_time(&q->cb));
	return nready;
}

/* One pass over the worker's queues: harvest each, invoke what is ready (outside the queue's
 * lock), and gather what the rest waits for, polled requests included. */
static void worker_pass(struct worker *w, uint64_t now, struct pass *ps)
{
	struct grace__cbdom *d = w->d;
	/* The policy's stamp for what this pass finds (LAZY: since the worker last looked, if
	 * no push could have woken it since), then this pass is the last look. */
	uint64_t stamp = grace__policy_stamp(&d->pol, now, w->floor_ns);
	w->floor_ns = now;
	/* Relaxed: a generation bumped after this load ends the next timed sleep instead
	 * (worker_has_work()); what it hurries is what the harvests below find. */
	uint32_t gen = grace__policy_pressure_gen(&d->pol);
	bool pressed = gen != w->pressure_seen;
	w->pressure_seen = gen;

	for (unsigned int i = w->idx; i < d->ncpu; i += d->nworkers) {
		struct cbq *q = &d->q[i];

		grace__lock(&q->lock);
		unsigned int nready = queue_collect(d, q, stamp, w->inv, ps, pressed);
		if (nready)
			batch_take(w, q, nready);
		grace__unlock(&q->lock);
		if (nready)
			invoke(w);
	}
	uint64_t req = grace_load_relaxed(&d->gp_req);
	/* The request waits since it was made (grace__cbdom_request_gp()), not since now: the
	 * BATCH policy's deadline must not move forward on every pass. */
	if (!grace__gp_done(d->gp, req)) {
		pass_note(ps, req, grace_load_relaxed(&d->gp_req_ns));
		ps->requested = true;
	}
}

/* How long a worker leaves grace periods to stepping threads before it looks again: what it adds
 * to a callback's latency while threads step, and the bound on its wake-ups (250 a second). */
#define STEP_DEFER_NS 4000000ll
/* How long patient callbacks wait before a worker drives or awaits their grace period, when
 * nothing else waits (grace__engine_call_patient(): the free monitors, requeued at each run).
 * The worker sleeps as when idle, so a push of any other callback wakes it at once. So while
 * threads retire and nothing else uses the engine, a worker looks 10 times a second, not 250
 * (the monitors' grace periods, stepped, end within STEP_DEFER_NS), and a thread that stops
 * calling has its blocks taken within about three looks (MON_IDLE_RUNS, free.c). */
#define STEP_PATIENT_NS 100000000ll

/* STEP_PATIENT_NS, or (debug builds) the length a test sets (GRACE_TEST_PAUSE=patience:US): a
 * minute, say, so that a callback pushed meanwhile runs only if the push ends the wait. */
static int64_t patient_ns(void)
{
#ifdef GRACE_DEBUG
	long us = grace__test_pause_us("patience");
	if (us)
		return (int64_t)us * 1000;
#endif
	return STEP_PATIENT_NS;
}

/* Is everything the domain holds patient? Relaxed and acquire counts, a hint (see
 * grace__cbdom.patient): read low, the answer is no, and the worker sleeps STEP_DEFER_NS as
 * before. A callback pushed and not yet counted as pending is on a queue that the idle sleep's
 * own look, after its barrier, finds (worker_has_work()). */
static bool only_patient(const struct grace__cbdom *d)
{
	int64_t p = grace_load_relaxed(&d->patient);

	return p > 0 && domain_backlog(d) <= p;
}

/* Something waits for a grace period: ask the policy, then drive it now or sleep. */
static void worker_advance(struct worker *w, const struct pass *ps, uint64_t now)
{
	struct grace__cbdom *d = w->d;
	struct grace__policy_view v;
	struct grace__policy_decision dec;

	/* The hurry is over once its cookie has completed, whoever drove the grace period: it
	 * never outlives what it was for (nor keeps the worker awake, see worker_has_work()).
	 * Cleared before the look at ps->need, never after: both cookies are at least the need
	 * (the hurried or flushed chains are behind what the pass found waiting), so a grace
	 * period that completes between the two looks leaves the flag set (no pacing: the wait
	 * below returns at once) or is seen by the look at the need. In the other order, a
	 * barrier's flush was cleared by another worker's grace period completing just after
	 * the need was found pending, and this worker slept a whole BATCH period with its
	 * callbacks and the barrier's marker ready (test fault_regress_engine:
	 * barrier_hurries_batch, about 1 run in 50 under qemu-user with two copies running). */
	if (w->hurrying && grace__gp_done(d->gp, w->hurry_gp))
		w->hurrying = false;
	if (w->flushing && grace__gp_done(d->gp, w->flush_gp))
		w->flushing = false;
	if (grace__gp_done(d->gp, ps->need))
		return;
	/* Debug builds: a test completes a grace period here (fault_regress_engine
	 * flush_outlives_need). */
	GRACE__TEST_PAUSE("advance");
	v.now = now;
	v.oldest_ns = ps->oldest;
	v.last_gp_end = w->last_gp_end;
	v.urgent = grace_load_relaxed(&d->urgent) != 0;
	v.hurry = w->hurrying;
	v.flush = w->flushing;
	v.stopping = grace_load_relaxed(&d->stop) != 0;
	/* Only patient callbacks wait (free.c's monitors) and no polled request: they wait
	 * STEP_PATIENT_NS from when this worker first found them so, in an idle sleep that a push
	 * of anything else ends (its barrier is one membarrier a sleep, worker_sleep()). Not with
	 * a request: the idle sleep would return at once (worker_has_work()). */
	if (!v.urgent && !v.hurry && !v.flush && !v.stopping && !ps->requested && only_patient(d)) {
		if (!w->patient_since)
			w->patient_since = now;
		int64_t patience = patient_ns();
		if (now - w->patient_since < (uint64_t)patience) {
			worker_sleep(w, IDLE_SLEEP, patience - (int64_t)(now - w->patient_since));
			w->floor_ns = 0; /* as after every idle sleep */
			return;
		}
	} else {
		w->patient_since = 0;
	}
	/* Threads that retire step grace periods themselves (core/gp.c, engine/free.c): while they
	 * end some, leave the grace periods to them and look again later, so that no worker's
	 * wake-up and grace period takes the CPU from the threads that make the garbage. Only what
	 * cannot wait (urgent, hurried, a barrier, stopping) drives at once; once the steps stop,
	 * the next look drives as before. */
	/* Relaxed: a hint of when to look again; what is ready the worker still decides by
	 * grace__gp_done() (acquire). */
	uint64_t steps = grace_load_relaxed(&d->gp->steps);
	if (steps != w->steps_seen) {
		w->steps_seen = steps;
		if (!v.urgent && !v.hurry && !v.flush && !v.stopping) {
			worker_sleep(w, TIMED_SLEEP, STEP_DEFER_NS);
			return;
		}
	}
	v.requested = ps->requested;
	dec = grace__policy_decide(&d->pol, &v);
	if (dec.sleep_ns > 0) {
		/* A hurry's sleep is only the gap between back-to-back grace periods. */
		worker_sleep(w, dec.gap ? GAP_SLEEP : TIMED_SLEEP, dec.sleep_ns);
		return;
	}
	if (v.urgent)
		grace_store_relaxed(&d->urgent, 0u);
	/* Sample what one grace period costs this worker, once in GRACE__POLICY_SAMPLE_EVERY
	 * (reading the thread's CPU clock is a system call): the adaptive pacing follows it. */
	bool sample = ++w->gps % GRACE__POLICY_SAMPLE_EVERY == 0;
	uint64_t c0 = sample ? grace__thread_cpu_ns() : 0;
	grace__gp_wait(d->gp, ps->need, dec.gpflags);
	w->last_gp_end = grace__now_ns();
	grace__policy_gp_done(&d->pol, w->last_gp_end,
			      sample ? grace__thread_cpu_ns() - c0 + 1 : 0);
}

static void worker_setup(struct worker *w)
{
	struct grace__cbdom *d = w->d;
	char nm[16];

	if (d->nworkers == d->ncpu) {
		/* Invoke callbacks on the CPU that queued them, where the affinity mask allows. */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->idx, &set);
		(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	(void)grace__rseq_thread_ready(); /* register rseq now if glibc did not: local pops */
	snprintf(nm, sizeof(nm), WORKER_NAME_PREFIX "%.4s/%u", d->f->name, w->idx);
	/* Timed sleeps are tens of microseconds: do not let the default 50 us slack double them. */
	prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	pthread_setname_np(pthread_self(), nm);
}

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct grace__cbdom *d = w->d;

	grace__cb_self_worker = w;
	worker_setup(w);
	/* A fork child's worker first finishes the batch its parent was invoking. */
	if (grace_load_relaxed(&w->inv_n))
		invoke(w);
	for (;;) {
		uint64_t now = grace__now_ns();
		struct pass ps = { false, false, false, 0, UINT64_MAX };

		worker_pass(w, now, &ps);
		if (ps.harvested) {
			/* Running mean (weight 1/8) of the time between passes that find callbacks. */
			uint64_t gap = w->last_new ? now - w->last_new : 0;
			w->arrival_ns = w->arrival_ns ? (7 * w->arrival_ns + gap) / 8 : gap;
			w->last_new = now;
		}
		if (ps.waiting) {
			worker_advance(w, &ps, now);
			continue;
		}
		w->patient_since = 0; /* nothing waits: the next patient wait is a new one */
		if (grace_load_relaxed(&d->stop))
			break;
		/* Nothing waits. A busy domain naps (a pusher does not wake a napping worker),
		 * else sleep until a push wakes the worker. */
		int64_t nap = grace__policy_linger_ns(&d->pol, now, w->arrival_ns, w->last_new);
		if (nap > 0) {
			worker_sleep(w, TIMED_SLEEP, nap);
		} else if (worker_has_work(w, IDLE_SLEEP)) {
			/* A callback this pass invoked queued another here (the free monitor,
			 * engine/free.c, requeues itself at each run): the next pass takes it.
			 * The sleep would find it only after its barrier, a membarrier that
			 * interrupts every CPU running the process, and return at once: about 250
			 * a second per worker while threads step grace periods. A look without
			 * the barrier suffices here: it only skips a sleep (what it misses, the
			 * sleep's own look after the barrier finds). */
			w->floor_ns = 0; /* as after the sleep this replaces */
		} else {
			worker_sleep(w, IDLE_SLEEP, -1);
			w->floor_ns = 0; /* a push ends this sleep: what it finds is new */
		}
	}
	return NULL;
}

/* ---- domain management ---- */

static bool queue_has_work(struct cbq *q);

static void start_worker(struct grace__cbdom *d, struct worker *w)
{
	bool adopt = false;

	grace__ann_acquire(d); /* race detectors: d's set-up (grace__engine_create) */
	grace__lock(&d->start_lock);
	/* Relaxed atomics: grace__cbdom_poll_missed() reads adopt without the lock. */
	if (grace_load_relaxed(&d->adopt)) {
		grace_store_relaxed(&d->adopt, 0u); /* under start_lock: one thread adopts */
		adopt = !d->stop;
	}
	if (!w->started && !d->stop) {
		sigset_t all, old;
		sigfillset(&all);
		/* Workers never take the process's signals. */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int e = pthread_create(&w->th, NULL, worker_main, w);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e != 0)
			grace__fatal("call_rcu", "cannot start a callback worker thread: %s",
				     strerror(e));
		/* Release: a barrier that sees started sees the thread (pairs with the acquire in
		 * grace__cbdom_barrier and the pushers' check). */
		grace_store_release(&w->started, 1u);
	}
	grace__unlock(&d->start_lock);
	grace__cb_exit_register();
	/*
	 * A fork child's first start: a call, start_poll or barrier starts the worker of the CPU
	 * it runs on, but the callbacks (and the half-invoked batches) the child inherited may sit
	 * on other CPUs' queues, which nothing would ever start a worker for. Start those workers
	 * too, once. (Not from the fork handler: threads are started at the child's first call,
	 * after every fork handler, the application's included, has run.)
	 */
	if (adopt)
		for (unsigned int i = 0; i < d->ncpu; i++)
			if (!grace_load_acquire(&d->q[i].w->started) && queue_has_work(&d->q[i]))
				start_worker(d, d->q[i].w);
}

uint64_t grace__cbdom_pending(struct grace__cbdom *d)
{
	int64_t b = domain_backlog(d);

	return b > 0 ? (uint64_t)b : 0;
}

/* ---- call side ---- */

/* Callbacks of the domain invoked so far (acquire: pairs with publish_invoked()). */
static uint64_t domain_invoked(const struct grace__cbdom *d)
{
	uint64_t i = 0;
	for (unsigned int c = 0; c < d->ncpu; c++)
		i += grace_load_acquire(&d->q[c].invoked);
	return i;
}

/* How the domain is named in messages: the flavor, or the srcu_struct. */
const char *grace__cb_domain_name(const struct grace__cbdom *d, char *buf, size_t n)
{
	if (d->f->owner)
		snprintf(buf, n, "%s_struct %p", d->f->name, d->f->owner);
	else
		snprintf(buf, n, "%s", d->f->name);
	return buf;
}

/*
 * Past the hard limit, stuck: the last wait of a call_* timed out, and no callback of the
 * domain has run since (a reader holds the grace period, or a callback blocks, perhaps on a
 * lock the caller holds). Then calls do not wait: each would wait its whole bound for nothing.
 * The episode ends when a callback runs again.
 */
static bool hard_stuck(struct grace__cbdom *d)
{
	bool stuck;

	grace__lock(&d->stuck_lock);
	if (d->stuck && domain_invoked(d) != d->stuck_invoked)
		d->stuck = false;
	stuck = d->stuck;
	grace__unlock(&d->stuck_lock);
	return stuck;
}

/* A wait at the hard limit timed out after waited_ns: start an episode and tell the program
 * (once per episode, not per call). */
static GRACE_COLD void hard_stuck_begin(struct grace__cbdom *d, const char *call,
					uint64_t waited_ns)
{
	bool first;

	grace__lock(&d->stuck_lock);
	first = !d->stuck;
	if (first) {
		d->stuck = true;
		d->stuck_invoked = domain_invoked(d);
		d->stuck_since = grace__now_ns() - waited_ns;
	}
	grace__unlock(&d->stuck_lock);
	if (first) {
		char nm[64];

		grace__warn(
			"%s: %lld callbacks pending on %s, past the hard limit (%llu per CPU), "
			"and none has run for %.3f s: a reader holds the grace period (see the "
			"stall warnings), or a callback is blocked, perhaps on a lock this thread "
			"holds. Until a callback runs again, %s queues without waiting and "
			"memory grows",
			call, (long long)domain_backlog(d),
			grace__cb_domain_name(d, nm, sizeof(nm)),
			(unsigned long long)grace_load_relaxed(&d->hard), (double)waited_ns / 1e9,
			call);
	}
}

/* A per-CPU limit times the CPUs, saturated at INT64_MAX: a limit the backlog can never
 * reach (SIZE_MAX, "no limit") must not wrap to a negative one that every backlog passes. */
static int64_t limit_x_cpus(uint64_t per_cpu, unsigned int ncpu)
{
	if (per_cpu > (uint64_t)INT64_MAX / ncpu)
		return INT64_MAX;
	return (int64_t)(per_cpu * ncpu);
}

/*
 * LAZY: memory pressure ends the workers' lazy waits (grace__policy_pressure(): pending
 * callbacks past a quarter of the soft limit, or the kernel's memory stall time). A worker in a
 * timed sleep is woken to hurry what it holds; one awake sees the new generation at its next
 * pass; one asleep until a push holds nothing that waits.
 */
static void wake_pressed(struct grace__cbdom *d)
{
	/* Full barrier: the generation before the loads of the sleeping words. Store-buffering
	 * pair with a worker's store of sleeping, fence and re-check of the generation
	 * (worker_sleep(), worker_has_work()): it sees the generation, or this sees it asleep. */
	grace_smp_mb();
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (grace_load_acquire(&d->w[i].started) &&
		    grace_load_relaxed(&d->w[i].sleeping) == TIMED_SLEEP)
			grace__cb_wake_worker(&d->w[i]);
}

static GRACE_COLD void lazy_pressure(struct grace__cbdom *d, int64_t backlog, int64_t soft)
{
	if (grace__policy_pressure(&d->pol, grace__now_ns(), backlog, soft))
		wake_pressed(d);
}

void grace__cbdom_press(struct grace__cbdom *d)
{
	grace__policy_press(&d->pol);
	wake_pressed(d);
}

/*
 * Every CHECK_EVERY calls of a thread: past the soft limit, expedite the grace period and make
 * sure the worker is awake; past the hard limit, wait until the workers have brought the
 * backlog back under it, for at most the call's bound.
 *
 * The caller never drives a grace period itself: a grace period has no time bound (a reader
 * inside its section may wait for a lock the caller holds), and call_* promises one: at most
 * the stall timeout (at least 1 s), and HARD_WAIT_SHORT_NS for flavors whose callers may be
 * inside a section of the same domain without the library knowing (srcu; see call_may_wait).
 */
static GRACE_COLD void check_backlog(struct grace__cbdom *d, struct worker *w)
{
	const char *call = d->f->calls[GRACE__CALL_CALL];
	int64_t soft = limit_x_cpus(grace_load_relaxed(&d->soft), d->ncpu);
	int64_t hard = limit_x_cpus(grace_load_relaxed(&d->hard), d->ncpu);
	int64_t b = domain_backlog(d);

	if (GRACE_UNLIKELY(grace_load_relaxed(&d->pol.kind) == GRACE_POLICY_LAZY))
		lazy_pressure(d, b, soft);
	if (b <= soft)
		return;
	grace_store_relaxed(&d->urgent, 1u);
	grace__cb_wake_worker(w);
	if (b <= hard)
		return;
	if (grace__cb_invoking || d->f->hooks->is_reader(d->f))
		return; /* waiting here could deadlock: the overshoot is bounded per thread */
	if (hard_stuck(d))
		return;
	grace_fetch_add(&d->waits, 1u, __ATOMIC_RELAXED);
	int tok = d->f->hooks->enter_wait(d->f, call);
	uint64_t t0 = grace__now_ns();
	uint64_t cap = HARD_WAIT_SHORT_NS;
	if (d->f->call_may_wait) {
		cap = grace__stall_timeout_ns();
		if (cap < HARD_WAIT_NS)
			cap = HARD_WAIT_NS;
	}
	for (;;) {
		uint64_t waited = grace__now_ns() - t0;
		if (waited > cap) {
			hard_stuck_begin(d, call, waited);
			break;
		}
		uint32_t p = grace_load_acquire(&d->progress);
		grace_fetch_add(&d->progress_waiters, 1u, __ATOMIC_SEQ_CST);
		/* seq_cst: the waiter count before the re-check (pairs with the worker's seq_cst
		 * progress increment and load of progress_waiters). */
		bool over = domain_backlog(d) > hard;
		if (over) {
			int64_t left = (int64_t)(cap - waited);
			grace__futex_wait(&d->progress, p, left < 50000000 ? left : 50000000);
		}
		grace_fetch_sub(&d->progress_waiters, 1u, __ATOMIC_SEQ_CST);
		if (!over)
			break;
		grace_store_relaxed(&d->urgent, 1u);
		for (unsigned int i = 0; i < d->nworkers; i++)
			if (grace_load_acquire(&d->w[i].started))
				grace__cb_wake_worker(&d->w[i]);
	}
	d->f->hooks->leave_wait(d->f, tok);
}

/* call_*: queue head and wake its worker. Returns the queue it was pushed on. */
static inline struct cbq *cbdom_push(struct grace__cbdom *d, struct rcu_head *head,
				     rcu_callback_t func)
{
	if (GRACE_UNLIKELY(!head || !func))
		grace__misuse_fatal(d->f->calls[GRACE__CALL_CALL], "NULL %s",
				    head ? "callback function" : "rcu_head");
	head->func = func;
	grace__ann_queue(head); /* race detectors: call_*() happens before the callback */
	/* Push on the list of the CPU we run on: an rseq critical section whose commit is a
	 * release store (no atomic, no fence); a CAS for threads without rseq. */
	int cpu = grace__rseq_list_push(&d->q[0].list, sizeof(struct cbq), d->ncpu, head);
	struct cbq *q = &d->q[cpu];
	struct worker *w = q->w;
	if (grace__rseq_percpu_add(&d->q[0].pushed, sizeof(struct cbq), d->ncpu, 1) < 0)
		grace_fetch_add(&q->pushed_atomic, 1u, __ATOMIC_RELAXED);

	if (GRACE_UNLIKELY(!grace_load_acquire(&w->started))) {
		if (grace_load_relaxed(&d->stop)) {
			/* After the exit-time shutdown there are no workers: the callback stays
			 * queued; the process is exiting. */
			return q;
		}
		start_worker(d, w);
	}
	/* Fallback only: fence between the push and the load of sleeping (the worker side uses
	 * a fence too then, see worker_sleep()). */
	if (!grace__use_membarrier)
		grace_smp_mb();
	if (grace_load_relaxed(&w->sleeping) == IDLE_SLEEP)
		grace__cb_wake_worker(w);
	if (GRACE_UNLIKELY(++calls_since_check >= CHECK_EVERY)) {
		calls_since_check = 0;
		check_backlog(d, w);
	}
	return q;
}

void grace__cbdom_call(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func)
{
	(void)cbdom_push(d, head, func);
}

void grace__cbdom_call_hurry(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func)
{
	/* The queue the callback was pushed on, not the CPU this thread runs on now: the thread
	 * may have migrated since the push. */
	struct cbq *q = cbdom_push(d, head, func);
	struct worker *w = q->w;
	/*
	 * seq_cst exchange, after the push: its release half orders the push before the flag (a
	 * worker whose acquire exchange in queue_collect() takes the flag harvests the callback);
	 * with grace_smp_mb_after_rmw() it is a full barrier before the load of sleeping, the
	 * store-buffering pair of the worker's store of sleeping, fence and re-check of the flag
	 * (worker_sleep()): either the worker sees the flag or it is woken here. The worker may
	 * be napping under the pacing (a timed sleep a push does not end). A worker in GAP_SLEEP
	 * is not woken: it is hurrying already and its sleep ends within the least gap between
	 * grace periods, after which its next pass takes the flag.
	 */
	grace_xchg(&q->hurry, 1u, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
	uint32_t sl = grace_load_relaxed(&w->sleeping);
	if (sl != AWAKE && sl != GAP_SLEEP)
		grace__cb_wake_worker(w);
}

void grace__cbdom_request_gp(struct grace__cbdom *d, uint64_t cookie)
{
	uint64_t cur = grace_load_relaxed(&d->gp_req);
	/* No request pending: this one is the oldest, its time is the policy's (worker_pass()).
	 * Racing requesters store times a moment apart; a worker that reads the new cookie with
	 * an older time only starts the grace period sooner. */
	if (cookie_before(cur, cookie) && grace__gp_done(d->gp, cur))
		grace_store_relaxed(&d->gp_req_ns, grace__now_ns());
	while (cookie_before(cur, cookie) &&
	       !grace_cmpxchg(&d->gp_req, &cur, cookie, __ATOMIC_SEQ_CST)) {
	}
	struct worker *w = d->q[current_cpu(d)].w;
	if (!grace_load_acquire(&w->started))
		start_worker(d, w);
	/* Seq_cst: the compare-and-exchange of gp_req above (a full barrier) before this load,
	 * store-buffering pair with the worker's store of sleeping, its fence and its re-check
	 * of gp_req (worker_sleep(), worker_has_work()). Under LAZY a request also ends a timed
	 * sleep: a lazy wait or nap would otherwise hold it up to a period. */
	uint32_t sl = grace_load_seq_cst(&w->sleeping);
	if (sl == IDLE_SLEEP ||
	    (sl == TIMED_SLEEP && grace_load_relaxed(&d->pol.kind) == GRACE_POLICY_LAZY))
		grace__cb_wake_worker(w);
}

void grace__cbdom_poll_missed(struct grace__cbdom *d, uint64_t cookie)
{
	/*
	 * start_poll promises that the grace period will run. In a fork child no worker runs
	 * until the first call_*, start_poll or barrier (grace__cb_atfork_child()): a child that
	 * only polls a cookie its parent requested would wait for ever. adopt is set from the
	 * fork until that first start, so this costs one relaxed load elsewhere; then start the
	 * worker of this CPU (any worker serves the domain's requests, worker_pass()), which also
	 * adopts the queues holding inherited work. A cookie nobody requested (get_state) starts
	 * nothing, as in the parent.
	 */
	if (GRACE_LIKELY(!grace_load_relaxed(&d->adopt)))
		return;
	if (cookie_before(grace_load_relaxed(&d->gp_req), cookie) || grace__gp_done(d->gp, cookie))
		return;
	start_worker(d, d->q[current_cpu(d)].w);
}

/* A new barrier with one marker per queue, linked on the domain, referenced by its caller
 * and (for now) by every marker. */
static struct barrier *barrier_new(struct grace__cbdom *d, const char *call)
{
	struct barrier *b = (struct barrier *)calloc(1,
						     sizeof(*b) + d->ncpu * sizeof(struct bmark));

	if (!b)
		grace__fatal(call, "out of memory for the barrier's markers");
	/* Valgrind: the markers reach the workers through the queues' atomics, which the tools
	 * cannot see (the hand-off is barrier_push()'s release CAS, the worker's acquire take). */
	grace__ann_ignore(b, sizeof(*b) + d->ncpu * sizeof(struct bmark));
	b->d = d;
	b->refs = BARRIER_CALLER + d->ncpu;
	for (unsigned int i = 0; i < d->ncpu; i++) {
		b->m[i].h.func = marker_fn;
		b->m[i].b = b;
	}
	grace__lock(&d->bar_lock);
	grace_list_add(&b->link, &d->bars);
	grace__unlock(&d->bar_lock);
	return b;
}

/* Does queue q hold work that no running worker will do (a fork child, before its worker
 * restarts)? Only for a queue whose worker is not started. */
static bool queue_has_work(struct cbq *q)
{
	struct worker *w = q->w;
	/* The segments under the queue's lock: a worker started a moment ago may be harvesting. */
	grace__lock(&q->lock);
	bool waiting = !grace__segcb_empty(&q->cb);
	grace__unlock(&q->lock);
	return waiting || queue_pushed(q) != grace_load_relaxed(&q->invoked) ||
	       grace_load_relaxed(&q->list.head) || grace_load_relaxed(&q->list.ahead) ||
	       grace_load_relaxed(&q->barrier_req) ||
	       (grace_load_relaxed(&w->inv_n) && w->inv_q == q);
}

/* Push marker m on q's request stack. Release: the marker's fields and link before the worker
 * takes it (pairs with the acquire exchange in queue_collect()). Push-only against a take of
 * the whole stack: no ABA. */
static void barrier_push(struct cbq *q, struct bmark *m)
{
	struct bmark *top = grace_load_relaxed(&q->barrier_req);
	do {
		m->h.next = top ? &top->h : NULL;
	} while (!grace_cmpxchg_mo(&q->barrier_req, &top, m, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Wait until every callback queued before the call has run, for at most timeout_ns (0: no
 * limit). Returns false if it gave up; its markers then run later and free the barrier. */
bool grace__cb_barrier_timed(struct grace__cbdom *d, uint64_t timeout_ns, const char *call)
{
	bool ok = true;
	grace__ann_acquire(d); /* race detectors: d's set-up (grace__engine_create) */
	uint32_t nq = 0;

	/* After the exit handler (a destructor that runs later): no worker runs anything any
	 * more, there is nothing to wait for. */
	if (grace_load_acquire(&grace__cb_engine.attn) & ATTN_EXIT)
		return false;
	struct barrier *b = barrier_new(d, call);

	for (unsigned int i = 0; i < d->ncpu; i++) {
		struct cbq *q = &d->q[i];
		if (!grace_load_acquire(&q->w->started)) {
			if (!queue_has_work(q))
				continue;
			start_worker(d, q->w); /* work but no worker (fork child): restart it */
			if (!grace_load_acquire(&q->w->started))
				continue;
		}
		barrier_push(q, &b->m[i]);
		nq++;
	}
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (grace_load_acquire(&d->w[i].started))
			grace__cb_wake_worker(&d->w[i]);
	uint64_t t0 = grace__now_ns();
	/* An untimed barrier (the program's *_barrier() call) that has waited the stall timeout
	 * says so, once, and goes on waiting: a callback blocked on a lock the caller holds
	 * would otherwise be a hang without a word. */
	bool told = timeout_ns != 0;
	for (;;) {
		/* Acquire: pairs with the release increment in marker_fn(). */
		uint32_t v = grace_load_acquire(&b->done);
		if (v >= nq)
			break;
		int64_t to = -1;
		uint64_t el = grace__now_ns() - t0;
		if (timeout_ns) {
			if (el >= timeout_ns) {
				ok = false;
				break;
			}
			to = (int64_t)(timeout_ns - el);
		} else if (!told) {
			uint64_t stall_ns = grace__stall_timeout_ns(); /* re-read: it may change */
			if (stall_ns && el >= stall_ns) {
				char nm[64];

				grace__warn(
					"%s: has waited %.3f s for the callbacks of %s queued before "
					"it: a callback is blocked (perhaps on a lock this thread "
					"holds), or a reader holds the grace period (see the stall "
					"warnings); still waiting",
					call, (double)el / 1e9,
					grace__cb_domain_name(d, nm, sizeof(nm)));
				told = true;
			} else if (stall_ns) {
				to = (int64_t)(stall_ns - el);
			} else {
				to = 1000000000ll; /* reports off: look again when they may be on */
			}
		}
		grace__futex_wait(&b->done, v, to);
	}
	if (ok)
		grace__ann_acquire(&b->done); /* race detectors: every marker's callbacks ran */
	/* The caller's reference and those of the markers not handed out. */
	grace__cb_barrier_put(d, b, BARRIER_CALLER + (d->ncpu - nq));
	return ok;
}

void grace__cbdom_barrier(struct grace__cbdom *d, const char *call)
{
	/* Per domain: a callback may wait for another domain's callbacks (docs/api.md). */
	if (grace__cb_invoking == d)
		grace__misuse_fatal(call, "called from a callback of the same domain (would "
					  "deadlock)");
	int tok = d->f->hooks->enter_wait(d->f, call);
	grace__cb_barrier_timed(d, 0, call);
	d->f->hooks->leave_wait(d->f, tok);
}

int grace__cbdom_set_policy(struct grace__cbdom *d, enum grace_gp_policy p, unsigned int period_us)
{
	int e = grace__policy_set(&d->pol, p, period_us);

	if (e)
		return e;
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (grace_load_acquire(&d->w[i].started))
			grace__cb_wake_worker(&d->w[i]);
	return 0;
}

int grace__cbdom_set_limits(struct grace__cbdom *d, size_t soft, size_t hard)
{
	if (soft == 0 || hard == 0 || soft > hard)
		return -EINVAL;
	grace_store_relaxed(&d->soft, (uint64_t)soft);
	grace_store_relaxed(&d->hard, (uint64_t)hard);
	return 0;
}

void grace__cbdom_stats(struct grace__cbdom *d, struct grace_cb_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < d->ncpu; i++)
		st->invoked += grace_load_acquire(&d->q[i].invoked);
	for (unsigned int i = 0; i < d->ncpu; i++)
		st->queued += queue_pushed(&d->q[i]);
	/* Pushes are counted just after they happen: clamp the moment a count lags. */
	if (st->queued < st->invoked)
		st->queued = st->invoked;
	st->pending = st->queued - st->invoked;
	st->grace_periods = grace_load_relaxed(&d->gp->seq) >> 2;
	st->waits = grace_load_relaxed(&d->waits);
	grace__lock(&d->start_lock);
	for (unsigned int i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->w[i];
		clockid_t cid;
		struct timespec ts;
		if (!w->started)
			continue;
		st->workers++;
		if (pthread_getcpuclockid(w->th, &cid) == 0 && clock_gettime(cid, &ts) == 0)
			st->worker_cpu_ns += (uint64_t)ts.tv_sec * 1000000000ull +
					     (uint64_t)ts.tv_nsec;
	}
	grace__unlock(&d->start_lock);
}

/* ---- a flavor's engine, through its descriptor (callback.h) ---- */

struct grace__cbdom *grace__engine_create(struct grace__flavor *f, const char *call)
{
	struct grace__cbdom *d;

	grace__init();
	grace__ann_acquire(f->gp); /* race detectors: a dynamic flavor's set-up (srcu_alloc) */
	grace__lock(&f->cb_lock);
	d = f->cb;
	if (!d) {
		d = grace__cbdom_create(f, f->cb_workers);
		if (!d)
			grace__fatal(call, "out of memory creating the callback queues");
		grace__ann_release(d); /* race detectors: d is built before others use it */
		/* Release: the domain is fully built before another thread can see it (pairs with
		 * the acquire in grace__flavor_cb_peek()). */
		grace_store_release(&f->cb, d);
	}
	grace__unlock(&f->cb_lock);
	return d;
}

unsigned long grace__engine_start_poll(struct grace__flavor *f, const char *call)
{
	grace__init();
	unsigned long c = (unsigned long)grace__gp_snap(f->gp);

	grace__cbdom_request_gp(grace__engine_of(f, call), c);
	return c;
}

void grace__engine_call_patient(struct grace__flavor *f, struct rcu_head *head, rcu_callback_t func)
{
	struct grace__cbdom *d = grace__engine_of(f, f->calls[GRACE__CALL_CALL]);

	grace__cbdom_call(d, head, func);
	/* Counted after the push, so that the count never exceeds what is pending (the function
	 * may even begin first: the count then reads low a moment). Relaxed: a hint. */
	grace_fetch_add(&d->patient, 1, __ATOMIC_RELAXED);
}

void grace__engine_patient_begun(struct grace__flavor *f)
{
	/* The callback's domain exists: it is being invoked. Relaxed: a hint. */
	grace_fetch_add(&grace__flavor_cb_peek(f)->patient, -1, __ATOMIC_RELAXED);
}

void grace__engine_check_not_driving(struct grace__flavor *f, const char *call)
{
	if (GRACE_UNLIKELY(grace__gp_driving(f->gp)))
		grace__misuse_fatal(call,
				    "called from a stall handler while this thread drives the %s "
				    "grace period it would wait for (would deadlock)",
				    f->name);
}

void grace__engine_barrier(struct grace__flavor *f, const char *call)
{
	struct grace__cbdom *d = grace__flavor_cb_peek(f);

	grace__engine_check_not_driving(f, call); /* the callbacks wait for what it drives */
	/* First the deferral passes' lazy domain (engine/defer.c, point D8): a pass there may
	 * post itself again here, which the barrier below then waits for. */
	grace__defer_engine_barrier(f, call);
	if (d) {
		grace__cbdom_barrier(d, call);
		return;
	}
	/* No call_*() ever created the queues: nothing to wait for. The context is still
	 * checked, so that misuse is reported whether or not callbacks were queued. */
	int tok = f->hooks->enter_wait(f, call);
	f->hooks->leave_wait(f, tok);
}
