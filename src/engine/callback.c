/* SPDX-License-Identifier: MIT */
/*
 * The callback engine (see callback.h for the shape).
 *
 * Queue protocol and its ordering:
 *  - call_*: head->func = func; push head on the list of the CPU it runs on with
 *    grace__rseq_list_push() (an rseq critical section whose commit is a release store: no
 *    atomic read-modify-write; a release CAS for threads without rseq), count it in the CPU's
 *    `pushed` word the same way (relaxed: only the memory bound reads it), then load the
 *    worker's `sleeping` word and wake it if it sleeps idle.
 *  - worker: detach the list (an rseq pop on its own CPU, or grace__rseq_list_take() from
 *    elsewhere) with acquire semantics (contract rule 5 in internal/rseq.h: the callback's
 *    fields and everything the caller did before call_* are visible), keep the detached chain
 *    as it is (no pass over it), then take the cookie with grace__gp_snap(). The caller's
 *    removal happens before the snap, so the grace period named by the cookie covers every
 *    reader that could hold the removed object (core/gp.c argument (1), with happens-before in
 *    place of program order).
 *  - Chains wait in segments ordered by cookie (later chains never get an earlier cookie:
 *    snaps are monotonic), so harvests are invoked in order (FIFO per queue from one harvest
 *    to the next; within one harvest, newest first). A segment is invoked once
 *    grace__gp_done(cookie) (acquire, pairs with seq_end's release): the readers' sections
 *    happen before the callback.
 *  - rcu_barrier: under barrier_lock, bump each started queue's barrier_req (release) and wake
 *    its worker; the worker, on seeing the request (acquire), harvests again and appends a
 *    marker (a chain of its own) behind everything harvested. Every callback whose call_*
 *    returned before the barrier began was pushed before the request was seen, so its chain is
 *    ahead of the marker; the barrier returns when every marker has run.
 *  - Sleep/wake: the worker stores sleeping, executes membarrier (fence in the fallback), then
 *    re-checks its lists before sleeping on the futex; a pusher loads sleeping after its push
 *    (fence first in the fallback). Store-buffering argument in worker_sleep().
 *  - Memory bound: every CHECK_EVERY calls a thread sums the backlog (pushed - invoked over all
 *    CPUs); past soft x CPUs it expedites and helps, past hard x CPUs it waits for progress.
 *    Bound: hard x CPUs + CHECK_EVERY per thread queuing at that moment (+ the callbacks of
 *    threads that queue from inside a read-side section or a callback, which cannot wait).
 */
#include "engine/callback.h"

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
#include <grace/arch/atomic.h>

#include <grace/internal/rseq.h>

#include "core/annotate.h"
#include "core/diag.h"
#include "core/lock.h"
#include "core/sys.h"
#include "core/wait.h"
#include "engine/policy.h"

#define NSEG 8
#define DEFAULT_SOFT 10000u
#define DEFAULT_HARD 100000u
#define HARD_WAIT_NS 1000000000ull /* least wait of one call_* at the hard limit */

enum { AWAKE = 0, IDLE_SLEEP = 1, TIMED_SLEEP = 2 };

/*
 * A segment: the callbacks that wait for one cookie, as the chains harvested for it, oldest
 * harvest first. A chain stays in the LIFO order it was pushed in: reversing it would be one
 * more pass over cold callback memory (the costliest part of the worker under load), and no
 * guarantee needs the order inside one harvest: a barrier marker is always a chain of its own,
 * behind every chain harvested before it.
 */
#define NCHAIN 16
struct seg {
	struct rcu_head *chain[NCHAIN];
	unsigned int nchain;
	uint64_t cookie;
	uint64_t t_ns; /* when the oldest callback of the segment was harvested */
};

struct cbq {
	/* Pusher line: written by rseq pushes on this CPU only (contract of internal/rseq.h), and
	 * by atomic pushes of threads without rseq (ahead, pushed_atomic). */
	struct grace__rseq_list list GRACE_ALIGNED_CACHE;
	uint64_t pushed;        /* rseq per-CPU count of pushes */
	uint64_t pushed_atomic; /* pushes counted by threads without rseq */
	/* Worker-published line. */
	uint64_t invoked GRACE_ALIGNED_CACHE;
	uint64_t wait_cookie; /* cookie of the oldest waiting batch, valid if has_wait */
	uint32_t has_wait;
	/* Written by rcu_barrier under barrier_lock. */
	uint64_t barrier_req GRACE_ALIGNED_CACHE;
	/* Worker-private, under lock (fork takes it). */
	struct grace__lock lock GRACE_ALIGNED_CACHE;
	struct seg segs[NSEG];
	unsigned int nseg;
	unsigned int cpu;
	uint64_t barrier_seen;
	struct rcu_head marker;
	struct worker *w;
	struct grace__cbdom *d;
};

