/* SPDX-License-Identifier: MIT */
/*
 * smr_bench driver: one design (reclaimer), one structure, one point per process, so that the
 * peak resident set is that design's own.
 *
 *   smr_bench list
 *   smr_bench --design NAME --ds list|hash|bst --range N --update PCT --threads N
 *             [--duration S] [--run N] [--seed N] [--csv FILE] [--no-pin]
 *   smr_bench --check --design NAME[,NAME...]|all --ds list,hash,bst|all [same options]
 *   smr_bench ... --stall [--series FILE]
 *
 * A run: the structure is prefilled to range/2 random keys (by the main thread, through the
 * design), then --threads workers run operations for --duration seconds: a random key in
 * [0, range), an update (insert or delete, even odds) with probability --update percent, a
 * lookup otherwise. Workers are pinned to the CPUs of the affinity mask, one each, unless there
 * are more threads than CPUs (oversubscribed: then the scheduler places them) or --no-pin.
 *
 * Measured, from the start signal to the stop flag: operations per second; the peak resident
 * set (getrusage's ru_maxrss, the kernel's VmHWM: the process's own peak, prefill included) and
 * the resident set after the prefill; garbage outstanding (retired and not yet freed, the sum of
 * per-thread counters, sampled every 5 ms: mean and maximum), when the design frees through the
 * benchmark; grace periods (or epoch advances) per second, when the design counts them; the
 * process's CPU time. The allocator is whatever the process runs with (glibc's malloc, or
 * jemalloc or mimalloc by LD_PRELOAD, as run.sh sets it): detected, and written into the bench
 * name of every row, "<ds>/<range>/u<pct>/<allocator>".
 *
 * --check: the same run in check mode (every design's check variant): a freed node is poisoned
 * and kept in a quarantine; every thread checks every node it reaches (not freed, no poison
 * link); after the run the structure's invariants are verified, every reachable node must be
 * live, and the keys must equal the replay of the successful updates (per key: prefill, plus
 * successful inserts, minus successful deletes, over all threads, is 0 or 1 and matches the
 * structure). Then the design drains (its barrier) and, where it frees through the benchmark,
 * every retired node must have been freed exactly once. Exit status 1 on a failure, with
 * a message; 0 when everything held.
 *
 * --stall: one more thread, a reader that begins an operation, looks a key up and then sleeps
 * inside the operation until the run ends (an RCU read-side section, an EBR announcement, or
 * the hazard pointers its lookup left set), while the workers update. Its bench name ends in
 * "+stall". Where the design states a bound on the garbage (hazard pointers: H*T + one batch
 * per thread), the largest bound seen is written beside the measured maximum. --series FILE
 * appends the garbage and the resident set of every 5 ms sample to FILE, as CSV lines
 * "design,bench,t_s,garbage,rss_mb,bound" (for the stalled-reader plot).
 *
 * Output: CSV rows (bench.h's long format) on stdout or appended to --csv; a summary line per
 * run on stderr. Exit status 2 on bad input, 3 when a thread cannot be created.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <grace/diag.h>

#include "bench.h"
#include "smr.h"

/* ---- the registry (every rec_*.c registers its two variants from a constructor) -------------- */

#define SMR_MAX_DESIGNS 128
static const struct smr_design *designs[SMR_MAX_DESIGNS];
static int ndesigns;

void smr_register(const struct smr_design *d)
{
	if (ndesigns == SMR_MAX_DESIGNS) {
		fputs("smr_bench: too many designs\n", stderr);
		exit(2);
	}
	designs[ndesigns++] = d;
}

