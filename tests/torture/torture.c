/* SPDX-License-Identifier: MIT */
/*
 * grace torture: an rcutorture-style checker for every flavor and grace-period path of grace.
 *
 * Elements. A pool of elements, each with a validity mark, a generation number, a payload that
 * depends on the generation, and an age: the number of grace periods that have completed since
 * it was removed. A writer takes a free element, initialises it (mark valid, new generation,
 * payload, age 0), publishes it with an exchange of the domain's current pointer (a full-barrier
 * rcu_xchg_pointer, since several writers may publish), sets the old element's age to 1 and
 * retires it by a path chosen at random among those the flavor has:
 *   sync   synchronize, then age every element this writer removed from that domain;
 *   exp    the same with expedited synchronize;
 *   call   call_rcu: the callback ages the element by one and re-queues it until it is old;
 *   cond   cookie (get_state or start_poll), cond_synchronize, then age the list;
 *   poll   start_poll, loop on poll_state until it reports completion, then age the list;
 *   free   free_rcu(): for heap elements (below), freed by the library after a grace period;
 *   headless  free_rcu_mightsleep(): the same with no rcu_head;
 *   retire    rcu_retire(): the same, inline (also inside a read-side section).
 * When the flavor has the free paths, some of the elements writers publish come from malloc()
 * instead of the pool ("heap elements"), chosen in proportion to the paths in use; a heap
 * element is always retired by free or headless (sometimes inside a read-side section, where
 * free_rcu is legal), and its generation comes from a global counter, so memory the allocator
 * hands out again carries a new one: a reader holding a heap element freed too early sees its
 * generation change (the writers' next malloc() often reuses it at once), its mark cleared or
 * 0x6b poison (debug builds), or ASan reports the use after free.
 * Every wait ages only elements removed before it began, so an element's age never exceeds the
 * number of grace periods that have really begun after its removal and then completed. At
 * TORTURE_MAX_AGE the element goes back to the pool with its mark cleared and its payload
 * scribbled; an empty pool is counted and reported (not an error: the writer waits and retries).
 *
 * Readers (any number, also more than there are CPUs) enter sections nested at random (for
 * multi-domain flavors such as srcu, each level in a random domain), dereference that domain's
 * current element at each level and check it: a cleared mark or an inconsistent payload right
 * after rcu_dereference() is a publication-ordering error. They stay inside for random short
 * delays, yields and occasional long sleeps, then re-read the age: 2 or more means a full grace
 * period passed while the section held the element (the error rcutorture calls a "pipe" error);
 * a changed generation or cleared mark means it was recycled or freed under the reader. Ages are
 * kept in a histogram: a correct flavor shows only 0 and 1.
 *
 * Other threads: fake writers hammer synchronize, expedited, barrier, cond_synchronize and polled
 * waits, checking that a cookie taken before a full wait reports complete after it; readers check
 * that a cookie taken inside a section does not complete before the section ends; a barrier
 * thread posts callbacks and checks rcu_barrier() returns only after all were invoked; a churn
 * thread starts short-lived threads that read and exit (implicit and explicit unregistration);
 * lonely callers (--lonely) post one callback at a time with nothing else queued and fail the
 * run if it is not invoked within --lonely-wait seconds (a worker that missed its wake-up);
 * a flood thread queues bursts of callbacks while the writers must keep making progress.
 * Napping readers (--nap US) sleep up to US microseconds between sections, so that the default
 * flavor parks them (stops scanning them, core/registry.c) and their next section must hand
 * them back; a signal thread (--signals N) interrupts readers N times a second with a handler
 * that runs a checked section of its own, wherever the reader happens to be (inside a
 * section, between the lock's store and its check of the waiter word, in the park hand-back,
 * asleep). A
 * watchdog reports FAILURE (never a silent hang) when no update-side operation completes for
 * --stall seconds, or when threads do not finish after the run ends.
 *
 * After the run every element must be back in the pool and every posted callback invoked.
 * Output per flavor: age histogram, counts, errors, a final SUCCESS or FAILURE line; the exit
 * status is nonzero on failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grace/grace.h>

#include "torture.h"

#define TORTURE_MAX_AGE 10 /* an element goes back to the pool at this age */
#define HIST_LEN (TORTURE_MAX_AGE + 2)
#define MAX_NEST 4
#define PAYLOAD_WORDS 4
#define MARK_VALID 0x600dcafeu
#define MARK_FREE 0xdeadbeefu
#define BARRIER_HEADS 16
#define MAX_PRINTED_ERRORS 20
#define FLOOD_CAP 200000u /* our own bound on flood callbacks, in case the engine has none */

enum err_kind {
	E_AGE,           /* age >= 2 inside a section: a grace period ended under a reader */
	E_MARK,          /* cleared mark right after rcu_dereference: publication ordering */
	E_PAYLOAD,       /* payload does not match the generation: publication or recycling */
	E_FREED,         /* mark cleared while a section held the element */
	E_RECYCLED,      /* generation changed while a section held the element */
	E_COOKIE_READER, /* cookie taken inside a section completed before the section ended */
	E_COOKIE_WRITER, /* cookie taken before a full wait not complete after it */
	E_BARRIER,       /* barrier returned before every earlier callback was invoked */
	E_FLOOD,         /* flood callbacks missing after a barrier */
	E_CB_CONTEXT,    /* callback invoked inside a read-side section */
	E_LOST,          /* element or callback missing at the end of the run */
	E_STALL,         /* no forward progress, or threads that do not finish */
	E_NKINDS
};
static const char *const err_names[E_NKINDS] = {
	"age>=2",
	"mark-at-deref",
	"payload",
	"freed-while-held",
	"recycled-while-held",
	"reader-cookie",
	"writer-cookie",
	"barrier",
	"flood",
	"callback-context",
	"lost",
	"stall",
};

enum path { P_SYNC, P_EXP, P_CALL, P_COND, P_POLL, P_HURRY, P_FREE, P_HEADLESS, P_RETIRE, P_N };
static const char *const path_names[P_N] = { "sync",  "exp",  "call",     "cond",  "poll",
					     "hurry", "free", "headless", "retire" };
enum fop { F_SYNC, F_EXP, F_BARRIER, F_COND, F_POLL, F_FREE_BARRIER, F_N };
static const char *const fop_names[F_N] = {
	"sync", "exp", "barrier", "cond", "poll", "free-barrier"
};

struct elem {
	struct rcu_head rh;
	uint32_t mark;   /* atomic: MARK_VALID from initialisation to return to the pool */
	uint32_t gen;    /* atomic: bumped at each allocation */
	uint32_t age;    /* atomic: grace periods since removal (1 on removal) */
	uint32_t domain; /* owner-only: the domain it was published in */
	uint32_t heap;   /* owner-only: from malloc(), retired by free_rcu (never to the pool) */
	/* Plain (non-atomic) words in the correct flavors, written before publication and after
	 * the element's last grace period: under TSan a missing happens-before is a data race. */
	uint64_t payload[PAYLOAD_WORDS];
	struct elem *next; /* pool or removed list, owner-only */
};

struct config {
	const char *flavor;
	double duration;
	unsigned int readers, writers, fake_writers, churn, barrier_threads;
	int flood;
	uint64_t seed;
	unsigned int pool;
	double stall;
	unsigned int long_delay; /* a reader sleeps inside a section once per this many sections */
	bool fail_fast;
	bool verbose;
	int cookie_checks;    /* readers check cookies taken inside sections */
	unsigned int lonely;  /* threads posting one callback at a time and waiting for it */
	double lonely_wait;   /* a lonely callback not invoked in this many seconds: lost wake-up */
	const char *paths;    /* comma-separated retire paths to use (NULL: all the flavor has) */
	unsigned int nap;     /* readers sleep up to this many microseconds between sections */
	unsigned int signals; /* signals a second to readers, whose handler reads (not QSBR) */
};
static struct config cfg = {
	.flavor = "all",
	.duration = 10,
	.readers = 0, /* 0: CPUs + 1 */
	.writers = 1,
	.fake_writers = 2,
	.churn = 1,
	.barrier_threads = 1,
	.flood = 1,
	.seed = 0,
	.pool = 1024,
	.stall = 60,
	.long_delay = 16384,
	.cookie_checks = 1,
	.lonely = 0,
	.lonely_wait = 10,
};

struct rng {
	uint64_t s;
};
static inline uint64_t rnd(struct rng *r)
{
	/* xorshift64* */
	uint64_t x = r->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}
static void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
	/* splitmix64 of seed and stream: independent, reproducible per-thread sequences */
	uint64_t z = seed + 0x9e3779b97f4a7c15ull * (stream + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	r->s = z ? z : 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}