struct worker {
	uint32_t sleeping GRACE_ALIGNED_CACHE; /* futex: AWAKE, IDLE_SLEEP or TIMED_SLEEP */
	uint32_t started;
	uint64_t last_gp_end; /* worker-private: when its last grace-period wait ended */
	unsigned int idx;
	pthread_t th;
	struct grace__cbdom *d;
};

struct grace__cbdom {
	struct grace__flavor *f;
	struct grace__gp *gp; /* f->gp */
	unsigned int ncpu, nworkers;
	struct cbq *q;
	struct worker *w;
	struct grace__lock start_lock;
	struct grace__policy pol;
	uint64_t soft, hard;
	uint64_t gp_req; /* highest cookie asked for by start_poll (atomic max) */
	uint32_t urgent; /* expedite the next grace period */
	uint32_t stop;
	struct grace__lock barrier_lock;
	uint32_t barrier_done; /* futex: markers invoked */
	uint64_t waits;
	uint32_t progress GRACE_ALIGNED_CACHE; /* futex: bumped after each invocation batch */
	uint32_t progress_waiters;
	struct grace__cbdom *next_all;
};

static __thread int in_callback GRACE_TLS_IE;
static __thread uint32_t calls_since_check GRACE_TLS_IE;
#define CHECK_EVERY 32u /* call_* looks at the backlog every CHECK_EVERY calls of a thread */
static struct grace__lock all_lock = GRACE__LOCK_INIT;
static struct grace__cbdom *all_domains;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

bool grace__in_callback(void)
{
	return in_callback != 0;
}

static inline bool cookie_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
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

/* Add chain l (non-empty) behind everything queued, waiting for cookie c. q->lock held. */
static void enqueue_chain(struct cbq *q, struct rcu_head *l, uint64_t c, uint64_t now)
{
	struct seg *s;

	if (q->nseg && (q->segs[q->nseg - 1].cookie == c || q->nseg == NSEG)) {
		s = &q->segs[q->nseg - 1]; /* same grace period (or full: wait for the later one) */
		s->cookie = c;
	} else {
		s = &q->segs[q->nseg++];
		s->nchain = 0;
		s->cookie = c;
		s->t_ns = now;
	}
	if (s->nchain < NCHAIN) {
		s->chain[s->nchain++] = l;
		return;
	}
	/* Rare (many harvests for one grace period): append behind the last chain. */
	struct rcu_head *t = s->chain[NCHAIN - 1];
	while (t->next)
		t = t->next;
	t->next = l;
}

/* Move what was pushed on q into its segments. q->lock held. */
static void harvest(struct grace__cbdom *d, struct cbq *q, uint64_t now)
{
	struct rcu_head *l = NULL, *a;

	/* On the queue's own CPU (the pinned worker): an rseq pop, no atomic, plus the atomically
	 * pushed nodes by exchange (acquire: pairs with their release CAS). Elsewhere: take, which
	 * drains rseq pushes safely with membarrier(..._RSEQ). Both see the nodes' fields
	 * (contract rule 5 of internal/rseq.h). */
	if (grace__rseq_list_pop_local(&q->list, q->cpu, &l) == 0) {
		a = grace_xchg(&q->list.ahead, (struct rcu_head *)NULL, __ATOMIC_ACQUIRE);
		if (!l) {
			l = a;
		} else if (a) {
			struct rcu_head *t = l;
			while (t->next)
				t = t->next;
			t->next = a;
		}
	} else {
		l = grace__rseq_list_take(&q->list);
	}
	if (!l)
		return;
	/* The cookie is taken after the harvest: see the argument at the top. */
	enqueue_chain(q, l, grace__gp_snap(d->gp), now);
}

static void append_marker(struct grace__cbdom *d, struct cbq *q, uint64_t now)
{
	q->marker.next = NULL;
	enqueue_chain(q, &q->marker, grace__gp_snap(d->gp), now);
}