static int design_cmp(const void *a, const void *b)
{
	const struct smr_design *x = *(const struct smr_design *const *)a;
	const struct smr_design *y = *(const struct smr_design *const *)b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct smr_design *find_design(const char *name, bool check)
{
	for (int i = 0; i < ndesigns; i++)
		if (!strcmp(designs[i]->name, name) && !!(designs[i]->flags & SMR_F_CHECK) == check)
			return designs[i];
	return NULL;
}

static const char *const ds_names[SMR_NDS] = { "list", "hash", "bst" };

/* ---- garbage counters ------------------------------------------------------------------------ */

struct smr_ctr smr_ctrs[SMR_MAX_CTRS];
__thread struct smr_ctr *smr_my_ctr;
static unsigned int smr_nctrs;

struct smr_ctr *smr_ctr_claim(void)
{
	/* Relaxed: the slot is zero and only this thread writes it. */
	unsigned int i = __atomic_fetch_add(&smr_nctrs, 1, __ATOMIC_RELAXED);

	if (i >= SMR_MAX_CTRS) {
		fputs("smr_bench: more than 4096 threads retired or freed nodes\n", stderr);
		_exit(2);
	}
	smr_my_ctr = &smr_ctrs[i];
	return smr_my_ctr;
}

void smr_ctr_sum(uint64_t *retired, uint64_t *freed)
{
	/* Relaxed, as every load here: counts, which order nothing. A slot claimed after the load
	 * is left out of this sum (it holds a few nodes at most). */
	unsigned int n = __atomic_load_n(&smr_nctrs, __ATOMIC_RELAXED);
	uint64_t r = 0, f = 0;

	if (n > SMR_MAX_CTRS)
		n = SMR_MAX_CTRS;
	/* Freed first: a node is counted retired before it is counted freed, so reading the
	 * retired counts last keeps the difference from going below zero. */
	for (unsigned int i = 0; i < n; i++)
		f += __atomic_load_n(&smr_ctrs[i].freed, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < n; i++)
		r += __atomic_load_n(&smr_ctrs[i].retired, __ATOMIC_RELAXED);
	*retired = r;
	*freed = f;
}

/* ---- failures and check mode ----------------------------------------------------------------- */

static const char *cur_what = ""; /* "design ds" of the run, for messages */

void smr_fail(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "smr_bench: %s: ", cur_what);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "%s\n", buf);
	_exit(1); /* the whole process at once: other threads may be mid-operation */
}

#define SMR_QUARANTINE 65536
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct smr_node *q_ring[SMR_QUARANTINE];
static unsigned long q_head;

void smr_check_free(struct smr_node *n)
{
	/* Relaxed: the freeing thread learned that the node is retired through the reclaimer's
	 * own ordering (its grace period, or the retire in this thread). */
	uint32_t m = __atomic_load_n(&n->magic, __ATOMIC_RELAXED);
	struct smr_node *victim;
	size_t size;

	if (m == SMR_DEAD)
		smr_fail("check: a node was freed twice");
	if (m != SMR_RETIRED)
		smr_fail("check: a node (key %llu) was freed without being retired (magic %#x)",
			 (unsigned long long)n->key, m);
	/* Poison: a thread that still reaches the node finds DEAD, or a link to SMR_POISON that
	 * it checks before following. Every word after the header is a link of some structure.
	 * Relaxed atomic stores: threads may be reading those words right now (that is what the
	 * check is for). */
	__atomic_store_n(&n->magic, SMR_DEAD, __ATOMIC_RELAXED);
	size = malloc_usable_size(n);
	for (size_t off = sizeof(struct smr_node); off + sizeof(uintptr_t) <= size;
	     off += sizeof(uintptr_t))
		__atomic_store_n((uintptr_t *)(void *)((char *)n + off), SMR_POISON,
				 __ATOMIC_RELAXED);
	pthread_mutex_lock(&q_lock);
	victim = q_ring[q_head % SMR_QUARANTINE];
	q_ring[q_head % SMR_QUARANTINE] = n;
	q_head++;
	pthread_mutex_unlock(&q_lock);
	free(victim);
}

static void quarantine_drain(void)
{
	pthread_mutex_lock(&q_lock);
	for (unsigned long i = 0; i < SMR_QUARANTINE; i++) {
		free(q_ring[i]);
		q_ring[i] = NULL;
	}
	q_head = 0;
	pthread_mutex_unlock(&q_lock);
}

/* ---- watchdog -------------------------------------------------------------------------------- */

/* A run that does not end within its duration + 60 s is reported, naming it, and the process
 * exits: a hang is a finding, not something to wait for. */
static void wd_fire(int sig)
{
	static const char a[] = "smr_bench: watchdog: ";
	static const char b[] = ": the run did not finish within its duration + 60 s (hung?)\n";
	size_t n = strlen(cur_what);

	(void)sig;
	(void)!write(2, a, sizeof(a) - 1);
	(void)!write(2, cur_what, n);
	(void)!write(2, b, sizeof(b) - 1);
	_exit(1);
}

