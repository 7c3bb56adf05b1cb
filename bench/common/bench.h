/* SPDX-License-Identifier: MIT */
/*
 * The benchmark harness, C side, header only: clocks, sleeping, thread creation that reports
 * failure instead of crashing, CPU lists and guarded pinning, a start barrier, process
 * resource figures, order statistics over repeated runs, CSV rows and raw samples, and a
 * minimal "--key value" argument parser. Its shell side is run-args.sh (beside this file), its
 * Python side bench/report/gracereport.py.
 *
 * Every benchmark family includes this file read-only (target grace_bench_common). Nothing here
 * sits inside a measured loop: keep measured loops in their own functions, one per design.
 * Messages name the program (program_invocation_short_name, a GNU extension).
 *
 * CSV convention (long format, one measurement per row, so families can share one reader):
 *     bench,design,threads,run,metric,value,unit
 * bench_csv_row() writes one such row; bench_csv_header() writes the header line.
 */
#ifndef GRACE_BENCH_COMMON_H
#define GRACE_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <grace/arch/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Keep the compiler from deleting or merging work: a memory clobber, no instruction. */
#define BENCH_CLOBBER() __asm__ __volatile__("" ::: "memory")
/* Make the compiler believe v is used (and may have changed), without emitting a store. */
#define BENCH_USE(v) __asm__ __volatile__("" : "+r"(v))
#define BENCH_NOINLINE __attribute__((noinline))

/*
 * A busy reader, the same in every family that needs one: back-to-back read-side sections, each
 * LOCK, a load through DEREF(pp), UNLOCK, then AFTER (a statement: a QSBR quiescent state, work
 * outside the section, or nothing), until *stop becomes non-zero; returns the sections run.
 * The stop flag is read relaxed: it publishes nothing.
 */
#define BENCH_DEFINE_READER(sym, LOCK, UNLOCK, DEREF, pp, AFTER) \
	uint64_t sym(const int *stop);                           \
	BENCH_NOINLINE uint64_t sym(const int *stop)             \
	{                                                        \
		uint64_t n = 0, sum = 0;                         \
		while (!grace_load_relaxed(stop)) {              \
			LOCK;                                    \
			sum += *DEREF(pp);                       \
			UNLOCK;                                  \
			AFTER;                                   \
			n++;                                     \
		}                                                \
		BENCH_USE(sum);                                  \
		return n;                                        \
	}

/* ---- errors ---------------------------------------------------------------------------------- */

/* "<program>: <message>" on stderr, then exit(1): for set-up failures (out of memory, a file
 * that cannot be written), never inside a measurement. */
static inline __attribute__((noreturn, format(printf, 1, 2))) void bench_fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* n bytes aligned to a cache line, zeroed (which also faults the pages in, before any timing);
 * exits with a message when memory runs out. */
static inline void *bench_xalloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, n ? n : 64))
		bench_fatal("out of memory (%zu bytes)", n);
	memset(p, 0, n);
	return p;
}

/* ---- clocks ---------------------------------------------------------------------------------- */

static inline uint64_t bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* Wall clock (monotonic). */
static inline uint64_t bench_now_ns(void)
{
	return bench_clock_ns(CLOCK_MONOTONIC);
}
/* CPU time of the calling thread: excludes the time other processes ran on its CPU, which is
 * the steadier figure on a shared machine. */