static void marker_fn(struct rcu_head *h)
{
	struct cbq *q = grace_container_of(h, struct cbq, marker);
	struct grace__cbdom *d = q->d;
	grace__ann_release(&d->barrier_done); /* race detectors: the callbacks ahead of it ran */
	grace_fetch_add(&d->barrier_done, 1u, __ATOMIC_SEQ_CST);
	grace__futex_wake(&d->barrier_done, INT_MAX);
}

/* Publish q->invoked += n and wake threads waiting for progress. Release: the callbacks ran
 * before anyone who reads the count with acquire (barrier users via pending counts, the
 * hard-limit waiters, stats). */
static void publish_invoked(struct grace__cbdom *d, struct cbq *q, uint64_t n)
{
	if (!n)
		return;
	grace_store_release(&q->invoked, q->invoked + n);
	grace_fetch_add(&d->progress, 1u, __ATOMIC_SEQ_CST);
	if (grace_load_seq_cst(&d->progress_waiters))
		grace__futex_wake(&d->progress, INT_MAX);
}

/* Invoke ready chains in order. The count of the callbacks ahead of a barrier marker is
 * published before the marker signals, so a thread that returns from the barrier sees them
 * counted. */
static void invoke(struct grace__cbdom *d, struct cbq *q, struct rcu_head **chains,
		   unsigned int nchains)
{
	uint64_t n = 0;
	in_callback = 1;
	for (unsigned int i = 0; i < nchains; i++) {
		for (struct rcu_head *l = chains[i]; l;) {
			struct rcu_head *nx = l->next;
			/* The next callback is cold: start the miss now. */
			if (nx)
				__builtin_prefetch(nx);
			if (l == &q->marker) {
				publish_invoked(d, q, n);
				n = 0;
				marker_fn(l);
			} else {
				grace__ann_consume(l); /* race detectors: see grace__cbdom_call() */
				l->func(l);
				n++;
			}
			l = nx;
		}
	}
	in_callback = 0;
	publish_invoked(d, q, n);
}

static bool worker_has_work(struct worker *w, bool only_urgent)
{
	struct grace__cbdom *d = w->d;
	if (grace_load_relaxed(&d->stop) || grace_load_relaxed(&d->urgent))
		return true;
	for (unsigned int i = w->idx; i < d->ncpu; i += d->nworkers) {
		struct cbq *q = &d->q[i];
		if (grace_load_relaxed(&q->barrier_req) != q->barrier_seen)
			return true;
		if (!only_urgent &&
		    (grace_load_relaxed(&q->list.head) || grace_load_relaxed(&q->list.ahead)))
			return true;
	}
	if (!only_urgent && !grace__gp_done(d->gp, grace_load_relaxed(&d->gp_req)))
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
	/* A timed sleep is never ended by a plain push, only by wake_worker() (urgent, barrier,
	 * stop, policy change), whose exchange changes the futex word: no barrier needed. */
	if (mode == IDLE_SLEEP)
		grace__heavy_barrier();
	if (!worker_has_work(w, mode == TIMED_SLEEP))
		grace__futex_wait(&w->sleeping, mode, timeout_ns);
	grace_store_relaxed(&w->sleeping, (uint32_t)AWAKE);
}

static void wake_worker(struct worker *w)
{
	if (grace_xchg(&w->sleeping, (uint32_t)AWAKE, __ATOMIC_SEQ_CST) != AWAKE)
		grace__futex_wake(&w->sleeping, 1);
}

/* What a worker's queues wait for after one pass over them. */
struct pass {
	bool waiting;    /* callbacks or a polled request wait for a grace period */
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

/* Harvest q, answer a barrier request, take out into ready[] the chains of the segments whose
 * grace period has completed, and note what the rest waits for. Returns how many chains are
 * ready. q->lock held. */
static unsigned int queue_collect(struct grace__cbdom *d, struct cbq *q, uint64_t now,
				  struct rcu_head **ready, struct pass *ps)
{
	unsigned int nready = 0, k = 0;