static void spin(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		grace_cpu_relax();
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* ---- per-run state (one flavor at a time) ---- */

struct reader_stats {
	uint64_t hist[HIST_LEN];
	uint64_t sections, derefs, long_delays, cookie_checks, offline_sleeps, reregisters;
};

/* Every thread of a run: what it is and what it is doing, for stall (hang) reports. */
struct thread_arg {
	unsigned int idx;
	pthread_t th;
	const char *role;
	const char *doing; /* atomic: the operation in progress */
	int live;          /* atomic */
};

struct writer {
	struct thread_arg *ta;
	unsigned int idx;
	struct rng rng;
	struct elem *removed[TORTURE_MAX_DOMAINS]; /* removed, waiting to age, per domain */
	uint64_t updates, waits[P_N], pool_empty, poll_loops;
};

struct barrier_head {
	struct rcu_head rh;
	uint64_t *invoked;
};

static struct {
	const struct torture_ops *ops;
	int stop;
	uint64_t t_start, t_end;
	/* the pool */
	pthread_mutex_t pool_lock;
	struct elem *pool_head;
	unsigned int pool_free;
	struct elem *elems;
	unsigned int nelems;
	/* current element of each domain: what readers dereference */
	struct elem *slots[TORTURE_MAX_DOMAINS];
	unsigned int npaths;
	enum path paths[P_N];
	unsigned int npool_paths, nheap_paths; /* the paths split by the elements they retire */
	enum path pool_paths[P_N], heap_paths[P_N];
	uint64_t heap_gen, heap_allocs; /* heap elements */
	uint64_t heap_freed; /* objects the library freed through the free hook (counted) */
	bool counting_frees; /* every domain's free hook is heap_free_hook */
	uint64_t flood_free_phases, flood_free_posted; /* free_rcu floods */
	unsigned int nfops;
	enum fop fops[F_N];
	/* live counters (relaxed atomics) */
	uint64_t progress; /* any completed update-side operation */
	uint64_t err[E_NKINDS];
	uint64_t printed;
	uint64_t first_error_ns;
	uint64_t cb_posted, cb_invoked;       /* element callbacks */
	uint64_t flood_posted, flood_invoked; /* flood callbacks */
	uint64_t flood_phases, flood_throttled, flood_updates, flood_ns;
	uint64_t barrier_checks, barrier_cbs;
	uint64_t churn_threads;
	uint64_t lonely_cbs;             /* lonely callbacks invoked in time */
	uint64_t sig_sent, sig_sections; /* --signals: sent, and sections run by the handler */
	unsigned long parks_start, unparks_start, parks_end, unparks_end; /* park_stats */
	uint64_t fake_ops[F_N];
	uint64_t fake_poll_loops;
	int live; /* threads still running */
	/* totals, summed at join */
	pthread_mutex_t sum_lock;
	struct reader_stats rs;
	uint64_t updates, waits[P_N], pool_empty, poll_loops;
	/* barrier threads' heads: static storage, so that an engine that never invokes them
	 * cannot touch a dead stack frame */
	struct barrier_head *bheads;
	struct lonely_head *lheads;
	uint64_t *binvoked;
	struct writer *ws;
	unsigned int nwriters;
	struct thread_arg *ta;
	unsigned int nthreads, nreaders;
	/* callback-engine counters over the run, summed over domains */
	uint64_t gp_start, gp_end, hard_waits_start, hard_waits_end;
	uint64_t calls_in_section;
	uint64_t max_pending; /* largest engine "pending" count seen during floods */
} R;

static __thread bool t_qsbr_online; /* this thread is a registered, online QSBR thread */
static __thread struct thread_arg *t_self;
/* --signals: this thread is a registered reader, so a handler may run a section on it. */
static __thread volatile sig_atomic_t t_sig_ok;

/* Record what the calling thread is about to do (shown if the run stalls). */
static void doing(const char *what)
{
	if (t_self)
		__atomic_store_n(&t_self->doing, what, __ATOMIC_RELAXED);
}

static bool stopping(void)
{
	return __atomic_load_n(&R.stop, __ATOMIC_RELAXED) != 0;
}

static uint64_t total_errors(void)
{
	uint64_t n = 0;
	for (int k = 0; k < E_NKINDS; k++)
		n += LOAD(&R.err[k]);
	return n;
}

static void terror(enum err_kind k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void terror(enum err_kind k, const char *fmt, ...)
{
	uint64_t expect = 0;
	uint64_t t = now_ns() - R.t_start;

	ADD(&R.err[k], 1);
	__atomic_compare_exchange_n(&R.first_error_ns, &expect, t ? t : 1, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	if (ADD(&R.printed, 1) >= MAX_PRINTED_ERRORS)
		return;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "torture: %s: ERROR %s at %.3f s: %s\n", R.ops->name, err_names[k],
		(double)t / 1e9, buf);
}

/* ---- elements ---- */

static inline uint64_t payload_word(uint32_t gen, unsigned int k)
{
	return ((uint64_t)gen << 32 | (uint64_t)(k + 1) * 0x9e3779b9u) ^ 0x5a5a5a5a00000000ull;
}

static void elem_init(struct elem *e, unsigned int d)
{
	uint32_t g = LOAD(&e->gen) + 1;

	STORE(&e->gen, g);
	STORE(&e->age, 0u);
	e->domain = d;
	for (unsigned int k = 0; k < PAYLOAD_WORDS; k++) {
		if (R.ops->broken)
			STORE(&e->payload[k],
			      payload_word(g, k)); /* a broken flavor races on purpose */
		else
			e->payload[k] = payload_word(g, k);
	}
	/* Ordered before publication by the full-barrier exchange that publishes it (pairs with
	 * the reader's rcu_dereference). */
	STORE(&e->mark, MARK_VALID);
}

static bool payload_ok(struct elem *e, uint32_t g)
{
	for (unsigned int k = 0; k < PAYLOAD_WORDS; k++) {
		uint64_t v = R.ops->broken ? LOAD(&e->payload[k]) : e->payload[k];
		if (v != payload_word(g, k))
			return false;
	}
	return true;
}

/* An element's index in the pool for messages; -1 for a heap element. */
static long elem_idx(const struct elem *p)
{
	return p >= R.elems && p < R.elems + R.nelems ? (long)(p - R.elems) : -1;
}

/* For a broken flavor's pause (flavor_hazptr.c): grace periods since p's removal. */
uint32_t torture_elem_age(const struct elem *p)
{
	return LOAD(&p->age);
}

/* A heap element (top of the file): generation from a global counter (odd, never reused). */
static struct elem *heap_new(void)
{
	struct elem *e = (struct elem *)malloc(sizeof(*e));

	if (!e) {
		fprintf(stderr, "torture: out of memory\n");
		exit(2);
	}
	STORE(&e->gen, (uint32_t)(2 * ADD(&R.heap_gen, 1)));
	e->heap = 1;
	e->next = NULL;
	ADD(&R.heap_allocs, 1);
	return e;
}

/* The library's free function for this run (ops->set_free_hook): the heap elements and the
 * flood's objects it frees, counted. */
static void heap_free_hook(void *p)
{
	ADD(&R.heap_freed, 1);
	free(p);
}

static struct elem *pool_get(void)
{
	struct elem *e;
	pthread_mutex_lock(&R.pool_lock);
	e = R.pool_head;
	if (e) {
		R.pool_head = e->next;
		R.pool_free--;
	}
	pthread_mutex_unlock(&R.pool_lock);
	return e;
}

/* The element's last grace period has passed: clear the mark, scribble, back to the pool. */
static void elem_free(struct elem *e)
{
	STORE(&e->mark, MARK_FREE);
	for (unsigned int k = 0; k < PAYLOAD_WORDS; k++) {
		if (R.ops->broken)
			STORE(&e->payload[k], 0xf7eef7eef7eef7eeull);
		else
			e->payload[k] = 0xf7eef7eef7eef7eeull;
	}
	pthread_mutex_lock(&R.pool_lock);
	e->next = R.pool_head;
	R.pool_head = e;
	R.pool_free++;
	pthread_mutex_unlock(&R.pool_lock);
}

/* One grace period of domain d completed after every element of the list was removed. */
static void age_list(struct elem **head)
{
	struct elem **pp = head;
	while (*pp) {
		struct elem *e = *pp;
		if (ADD(&e->age, 1u) + 1 >= TORTURE_MAX_AGE) {
			*pp = e->next;
			elem_free(e);
		} else {
			pp = &e->next;
		}
	}
}

static void elem_cb(struct rcu_head *h)
{
	struct elem *e = grace_container_of(h, struct elem, rh);

	if (R.ops->read_ongoing && R.ops->read_ongoing())
		terror(E_CB_CONTEXT, "element callback invoked inside a read-side section");
	uint32_t a = ADD(&e->age, 1u) + 1;
	ADD(&R.cb_invoked, 1);
	if (a < TORTURE_MAX_AGE) {
		ADD(&R.cb_posted, 1);
		R.ops->call(e->domain, &e->rh, elem_cb); /* one more grace period */
	} else {
		elem_free(e);
	}
}

/* ---- readers ---- */

struct held {
	unsigned int d;
	int idx;
	struct elem *p;
	uint32_t gen;
};

static void reader_delay(struct rng *rng, struct reader_stats *st)
{
	uint64_t x = rnd(rng);

	if (cfg.long_delay && x % cfg.long_delay == 0) {
		/* Long: sleep inside the section, so grace periods must wait for a sleeping
		 * reader (and in QSBR an online thread that blocks). */
		st->long_delays++;
		sleep_us(1000 + (x >> 32) % 9000);
	} else if ((x & 7) == 0) {
		spin((unsigned int)((x >> 8) % 2048));
	} else if ((x & 0x3ff) == 1) {
		sched_yield(); /* preempted inside the section */
	}
}

static void read_section(struct rng *rng, struct reader_stats *st)
{
	const struct torture_ops *ops = R.ops;
	struct held h[MAX_NEST];
	uint64_t x = rnd(rng);
	unsigned int depth = 1, i;
	unsigned long cookie = 0;
	bool have_cookie = false;

	if ((x & 7) == 0)
		depth = 2 + (unsigned int)((x >> 3) % (MAX_NEST - 1));
	for (i = 0; i < depth; i++) {
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(rnd(rng) % ops->ndomains) : 0;
		h[i].d = d;
		h[i].idx = ops->read_lock(d);
		struct elem *p = ops->deref ? ops->deref(d, &R.slots[d])
					    : rcu_dereference(R.slots[d]);
		h[i].p = p;
		st->derefs++;
		if (!p)
			continue;
		/* The loads below depend on p: ordered after the publication by rcu_dereference. */
		h[i].gen = LOAD(&p->gen);
		if (LOAD(&p->mark) != MARK_VALID)
			terror(E_MARK, "element %ld (gen %u) not valid at rcu_dereference",
			       elem_idx(p), h[i].gen);
		else if (!payload_ok(p, h[i].gen))
			terror(E_PAYLOAD,
			       "element %ld payload does not match gen %u at dereference",
			       elem_idx(p), h[i].gen);
	}
	if (ops->get_state && cfg.cookie_checks && ((x >> 8) & 15) == 0) {
		/* A cookie taken inside the section names a grace period that must wait for it. */
		cookie = (x >> 12) & 1 ? ops->start_poll(h[0].d) : ops->get_state(h[0].d);
		have_cookie = true;
	}
	reader_delay(rng, st);
	if (have_cookie) {
		st->cookie_checks++;
		if (ops->poll_state(h[0].d, cookie))
			terror(E_COOKIE_READER,
			       "cookie %lu taken inside a section completed before "
			       "the section ended",
			       cookie);
	}
	for (i = depth; i-- > 0;) {
		struct elem *p = h[i].p;
		if (p) {
			uint32_t age = LOAD(&p->age);
			st->hist[age < HIST_LEN ? age : HIST_LEN - 1]++;
			if (age >= 2)
				terror(E_AGE,
				       "element %ld age %u: a grace period completed while a "
				       "reader held it (nesting level %u, domain %u)",
				       elem_idx(p), age, i, h[i].d);
			if (LOAD(&p->gen) != h[i].gen)
				terror(E_RECYCLED, "element %ld recycled while held (gen %u -> %u)",
				       elem_idx(p), h[i].gen, LOAD(&p->gen));
			else if (LOAD(&p->mark) != MARK_VALID)
				terror(E_FREED, "element %ld freed while held", elem_idx(p));
			else if (!payload_ok(p, h[i].gen))
				terror(E_PAYLOAD, "element %ld payload changed while held",
				       elem_idx(p));
		}
		ops->read_unlock(h[i].d, h[i].idx);
	}
	st->sections++;
}

/* Between sections: QSBR reports quiescent states and sometimes goes offline to sleep; the
 * default flavor sometimes unregisters and registers again. */
static void between_sections(struct rng *rng, struct reader_stats *st, bool explicit_)
{
	const struct torture_ops *ops = R.ops;
	uint64_t x = rnd(rng);

	if (ops->quiescent) {
		if ((x & 3) != 0)
			ops->quiescent();
		if ((x >> 8) % 4096 == 0) {
			ops->offline();
			t_qsbr_online = false;
			sleep_us(200 + (x >> 32) % 2000);
			ops->online();
			t_qsbr_online = true;
			st->offline_sleeps++;
		}
	} else if (explicit_ && ops->reader_stop && (x >> 8) % 65536 == 0) {
		sig_atomic_t ok = t_sig_ok;
		t_sig_ok = 0; /* no handler's section while the thread (un)registers */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		ops->reader_stop(true);
		ops->reader_start(true);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t_sig_ok = ok;
		st->reregisters++;
	}
}

static void reader_stats_add(struct reader_stats *st)
{
	pthread_mutex_lock(&R.sum_lock);
	for (int k = 0; k < HIST_LEN; k++)
		R.rs.hist[k] += st->hist[k];
	R.rs.sections += st->sections;
	R.rs.derefs += st->derefs;
	R.rs.long_delays += st->long_delays;
	R.rs.cookie_checks += st->cookie_checks;
	R.rs.offline_sleeps += st->offline_sleeps;
	R.rs.reregisters += st->reregisters;
	pthread_mutex_unlock(&R.sum_lock);
}

static void thread_begin(struct thread_arg *ta)
{
	t_self = ta;
	doing("starting");
}

static void thread_done(void)
{
	doing("done");
	if (t_self)
		__atomic_store_n(&t_self->live, 0, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&R.live, 1, __ATOMIC_RELEASE);
}

static void *reader_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	struct reader_stats st;
	struct rng rng;
	bool explicit_ = (ta->idx & 1) == 0;

	thread_begin(ta);
	memset(&st, 0, sizeof(st));
	rng_init(&rng, cfg.seed, 1000 + ta->idx);
	if (R.ops->reader_start)
		R.ops->reader_start(explicit_);
	t_qsbr_online = R.ops->qsbr;
	/* An implicitly registering thread registers in its first section: no handler before. */
	bool sig = cfg.signals && R.ops->park_stats;
	if (sig && explicit_)
		t_sig_ok = 1;
	doing("reading");
	while (!stopping()) {
		read_section(&rng, &st);
		if (sig && !t_sig_ok && !explicit_) {
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t_sig_ok = 1;
		}
		between_sections(&rng, &st, explicit_);
		if (cfg.nap && !R.ops->qsbr)
			sleep_us(rnd(&rng) % (cfg.nap + 1ull));
	}
	doing("unregistering");
	t_sig_ok = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the handler sees the flag before the call */
	if (R.ops->reader_stop)
		R.ops->reader_stop(explicit_);
	t_qsbr_online = false;
	reader_stats_add(&st);
	thread_done();
	return NULL;
}

/*
 * --signals: a handler that runs one checked section on whatever reader thread it interrupts.
 * Only registered reader threads take it (t_sig_ok: a section in a handler of a thread that is
 * registering would wait for the registry lock the thread holds). Errors are counted, not
 * printed (async-signal-safe): the report shows them under their kinds.
 */
#define TORTURE_SIG (SIGRTMIN + 3)

static void sig_error(enum err_kind k)
{
	uint64_t expect = 0, t = now_ns() - R.t_start;

	ADD(&R.err[k], 1);
	__atomic_compare_exchange_n(&R.first_error_ns, &expect, t ? t : 1, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

static void sig_handler(int sig)
{
	const struct torture_ops *ops = R.ops;
	int saved = errno;

	(void)sig;
	if (!t_sig_ok) {
		errno = saved;
		return;
	}
	int idx = ops->read_lock(0);
	struct elem *p = ops->deref ? ops->deref(0, &R.slots[0]) : rcu_dereference(R.slots[0]);
	if (p) {
		uint32_t gen = LOAD(&p->gen);
		if (LOAD(&p->mark) != MARK_VALID)
			sig_error(E_MARK);
		spin(64 + (unsigned int)(now_ns() & 1023));
		if (LOAD(&p->age) >= 2)
			sig_error(E_AGE);
		if (LOAD(&p->gen) != gen)
			sig_error(E_RECYCLED);
		else if (LOAD(&p->mark) != MARK_VALID)
			sig_error(E_FREED);
	}
	ops->read_unlock(0, idx);
	ADD(&R.sig_sections, 1);
	errno = saved;
}

static void *signal_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	struct rng rng;
	uint64_t gap = 1000000ull / cfg.signals;

	thread_begin(ta);
	rng_init(&rng, cfg.seed, 9000);
	doing("signalling readers");
	while (!stopping()) {
		/* The readers are R.ta[0 .. readers): alive until stop_and_wait() joins them after
		 * this thread (a reader thread that has finished keeps its handle until joined). */
		unsigned int i = (unsigned int)(rnd(&rng) % R.nreaders);
		if (__atomic_load_n(&R.ta[i].live, __ATOMIC_RELAXED) &&
		    pthread_kill(R.ta[i].th, TORTURE_SIG) == 0)
			ADD(&R.sig_sent, 1);
		sleep_us(gap ? rnd(&rng) % (2 * gap + 1) : 0);
	}
	thread_done();
	return NULL;
}

/* A short-lived reader: registers (or not), reads a few sections, exits (with or without
 * unregistering: the thread-exit hook must clean up). */
static void *churn_child(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	struct reader_stats st;
	struct rng rng;

	memset(&st, 0, sizeof(st));
	rng_init(&rng, cfg.seed, seed);
	uint64_t x = rnd(&rng);
	bool explicit_ = x & 1, unregister = (x & 2) != 0;
	if (R.ops->reader_start)
		R.ops->reader_start(explicit_);
	t_qsbr_online = R.ops->qsbr;
	unsigned int n = 1 + (unsigned int)((x >> 8) % 64);
	for (unsigned int i = 0; i < n && !stopping(); i++) {
		read_section(&rng, &st);
		if (R.ops->quiescent && (rnd(&rng) & 1))
			R.ops->quiescent();
	}
	if (R.ops->reader_stop && unregister)
		R.ops->reader_stop(true);
	reader_stats_add(&st);
	return NULL;
}

static void *churn_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	uint64_t n = 0;

	thread_begin(ta);
	while (!stopping()) {
		pthread_t t;
		doing("creating and joining a short-lived reader");
		if (pthread_create(&t, NULL, churn_child,
				   (void *)(uintptr_t)(1000000 + ta->idx * 100000000ull + n)) !=
		    0) {
			sleep_us(1000);
			continue;
		}
		pthread_join(t, NULL);
		n++;
		ADD(&R.churn_threads, 1);
	}
	thread_done();
	return NULL;
}

/* ---- update side ---- */

/* Let a registered online QSBR thread's own quiescent state through while it waits. */
static void waiting_quiescent(void)
{
	if (t_qsbr_online)
		R.ops->quiescent();
}

static void poll_wait(unsigned int d, unsigned long c, uint64_t *loops)
{
	const struct torture_ops *ops = R.ops;
	unsigned int i = 0;

	while (!ops->poll_state(d, c)) {
		waiting_quiescent();
		if (++i & 15)
			sched_yield();
		else
			sleep_us(50);
	}
	*loops += i;
}

/* Wait for a full grace period of domain d by `path` (any path but call). Checks that a cookie
 * taken before the wait reports complete after it. */
static void full_wait(struct rng *rng, unsigned int d, enum path path, uint64_t *loops)
{
	const struct torture_ops *ops = R.ops;
	unsigned long before = ops->get_state ? ops->get_state(d) : 0, c;

	switch (path) {
	case P_SYNC:
		doing("synchronize");
		ops->sync(d);
		break;
	case P_EXP:
		doing("expedited synchronize");
		ops->exp_sync(d);
		break;
	case P_COND:
		c = rnd(rng) & 1 ? ops->start_poll(d) : ops->get_state(d);
		if (rnd(rng) & 1)
			spin((unsigned int)(rnd(rng) %
					    4096)); /* let the grace period start meanwhile */
		doing("cond_synchronize");
		ops->cond_sync(d, c);
		if (!ops->poll_state(d, c))
			terror(E_COOKIE_WRITER, "cookie %lu not complete after cond_synchronize",
			       c);
		break;
	case P_POLL:
		doing("start_poll + poll_state loop");
		c = ops->start_poll(d);
		poll_wait(d, c, loops);
		break;
	default:
		abort();
	}
	if (ops->poll_state && !ops->poll_state(d, before))
		terror(E_COOKIE_WRITER, "cookie %lu taken before a %s wait not complete after it",
		       before, path_names[path]);
}

static void *writer_thread(void *arg)
{
	struct writer *w = (struct writer *)arg;
	const struct torture_ops *ops = R.ops;

	thread_begin(w->ta);
	while (!stopping()) {
		uint64_t x = rnd(&w->rng);
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(x % ops->ndomains) : 0;
		/* A heap element in proportion to the free paths among the paths in use. */
		bool heap = R.nheap_paths &&
			    (R.npool_paths == 0 ||
			     (x >> 24) % (R.nheap_paths + R.npool_paths) < R.nheap_paths);
		struct elem *e = heap ? heap_new() : pool_get();

		if (!e) {
			/* Empty pool: reported in the counts; age this writer's lists and let the
			 * callbacks finish, then retry. */
			w->pool_empty++;
			for (unsigned int dd = 0; dd < ops->ndomains; dd++) {
				full_wait(&w->rng, dd, P_SYNC, &w->poll_loops);
				w->waits[P_SYNC]++;
				age_list(&w->removed[dd]);
				doing("barrier (pool empty)");
				if (ops->barrier)
					ops->barrier(dd);
			}
			ADD(&R.progress, 1);
			continue;
		}
		elem_init(e, d);
		struct elem *old = rcu_xchg_pointer(&R.slots[d], e);
		ADD(&w->updates, 1);
		ADD(&R.progress, 1);
		if (old && old->heap) {
			/* free_rcu (legal inside a read-side section: do it there sometimes, not in
			 * QSBR) or free_rcu_mightsleep (never inside one). */
			enum path p = R.heap_paths[(x >> 8) % R.nheap_paths];
			ADD(&old->age, 1u);
			if (p == P_FREE) {
				doing("free_rcu");
				bool in_section = !ops->qsbr && ((x >> 20) & 3) == 0;
				int idx = in_section ? ops->read_lock(d) : 0;
				ops->free(d, old, &old->rh);
				if (in_section) {
					ops->read_unlock(d, idx);
					ADD(&R.calls_in_section, 1);
				}
			} else if (p == P_RETIRE) {
				/* rcu_retire: legal inside a section in every flavor (not done
				 * there in QSBR: the writer is not a registered reader). */
				doing("rcu_retire");
				bool in_section = !ops->qsbr && ((x >> 20) & 1) == 0;
				int idx = in_section ? ops->read_lock(d) : 0;
				ops->retire(d, old);
				if (in_section) {
					ops->read_unlock(d, idx);
					ADD(&R.calls_in_section, 1);
				}
			} else {
				doing("free_rcu_mightsleep");
				ops->free_headless(d, old);
			}
			ADD(&w->waits[p], 1);
		} else if (old) {
			ADD(&old->age, 1u); /* removed: age 1 */
			enum path p = R.pool_paths[(x >> 8) % R.npool_paths];
			if (p == P_CALL || p == P_HURRY) {
				ADD(&R.cb_posted, 1);
				doing(p == P_CALL ? "call_rcu" : "call_rcu_hurry");
				/* call_rcu is legal inside a read-side section: do it there sometimes
				 * (not QSBR: the writer is not a registered reader). */
				bool in_section = !ops->qsbr && ((x >> 20) & 3) == 0;
				int idx = in_section ? ops->read_lock(d) : 0;
				if (p == P_CALL)
					ops->call(d, &old->rh, elem_cb);
				else
					ops->call_hurry(d, &old->rh, elem_cb);
				if (in_section) {
					ops->read_unlock(d, idx);
					ADD(&R.calls_in_section, 1);
				}
			} else {
				old->next = w->removed[d];
				w->removed[d] = old;
				full_wait(&w->rng, d, p, &w->poll_loops);
				age_list(&w->removed[d]);
			}
			ADD(&w->waits[p], 1);
		}
		doing("between updates");
		if (((x >> 40) & 7) == 0)
			sleep_us(10 + (x >> 48) % 90);
		else if (((x >> 40) & 7) == 1)
			sched_yield();
	}
	thread_done();
	return NULL;
}

static void *fake_writer_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	const struct torture_ops *ops = R.ops;
	struct rng rng;
	uint64_t loops = 0;

	thread_begin(ta);
	rng_init(&rng, cfg.seed, 2000 + ta->idx);
	if (ops->updater_start) {
		ops->updater_start(ta->idx);
		t_qsbr_online = ops->qsbr && (ta->idx & 1);
	}
	while (!stopping()) {
		uint64_t x = rnd(&rng);
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(x % ops->ndomains) : 0;
		enum fop f = R.fops[(x >> 8) % R.nfops];

		switch (f) {
		case F_SYNC:
			full_wait(&rng, d, P_SYNC, &loops);
			break;
		case F_EXP:
			full_wait(&rng, d, P_EXP, &loops);
			break;
		case F_BARRIER:
			doing("barrier");
			ops->barrier(d);
			break;
		case F_COND:
			full_wait(&rng, d, P_COND, &loops);
			break;
		case F_POLL:
			full_wait(&rng, d, P_POLL, &loops);
			break;
		case F_FREE_BARRIER:
			doing("free_barrier");
			ops->free_barrier(d);
			break;
		default:
			abort();
		}
		ADD(&R.fake_ops[f], 1);
		ADD(&R.progress, 1);
		doing("between operations");
		waiting_quiescent();
		if (((x >> 32) & 3) == 0) {
			if (t_qsbr_online)
				ops->offline();
			sleep_us(10 + (x >> 40) % 200);
			if (t_qsbr_online)
				ops->online();
		} else {
			spin((unsigned int)((x >> 40) % 1024));
		}
	}
	if (ops->updater_stop)
		ops->updater_stop(ta->idx);
	t_qsbr_online = false;
	ADD(&R.fake_poll_loops, loops);
	thread_done();
	return NULL;
}