/* ---- the allocator --------------------------------------------------------------------------- */

static const char *allocator_name(void)
{
	if (dlsym(RTLD_DEFAULT, "mallctl"))
		return "jemalloc";
	if (dlsym(RTLD_DEFAULT, "mi_version"))
		return "mimalloc";
	return "glibc";
}

/* ---- a run ----------------------------------------------------------------------------------- */

struct opts {
	uint64_t range;
	double update_pct;
	unsigned int threads;
	double duration;
	unsigned int run;
	uint64_t seed;
	bool pin, check, stall;
	FILE *csv;
	const char *series; /* --series FILE, or NULL */
};

static struct bench_cpus cpus;
static const struct smr_design *D;
static const struct smr_ds_ops *OPS;
static void *DS;

struct series_pt {
	double t_s;
	uint64_t garbage, rss, bound;
};

struct sampler {
	struct smr_run *run;
	bool series;           /* keep every sample (--series) */
	struct series_pt *pts; /* the samples, when series */
	size_t npts, cap;
	uint64_t bound_max;     /* the design's bound, largest seen (when it has one) */
	uint64_t g0;            /* garbage at the start */
	uint64_t samples, gsum; /* garbage outstanding: sum over the samples */
	uint64_t gmax;
	uint64_t rss_max;
	pthread_t tid;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = (struct sampler *)arg;

