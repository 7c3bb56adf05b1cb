/* SPDX-License-Identifier: MIT */
/*
 * srcu read side and grace periods against grace's default flavor and against the same srcu
 * algorithm with atomic increments.
 *
 *   srcu_bench pair --design D [--threads T] [--ms M] [--run R] [--as NAME]
 *       D: srcu         srcu_read_lock + srcu_read_unlock (rseq increments, no fence)
 *          rcu          grace's default flavor: rcu_read_lock + rcu_read_unlock
 *          srcu-atomic  the srcu algorithm, same domain and counters, with lock xadd instead
 *                       of rseq (CPU number still read from the rseq area)
 *          srcu-getcpu  the same with sched_getcpu() + lock xadd (no rseq at all)
 *          rseq-floor   only the pair's two rseq critical sections, domain words hoisted
 *                       (a decomposition of srcu's cost, not a usable reader)
 *          srcu-deref, rcu-deref  a minimal real section: srcu_dereference / rcu_dereference of
 *                       a global pointer and one load through it
 *       Threads are pinned round-robin to the CPUs of the affinity mask: with more threads
 *       than CPUs the run is oversubscribed (run.sh labels it).
 *   srcu_bench sync --design srcu|rcu [--readers R] [--ms M] [--run R]
 *       synchronize latency (p50, p99) while R threads run read-side sections back to back,
 *       each a dereference and one load (srcu-deref, rcu-deref), after 20 warm-up grace
 *       periods: the same method as bench/readside's sync, so the rcu rows measure what that
 *       family's grace rows measure (in other runs, without liburcu interleaved).
 *   srcu_bench list
 * CSV rows: bench,design,threads,run,metric,value,unit. Metrics: ns_per_pair (thread CPU time
 * per lock+unlock pair), mpairs_per_s (all threads, wall clock), sync_p50_us, sync_p99_us.
 */
#include "bench.h"

#include <grace/rcu.h>
#include <grace/srcu.h>

DEFINE_STATIC_SRCU(dom);

/* ---- one measured loop per design ---- */

static BENCH_NOINLINE void loop_srcu(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int idx = srcu_read_lock(&dom);
		BENCH_CLOBBER(); /* the section */
		srcu_read_unlock(&dom, idx);
	}
}

static BENCH_NOINLINE void loop_rcu(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rcu_read_lock();
		BENCH_CLOBBER();
		rcu_read_unlock();
	}
}

/* A realistic minimal section: load an RCU-protected pointer and read a field through it. */
struct obj {
	uint64_t v;
	uint64_t pad_[7];
};
static struct obj the_obj = { 1, { 0 } };
static struct obj *gp = &the_obj;

static BENCH_NOINLINE uint64_t loop_srcu_deref(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		int idx = srcu_read_lock(&dom);
		s += srcu_dereference(gp, &dom)->v;
		srcu_read_unlock(&dom, idx);
	}
	return s;
}

static BENCH_NOINLINE uint64_t loop_rcu_deref(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		rcu_read_lock();
		s += rcu_dereference(gp)->v;
		rcu_read_unlock();
	}
	return s;
}

static void loop_srcu_deref_v(uint64_t n)
{
	uint64_t s = loop_srcu_deref(n);
	BENCH_USE(s);
}

static void loop_rcu_deref_v(uint64_t n)
{
	uint64_t s = loop_rcu_deref(n);
	BENCH_USE(s);
}

/*
 * The srcu algorithm with atomic increments: the domain's own atomic counters (alock/aunlock,
 * which the grace period sums), so the result is a working srcu reader, not a mock. `cpu()`
 * only chooses the counter (any choice is correct with atomics).
 */
#define ATOMIC_PAIR(cpu_expr)                                                                    \
	do {                                                                                     \
		struct grace__srcu_cpu *pc = __atomic_load_n(&dom.fast, __ATOMIC_RELAXED);       \
		unsigned int nc = dom.ncpus;                                                     \
		unsigned int k = __atomic_load_n(&dom.idx, __ATOMIC_RELAXED) & 1u;               \
		unsigned int c = (unsigned int)(cpu_expr) % nc;                                  \
		__atomic_fetch_add(&pc[c].alock[k], 1, __ATOMIC_RELAXED); /* lock xadd */        \
		BENCH_CLOBBER();                                                                 \
		c = (unsigned int)(cpu_expr) % nc;                                               \
		struct grace__srcu_wake *w = GRACE__SRCU_WAKE(&dom); /* before the increment */  \
		__atomic_fetch_add(&pc[c].aunlock[k], 1, __ATOMIC_RELEASE);                      \
		if (__builtin_expect(__atomic_load_n(&w->waiting, __ATOMIC_RELAXED) & (1u << k), \
				     0))                                                         \
			grace__srcu_wake_slot(w);                                                \
	} while (0)