	grace__lock_assert_held(&q->lock);
	harvest(d, q, now);
	/* Acquire: pairs with the release in barrier_timed(). */
	uint64_t br = grace_load_acquire(&q->barrier_req);
	if (br != q->barrier_seen) {
		q->barrier_seen = br;
		harvest(d, q, now);
		append_marker(d, q, now);
	}
	while (k < q->nseg && grace__gp_done(d->gp, q->segs[k].cookie)) {
		for (unsigned int c = 0; c < q->segs[k].nchain; c++)
			ready[nready++] = q->segs[k].chain[c];
		k++;
	}
	if (k) {
		memmove(q->segs, q->segs + k, (q->nseg - k) * sizeof(q->segs[0]));
		q->nseg -= k;
	}
	/* Published for threads that help past the soft limit (check_backlog): the cookie, then
	 * has_wait with release (pairs with the acquire load there). */
	if (q->nseg)
		grace_store_relaxed(&q->wait_cookie, q->segs[0].cookie);
	grace_store_release(&q->has_wait, q->nseg ? 1u : 0u);
	if (q->nseg)
		pass_note(ps, q->segs[0].cookie, q->segs[0].t_ns);
	return nready;
}

/* One pass over the worker's queues: harvest each, invoke what is ready (outside the queue's
 * lock), and gather what the rest waits for, polled requests included. */
static void worker_pass(struct worker *w, uint64_t now, struct pass *ps)
{
	struct grace__cbdom *d = w->d;

	for (unsigned int i = w->idx; i < d->ncpu; i += d->nworkers) {
		struct cbq *q = &d->q[i];
		struct rcu_head *ready[NSEG * NCHAIN];

		grace__lock(&q->lock);
		unsigned int nready = queue_collect(d, q, now, ready, ps);
		grace__unlock(&q->lock);
		if (nready)
			invoke(d, q, ready, nready);
	}
	uint64_t req = grace_load_relaxed(&d->gp_req);
	if (!grace__gp_done(d->gp, req))
		pass_note(ps, req, now);
}

/* Something waits for a grace period: ask the policy, then drive it now or sleep. */
static void worker_advance(struct worker *w, const struct pass *ps, uint64_t now)
{
	struct grace__cbdom *d = w->d;
	struct grace__policy_view v;
	struct grace__policy_decision dec;

	if (grace__gp_done(d->gp, ps->need))
		return;
	v.now = now;
	v.oldest_ns = ps->oldest;
	v.last_gp_end = w->last_gp_end;
	v.urgent = grace_load_relaxed(&d->urgent) != 0;
	v.stopping = grace_load_relaxed(&d->stop) != 0;
	dec = grace__policy_decide(&d->pol, &v);
	if (dec.sleep_ns > 0) {
		worker_sleep(w, TIMED_SLEEP, dec.sleep_ns);
		return;
	}
	if (v.urgent)
		grace_store_relaxed(&d->urgent, 0u);
	grace__gp_wait(d->gp, ps->need, dec.gpflags);
	w->last_gp_end = grace__now_ns();
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
	snprintf(nm, sizeof(nm), "grace-%.4s/%u", d->f->name, w->idx);
	/* Timed sleeps are tens of microseconds: do not let the default 50 us slack double them. */
	prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	pthread_setname_np(pthread_self(), nm);
}

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct grace__cbdom *d = w->d;

	worker_setup(w);
	for (;;) {
		uint64_t now = grace__now_ns();
		struct pass ps = { false, 0, UINT64_MAX };

		worker_pass(w, now, &ps);
		if (ps.waiting) {
			worker_advance(w, &ps, now);
			continue;
		}
		if (grace_load_relaxed(&d->stop))
			break;
		worker_sleep(w, IDLE_SLEEP, -1);
	}
	return NULL;
}

/* ---- domain management ---- */

static void at_exit_drain(void);
static void at_exit_drain_register(void);

static void start_worker(struct grace__cbdom *d, struct worker *w)
{
	grace__ann_acquire(d); /* race detectors: d's set-up (grace__flavor_cb_create) */
	grace__lock(&d->start_lock);
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
	pthread_once(&exit_once, at_exit_drain_register);
}