	/* Acquire: pairs with the release store of go in run_one(). */
	while (!__atomic_load_n(&s->run->go, __ATOMIC_ACQUIRE))
		bench_sleep_ms(1);
	uint64_t tgo = bench_now_ns();
	while (!smr_stopped(s->run)) {
		uint64_t r, f, g, rss, bound = 0;
		int64_t d;

		smr_ctr_sum(&r, &f);
		d = (int64_t)(r - f) - (int64_t)s->g0;
		g = d > 0 ? (uint64_t)d : 0;
		s->gsum += g;
		s->samples++;
		if (g > s->gmax)
			s->gmax = g;
		rss = bench_rss_bytes();
		if (rss > s->rss_max)
			s->rss_max = rss;
		if (D->bound) {
			bound = D->bound();
			if (bound > s->bound_max)
				s->bound_max = bound;
		}
		if (s->series) {
			if (s->npts == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 1024;
				s->pts = (struct series_pt *)realloc(s->pts,
								     s->cap * sizeof(*s->pts));
				if (!s->pts)
					smr_fail("out of memory");
			}
			s->pts[s->npts++] = (struct series_pt){
				(double)(bench_now_ns() - tgo) * 1e-9, g, rss, bound
			};
		}
		bench_sleep_ms(5);
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct smr_thread *t = (struct smr_thread *)arg;
	struct smr_run *run = t->run;

	bench_cpus_pin(&cpus, (int)t->id);
	D->thread_init(t);
	/* Release: this thread's set-up happens before the driver's start (its acquire load). */
	__atomic_fetch_add(&run->ready, 1, __ATOMIC_RELEASE);
	/* Acquire: pairs with the driver's release store of go. */
	while (!__atomic_load_n(&run->go, __ATOMIC_ACQUIRE))
		sched_yield(); /* threads may outnumber CPUs: let the others get ready */
	OPS->loop(DS, t);
	t->t_end_ns = bench_now_ns();
	D->thread_fini(t);
	return NULL;
}

/* The stalled reader's wait, inside its operation: it is ready (counted with the workers), then
 * sleeps until the run's end. */
static void stall_wait(void *arg)
{
	struct smr_run *run = (struct smr_run *)arg;

	/* Release: as a worker's, this thread's set-up and its lookup happen before the start. */
	__atomic_fetch_add(&run->ready, 1, __ATOMIC_RELEASE);
	while (!smr_stopped(run))
		bench_sleep_ms(1);
}

static void *staller_main(void *arg)
{
	struct smr_thread *t = (struct smr_thread *)arg;

	D->thread_init(t);
	OPS->stall(DS, t, stall_wait, t->run);
	D->thread_fini(t);
	return NULL;
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static double mb(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* The check after a run: invariants, replay, counts. */
static void check_after(struct smr_run *run, uint64_t r0, uint64_t f0)
{
	uint8_t *present = (uint8_t *)calloc(run->range, 1);
	uint64_t size, expect = 0, r1, f1;

	if (!present)
		smr_fail("out of memory");
	size = OPS->verify(DS, run, present);
	for (uint64_t k = 0; k < run->range; k++) {
		int64_t net = 0;

		for (unsigned int i = 0; i <= run->nthreads; i++)
			net += run->threads[i].delta[k];
		if (net != 0 && net != 1)
			smr_fail("check: key %llu: successful inserts minus deletes is %lld (must "
				 "be 0 or 1: an insert or a delete succeeded twice)",
				 (unsigned long long)k, (long long)net);
		if ((uint8_t)net != present[k])
			smr_fail("check: key %llu is %s the structure but the replay of the "
				 "successful updates says it %s",
				 (unsigned long long)k, present[k] ? "in" : "not in",
				 net ? "is there" : "is not");
		expect += (uint64_t)net;
	}
	if (expect != size)
		smr_fail("check: size %llu, replay %llu", (unsigned long long)size,
			 (unsigned long long)expect);
	free(present);
	D->fini(run); /* the design's barrier: whatever is still retired is freed */
	smr_ctr_sum(&r1, &f1);
	if ((D->flags & SMR_F_FREES) && !(D->flags & SMR_F_NEVER_FREES) && r1 - r0 != f1 - f0)
		smr_fail("check: %llu nodes retired, %llu freed after the design's barrier",
			 (unsigned long long)(r1 - r0), (unsigned long long)(f1 - f0));
	fprintf(stderr,
		"smr_bench: check ok: %s: %llu keys, %llu retired, %llu freed through the "
		"benchmark\n",
		cur_what, (unsigned long long)size, (unsigned long long)(r1 - r0),
		(unsigned long long)(f1 - f0));
	OPS->destroy(DS);
	quarantine_drain();
}

static void run_one(const struct smr_design *d, int ds, const struct opts *o)
{
	static char what[160];
	const char *alloc = allocator_name();
	unsigned int n = o->threads;
	unsigned int nall = n + 1 + (o->stall ? 1 : 0); /* workers, prefill, the stalled reader */
	struct smr_run *run = (struct smr_run *)bench_xalloc(sizeof(*run));
	struct smr_thread *th = (struct smr_thread *)bench_xalloc(nall * sizeof(*th));
	struct sampler smp;
	uint64_t r0, f0, gp0 = 0, gp1 = 0, mb0, mb1, t0, tstop, tend = 0, c0, c1;
	uint64_t ops = 0, lookups = 0, found = 0, ins = 0, del = 0, base_rss;
	char bench[96];
	bool over = n > (unsigned int)cpus.n;

	if (!d->ds[ds].loop) {
		/* The design does not run on this structure (design.h, REC_NO_BST): say why. */
		fprintf(stderr, "smr_bench: %s on %s: not run: %s\n", d->name, ds_names[ds],
			d->skip[ds] ? d->skip[ds] : "not supported");
		free(th);
		free(run);
		return;
	}
	D = d;
	OPS = &d->ds[ds];
	snprintf(what, sizeof(what), "%s %s range %llu, %g%% updates, %u threads", d->name,
		 ds_names[ds], (unsigned long long)o->range, o->update_pct, n);
	cur_what = what;
	snprintf(bench, sizeof(bench), "%s/%llu/u%g/%s%s", ds_names[ds],
		 (unsigned long long)o->range, o->update_pct, alloc, o->stall ? "+stall" : "");
	cpus.pin = o->pin && !over;

	run->range = o->range;
	run->upd_thresh = o->update_pct >= 100 ? UINT32_MAX
					       : (uint32_t)(o->update_pct / 100.0 * 4294967296.0);
	run->nthreads = n;
	run->ds = ds;
	run->check = o->check;
	run->threads = th;
	for (unsigned int i = 0; i < nall; i++) {
		th[i].run = run;
		th[i].id = i;
		th[i].rng = splitmix(o->seed * 1000003u + i) | 1; /* xorshift needs nonzero */
		if (o->check) {
			th[i].delta = (int32_t *)calloc(o->range, sizeof(int32_t));
			if (!th[i].delta)
				smr_fail("out of memory");
		}
	}
	smr_ctr_sum(&r0, &f0);
	alarm((unsigned int)o->duration + 60 + (unsigned int)(o->range >> 15));
	d->init(run);
	DS = OPS->create(run);
	/* Prefill by the main thread, through the design (as one of its threads). */
	d->thread_init(&th[n]);
	OPS->prefill(DS, &th[n], o->range / 2);
	d->thread_fini(&th[n]);
	base_rss = bench_rss_bytes();

	memset(&smp, 0, sizeof(smp));
	smp.run = run;
	smp.series = o->series != NULL;
	{
		uint64_t r, f;

		smr_ctr_sum(&r, &f);
		smp.g0 = r - f;
	}
	if (pthread_create(&smp.tid, NULL, sampler_main, &smp) != 0)
		bench_fatal("pthread_create failed");
	for (unsigned int i = 0; i < n; i++)
		bench_thread_create(&th[i].tid, worker_main, &th[i], (int)i, (int)n);
	/* The stalled reader takes the prefill thread's id (nthreads), whose run is over: the
	 * reclaimers size their per-thread tables by nthreads + 1 (EBR's announcements). */
	if (o->stall) {
		th[n + 1].id = n;
		if (pthread_create(&th[n + 1].tid, NULL, staller_main, &th[n + 1]) != 0)
			bench_fatal("pthread_create failed");
	}
	/* Acquire: pairs with the workers' (and the stalled reader's) release increments: their
	 * set-up is done. */
	while (__atomic_load_n(&run->ready, __ATOMIC_ACQUIRE) != (int)(nall - 1))
		sched_yield();
	if (d->flags & SMR_F_GPS)
		gp0 = d->gps();
	mb0 = grace_membarrier_calls();
	c0 = bench_process_cpu_ns();
	t0 = bench_now_ns();
	/* Release: pairs with the acquire loads of go in the workers and the sampler. */
	__atomic_store_n(&run->go, 1, __ATOMIC_RELEASE);
	bench_sleep_until_ns(t0 + (uint64_t)(o->duration * 1e9));
	if (d->flags & SMR_F_GPS)
		gp1 = d->gps();
	mb1 = grace_membarrier_calls();
	tstop = bench_now_ns();
	c1 = bench_process_cpu_ns();
	/* Relaxed: the flag publishes nothing; the joins order the results. */
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(th[i].tid, NULL);
		ops += th[i].ops;
		lookups += th[i].lookups;
		found += th[i].found;
		ins += th[i].inserts;
		del += th[i].deletes;
		if (th[i].t_end_ns > tend)
			tend = th[i].t_end_ns;
	}
	pthread_join(smp.tid, NULL);
	if (o->stall)
		pthread_join(th[n + 1].tid, NULL);

	double secs = (double)(tend - t0) * 1e-9, gsecs = (double)(tstop - t0) * 1e-9;
	uint64_t r1, f1;

	smr_ctr_sum(&r1, &f1);
	if (o->check)
		check_after(run, r0, f0);
	alarm(0);

	FILE *c = o->csv;
	const char *nm = d->name;
	int T = (int)n, R = (int)o->run;

	bench_csv_row(c, bench, nm, T, R, "ops_per_s", (double)ops / secs, "1/s");
	bench_csv_row(c, bench, nm, T, R, "seconds", secs, "s");
	bench_csv_row(c, bench, nm, T, R, "peak_rss_mb", bench_maxrss_mb(), "MB");
	bench_csv_row(c, bench, nm, T, R, "base_rss_mb", mb(base_rss), "MB");
	bench_csv_row(c, bench, nm, T, R, "sampled_peak_rss_mb", mb(smp.rss_max), "MB");
	if ((d->flags & SMR_F_FREES) && smp.samples) {
		bench_csv_row(c, bench, nm, T, R, "garbage_mean", (double)smp.gsum / smp.samples,
			      "nodes");
		bench_csv_row(c, bench, nm, T, R, "garbage_max", (double)smp.gmax, "nodes");
	}
	if (d->bound)
		bench_csv_row(c, bench, nm, T, R, "garbage_bound", (double)smp.bound_max, "nodes");
	if (d->flags & SMR_F_GPS)
		bench_csv_row(c, bench, nm, T, R, "gps_per_s", (double)(gp1 - gp0) / gsecs, "1/s");
	/* grace's designs: the expedited membarriers the library made (every cause), each an
	 * interrupt of every other CPU running the process. liburcu keeps no such count. */
	if (!strncmp(nm, "grace", 5))
		bench_csv_row(c, bench, nm, T, R, "membarriers_per_s", (double)(mb1 - mb0) / gsecs,
			      "1/s");
	bench_csv_row(c, bench, nm, T, R, "retired_per_s", (double)(r1 - r0) / secs, "1/s");
	bench_csv_row(c, bench, nm, T, R, "cpu_s", (double)(c1 - c0) * 1e-9, "s");
	bench_csv_row(c, bench, nm, T, R, "updates_ok_frac",
		      ops > lookups ? (double)(ins + del) / (double)(ops - lookups) : 0, "");
	bench_csv_row(c, bench, nm, T, R, "oversubscribed", over ? 1 : 0, "");
	bench_csv_row(c, bench, nm, T, R, "cpus", cpus.n, "");
	fflush(c);
	fprintf(stderr,
		"smr_bench: %s %s T=%u%s: %.3f Mops/s, peak RSS %.1f MB (after prefill %.1f)",
		bench, nm, n, over ? " (oversubscribed)" : "", (double)ops / secs / 1e6,
		bench_maxrss_mb(), mb(base_rss));
	if ((d->flags & SMR_F_FREES) && smp.samples)
		fprintf(stderr, ", garbage mean %.0f max %llu", (double)smp.gsum / smp.samples,
			(unsigned long long)smp.gmax);
	if (d->bound)
		fprintf(stderr, " (bound H*T + batch*T: %llu)", (unsigned long long)smp.bound_max);
	if (o->stall)
		fputs(", one reader stalled for the run", stderr);
	if (d->flags & SMR_F_GPS)
		fprintf(stderr, ", %.0f GP/s", (double)(gp1 - gp0) / gsecs);
	fputc('\n', stderr);
	(void)found;
	if (o->series) {
		FILE *f = fopen(o->series, "a");

		if (!f)
			bench_fatal("cannot write %s: %s", o->series, strerror(errno));
		for (size_t i = 0; i < smp.npts; i++)
			fprintf(f, "%s,%s,%.4f,%llu,%.2f,%llu\n", nm, bench, smp.pts[i].t_s,
				(unsigned long long)smp.pts[i].garbage, mb(smp.pts[i].rss),
				(unsigned long long)smp.pts[i].bound);
		fclose(f);
		free(smp.pts);
	}

	for (unsigned int i = 0; i < nall; i++) {
		free(th[i].delta);
		free(th[i].stash.v);
	}
	free(th);
	free(run);
}

/* ---- arguments ------------------------------------------------------------------------------- */

static __attribute__((noreturn, format(printf, 1, 2))) void bad_input(const char *fmt, ...)
{
	va_list ap;

	fputs("smr_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(usage: see the comment at the top of bench/smr/main.c; smr_bench list)\n",
	      stderr);
	exit(2);
}

static double arg_double(int argc, char **argv, const char *key, double def)
{
	const char *s = bench_arg_str(argc, argv, key);
	char *end;
	double v;

	if (!s)
		return def;
	v = strtod(s, &end);
	if (end == s || *end)
		bad_input("bad number for %s: '%s'", key, s);
	return v;
}

int main(int argc, char **argv)
{
	const char *dnames = bench_arg_str(argc, argv, "--design");
	const char *dsnames = bench_arg_str(argc, argv, "--ds");
	const char *csv_path = bench_arg_str(argc, argv, "--csv");
	const struct smr_design *sel[SMR_MAX_DESIGNS];
	int nsel = 0, sel_ds[SMR_NDS], nds = 0;
	struct opts o;

	qsort(designs, (size_t)ndesigns, sizeof(designs[0]), design_cmp);
	if (argc > 1 && !strcmp(argv[1], "list")) {
		for (int i = 0; i < ndesigns; i++)
			if (!(designs[i]->flags & (SMR_F_CHECK | SMR_F_HIDDEN)))
				printf("%s\t%s\n", designs[i]->name, designs[i]->label);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.check = bench_arg_flag(argc, argv, "--check");
	o.stall = bench_arg_flag(argc, argv, "--stall");
	o.series = bench_arg_str(argc, argv, "--series");
	o.pin = !bench_arg_flag(argc, argv, "--no-pin");
	o.range = bench_arg_u64(argc, argv, "--range", 1024);
	o.update_pct = arg_double(argc, argv, "--update", 50);
	o.threads = (unsigned int)bench_arg_u64(argc, argv, "--threads", 2);
	o.duration = arg_double(argc, argv, "--duration", 1.0);
	o.run = (unsigned int)bench_arg_u64(argc, argv, "--run", 0);
	o.seed = bench_arg_u64(argc, argv, "--seed", 12345 + 7919ull * o.run);
	if (!dnames || !dsnames)
		bad_input("--design and --ds are required");
	if (o.range < 4 || (o.range & (o.range - 1)) || o.range > (1ull << 30))
		bad_input("--range must be a power of two in [4, 2^30]");
	if (o.check && o.range > (1ull << 22))
		bad_input("--check wants --range <= 2^22 (it keeps a counter per key and thread)");
	if (o.update_pct < 0 || o.update_pct > 100)
		bad_input("--update is a percentage");
	if (o.threads < 1 || o.threads > 1024)
		bad_input("--threads must be in [1, 1024]");
	if (!(o.duration > 0) || o.duration > 3600)
		bad_input("--duration must be in (0, 3600] seconds");

	/* Designs: a comma list, or all (the visible ones). */
	if (!strcmp(dnames, "all")) {
		for (int i = 0; i < ndesigns; i++)
			if (!!(designs[i]->flags & SMR_F_CHECK) == o.check &&
			    !(designs[i]->flags & SMR_F_HIDDEN))
				sel[nsel++] = designs[i];
	} else {
		char *copy = strdup(dnames), *save = NULL;

		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			const struct smr_design *d = find_design(w, o.check);

			if (!d)
				bad_input("unknown design '%s'", w);
			if ((d->flags & SMR_F_HIDDEN) && !o.check)
				bad_input("'%s' is a check-mode self-test: only with --check", w);
			if (nsel < SMR_MAX_DESIGNS)
				sel[nsel++] = d;
		}
		free(copy);
	}
	if (!strcmp(dsnames, "all")) {
		for (int k = 0; k < SMR_NDS; k++)
			sel_ds[nds++] = k;
	} else {
		char *copy = strdup(dsnames), *save = NULL;

		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			int k = 0;

			while (k < SMR_NDS && strcmp(ds_names[k], w))
				k++;
			if (k == SMR_NDS)
				bad_input("unknown structure '%s' (list, hash, bst)", w);
			if (nds < SMR_NDS)
				sel_ds[nds++] = k;
		}
		free(copy);
	}
	if (!nsel || !nds)
		bad_input("nothing to run");
	if (!o.check && nsel * nds > 1)
		bad_input("one design and one structure per process (peak RSS is per process); "
			  "several only with --check");

	/* Check mode writes its rows only where asked to: its runs are checks, not figures. */
	o.csv = stdout;
	if (o.check && !csv_path)
		csv_path = "/dev/null";
	if (csv_path && !(o.csv = fopen(csv_path, "a")))
		bench_fatal("cannot write %s: %s", csv_path, strerror(errno));
	bench_cpus_init(&cpus);
	signal(SIGALRM, wd_fire);
	if (nsel * nds == 1) {
		run_one(sel[0], sel_ds[0], &o);
	} else {
		/* Several runs (check mode): each in a child process of its own, as the figures'
		 * runs are. A design may set up a flavor once per process (the free hook of the
		 * *-retire designs can be set only before that flavor's first queued object), and
		 * one run's garbage, threads or broken state never leak into the next. Nothing of
		 * grace runs in this process, so each child starts from a clean library. */
		int failed = 0;

		for (int i = 0; i < nsel; i++)
			for (int k = 0; k < nds; k++) {
				int st = 0;
				pid_t pid;

				fflush(NULL);
				pid = fork();
				if (pid < 0)
					bench_fatal("fork: %s", strerror(errno));
				if (pid == 0) {
					run_one(sel[i], sel_ds[k], &o);
					fflush(NULL);
					_exit(0);
				}
				while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
					;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					fprintf(stderr, "smr_bench: %s on %s failed (%s %d)\n",
						sel[i]->name, ds_names[sel_ds[k]],
						WIFEXITED(st) ? "exit status" : "signal",
						WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
					failed = 1;
				}
			}
		if (failed)
			return 1;
	}
	if (o.csv != stdout)
		fclose(o.csv);
	return 0;
}