static inline uint64_t bench_thread_cpu_ns(void)
{
	return bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
/* CPU time of the whole process (every thread, the libraries' workers included). */
static inline uint64_t bench_process_cpu_ns(void)
{
	return bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Sleep until the monotonic clock reads t (ns), whatever signals arrive meanwhile. */
static inline void bench_sleep_until_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
static inline void bench_sleep_ns(uint64_t ns)
{
	bench_sleep_until_ns(bench_now_ns() + ns);
}
static inline void bench_sleep_ms(uint64_t ms)
{
	bench_sleep_ns(ms * 1000000ull);
}

/* ---- process resources ----------------------------------------------------------------------- */

/* Peak resident set of the process, MB. */
static inline double bench_maxrss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* Context switches of the whole process (voluntary + involuntary). */
static inline double bench_ctx_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
}

/* Current resident set of the process, bytes (/proc/self/statm), or 0 when unreadable. */
static inline uint64_t bench_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* ---- threads --------------------------------------------------------------------------------- */

/* pthread_create() with an optional stack size (0: the default). Returns 0 or -errno: a
 * thread count larger than the machine can create is the caller's to report. */
static inline int bench_thread_try_create(pthread_t *th, size_t stack, void *(*fn)(void *),
					  void *arg)
{
	pthread_attr_t attr;
	int e;

	if (!stack)
		return -pthread_create(th, NULL, fn, arg);
	if ((e = pthread_attr_init(&attr)) != 0)
		return -e;
	e = pthread_attr_setstacksize(&attr, stack);
	if (!e)
		e = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -e;
}

/* pthread_create() that reports failure in words and exits with status 3 (not a crash): "the
 * machine could not create thread i of n". The families' run.sh scripts record status 3 as a
 * point that could not be measured. */
#define BENCH_EXIT_NO_THREAD 3
static inline void bench_thread_create(pthread_t *th, void *(*fn)(void *), void *arg, int i, int n)
{
	int e = bench_thread_try_create(th, 0, fn, arg);

	if (e) {
		fflush(stdout);
		fprintf(stderr, "%s: could not create thread %d of %d: %s\n",
			program_invocation_short_name, i + 1, n, strerror(-e));
		exit(BENCH_EXIT_NO_THREAD);
	}
}

/* ---- CPUs and pinning ------------------------------------------------------------------------ */

#define BENCH_MAX_CPUS 1024

/* The CPUs of the calling thread's affinity mask, ascending, into cpus[0..max); returns how many
 * (at least 1: CPU 0 if the mask cannot be read). Call it once at start-up, before any thread
 * pins itself: threads inherit the mask of the thread that creates them. */
static inline int bench_affinity_cpus(int *cpus, int max)
{
	cpu_set_t avail;
	int n = 0;

	if (sched_getaffinity(0, sizeof(avail), &avail) == 0)
		for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
			if (CPU_ISSET(cpu, &avail))
				cpus[n++] = cpu;
	if (n == 0)
		cpus[n++] = 0;
	return n;
}

/* Pin the calling thread to one CPU. Returns 0 or -errno. */
static inline int bench_pin_cpu(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return -pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

/*
 * The CPUs a benchmark may use and whether it pins: read the affinity mask once at start-up
 * (bench_cpus_init), then bench_cpus_pin(c, i) puts the calling thread on the i-th CPU of the
 * mask (round-robin). Pinning is guarded: it is off when c->pin is false (--no-pin, or more
 * threads than CPUs), and a CPU that refuses (a cpuset changed under the process) gives one
 * warning and the thread runs where the scheduler puts it; c->pin_failed records it.
 */
struct bench_cpus {
	int n;
	bool pin;
	int pin_failed;
	int cpu[BENCH_MAX_CPUS];
};

static inline void bench_cpus_init(struct bench_cpus *c)
{
	c->n = bench_affinity_cpus(c->cpu, BENCH_MAX_CPUS);
	c->pin = true;
	c->pin_failed = 0;
}

static inline void bench_cpus_pin(struct bench_cpus *c, int idx)
{
	int cpu, e;

	if (!c->pin)
		return;
	cpu = c->cpu[idx % c->n];
	e = bench_pin_cpu(cpu);
	if (e && grace_fetch_add(&c->pin_failed, 1, __ATOMIC_RELAXED) == 0)
		fprintf(stderr, "%s: pinning to CPU %d: %s (running unpinned)\n",
			program_invocation_short_name, cpu, strerror(-e));
}

/* ---- sleeping flags ---------------------------------------------------------------------------- */

/* Sleep (futex) while *word == v: for threads that must wait without running, for example the
 * idle threads of a sweep. The acquire load pairs with the release store of bench_flag_set(),
 * so what the setter wrote before is visible once the wait ends. */
static inline void bench_flag_wait_while(int *word, int v)
{
	while (grace_load_acquire(word) == v)
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

/* Set *word to v and wake every thread sleeping on it in bench_flag_wait_while(). */
static inline void bench_flag_set(int *word, int v)
{
	grace_store_release(word, v); /* pairs with the acquire load in bench_flag_wait_while() */
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- start barrier --------------------------------------------------------------------------- */

/* A spinning start line: every thread leaves it within a few hundred nanoseconds of the others
 * (pthread_barrier_wait wakes threads one by one through the kernel). */
struct bench_start {
	unsigned int expected;
	unsigned int arrived;
	unsigned int go;
};

static inline void bench_start_init(struct bench_start *s, unsigned int nthreads)
{
	s->expected = nthreads;
	s->arrived = 0;
	s->go = 0;
}
/* Called by each of the nthreads participants; the last one to arrive releases them all. */
static inline void bench_start_wait(struct bench_start *s)
{
	/* Acq-rel: the last arrival sees every participant's set-up before it releases them. */
	if (grace_fetch_add(&s->arrived, 1, __ATOMIC_ACQ_REL) + 1 == s->expected)
		grace_store_release(&s->go, 1); /* pairs with the acquire load below */
	while (!grace_load_acquire(&s->go))
		sched_yield(); /* the machine may be oversubscribed: yield, do not burn the CPU */
}

/* ---- timed workers ------------------------------------------------------------------------- */

/*
 * The common shape of a throughput benchmark: n threads, each pinned to its CPU (or not: cpu
 * -1), run a measured loop in batches from a common start until the main thread says stop,
 * after `ms` milliseconds; each reports the operations it ran and its own CPU time.
 */
struct bench_worker {
	pthread_t th;
	int cpu;                  /* pin to this CPU, or -1 */
	void (*loop)(uint64_t n); /* the measured loop: n operations */
	uint64_t ops, cpu_ns;     /* results */
	struct bench_workers *all;
};

struct bench_workers {
	struct bench_start start;
	uint64_t warm, batch; /* operations run before the start (untimed), then per batch */
	/* Read by the workers between batches: a cache line of its own. Relaxed: it publishes
	 * nothing, the join that follows orders the results. */
	int stop __attribute__((aligned(64)));
	char pad_[60];
};

static inline void *bench__worker_main(void *arg)
{
	struct bench_worker *w = (struct bench_worker *)arg;
	struct bench_workers *all = w->all;
	uint64_t ops = 0, t0;

	if (w->cpu >= 0)
		bench_pin_cpu(w->cpu);
	w->loop(all->warm); /* warm-up: registration, first touches */
	bench_start_wait(&all->start);
	t0 = bench_thread_cpu_ns();
	while (!grace_load_relaxed(&all->stop)) {
		w->loop(all->batch);
		ops += all->batch;
	}
	w->cpu_ns = bench_thread_cpu_ns() - t0;
	w->ops = ops;
	return NULL;
}

/* Run the n workers w[0..n) (cpu and loop set by the caller) for ms milliseconds; returns the
 * wall-clock time from the common start to the last join, in ns. */
static inline uint64_t bench_workers_run(struct bench_worker *w, int n, uint64_t ms, uint64_t warm,
					 uint64_t batch)
{
	static struct bench_workers all;
	uint64_t t0;

	all.warm = warm;
	all.batch = batch;
	all.stop = 0;
	bench_start_init(&all.start, (unsigned int)n + 1);
	for (int i = 0; i < n; i++) {
		w[i].all = &all;
		bench_thread_create(&w[i].th, bench__worker_main, &w[i], i, n);
	}
	bench_start_wait(&all.start);
	t0 = bench_now_ns();
	bench_sleep_ms(ms);
	grace_store_relaxed(&all.stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	return bench_now_ns() - t0;
}

/* ---- order statistics ------------------------------------------------------------------------ */

static inline int bench__cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort v[0..n) in place (ascending). */
static inline void bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench__cmp_double);
}

/* Percentile p in [0, 100] of a sorted array, linear interpolation between closest ranks. */
static inline double bench_percentile_sorted(const double *v, size_t n, double p)
{
	if (n == 0)
		return 0.0;
	if (p <= 0)
		return v[0];
	if (p >= 100)
		return v[n - 1];
	double rank = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)rank;
	double frac = rank - (double)lo;

	return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

struct bench_stats {
	size_t n;
	double min, max, mean, p50, p90, p99;
};

/* Summary of v[0..n); sorts v in place. */
static inline struct bench_stats bench_stats_of(double *v, size_t n)
{
	struct bench_stats s;
	double sum = 0;

	memset(&s, 0, sizeof(s));
	s.n = n;
	if (n == 0)
		return s;
	bench_sort(v, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.min = v[0];
	s.max = v[n - 1];
	s.mean = sum / (double)n;
	s.p50 = bench_percentile_sorted(v, n, 50);
	s.p90 = bench_percentile_sorted(v, n, 90);
	s.p99 = bench_percentile_sorted(v, n, 99);
	return s;
}

/* Median of v[0..n) (sorts v in place). */
static inline double bench_median(double *v, size_t n)
{
	bench_sort(v, n);
	return bench_percentile_sorted(v, n, 50);
}

/* ---- CSV ------------------------------------------------------------------------------------- */

#define BENCH_CSV_HEADER "bench,design,threads,run,metric,value,unit"

static inline void bench_csv_header(FILE *f)
{
	fprintf(f, "%s\n", BENCH_CSV_HEADER);
}

/* One row: bench,design,threads,run,metric,value,unit. Names must not contain commas. */
static inline void bench_csv_row(FILE *f, const char *bench, const char *design, int threads,
				 int run, const char *metric, double value, const char *unit)
{
	fprintf(f, "%s,%s,%d,%d,%s,%.6g,%s\n", bench, design, threads, run, metric, value, unit);
}

/* The summary rows of a latency sample, in microseconds: p50_us, p90_us, p99_us, max_us,
 * mean_us and samples. Sorts v in place. */
static inline void bench_csv_latency(FILE *f, const char *bench, const char *design, int threads,
				     int run, double *v, size_t n)
{
	struct bench_stats s = bench_stats_of(v, n);

	bench_csv_row(f, bench, design, threads, run, "p50_us", s.p50, "us");
	bench_csv_row(f, bench, design, threads, run, "p90_us", s.p90, "us");
	bench_csv_row(f, bench, design, threads, run, "p99_us", s.p99, "us");
	bench_csv_row(f, bench, design, threads, run, "max_us", s.max, "us");
	bench_csv_row(f, bench, design, threads, run, "mean_us", s.mean, "us");
	bench_csv_row(f, bench, design, threads, run, "samples", (double)s.n, "count");
}

/* Append every sample (one per line, %.3f) to path, so a report can pool percentiles over
 * runs (gracereport.load_samples reads them back); exits with a message on a write error. */
static inline void bench_append_samples(const char *path, const double *v, size_t n)
{
	FILE *f = fopen(path, "a");

	if (!f)
		bench_fatal("%s: %s", path, strerror(errno));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.3f\n", v[i]);
	if (fclose(f))
		bench_fatal("%s: %s", path, strerror(errno));
}

/* ---- arguments ------------------------------------------------------------------------------- */

/* Minimal parser for "--key value" and "--flag" arguments: bench_arg_str(argc, argv, "--iters")
 * returns the word after "--iters", or NULL. */
static inline const char *bench_arg_str(int argc, char **argv, const char *key)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
	return NULL;
}

static inline bool bench_arg_flag(int argc, char **argv, const char *key)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return true;
	return false;
}

/* Unsigned value of "--key N" (accepts 0x.., k/M suffixes), or def when absent; exits with a
 * message on a malformed number. */
static inline uint64_t bench_arg_u64(int argc, char **argv, const char *key, uint64_t def)
{
	const char *s = bench_arg_str(argc, argv, key);
	char *end;
	unsigned long long v;

	if (!s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'k')
		v *= 1000ull, end++;
	else if (*end == 'M')
		v *= 1000000ull, end++;
	if (errno || end == s || *end) {
		fprintf(stderr, "bad number for %s: '%s'\n", key, s);
		exit(2);
	}
	return v;
}

/* ---- designs --------------------------------------------------------------------------------- */

/* The element of designs[0..n) (pointers to structs with a `name` member) named name, or NULL. */
#define BENCH_FIND_NAMED(designs, n, nm)                                               \
	__extension__({                                                                \
		__typeof__(&*(designs)[0]) bench__found = NULL;                        \
		for (size_t bench__i = 0; bench__i < (n) && !bench__found; bench__i++) \
			if (strcmp((designs)[bench__i]->name, (nm)) == 0)              \
				bench__found = (designs)[bench__i];                    \
		bench__found;                                                          \
	})

/* The design named by "--design NAME" among designs[0..n), or exit 2 with a message that
 * points to the program's "list" command when it is missing or unknown. */
#define BENCH_DESIGN_ARG(designs, n, argc, argv)                                             \
	__extension__({                                                                      \
		const char *bench__nm = bench_arg_str((argc), (argv), "--design");           \
		__typeof__(&*(designs)[0]) bench__d =                                        \
			bench__nm ? BENCH_FIND_NAMED(designs, n, bench__nm) : NULL;          \
		if (!bench__d) {                                                             \
			fprintf(stderr, "%s: %s design '%s' (see: %s list)\n",               \
				program_invocation_short_name, bench__nm ? "unknown" : "no", \
				bench__nm ? bench__nm : "", program_invocation_short_name);  \
			exit(2);                                                             \
		}                                                                            \
		bench__d;                                                                    \
	})

#ifdef __cplusplus
}
#endif

#endif /* GRACE_BENCH_COMMON_H */