struct grace__cbdom *grace__cbdom_create(struct grace__flavor *f, unsigned int nworkers)
{
	struct grace__cbdom *d = (struct grace__cbdom *)calloc(1, sizeof(*d));
	int ncpu = (int)grace__rseq_nr_cpus();
	if (!d)
		return NULL;
	if (ncpu < 1)
		ncpu = 1;
	d->ncpu = (unsigned int)ncpu;
	d->nworkers = (nworkers == 0 || nworkers > d->ncpu) ? d->ncpu : nworkers;
	if (posix_memalign((void **)&d->q, GRACE_CACHE_LINE, d->ncpu * sizeof(struct cbq)) ||
	    posix_memalign((void **)&d->w, GRACE_CACHE_LINE, d->nworkers * sizeof(struct worker))) {
		free(d->q);
		free(d);
		return NULL;
	}
	memset(d->q, 0, d->ncpu * sizeof(struct cbq));
	memset(d->w, 0, d->nworkers * sizeof(struct worker));
	grace__ann_ignore(d, sizeof(*d)); /* Valgrind: queues and counters are shared atomics */
	grace__ann_ignore(d->q, d->ncpu * sizeof(struct cbq));
	grace__ann_ignore(d->w, d->nworkers * sizeof(struct worker));
	for (unsigned int i = 0; i < d->nworkers; i++) {
		d->w[i].idx = i;
		d->w[i].d = d;
	}
	for (unsigned int i = 0; i < d->ncpu; i++) {
		grace__lock_init(&d->q[i].lock);
		grace__rseq_list_init(&d->q[i].list);
		d->q[i].cpu = i;
		d->q[i].w = &d->w[i % d->nworkers];
		d->q[i].d = d;
	}
	d->f = f;
	d->gp = f->gp;
	grace__policy_init(&d->pol);
	d->soft = DEFAULT_SOFT;
	d->hard = DEFAULT_HARD;
	grace__lock_init(&d->start_lock);
	grace__lock_init(&d->barrier_lock);
	grace__lock(&all_lock);
	d->next_all = all_domains;
	all_domains = d;
	grace__unlock(&all_lock);
	return d;
}

uint64_t grace__cbdom_pending(struct grace__cbdom *d)
{
	uint64_t p = 0;
	int64_t b = domain_backlog(d);
	(void)p;
	return b > 0 ? (uint64_t)b : 0;
}

static void stop_workers(struct grace__cbdom *d)
{
	grace__lock(&d->start_lock);
	grace_store_relaxed(&d->stop, 1u);
	grace__unlock(&d->start_lock);
	for (unsigned int i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->w[i];
		if (!grace_load_acquire(&w->started))
			continue;
		wake_worker(w);
		pthread_join(w->th, NULL);
		w->started = 0;
	}
}

int grace__cbdom_destroy(struct grace__cbdom *d)
{
	if (!d)
		return 0;
	grace__ann_acquire(d); /* race detectors: d's set-up, before it is torn down */
	if (grace__cbdom_pending(d))
		return -EBUSY;
	stop_workers(d);
	grace__lock(&all_lock);
	for (struct grace__cbdom **pp = &all_domains; *pp; pp = &(*pp)->next_all) {
		if (*pp == d) {
			*pp = d->next_all;
			break;
		}
	}
	grace__unlock(&all_lock);
	free(d->q);
	free(d->w);
	free(d);
	return 0;
}

/* ---- call side ---- */

/* Every CHECK_EVERY calls of a thread: past the soft limit, expedite and help drive grace
 * periods; past the hard limit, wait until the workers have brought the backlog back under it. */