static void barrier_cb(struct rcu_head *h)
{
	struct barrier_head *bh = grace_container_of(h, struct barrier_head, rh);
	if (R.ops->read_ongoing && R.ops->read_ongoing())
		terror(E_CB_CONTEXT, "barrier-test callback invoked inside a read-side section");
	ADD(bh->invoked, 1);
}

/* Post callbacks, barrier, check every one was invoked (posted == invoked). */
static void *barrier_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	const struct torture_ops *ops = R.ops;
	struct barrier_head *heads = R.bheads + (size_t)ta->idx * BARRIER_HEADS;
	uint64_t *invoked = &R.binvoked[ta->idx], posted = 0;
	struct rng rng;

	thread_begin(ta);
	rng_init(&rng, cfg.seed, 3000 + ta->idx);
	while (!stopping()) {
		uint64_t x = rnd(&rng);
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(x % ops->ndomains) : 0;
		unsigned int n = 1 + (unsigned int)((x >> 8) % BARRIER_HEADS);

		doing("call_rcu (barrier check)");
		for (unsigned int i = 0; i < n; i++) {
			heads[i].invoked = invoked;
			ops->call(d, &heads[i].rh, barrier_cb);
		}
		posted += n;
		doing("barrier (barrier check)");
		ops->barrier(d);
		uint64_t got = __atomic_load_n(invoked, __ATOMIC_ACQUIRE);
		if (got != posted) {
			terror(E_BARRIER,
			       "barrier returned with %" PRIu64 " of %" PRIu64
			       " earlier callbacks invoked",
			       got, posted);
			break; /* the heads may still be queued: never reuse them */
		}
		ADD(&R.barrier_checks, 1);
		ADD(&R.barrier_cbs, n);
		ADD(&R.progress, 1);
		doing("between checks");
		sleep_us(100 + (x >> 32) % 1000);
	}
	thread_done();
	return NULL;
}