static BENCH_NOINLINE void loop_srcu_atomic(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		ATOMIC_PAIR(grace__rseq_cpu());
}

/* The floor of the design: the two rseq critical sections of a pair on the domain's own
 * counters, with the domain's words hoisted out of the loop (no loads of the srcu_struct, no
 * misuse checks, no wake-up check). Not a usable reader: a decomposition of srcu's cost. */
static BENCH_NOINLINE void loop_rseq_floor(uint64_t n)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_ref ref = dom.rseq;
	uint64_t *l = dom.cur, *u = l + 2; /* unlock[idx] is two words after lock[idx] */

	for (uint64_t i = 0; i < n; i++) {
		while (grace__rseq_inc_line(&ref, l, 0) != 0) {
		}
		BENCH_CLOBBER();
		while (grace__rseq_inc_line(&ref, u, 1) != 0) {
		}
	}
#else
	(void)n;
#endif
}

static inline int getcpu0(void)
{
	int c = sched_getcpu();
	return c < 0 ? 0 : c;
}

static BENCH_NOINLINE void loop_srcu_getcpu(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		ATOMIC_PAIR(getcpu0());
}

struct design {
	const char *name;
	void (*loop)(uint64_t);
	int needs_fast; /* reads the domain's counters directly */
};

static const struct design designs[] = {
	{ "srcu", loop_srcu, 0 },
	{ "rcu", loop_rcu, 0 },
	{ "srcu-atomic", loop_srcu_atomic, 1 },
	{ "srcu-getcpu", loop_srcu_getcpu, 1 },
	{ "rseq-floor", loop_rseq_floor, 1 },
	{ "srcu-deref", loop_srcu_deref_v, 0 },
	{ "rcu-deref", loop_rcu_deref_v, 0 },
};

/* ---- pair test ---- */

static int run_pair(const struct design *d, const char *name, unsigned int threads, uint64_t ms,
		    int run, const int *cpus, int ncpu)
{
	struct bench_worker *w = (struct bench_worker *)bench_xalloc(threads * sizeof(*w));
	uint64_t ops = 0, cpu_ns = 0, wall;

	for (unsigned int i = 0; i < threads; i++) {
		w[i].cpu = cpus[i % (unsigned int)ncpu];
		w[i].loop = d->loop;
	}
	wall = bench_workers_run(w, (int)threads, ms, 1000, 4096);
	for (unsigned int i = 0; i < threads; i++) {
		ops += w[i].ops;
		cpu_ns += w[i].cpu_ns;
	}
	bench_csv_row(stdout, "srcu_pair", name, (int)threads, run, "ns_per_pair",
		      (double)cpu_ns / (double)ops, "ns");
	bench_csv_row(stdout, "srcu_pair", name, (int)threads, run, "mpairs_per_s",
		      (double)ops * 1e3 / (double)wall, "Mpairs/s");
	free(w);
	if (grace_srcu_readers_active(&dom) != 0) {
		fprintf(stderr, "srcu_bench: %lu readers left after the run\n",
			grace_srcu_readers_active(&dom));
		return 1;
	}
	return 0;
}

/* ---- sync test ---- */

struct reader {
	pthread_t th;
	int srcu;
	int cpu;
	struct bench_start *start;
	volatile int *stop;
};

static void *reader_main(void *arg)
{
	struct reader *r = (struct reader *)arg;

	if (r->cpu >= 0)
		bench_pin_cpu(r->cpu);
	bench_start_wait(r->start);
	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		if (r->srcu)
			loop_srcu_deref_v(64);
		else
			loop_rcu_deref_v(64);
	}
	return NULL;
}

static void sync_once(int srcu)
{
	if (srcu)
		synchronize_srcu(&dom);
	else
		synchronize_rcu();
}