static GRACE_COLD void check_backlog(struct grace__cbdom *d, struct worker *w)
{
	const char *call = d->f->calls[GRACE__CALL_CALL];
	int64_t soft = (int64_t)(grace_load_relaxed(&d->soft) * d->ncpu);
	int64_t hard = (int64_t)(grace_load_relaxed(&d->hard) * d->ncpu);
	int64_t b = domain_backlog(d);

	if (b <= soft)
		return;
	grace_store_relaxed(&d->urgent, 1u);
	wake_worker(w);
	if (in_callback || !d->f->call_may_wait || d->f->hooks->is_reader(d->f))
		return; /* waiting here could deadlock: the overshoot is bounded per thread */
	/*
	 * Help: drive the grace periods the oldest waiting batches need, if nobody drives them.
	 * Not a fresh snapshot: that would start one new grace period per check and the backlog
	 * is usually waiting for invocation, not for a grace period.
	 */
	for (unsigned int c = 0; c < d->ncpu; c++) {
		if (!grace_load_acquire(&d->q[c].has_wait))
			continue;
		uint64_t ck = grace_load_relaxed(&d->q[c].wait_cookie);
		if (!grace__gp_done(d->gp, ck))
			grace__gp_try_drive(d->gp, ck, GRACE__GP_EXPEDITED);
	}
	if (domain_backlog(d) <= hard)
		return;
	grace_fetch_add(&d->waits, 1u, __ATOMIC_RELAXED);
	int tok = d->f->hooks->enter_wait(d->f, call);
	uint64_t t0 = grace__now_ns();
	uint64_t cap = grace__stall_timeout_ns();
	if (cap < HARD_WAIT_NS)
		cap = HARD_WAIT_NS;
	for (;;) {
		/*
		 * Bounded: if this thread holds a lock that a reader waits for inside its section,
		 * the grace period cannot end while we wait here. After the stall timeout (at least
		 * 1 s; the stalled reader has been reported by then), say so once and let the call
		 * return: memory then grows by CHECK_EVERY callbacks per such wait, not without a
		 * word, and the thread is not deadlocked.
		 */
		if (grace__now_ns() - t0 > cap) {
			static uint32_t warned;
			if (!grace_xchg(&warned, 1u, __ATOMIC_RELAXED))
				grace__warn(
					"%s: %lld callbacks pending, past the hard limit for too long: "
					"a reader may be stalled, or blocked on a lock this thread "
					"holds; continuing without waiting for it",
					call, (long long)domain_backlog(d));
			break;
		}
		uint32_t p = grace_load_acquire(&d->progress);
		grace_fetch_add(&d->progress_waiters, 1u, __ATOMIC_SEQ_CST);
		/* seq_cst: the waiter count before the re-check (pairs with the worker's seq_cst
		 * progress increment and load of progress_waiters). */
		bool over = domain_backlog(d) > hard;
		if (over)
			grace__futex_wait(&d->progress, p, 50 * 1000000ll);
		grace_fetch_sub(&d->progress_waiters, 1u, __ATOMIC_SEQ_CST);
		if (!over)
			break;
		grace_store_relaxed(&d->urgent, 1u);
		for (unsigned int i = 0; i < d->nworkers; i++)
			if (grace_load_acquire(&d->w[i].started))
				wake_worker(&d->w[i]);
	}
	d->f->hooks->leave_wait(d->f, tok);
}

void grace__cbdom_call(struct grace__cbdom *d, struct rcu_head *head, rcu_callback_t func)
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
			return;
		}
		start_worker(d, w);
	}
	/* Fallback only: fence between the push and the load of sleeping (the worker side uses
	 * a fence too then, see worker_sleep()). */
	if (!grace__use_membarrier)
		grace_smp_mb();
	if (grace_load_relaxed(&w->sleeping) == IDLE_SLEEP)
		wake_worker(w);
	if (GRACE_UNLIKELY(++calls_since_check >= CHECK_EVERY)) {
		calls_since_check = 0;
		check_backlog(d, w);
	}
}

void grace__cbdom_request_gp(struct grace__cbdom *d, uint64_t cookie)
{
	uint64_t cur = grace_load_relaxed(&d->gp_req);
	while (cookie_before(cur, cookie) &&
	       !grace_cmpxchg(&d->gp_req, &cur, cookie, __ATOMIC_SEQ_CST)) {
	}
	struct worker *w = d->q[current_cpu(d)].w;
	if (!grace_load_acquire(&w->started))
		start_worker(d, w);
	if (grace_load_seq_cst(&w->sleeping) == IDLE_SLEEP)
		wake_worker(w);
}