struct flood_head {
	struct rcu_head rh;
};

static void flood_cb(struct rcu_head *h)
{
	free(grace_container_of(h, struct flood_head, rh));
	ADD(&R.flood_invoked, 1);
}

/* A free_rcu flood phase (one in three when the flavor has the free paths and they are in
 * use): the library must keep memory bounded by itself (no throttle of ours), then
 * free_rcu_barrier must return (the watchdog catches it if not). */
static void flood_free_phase(struct rng *rng, unsigned int d, uint64_t t_end)
{
	const struct torture_ops *ops = R.ops;
	uint64_t x = rnd(rng);
	bool headless = (x & 1) && ops->free_headless;
	bool retire = !headless && (x & 2) && ops->retire;

	doing(headless ? "free_rcu_mightsleep flood"
	      : retire ? "rcu_retire flood"
		       : "free_rcu flood");
	while (!stopping() && now_ns() < t_end) {
		for (int i = 0; i < 256; i++) {
			struct flood_head *fh = (struct flood_head *)malloc(sizeof(*fh));
			if (!fh)
				break;
			ADD(&R.flood_free_posted, 1);
			if (headless)
				ops->free_headless(d, fh);
			else if (retire)
				ops->retire(d, fh);
			else
				ops->free(d, fh, &fh->rh);
		}
	}
	doing("free_barrier after flood");
	for (unsigned int dd = 0; dd < ops->ndomains; dd++)
		ops->free_barrier(dd);
	ADD(&R.flood_free_phases, 1);
}

