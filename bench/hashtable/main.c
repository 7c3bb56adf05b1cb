/* SPDX-License-Identifier: MIT */
/*
 * hashbench driver: runs the designs over a list of (threads, update fraction) points,
 * repeated, with the designs interleaved (every repetition visits every point and, inside a
 * point, the designs in a fresh random order), so drift in machine load spreads over all of
 * them. Writes one CSV row per run and prints progress on stderr.
 *
 *   hashbench [--designs a,b,...] [--points T:F,...] [--threads 1,2] [--updates 0,0.1]
 *             [--duration s] [--reps n] [--buckets n] [--seed n] [--csv file] [--list]
 *   hashbench --symbol DESIGN    prints the design's loop function (callgrind --toggle-collect)
 *
 * --points gives explicit points; otherwise the cross product of --threads and --updates.
 * The ideal design always runs one thread; its row for T threads is that figure times T.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "hb.h"

/* ---- shared harness pieces (declared in hb.h) ------------------------------------------ */

void hb_fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("hashbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* Bad input on the command line: a message and exit status 2, not an abort (hb_fatal() is for
 * a design that broke its contract, where a core dump helps). */
static __attribute__((noreturn, format(printf, 1, 2))) void hb_bad_input(const char *fmt, ...)
{
	va_list ap;

	fputs("hashbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

double hb_now(void)
{
	return (double)bench_now_ns() * 1e-9;
}

double hb_process_cpu(void)
{
	return (double)bench_process_cpu_ns() * 1e-9;
}

struct hb_el *hb_el_new(size_t size, unsigned long key)
{
	struct hb_el *e = (struct hb_el *)malloc(size);

	if (!e)
		hb_fatal("out of memory");
	e->key = key;
	e->data = HB_DATA(key);
	e->refcnt = 1;
	e->magic = HB_MAGIC_LIVE;
	return e;
}

#if HB_CHECK
#define HB_QUARANTINE 16384
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hb_el *q_ring[HB_QUARANTINE];
static unsigned long q_head;

void hb_el_free(struct hb_el *e)
{
	struct hb_el *victim;

	/* Poison: a reader that still reaches e sees DEAD (hb_check_el) and would fault on the
	 * next link rather than walk into reused memory. */
	__atomic_store_n(&e->magic, HB_MAGIC_DEAD, __ATOMIC_RELAXED);
	e->data = 0;
	e->key = ~0ul;
	__atomic_store_n(&e->node.next, HB_POISON_PTR, __ATOMIC_RELAXED);
	pthread_mutex_lock(&q_lock);
	victim = q_ring[q_head % HB_QUARANTINE];
	q_ring[q_head % HB_QUARANTINE] = e;
	q_head++;
	pthread_mutex_unlock(&q_lock);
	free(victim);
}

void hb_quarantine_drain(void)
{
	pthread_mutex_lock(&q_lock);
	for (unsigned long i = 0; i < HB_QUARANTINE; i++) {
		free(q_ring[i]);
		q_ring[i] = NULL;
	}
	q_head = 0;
	pthread_mutex_unlock(&q_lock);
}
#else
void hb_el_free(struct hb_el *e)
{
	free(e);
}

void hb_quarantine_drain(void) {}
#endif

void hb_wait_go(struct hb_thread *th)
{
	struct hb_run *run = th->run;

	__atomic_fetch_add(&run->ready, 1, __ATOMIC_RELAXED);
	/* Acquire: pairs with the driver's store-release of go (the run's set-up is visible). */
	while (!__atomic_load_n(&run->go, __ATOMIC_ACQUIRE))
		sched_yield(); /* threads may outnumber CPUs: let the others get ready */
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void hb_run_threads(struct hb_run *run, void *(*fn)(void *))
{
	unsigned int n = run->nthreads;
	struct hb_thread *th = (struct hb_thread *)bench_xalloc(n * sizeof(*th));
	double t0, t1, c0;

	run->threads = th;
	run->ready = run->go = run->stop = 0;
	for (unsigned int i = 0; i < n; i++) {
		th[i].run = run;
		th[i].id = i;
		th[i].seed = splitmix(run->seed * 1000003u + i) | 1; /* xorshift needs nonzero */
		/* A thread count the machine cannot create is reported (exit status 3), not a
		 * crash: run.sh records the point as not measured. */
		bench_thread_create(&th[i].tid, fn, &th[i], (int)i, (int)n);
	}
	while (__atomic_load_n(&run->ready, __ATOMIC_RELAXED) != (int)n)
		sched_yield();
	c0 = hb_process_cpu();
	t0 = hb_now();
	/* Release: pairs with the acquire in hb_wait_go(). */
	__atomic_store_n(&run->go, 1, __ATOMIC_RELEASE);
	bench_sleep_ns((uint64_t)(run->duration * 1e9));
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
	run->lookups = run->updates = run->misses = 0;

	for (unsigned int i = 0; i < n; i++) {
		pthread_join(th[i].tid, NULL);
		run->lookups += th[i].lookups;
		run->updates += th[i].updates;
		run->misses += th[i].misses;
	}
	t1 = hb_now();
	run->seconds = t1 - t0;
	run->cpu_seconds = hb_process_cpu() - c0;
	run->threads = NULL;
	free(th);
}

/*
 * Watchdog: a run that does not finish (threads, then the design's settle step) within its
 * duration plus HB_WATCHDOG_S seconds is reported, naming the design, and the process aborts:
 * a hang in a library under test is a finding, not something to wait for.
 */
#define HB_WATCHDOG_S 60
static const char *volatile wd_design = "";

static void wd_fire(int sig)
{
	static const char a[] = "hashbench: watchdog: design ";
	static const char b[] = " did not finish its run within its duration + 60 s (hung?)\n";
	const char *d = wd_design;
	size_t n = 0;

	(void)sig;
	while (d[n])
		n++;
	(void)!write(2, a, sizeof(a) - 1);
	(void)!write(2, d, n);
	(void)!write(2, b, sizeof(b) - 1);
	abort();
}

/* ---- the designs ----------------------------------------------------------------------- */

/* The designs, in --list order. */
#define HB_DESIGNS_BASE(X) \
	X(ideal)           \
	X(gspin)           \
	X(grw)             \
	X(bspin)           \
	X(brw)             \
	X(brlock)          \
	X(refcnt)
#define HB_DESIGNS_GRACE(X) \
	X(grace_sync)       \
	X(grace_call)       \
	X(grace_free)       \
	X(grace_poll)       \
	X(qsbr_sync)        \
	X(qsbr_call)        \
	X(qsbr_free)        \
	X(hazptr)           \
	X(never_free)
#define HB_DESIGNS(X)       \
	HB_DESIGNS_BASE(X)  \
	HB_DESIGNS_GRACE(X) \
	HB_DESIGNS_SRCU(X)  \
	HB_DESIGNS_URCU(X)  \
	HB_DESIGNS_CHECK(X)
/* broken-rcu: check mode's self-test. free-later: the unsafe floor (d_floor.c, floor.sh), left
 * out of check mode, which would catch it. Both hidden: run by name only. */
#if HB_CHECK
#define HB_DESIGNS_CHECK(X) X(broken)
#else
#define HB_DESIGNS_CHECK(X) X(free_later)
#endif
#ifdef HB_HAVE_URCU
#define HB_DESIGNS_URCU(X) X(urcu) X(urcu_lgpl)
#else
#define HB_DESIGNS_URCU(X)
#endif
#ifdef HB_HAVE_SRCU
#define HB_DESIGNS_SRCU(X) X(srcu)
#else
#define HB_DESIGNS_SRCU(X)
#endif

#define X_DECL(s) extern const struct hb_design hb_design_##s;
HB_DESIGNS(X_DECL)
#define X_PTR(s) &hb_design_##s,
static const struct hb_design *const all_designs[] = { HB_DESIGNS(X_PTR) };
#define N_ALL (sizeof(all_designs) / sizeof(all_designs[0]))

static const char *design_unavailable(const struct hb_design *d)
{
	return d->unavailable ? d->unavailable() : NULL;
}

/* ---- command line ---------------------------------------------------------------------- */

struct point {
	unsigned int threads;
	double update;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: hashbench [--designs a,b,...] [--points T:F,...] [--threads 1,2,4,8]\n"
		"                 [--updates 0,0.1,...] [--duration s] [--reps n] [--buckets n]\n"
		"                 [--seed n] [--csv file] [--list]\n"
		"       hashbench --symbol DESIGN\n");
	exit(2);
}

static const struct hb_design *find_design(const char *name)
{
	return BENCH_FIND_NAMED(all_designs, N_ALL, name);
}

static double parse_double(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end)
		hb_bad_input("bad %s: '%s'", what, s);
	return v;
}

int main(int argc, char **argv)
{
	const struct hb_design *designs[N_ALL];
	size_t ndesigns = 0;
	struct point points[256];
	size_t npoints = 0;
	unsigned int threads[32] = { 1, 2 };
	size_t nthreads = 2;
	double updates[64] = { 0 };
	size_t nupdates = 1;
	double duration = 0.2;
	unsigned int reps = 5;
	unsigned long nbuckets = 1024;
	uint64_t seed = 1;
	const char *csv_path = NULL;
	const char *design_list = NULL, *point_list = NULL;
	FILE *csv = stdout;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < N_ALL; k++) {
				const char *why = design_unavailable(all_designs[k]);

				printf("%-16s %-6s %s", all_designs[k]->name, all_designs[k]->kind,
				       all_designs[k]->label);
				if (why)
					printf("  [unavailable: %s]", why);
				putchar('\n');
			}
			return 0;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--symbol")) { /* the measured loop's symbol, for callgrind */
			const struct hb_design *d = find_design(v);

			if (!d)
				hb_bad_input("unknown design '%s' (see --list)", v);
			printf("%s\n", d->loop_symbol);
			return 0;
		}
		if (!strcmp(a, "--designs")) {
			design_list = v;
		} else if (!strcmp(a, "--points")) {
			point_list = v;
		} else if (!strcmp(a, "--threads") || !strcmp(a, "--updates")) {
			char *copy = strdup(v), *save = NULL;
			bool th = !strcmp(a, "--threads");
			size_t *cnt = th ? &nthreads : &nupdates;

			*cnt = 0;
			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (*cnt >= (th ? 32u : 64u))
					hb_bad_input("too many values for %s", a);
				if (th)
					threads[(*cnt)++] = (unsigned int)parse_double(t, a);
				else
					updates[(*cnt)++] = parse_double(t, a);
			}
			free(copy);
		} else if (!strcmp(a, "--duration")) {
			duration = parse_double(v, a);
		} else if (!strcmp(a, "--reps")) {
			reps = (unsigned int)parse_double(v, a);
		} else if (!strcmp(a, "--buckets")) {
			nbuckets = (unsigned long)parse_double(v, a);
		} else if (!strcmp(a, "--seed")) {
			seed = (uint64_t)parse_double(v, a);
		} else if (!strcmp(a, "--csv")) {
			csv_path = v;
		} else {
			usage();
		}
	}
	if (nbuckets < 2 || (nbuckets & (nbuckets - 1)))
		hb_bad_input("--buckets must be a power of two >= 2");
	if (duration <= 0 || duration > 3600 || reps < 1)
		hb_bad_input("bad --duration or --reps");

	/* Designs: the named ones, or every available one. */
	if (design_list) {
		char *copy = strdup(design_list), *save = NULL;

		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			const struct hb_design *d = find_design(t);
			const char *why;

			if (!d)
				hb_bad_input("unknown design '%s' (see --list)", t);
			why = design_unavailable(d);
			if (why) {
				fprintf(stderr, "hashbench: skipping %s: %s\n", t, why);
				continue;
			}
			if (ndesigns < N_ALL)
				designs[ndesigns++] = d;
		}
		free(copy);
	} else {
		for (size_t k = 0; k < N_ALL; k++) {
			const char *why = design_unavailable(all_designs[k]);

			if (all_designs[k]->hidden)
				continue;
			if (why)
				fprintf(stderr, "hashbench: skipping %s: %s\n",
					all_designs[k]->name, why);
			else
				designs[ndesigns++] = all_designs[k];
		}
	}
	if (!ndesigns)
		hb_bad_input("no design to run");

	/* Points. */
	if (point_list) {
		char *copy = strdup(point_list), *save = NULL;

		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(t, ':');

			if (!colon || npoints >= 256)
				hb_bad_input("bad point '%s' (want THREADS:FRACTION)", t);
			*colon = 0;
			points[npoints].threads = (unsigned int)parse_double(t, "point threads");
			points[npoints].update = parse_double(colon + 1, "point fraction");
			npoints++;
		}
		free(copy);
	} else {
		for (size_t a = 0; a < nthreads; a++)
			for (size_t b = 0; b < nupdates && npoints < 256; b++) {
				points[npoints].threads = threads[a];
				points[npoints].update = updates[b];
				npoints++;
			}
	}
	for (size_t p = 0; p < npoints; p++) {
		if (points[p].threads < 1 || points[p].threads > HB_MAX_THREADS)
			hb_bad_input("threads must be 1..%d", HB_MAX_THREADS);
		if (points[p].update < 0 || points[p].update > 1)
			hb_bad_input("update fraction must be in [0, 1]");
	}

	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv)
			hb_bad_input("cannot write %s: %s", csv_path, strerror(errno));
	}
	fprintf(csv, "design,kind,threads,update_fraction,rep,measured_threads,seconds,lookups,"
		     "updates,misses,mops,settle_seconds,cpu_seconds,mops_cpu\n");

	unsigned long total = (unsigned long)reps * npoints * ndesigns, done = 0;
	double start = hb_now(), last_note = start;
	bool tty = isatty(2);
	uint64_t order_rng = splitmix(seed) | 1;

	signal(SIGALRM, wd_fire);
	fprintf(stderr,
		"hashbench: %zu designs x %zu points x %u reps = %lu runs of %.2f s "
		"(about %.0f s)\n",
		ndesigns, npoints, reps, total, duration, (double)total * (duration + 0.01));
	for (unsigned int rep = 0; rep < reps; rep++) {
		for (size_t p = 0; p < npoints; p++) {
			size_t order[N_ALL];

			for (size_t k = 0; k < ndesigns; k++)
				order[k] = k;
			for (size_t k = ndesigns; k > 1; k--) { /* Fisher-Yates */
				size_t j = (size_t)(hb_rng(&order_rng) % k);
				size_t t = order[k - 1];

				order[k - 1] = order[j];
				order[j] = t;
			}
			for (size_t k = 0; k < ndesigns; k++) {
				const struct hb_design *d = designs[order[k]];
				struct hb_run *run = (struct hb_run *)aligned_alloc(HB_LINE,
										    sizeof(*run));
				double f = points[p].update, mops, mops_cpu, now;
				unsigned int measured;

				if (!run)
					hb_fatal("out of memory");
				memset(run, 0, sizeof(*run));
				measured = d->single_thread ? 1 : points[p].threads;
				run->nthreads = measured;
				run->nbuckets = nbuckets;
				run->mask = nbuckets - 1;
				run->upd_thresh = f >= 1.0 ? (1ull << 32)
							   : (uint64_t)(f * 4294967296.0 + 0.5);
				run->duration = duration;
				run->seed = seed + rep * 7919u + p * 104729u;
				wd_design = d->name;
				/* HB_WATCHDOG_S=0 in the environment: no watchdog (run.sh's callgrind
				 * runs, where a design's set-up alone can take a minute). */
				alarm(getenv("HB_WATCHDOG_S") && !atoi(getenv("HB_WATCHDOG_S"))
					      ? 0u
					      : (unsigned int)duration + HB_WATCHDOG_S);
				d->run(run);
				alarm(0);
				mops = (double)(run->lookups + run->updates) / run->seconds / 1e6 *
				       points[p].threads / measured;
				/* Per CPU-second the process used during the run (its threads and
				 * any worker threads of the library), times the thread count: what
				 * the run would do with a CPU per thread and nothing else running.
				 * Steadier than the wall-clock figure on a shared machine; not
				 * meaningful when the threads outnumber the CPUs. */
				mops_cpu = (double)(run->lookups + run->updates) /
					   (run->cpu_seconds / measured) / 1e6 * points[p].threads /
					   measured;
				fprintf(csv,
					"%s,%s,%u,%.4f,%u,%u,%.6f,%lu,%lu,%lu,%.4f,%.6f,%.6f,"
					"%.4f\n",
					d->name, d->kind, points[p].threads, f, rep, measured,
					run->seconds, run->lookups, run->updates, run->misses, mops,
					run->settle_seconds, run->cpu_seconds, mops_cpu);
				fflush(csv);
				free(run);
				done++;
				now = hb_now();
				if (tty || now - last_note >= 10 || done == total) {
					double left = (now - start) / (double)done *
						      (double)(total - done);

					fprintf(stderr,
						"%s[%5.1f%%] rep %u/%u  T=%u upd=%.3f  %-16s %9.2f "
						"Mops/s  ~%.0f s left%s",
						tty ? "\r" : "",
						100.0 * (double)done / (double)total, rep + 1, reps,
						points[p].threads, f, d->name, mops, left,
						tty ? "   " : "\n");
					last_note = now;
				}
			}
		}
	}
	if (tty)
		fputc('\n', stderr);
	fprintf(stderr, "hashbench: done in %.0f s\n", hb_now() - start);
	if (csv != stdout)
		fclose(csv);
	return 0;
}