static bool barrier_timed(struct grace__cbdom *d, uint64_t timeout_ns)
{
	bool ok = true;
	grace__ann_acquire(d); /* race detectors: d's set-up (grace__flavor_cb_create) */
	grace__lock(&d->barrier_lock);
	uint32_t nq = 0;
	grace_store_relaxed(&d->barrier_done, 0u);
	for (unsigned int i = 0; i < d->ncpu; i++) {
		struct cbq *q = &d->q[i];
		if (!grace_load_acquire(&q->w->started)) {
			/* A queue with work but no worker (fork child): restart it. nseg under the
			 * queue's lock: a worker started a moment ago may be harvesting. */
			grace__lock(&q->lock);
			unsigned int nseg = q->nseg;
			grace__unlock(&q->lock);
			if (queue_pushed(q) == grace_load_relaxed(&q->invoked) && !nseg &&
			    !grace_load_relaxed(&q->list.head) &&
			    !grace_load_relaxed(&q->list.ahead))
				continue;
			start_worker(d, q->w);
			if (!grace_load_acquire(&q->w->started))
				continue;
		}
		/* Release: pairs with the worker's acquire load of barrier_req. */
		grace_store_release(&q->barrier_req, q->barrier_req + 1);
		nq++;
	}
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (grace_load_acquire(&d->w[i].started))
			wake_worker(&d->w[i]);
	uint64_t t0 = grace__now_ns();
	for (;;) {
		uint32_t v = grace_load_seq_cst(&d->barrier_done);
		if (v >= nq)
			break;
		int64_t to = -1;
		if (timeout_ns) {
			uint64_t el = grace__now_ns() - t0;
			if (el >= timeout_ns) {
				ok = false;
				break;
			}
			to = (int64_t)(timeout_ns - el);
		}
		grace__futex_wait(&d->barrier_done, v, to);
	}
	grace__ann_acquire(&d->barrier_done); /* race detectors: every marker's callbacks ran */
	grace__unlock(&d->barrier_lock);
	return ok;
}

void grace__cbdom_barrier(struct grace__cbdom *d, const char *call)
{
	if (in_callback)
		grace__misuse_fatal(call, "called from a callback (would deadlock)");
	int tok = d->f->hooks->enter_wait(d->f, call);
	barrier_timed(d, 0);
	d->f->hooks->leave_wait(d->f, tok);
}

int grace__cbdom_set_policy(struct grace__cbdom *d, enum grace_gp_policy p, unsigned int period_us)
{
	int e = grace__policy_set(&d->pol, p, period_us);

	if (e)
		return e;
	for (unsigned int i = 0; i < d->nworkers; i++)
		if (grace_load_acquire(&d->w[i].started))
			wake_worker(&d->w[i]);
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

/* ---- process exit and fork ---- */

/*
 * At exit, run what is still queued (so nothing leaks) and join the workers. Registered with
 * atexit() when the first worker starts, which is after a sanitizer's own exit handler, so it
 * runs before the leak check. Bounded: a reader stuck in a section cannot hang exit; its
 * callbacks are then left (and the workers detached) with a warning.
 */
static void at_exit_drain(void)
{
	grace__lock(&all_lock);
	for (struct grace__cbdom *d = all_domains; d; d = d->next_all) {
		bool ok = true;
		if (!in_callback && !d->f->hooks->is_reader(d->f)) {
			for (int i = 0; i < 4 && grace__cbdom_pending(d); i++)
				ok = barrier_timed(d, 2000000000ull) && ok;
		}
		if (!ok) {
			grace__warn("exit: %s callbacks still wait for a grace period held by a "
				    "reader; %llu left unrun",
				    d->f->name, (unsigned long long)grace__cbdom_pending(d));
			grace_store_relaxed(&d->stop, 1u);
			continue;
		}
		stop_workers(d);
	}
	grace__unlock(&all_lock);
}

static void at_exit_drain_register(void)
{
	atexit(at_exit_drain);
}

void grace__cb_atfork_prepare(void)
{
	grace__lock(&all_lock);
	for (struct grace__cbdom *d = all_domains; d; d = d->next_all) {
		grace__lock(&d->start_lock);
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__lock(&d->q[i].lock);
	}
}

void grace__cb_atfork_parent(void)
{
	for (struct grace__cbdom *d = all_domains; d; d = d->next_all) {
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__unlock(&d->q[i].lock);
		grace__unlock(&d->start_lock);
	}
	grace__unlock(&all_lock);
}

void grace__cb_atfork_child(void)
{
	/* The locks taken in prepare belong to this thread: release them. barrier_lock was not
	 * taken (a barrier may have been waiting in another thread): re-initialise it. The child
	 * has no workers: they restart on the next call_*, start_poll or barrier. */
	for (struct grace__cbdom *d = all_domains; d; d = d->next_all) {
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__unlock(&d->q[i].lock);
		for (unsigned int i = 0; i < d->nworkers; i++) {
			d->w[i].started = 0;
			d->w[i].sleeping = AWAKE;
		}
		d->progress_waiters = 0;
		grace__unlock(&d->start_lock);
		grace__lock_init(&d->barrier_lock);
		d->barrier_done = 0;
	}
	grace__unlock(&all_lock);
}