/*
 * Lonely callbacks (--lonely N): each of N threads posts one callback at a time (call or
 * call_hurry) and waits for it with no barrier: a callback that is not invoked within
 * --lonely-wait seconds was forgotten (a lost wake-up of the engine's worker). Barriers, polls
 * and floods by other threads wake the workers and would hide it, so a run meant to catch it
 * has no other caller: --writers 0 --fake-writers 0 --barrier-threads 0 --flood 0
 * --cookie-checks 0 --lonely 1.
 */
struct lonely_head {
	struct rcu_head rh;
	uint32_t invoked; /* atomic */
};
static void lonely_cb(struct rcu_head *h)
{
	struct lonely_head *lh = grace_container_of(h, struct lonely_head, rh);

	if (R.ops->read_ongoing && R.ops->read_ongoing())
		terror(E_CB_CONTEXT, "lonely callback invoked inside a read-side section");
	__atomic_store_n(&lh->invoked, 1u, __ATOMIC_RELEASE);
}

static void *lonely_thread(void *arg)
{
	struct thread_arg *ta = (struct thread_arg *)arg;
	const struct torture_ops *ops = R.ops;
	/* Static storage per thread (as the barrier heads): never a dead stack frame. */
	struct lonely_head *lh = &R.lheads[ta->idx];
	struct rng rng;

	thread_begin(ta);
	rng_init(&rng, cfg.seed, 7000 + ta->idx);
	while (!stopping()) {
		uint64_t x = rnd(&rng);
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(x % ops->ndomains) : 0;
		bool hurry = ops->call_hurry && (x & 1);
		uint64_t t0 = now_ns();

		__atomic_store_n(&lh->invoked, 0u, __ATOMIC_RELAXED);
		doing(hurry ? "call_rcu_hurry (lonely)" : "call_rcu (lonely)");
		if (hurry)
			ops->call_hurry(d, &lh->rh, lonely_cb);
		else
			ops->call(d, &lh->rh, lonely_cb);
		doing("waiting for a lonely callback");
		while (!__atomic_load_n(&lh->invoked, __ATOMIC_ACQUIRE)) {
			if ((now_ns() - t0) / 1e9 > cfg.lonely_wait) {
				terror(E_STALL,
				       "%s callback of domain %u not invoked %.0f s after the call "
				       "(no barrier asked for it): a lost wake-up",
				       hurry ? "call_rcu_hurry" : "call_rcu", d, cfg.lonely_wait);
				doing("barrier (lonely callback overdue)");
				ops->barrier(d);
				break;
			}
			sleep_us(200);
		}
		if (__atomic_load_n(&lh->invoked, __ATOMIC_ACQUIRE))
			ADD(&R.lonely_cbs, 1);
		ADD(&R.progress, 1);
		doing("between lonely callbacks");
		sleep_us(100 + (x >> 8) % 2000); /* long enough for the worker to go idle */
	}
	thread_done();
	return NULL;
}

/* Bursts of callbacks: the engine must keep memory bounded and grace periods moving (the
 * watchdog fails the run if the writers stop making progress). */
static void *flood_thread(void *arg)
{
	thread_begin((struct thread_arg *)arg);
	const struct torture_ops *ops = R.ops;
	struct rng rng;

	rng_init(&rng, cfg.seed, 4000);
	sleep_us(100000);
	while (!stopping()) {
		uint64_t t0 = now_ns(), u0 = 0, t_end = t0 + 200000000ull;
		unsigned int d = ops->ndomains > 1 ? (unsigned int)(rnd(&rng) % ops->ndomains) : 0;

		u0 = LOAD(&R.progress);
		if (R.nheap_paths && ops->free && rnd(&rng) % 3 == 0) {
			flood_free_phase(&rng, d, t_end);
			ADD(&R.progress, 1);
			doing("between flood phases");
			sleep_us(100000 + rnd(&rng) % 200000);
			continue;
		}
		doing("call_rcu flood");
		while (!stopping() && now_ns() < t_end) {
			for (int i = 0; i < 256; i++) {
				struct flood_head *fh = (struct flood_head *)malloc(sizeof(*fh));
				if (!fh)
					break;
				ADD(&R.flood_posted, 1);
				ops->call(d, &fh->rh, flood_cb);
			}
			if (ops->cb_stats) {
				struct grace_cb_stats st;
				memset(&st, 0, sizeof(st));
				ops->cb_stats(d, &st);
				if (st.pending > LOAD(&R.max_pending))
					STORE(&R.max_pending, st.pending);
			}
			if (LOAD(&R.flood_posted) - LOAD(&R.flood_invoked) > FLOOD_CAP) {
				ADD(&R.flood_throttled, 1);
				sleep_us(1000);
			}
		}
		ADD(&R.flood_updates, LOAD(&R.progress) - u0);
		ADD(&R.flood_ns, now_ns() - t0);
		doing("barrier after flood");
		for (unsigned int dd = 0; dd < ops->ndomains; dd++)
			ops->barrier(dd);
		uint64_t p = LOAD(&R.flood_posted),
			 i = __atomic_load_n(&R.flood_invoked, __ATOMIC_ACQUIRE);
		if (p != i)
			terror(E_FLOOD,
			       "after barrier %" PRIu64 " of %" PRIu64 " flood callbacks invoked",
			       i, p);
		ADD(&R.flood_phases, 1);
		ADD(&R.progress, 1);
		doing("between flood phases");
		sleep_us(100000 + rnd(&rng) % 200000);
	}
	thread_done();
	return NULL;
}