static int run_sync(int srcu, unsigned int readers, uint64_t ms, int run, const int *cpus, int ncpu)
{
	volatile int stop = 0;
	struct bench_start start;
	struct reader *r = (struct reader *)bench_xalloc((readers ? readers : 1) * sizeof(*r));
	size_t cap = 1 << 20, n = 0;
	double *lat = (double *)bench_xalloc(cap * sizeof(double));
	bool pin = readers + 1 <= (unsigned int)ncpu; /* oversubscribed: let the scheduler place */

	bench_start_init(&start, readers + 1);
	for (unsigned int i = 0; i < readers; i++) {
		r[i].srcu = srcu;
		r[i].cpu = pin ? cpus[i + 1] : -1;
		r[i].start = &start;
		r[i].stop = &stop;
		bench_thread_create(&r[i].th, reader_main, &r[i], (int)i, (int)readers);
	}
	if (pin)
		bench_pin_cpu(cpus[0]);
	bench_start_wait(&start);
	/* Warm-up (first grace periods, page faults), as bench/readside's sync does. */
	for (int i = 0; i < 20; i++)
		sync_once(srcu);
	uint64_t end = bench_now_ns() + ms * 1000000ull;
	while (n < cap) {
		uint64_t t0 = bench_now_ns();
		if (t0 >= end)
			break;
		sync_once(srcu);
		lat[n++] = (double)(bench_now_ns() - t0) / 1e3;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < readers; i++)
		pthread_join(r[i].th, NULL);
	struct bench_stats s = bench_stats_of(lat, n);
	const char *name = srcu ? "srcu" : "rcu";
	bench_csv_row(stdout, "srcu_sync", name, (int)readers, run, "sync_p50_us", s.p50, "us");
	bench_csv_row(stdout, "srcu_sync", name, (int)readers, run, "sync_p99_us", s.p99, "us");
	bench_csv_row(stdout, "srcu_sync", name, (int)readers, run, "syncs", (double)n, "count");
	free(lat);
	free(r);
	return 0;
}

int main(int argc, char **argv)
{
	const char *test = argc > 1 ? argv[1] : "list";
	const char *dname = bench_arg_str(argc, argv, "--design");
	const char *as = bench_arg_str(argc, argv, "--as");
	unsigned int threads = (unsigned int)bench_arg_u64(argc, argv, "--threads", 1);
	unsigned int readers = (unsigned int)bench_arg_u64(argc, argv, "--readers", 0);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 100);
	int run = (int)bench_arg_u64(argc, argv, "--run", 0);
	int cpus[BENCH_MAX_CPUS];
	int ncpu = bench_affinity_cpus(cpus, BENCH_MAX_CPUS);
	const struct design *d = NULL;

	if (strcmp(test, "list") == 0) {
		for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++)
			printf("%s\n", designs[i].name);
		printf("# srcu mode: %s, rseq: %s\n", grace_srcu_mode(), grace_rseq_mode());
		return 0;
	}
	/* Set the domain up before any measurement. */
	int i0 = srcu_read_lock(&dom);
	srcu_read_unlock(&dom, i0);
	synchronize_srcu(&dom);
	if (strcmp(test, "sync") == 0) {
		if (!dname || (strcmp(dname, "srcu") && strcmp(dname, "rcu"))) {
			fprintf(stderr, "srcu_bench sync: --design srcu|rcu\n");
			return 2;
		}
		return run_sync(strcmp(dname, "srcu") == 0, readers, ms, run, cpus, ncpu);
	}
	if (strcmp(test, "pair") != 0) {
		fprintf(stderr, "usage: srcu_bench pair|sync|list --design D ...\n");
		return 2;
	}
	for (size_t i = 0; dname && i < sizeof(designs) / sizeof(designs[0]); i++)
		if (strcmp(designs[i].name, dname) == 0)
			d = &designs[i];
	if (!d) {
		fprintf(stderr, "srcu_bench: unknown design '%s'\n", dname ? dname : "");
		return 2;
	}
	if (d->needs_fast && !dom.fast) {
		fprintf(stderr, "srcu_bench: %s needs the fast mode (srcu mode is %s)\n", d->name,
			grace_srcu_mode());
		return 3;
	}
	return run_pair(d, as ? as : d->name, threads, ms, run, cpus, ncpu);
}