/* ---- one run ---- */

static void engine_counts(uint64_t *gps, uint64_t *hard_waits)
{
	*gps = *hard_waits = 0;
	if (!R.ops->cb_stats)
		return;
	for (unsigned int d = 0; d < R.ops->ndomains; d++) {
		struct grace_cb_stats st;
		memset(&st, 0, sizeof(st));
		R.ops->cb_stats(d, &st);
		*gps += st.grace_periods;
		*hard_waits += st.waits;
	}
}

/* Writer counts into the totals (also called at a stall, while writers may still run). */
static void sum_writers(void)
{
	R.updates = R.pool_empty = R.poll_loops = 0;
	memset(R.waits, 0, sizeof(R.waits));
	for (unsigned int i = 0; i < R.nwriters; i++) {
		struct writer *w = &R.ws[i];
		R.updates += LOAD(&w->updates);
		R.pool_empty += LOAD(&w->pool_empty);
		R.poll_loops += LOAD(&w->poll_loops);
		for (int p = 0; p < P_N; p++)
			R.waits[p] += LOAD(&w->waits[p]);
	}
}

static void print_report(const char *verdict, double secs)
{
	const struct torture_ops *ops = R.ops;
	int last = 1;

	for (int k = 0; k < HIST_LEN; k++)
		if (R.rs.hist[k])
			last = k;
	printf("torture: %s: age histogram:", ops->name);
	for (int k = 0; k <= last; k++)
		printf(" %d%s:%" PRIu64, k, k == HIST_LEN - 1 ? "+" : "", R.rs.hist[k]);
	printf("\n");
	printf("torture: %s: reader sections %" PRIu64 " (%.0f/s), dereferences %" PRIu64
	       ", long delays %" PRIu64 ", cookie checks %" PRIu64,
	       ops->name, R.rs.sections, R.rs.sections / secs, R.rs.derefs, R.rs.long_delays,
	       R.rs.cookie_checks);
	if (ops->qsbr)
		printf(", offline sleeps %" PRIu64, R.rs.offline_sleeps);
	else if (R.rs.reregisters)
		printf(", re-registrations %" PRIu64, R.rs.reregisters);
	printf(", churn threads %" PRIu64, LOAD(&R.churn_threads));
	if (cfg.lonely)
		printf(", lonely callbacks %" PRIu64, LOAD(&R.lonely_cbs));
	printf("\n");
	if (ops->park_stats) {
		printf("torture: %s: parked threads %lu, handed back %lu", ops->name,
		       R.parks_end - R.parks_start, R.unparks_end - R.unparks_start);
		if (LOAD(&R.sig_sent))
			printf(", signals %" PRIu64 ", sections in signal handlers %" PRIu64,
			       LOAD(&R.sig_sent), LOAD(&R.sig_sections));
		printf("\n");
	}
	uint64_t nwaits = 0;
	for (int p = 0; p < P_N; p++)
		if (p != P_CALL && p != P_HURRY && p != P_FREE && p != P_HEADLESS && p != P_RETIRE)
			nwaits += R.waits[p];
	printf("torture: %s: updates %" PRIu64 " (%.0f/s), writer grace-period waits %" PRIu64
	       " (%.0f/s), pool empty %" PRIu64 ", retire paths:",
	       ops->name, R.updates, R.updates / secs, nwaits, nwaits / secs, R.pool_empty);
	for (unsigned int i = 0; i < R.npaths; i++)
		printf(" %s %" PRIu64, path_names[R.paths[i]], R.waits[R.paths[i]]);
	printf("\n");
	if (ops->cb_stats) {
		uint64_t gps = R.gp_end - R.gp_start;
		printf("torture: %s: grace periods %" PRIu64 " (%.0f/s, engine counter), callers "
		       "waiting at the hard callback limit %" PRIu64 "\n",
		       ops->name, gps, gps / secs, R.hard_waits_end - R.hard_waits_start);
	}
	printf("torture: %s: fake-writer ops:", ops->name);
	for (unsigned int i = 0; i < R.nfops; i++)
		printf(" %s %" PRIu64, fop_names[R.fops[i]], LOAD(&R.fake_ops[R.fops[i]]));
	printf(", poll loops %" PRIu64 "\n", LOAD(&R.fake_poll_loops) + R.poll_loops);
	if (ops->call) {
		printf("torture: %s: callbacks: elements %" PRIu64 "/%" PRIu64
		       " invoked/posted, barrier checks %" PRIu64 " (%" PRIu64 " callbacks)",
		       ops->name, LOAD(&R.cb_invoked), LOAD(&R.cb_posted), LOAD(&R.barrier_checks),
		       LOAD(&R.barrier_cbs));
		if (LOAD(&R.calls_in_section))
			printf(", %" PRIu64 " queued inside a section", LOAD(&R.calls_in_section));
		if (cfg.flood)
			printf(", flood %" PRIu64 "/%" PRIu64 " in %" PRIu64
			       " phases (%.0f/s while "
			       "flooding, %" PRIu64
			       " update-side ops meanwhile, max pending %" PRIu64 ", %" PRIu64
			       " throttled at %u)",
			       LOAD(&R.flood_invoked), LOAD(&R.flood_posted), LOAD(&R.flood_phases),
			       R.flood_ns ? LOAD(&R.flood_posted) / (LOAD(&R.flood_ns) / 1e9) : 0.0,
			       LOAD(&R.flood_updates), LOAD(&R.max_pending),
			       LOAD(&R.flood_throttled), FLOOD_CAP);
		printf("\n");
	}
	if (R.nheap_paths)
		printf("torture: %s: free paths: %" PRIu64
		       " heap elements, free_rcu floods %" PRIu64 " objects in %" PRIu64
		       " phases\n",
		       ops->name, LOAD(&R.heap_allocs), LOAD(&R.flood_free_posted),
		       LOAD(&R.flood_free_phases));
	printf("torture: %s: errors:", ops->name);
	for (int k = 0; k < E_NKINDS; k++)
		printf(" %s %" PRIu64, err_names[k], LOAD(&R.err[k]));
	printf("\n");
	if (R.first_error_ns)
		printf("torture: %s: first error after %.3f s\n", ops->name,
		       LOAD(&R.first_error_ns) / 1e9);
	printf("torture: %s: %s\n", ops->name, verdict);
	fflush(stdout);
}

static bool start_thread(struct thread_arg *ta, const char *role, unsigned int idx,
			 void *(*fn)(void *), void *arg)
{
	ta->role = role;
	ta->idx = idx;
	ta->doing = "created";
	ta->live = 1;
	__atomic_fetch_add(&R.live, 1, __ATOMIC_RELAXED);
	int e = pthread_create(&ta->th, NULL, fn, arg);
	if (e != 0) {
		__atomic_fetch_sub(&R.live, 1, __ATOMIC_RELAXED);
		ta->live = 0;
		fprintf(stderr, "torture: pthread_create: %s\n", strerror(e));
		exit(2);
	}
	return true;
}

/* A hang: name every thread that has not finished and what it is doing, then exit without
 * joining (the blocked threads will not return). */
static GRACE_NORETURN void stall_exit(void)
{
	for (unsigned int i = 0; i < R.nthreads; i++) {
		struct thread_arg *ta = &R.ta[i];
		if (__atomic_load_n(&ta->live, __ATOMIC_RELAXED))
			fprintf(stderr, "torture: %s: stalled: %s %u in %s\n", R.ops->name,
				ta->role, ta->idx, __atomic_load_n(&ta->doing, __ATOMIC_RELAXED));
	}
	sum_writers();
	print_report("FAILURE", (now_ns() - R.t_start) / 1e9);
	printf("torture: FAILURE (stall)\n");
	fflush(stdout);
	fflush(stderr);
	_exit(1);
}

/* Stop and wait for every thread; a thread that does not finish is a stall (hang) failure. */
static void stop_and_wait(void)
{
	uint64_t t0 = now_ns();
	/* Already stalled: the blocked threads will not return, do not wait another period. */
	double limit = LOAD(&R.err[E_STALL]) ? 1.0 : cfg.stall;

	__atomic_store_n(&R.stop, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&R.live, __ATOMIC_ACQUIRE) > 0) {
		if ((now_ns() - t0) / 1e9 > limit) {
			terror(E_STALL,
			       "%d threads did not finish %.0f s after the end of the run "
			       "(a grace period, barrier or poll that never completes)",
			       __atomic_load_n(&R.live, __ATOMIC_RELAXED), limit);
			stall_exit();
		}
		sleep_us(10000);
	}
}

/* Is retire path `name` in the --paths list (or is there no list)? */
static bool path_wanted(const char *name)
{
	size_t n = strlen(name);
	const char *s = cfg.paths;

	if (!s)
		return true;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && !strncmp(s, name, n))
			return true;
		if (!e)
			break;
		s = e + 1;
	}
	return false;
}

static int run_flavor(const struct torture_ops *ops)
{
	unsigned int nr = cfg.readers, nw = cfg.writers;
	unsigned int nfake = cfg.fake_writers, nchurn = cfg.churn;
	unsigned int nbar = ops->call ? cfg.barrier_threads : 0;
	bool flood = ops->call && cfg.flood;
	unsigned int nlonely = ops->call ? cfg.lonely : 0;

	memset(&R, 0, sizeof(R));
	R.ops = ops;
	pthread_mutex_init(&R.pool_lock, NULL);
	pthread_mutex_init(&R.sum_lock, NULL);

	if (ops->init) {
		int e = ops->init();
		if (e < 0) {
			printf("torture: %s: SKIPPED (init: %s)\n", ops->name, strerror(-e));
			return 0;
		}
	}
	if (ops->set_free_hook) {
		/* Before any object is queued (or already ours: a run before this one set it). */
		R.counting_frees = true;
		for (unsigned int d = 0; d < ops->ndomains; d++)
			if (ops->set_free_hook(d, heap_free_hook) != 0)
				R.counting_frees = false;
	}
	bool have[P_N] = { true,
			   ops->exp_sync != NULL,
			   ops->call != NULL,
			   ops->cond_sync != NULL,
			   ops->start_poll != NULL,
			   ops->call_hurry != NULL,
			   ops->free != NULL && ops->free_barrier != NULL,
			   ops->free_headless != NULL && ops->free_barrier != NULL,
			   ops->retire != NULL && ops->free_barrier != NULL };
	for (int p = 0; p < P_N; p++) {
		if (!have[p] || !path_wanted(path_names[p]))
			continue;
		R.paths[R.npaths++] = (enum path)p;
		if (p == P_FREE || p == P_HEADLESS || p == P_RETIRE)
			R.heap_paths[R.nheap_paths++] = (enum path)p;
		else
			R.pool_paths[R.npool_paths++] = (enum path)p;
	}
	if (R.npaths == 0) {
		printf("torture: %s: SKIPPED (none of the paths \"%s\" exists)\n", ops->name,
		       cfg.paths);
		return 0;
	}
	R.fops[R.nfops++] = F_SYNC;
	if (ops->exp_sync)
		R.fops[R.nfops++] = F_EXP;
	if (ops->barrier)
		R.fops[R.nfops++] = F_BARRIER;
	if (ops->cond_sync)
		R.fops[R.nfops++] = F_COND;
	if (ops->start_poll)
		R.fops[R.nfops++] = F_POLL;
	if (R.nheap_paths)
		R.fops[R.nfops++] = F_FREE_BARRIER;

	R.nelems = cfg.pool < 2 * ops->ndomains ? 2 * ops->ndomains : cfg.pool;
	R.elems = (struct elem *)calloc(R.nelems, sizeof(struct elem));
	R.bheads = (struct barrier_head *)calloc((size_t)(nbar + 1) * BARRIER_HEADS,
						 sizeof(struct barrier_head));
	R.binvoked = (uint64_t *)calloc(nbar + 1, sizeof(uint64_t));
	R.nwriters = nw;
	R.ws = (struct writer *)calloc(nw + 1, sizeof(struct writer)); /* + the final drain */
	R.lheads = (struct lonely_head *)calloc(nlonely + 1, sizeof(struct lonely_head));
	bool sigs = cfg.signals && ops->park_stats && nr;
	R.ta = (struct thread_arg *)calloc(nr + nw + nfake + nchurn + nbar + nlonely + 2,
					   sizeof(struct thread_arg));
	if (!R.elems || !R.bheads || !R.binvoked || !R.ws || !R.lheads || !R.ta) {
		fprintf(stderr, "torture: out of memory\n");
		exit(2);
	}
	for (unsigned int i = 0; i < R.nelems; i++) {
		STORE(&R.elems[i].mark, MARK_FREE);
		R.elems[i].next = R.pool_head;
		R.pool_head = &R.elems[i];
	}
	R.pool_free = R.nelems;
	for (unsigned int d = 0; d < ops->ndomains; d++) {
		/* Only free paths in use: the first elements are heap elements too. */
		struct elem *e = R.npool_paths ? pool_get() : heap_new();
		elem_init(e, d);
		rcu_assign_pointer(R.slots[d], e);
	}

	printf("torture: %s: %s\n", ops->name, ops->desc);
	printf("torture: %s: mode %s; %.1f s, %u readers, %u writers, %u fake writers, %u churn, "
	       "%u barrier, flood %s, pool %u, seed %" PRIu64 "; paths:",
	       ops->name, ops->mode ? ops->mode() : "-", cfg.duration, nr, nw, nfake, nchurn, nbar,
	       flood ? "on" : "off", R.nelems, cfg.seed);
	for (unsigned int i = 0; i < R.npaths; i++)
		printf(" %s", path_names[R.paths[i]]);
	printf("\n");
	fflush(stdout);

	engine_counts(&R.gp_start, &R.hard_waits_start);
	if (ops->park_stats)
		ops->park_stats(&R.parks_start, &R.unparks_start);
	R.gp_end = R.gp_start;
	R.hard_waits_end = R.hard_waits_start;
	R.t_start = now_ns();
	struct thread_arg *ta = R.ta;
	unsigned int k = 0;
	for (unsigned int i = 0; i < nr; i++, k++)
		start_thread(&ta[k], "reader", i, reader_thread, &ta[k]);
	R.nreaders = nr;
	if (sigs) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = sig_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(TORTURE_SIG, &sa, NULL);
		start_thread(&ta[k], "signaller", 0, signal_thread, &ta[k]);
		k++;
	}
	for (unsigned int i = 0; i < nw; i++, k++) {
		R.ws[i].ta = &ta[k];
		R.ws[i].idx = i;
		rng_init(&R.ws[i].rng, cfg.seed, 5000 + i);
		start_thread(&ta[k], "writer", i, writer_thread, &R.ws[i]);
	}
	for (unsigned int i = 0; i < nfake; i++, k++)
		start_thread(&ta[k], "fake writer", i, fake_writer_thread, &ta[k]);
	for (unsigned int i = 0; i < nchurn; i++, k++)
		start_thread(&ta[k], "churn", i, churn_thread, &ta[k]);
	for (unsigned int i = 0; i < nbar; i++, k++)
		start_thread(&ta[k], "barrier checker", i, barrier_thread, &ta[k]);
	if (flood) {
		start_thread(&ta[k], "flood", 0, flood_thread, &ta[k]);
		k++;
	}
	for (unsigned int i = 0; i < nlonely; i++, k++)
		start_thread(&ta[k], "lonely caller", i, lonely_thread, &ta[k]);
	R.nthreads = k;

	/* Watchdog: the run ends at its duration, at the first error with --fail-fast, or as a
	 * stall failure when no update-side operation completes for cfg.stall seconds. */
	uint64_t last_p = LOAD(&R.progress), last_change = now_ns();
	for (;;) {
		sleep_us(20000);
		uint64_t t = now_ns(), p = LOAD(&R.progress);
		if ((t - R.t_start) / 1e9 >= cfg.duration)
			break;
		if (cfg.fail_fast && total_errors())
			break;
		if (p != last_p) {
			last_p = p;
			last_change = t;
		} else if ((nw || nfake || nbar || nlonely) &&
			   (t - last_change) / 1e9 > cfg.stall) {
			terror(E_STALL, "no update-side operation completed for %.0f s", cfg.stall);
			break;
		}
	}
	stop_and_wait();
	R.t_end = now_ns();
	engine_counts(&R.gp_end, &R.hard_waits_end);
	if (ops->park_stats)
		ops->park_stats(&R.parks_end, &R.unparks_end);
	for (unsigned int i = 0; i < k; i++)
		pthread_join(ta[i].th, NULL);

	/* Drain: retire the current elements, age every list to the end, let every callback
	 * chain finish (each invocation re-queues at most once, so MAX_AGE + 1 barriers). */
	struct writer *dw = &R.ws[nw];
	for (unsigned int d = 0; d < ops->ndomains; d++) {
		struct elem *e = rcu_xchg_pointer(&R.slots[d], (struct elem *)NULL);
		if (e && e->heap) {
			ops->free(d, e, &e->rh);
		} else if (e) {
			ADD(&e->age, 1u);
			e->next = dw->removed[d];
			dw->removed[d] = e;
		}
	}
	for (unsigned int d = 0; d < ops->ndomains; d++) {
		for (int a = 0; a < TORTURE_MAX_AGE; a++) {
			ops->sync(d);
			for (unsigned int i = 0; i <= nw; i++)
				age_list(&R.ws[i].removed[d]);
		}
	}
	if (ops->barrier)
		for (int a = 0; a < TORTURE_MAX_AGE + 1; a++)
			for (unsigned int d = 0; d < ops->ndomains; d++)
				ops->barrier(d);
	/* Heap elements: every one freed by the library (counted by the free hook; LSan checks it
	 * too in the ASan build). */
	if (R.nheap_paths)
		for (unsigned int d = 0; d < ops->ndomains; d++)
			ops->free_barrier(d);
	bool lost = false;
	if (R.nheap_paths && R.counting_frees &&
	    LOAD(&R.heap_freed) != LOAD(&R.heap_allocs) + LOAD(&R.flood_free_posted)) {
		terror(E_LOST,
		       "heap elements and flood objects: %" PRIu64 " queued, %" PRIu64
		       " freed after the final barrier",
		       LOAD(&R.heap_allocs) + LOAD(&R.flood_free_posted), LOAD(&R.heap_freed));
	}
	if (R.pool_free != R.nelems) {
		terror(E_LOST, "%u of %u elements not back in the pool after the drain",
		       R.nelems - R.pool_free, R.nelems);
		lost = true;
	}
	if (LOAD(&R.cb_posted) != LOAD(&R.cb_invoked)) {
		terror(E_LOST, "element callbacks: %" PRIu64 " posted, %" PRIu64 " invoked",
		       LOAD(&R.cb_posted), LOAD(&R.cb_invoked));
		lost = true;
	}
	if (LOAD(&R.flood_posted) != LOAD(&R.flood_invoked)) {
		terror(E_LOST, "flood callbacks: %" PRIu64 " posted, %" PRIu64 " invoked",
		       LOAD(&R.flood_posted), LOAD(&R.flood_invoked));
		lost = true;
	}

	sum_writers();
	if (ops->cleanup)
		ops->cleanup();
	bool ok = total_errors() == 0;
	print_report(ok ? "SUCCESS" : "FAILURE", (R.t_end - R.t_start) / 1e9);
	/* Memory the engine may still reference after a lost callback is leaked on purpose. */
	if (!lost) {
		free(R.elems);
		free(R.bheads);
		free(R.binvoked);
		free(R.lheads);
	}
	free(R.ws);
	free(R.ta);
	return ok ? 0 : 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: torture [options]\n"
		"  --flavor NAME|all   flavor to torture (default all; --list shows them)\n"
		"  --duration SEC      run time per flavor (default 10)\n"
		"  --readers N         reader threads (default: CPUs + 1)\n"
		"  --writers N         writer threads (default 1)\n"
		"  --fake-writers N    threads hammering synchronize/barrier/polls (default 2)\n"
		"  --churn N           threads spawning short-lived readers (default 1)\n"
		"  --barrier-threads N rcu_barrier checkers (default 1)\n"
		"  --flood 0|1         callback flood phases (default 1)\n"
		"  --pool N            elements in the pool (default 1024)\n"
		"  --long-delay N      a reader sleeps in one section of N (default 16384; 0: never)\n"
		"  --stall SEC         no progress for SEC seconds is a failure (default 60)\n"
		"  --seed N            random seed (default: time)\n"
		"  --fail-fast         end the run at the first error\n"
		"  --paths LIST        retire paths, comma-separated subset of\n"
		"                      sync,exp,call,cond,poll,hurry,free,headless\n"
		"  --cookie-checks 0|1 readers check cookies taken inside sections (default 1)\n"
		"  --lonely N          threads posting one callback at a time, with no barrier\n"
		"                      (default 0)\n"
		"  --lonely-wait SEC   a lonely callback not invoked in SEC is a failure (default 10)\n"
		"  --nap US            readers sleep up to US microseconds between sections, so the\n"
		"                      default flavor parks them (default 0)\n"
		"  --signals N         N signals a second to readers of the default flavor, whose\n"
		"                      handler runs a checked section (default 0)\n"
		"  --list              list the flavors\n");
}

static const struct torture_ops *find_flavor(const char *name)
{
	for (int i = 0; torture_flavors[i]; i++)
		if (strcmp(torture_flavors[i]->name, name) == 0)
			return torture_flavors[i];
	if (strcmp(name, torture_broken_ops.name) == 0)
		return &torture_broken_ops;
	/* Hazard pointers: named runs only (no callbacks, no grace periods of a flavor). */
	if (strcmp(name, torture_hazptr_ops.name) == 0)
		return &torture_hazptr_ops;
	if (strcmp(name, torture_hazptr_broken_ops.name) == 0)
		return &torture_hazptr_broken_ops;
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cfg.seed = (uint64_t)time(NULL);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUMARG(field, conv)                                                       \
	do {                                                                      \
		if (!v) {                                                         \
			fprintf(stderr, "torture: %s needs a value\n", a);        \
			return 2;                                                 \
		}                                                                 \
		char *end;                                                        \
		errno = 0;                                                        \
		cfg.field = conv;                                                 \
		if (errno || *end) {                                              \
			fprintf(stderr, "torture: bad value for %s: %s\n", a, v); \
			return 2;                                                 \
		}                                                                 \
		i++;                                                              \
	} while (0)
		if (!strcmp(a, "--flavor")) {
			if (!v) {
				usage(stderr);
				return 2;
			}
			cfg.flavor = v;
			i++;
		} else if (!strcmp(a, "--duration")) {
			NUMARG(duration, strtod(v, &end));
		} else if (!strcmp(a, "--readers")) {
			NUMARG(readers, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--writers")) {
			NUMARG(writers, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--fake-writers")) {
			NUMARG(fake_writers, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--churn")) {
			NUMARG(churn, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--barrier-threads")) {
			NUMARG(barrier_threads, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--flood")) {
			NUMARG(flood, (int)strtol(v, &end, 0));
		} else if (!strcmp(a, "--pool")) {
			NUMARG(pool, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--long-delay")) {
			NUMARG(long_delay, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--stall")) {
			NUMARG(stall, strtod(v, &end));
		} else if (!strcmp(a, "--seed")) {
			NUMARG(seed, strtoull(v, &end, 0));
		} else if (!strcmp(a, "--paths")) {
			if (!v) {
				usage(stderr);
				return 2;
			}
			cfg.paths = v;
			i++;
		} else if (!strcmp(a, "--cookie-checks")) {
			NUMARG(cookie_checks, (int)strtol(v, &end, 0));
		} else if (!strcmp(a, "--nap")) {
			NUMARG(nap, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--signals")) {
			NUMARG(signals, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--lonely")) {
			NUMARG(lonely, (unsigned int)strtoul(v, &end, 0));
		} else if (!strcmp(a, "--lonely-wait")) {
			NUMARG(lonely_wait, strtod(v, &end));
		} else if (!strcmp(a, "--fail-fast")) {
			cfg.fail_fast = true;
		} else if (!strcmp(a, "--verbose")) {
			cfg.verbose = true;
		} else if (!strcmp(a, "--list")) {
			for (int k = 0; torture_flavors[k]; k++)
				printf("%-12s %s\n", torture_flavors[k]->name,
				       torture_flavors[k]->desc);
			printf("%-12s %s\n", torture_broken_ops.name, torture_broken_ops.desc);
			printf("%-12s %s\n", torture_hazptr_ops.name, torture_hazptr_ops.desc);
			printf("%-12s %s\n", torture_hazptr_broken_ops.name,
			       torture_hazptr_broken_ops.desc);
			return 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "torture: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (cfg.readers == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cfg.readers = (unsigned int)(n > 0 ? n : 1) + 1;
	}
	if (cfg.stall < 1)
		cfg.stall = 1;

	int fails = 0, runs = 0;
	if (!strcmp(cfg.flavor, "all")) {
		for (int i = 0; torture_flavors[i]; i++, runs++)
			fails += run_flavor(torture_flavors[i]);
	} else {
		const struct torture_ops *ops = find_flavor(cfg.flavor);
		if (!ops) {
			fprintf(stderr, "torture: unknown flavor %s (--list)\n", cfg.flavor);
			return 2;
		}
		fails += run_flavor(ops);
		runs++;
	}
	printf("torture: %s (%d flavor%s, %d failed)\n", fails ? "FAILURE" : "SUCCESS", runs,
	       runs == 1 ? "" : "s", fails);
	return fails ? 1 : 0;
}
