/* SPDX-License-Identifier: MIT */
/*
 * freeflood driver: one design per process, so that the peak resident memory is that design's.
 *
 *   freeflood --design NAME [--threads 2] [--seconds 60] [--size 64] [--stall-ms 0]
 *             [--stall-every-ms 2000] [--max-rss-mb 0] [--abort-rss-mb 4096] [--run N]
 *             [--csv FILE]
 *   freeflood list
 *
 * --threads threads flood for --seconds, each allocating --size-byte objects and retiring them
 * with the design's deferred free. A sampler reads the resident set (/proc/self/statm) every
 * 5 ms. With --stall-ms, one more thread holds a read-side section of the flavor for that long
 * every --stall-every-ms (a stalled reader: no grace period can end meanwhile). After the
 * flood, the design's barrier frees what is left.
 * Output (CSV rows, bench.h's long format, bench "flood"): frees_per_s, peak_rss_mb (sampled),
 * maxrss_mb (getrusage), base_rss_mb (before the flood), end_rss_mb (after it, before the
 * barrier), settle_s (the barrier), cpu_s (the process), bound_waits, capped (1 if the run
 * was cut short at --abort-rss-mb, which protects the machine from a design without a bound).
 * Exit status 1 when --max-rss-mb is given and the peak exceeded it (the tests' check), 2 on bad
 * input.
 */
#include "ff.h"

extern const struct ff_design ff_grace_free, ff_grace_free_hl, ff_grace_call, ff_grace_retire;
#ifdef FF_HAVE_URCU
extern const struct ff_design ff_urcu_call, ff_urcu_defer;
#endif

static const struct ff_design *const designs[] = {
	&ff_grace_free, &ff_grace_free_hl, &ff_grace_retire, &ff_grace_call,
#ifdef FF_HAVE_URCU
	&ff_urcu_call,  &ff_urcu_defer,
#endif
};
#define NDESIGNS (sizeof(designs) / sizeof(designs[0]))

static const struct ff_design *D;
static size_t obj_size = 64;
static unsigned int stall_ms, stall_every_ms = 2000;
static double abort_rss_mb = 4096;
static int stop;
static int capped;
static uint64_t peak_rss;

static double mb(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

static void *flood_main(void *arg)
{
	uint64_t *count = (uint64_t *)arg;

	D->thread_start();
	*count = D->flood(&stop, obj_size);
	D->thread_stop();
	return NULL;
}

/* Resident set every 5 ms; past --abort-rss-mb, stop the flood (and say so). */
static void *sampler_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t r = bench_rss_bytes();
		if (r > peak_rss)
			peak_rss = r;
		if (abort_rss_mb > 0 && mb(r) > abort_rss_mb) {
			__atomic_store_n(&capped, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		}
		bench_sleep_ms(5);
	}
	return NULL;
}

/* A reader that holds a section for stall_ms every stall_every_ms. */
static void *staller_main(void *arg)
{
	uint64_t *stalls = (uint64_t *)arg;

	D->thread_start();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t t_end = bench_now_ns() +
				 (uint64_t)(stall_every_ms - stall_ms) * 1000000ull;
		while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && bench_now_ns() < t_end)
			bench_sleep_ms(1);
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED))
			break;
		D->read_lock();
		bench_sleep_ms(stall_ms); /* no grace period can end meanwhile */
		D->read_unlock();
		(*stalls)++;
	}
	D->thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *name = bench_arg_str(argc, argv, "--design");
	unsigned int nthreads = (unsigned int)bench_arg_u64(argc, argv, "--threads", 2);
	double seconds = 60, max_rss_mb = 0;
	unsigned int run = (unsigned int)bench_arg_u64(argc, argv, "--run", 0);
	const char *csv_path = bench_arg_str(argc, argv, "--csv");
	const char *s;
	FILE *csv = stdout;

	if (argc > 1 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < NDESIGNS; i++)
			printf("%s\t%s\n", designs[i]->name, designs[i]->label);
		return 0;
	}
	if ((s = bench_arg_str(argc, argv, "--seconds")))
		seconds = atof(s);
	if ((s = bench_arg_str(argc, argv, "--max-rss-mb")))
		max_rss_mb = atof(s);
	if ((s = bench_arg_str(argc, argv, "--abort-rss-mb")))
		abort_rss_mb = atof(s);
	obj_size = (size_t)bench_arg_u64(argc, argv, "--size", 64);
	stall_ms = (unsigned int)bench_arg_u64(argc, argv, "--stall-ms", 0);
	stall_every_ms = (unsigned int)bench_arg_u64(argc, argv, "--stall-every-ms", 2000);
	for (size_t i = 0; name && i < NDESIGNS; i++)
		if (!strcmp(designs[i]->name, name))
			D = designs[i];
	if (!D || nthreads < 1 || nthreads > 256 || seconds <= 0 ||
	    obj_size < sizeof(struct ff_obj) || (stall_ms && stall_ms >= stall_every_ms)) {
		fprintf(stderr,
			"usage: freeflood --design NAME [--threads N] [--seconds S] [--size B] "
			"[--stall-ms MS --stall-every-ms MS] [--max-rss-mb MB] [--csv FILE]\n"
			"       freeflood list\n");
		return 2;
	}
	if (csv_path && !(csv = fopen(csv_path, "a")))
		bench_fatal("cannot write %s: %s", csv_path, strerror(errno));

	pthread_t th[256], sampler, staller;
	uint64_t counts[256] = { 0 }, stalls = 0, total = 0;
	uint64_t base = bench_rss_bytes();
	uint64_t w0 = D->bound_waits ? D->bound_waits() : 0;
	uint64_t c0 = bench_process_cpu_ns(), t0 = bench_now_ns();

	peak_rss = base;
	if (pthread_create(&sampler, NULL, sampler_main, NULL) != 0)
		bench_fatal("pthread_create failed");
	if (stall_ms && pthread_create(&staller, NULL, staller_main, &stalls) != 0)
		bench_fatal("pthread_create failed");
	for (unsigned int i = 0; i < nthreads; i++)
		bench_thread_create(&th[i], flood_main, &counts[i], (int)i, (int)nthreads);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) &&
	       bench_now_ns() - t0 < (uint64_t)(seconds * 1e9))
		bench_sleep_ms(10);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		total += counts[i];
	}
	double secs = (double)(bench_now_ns() - t0) * 1e-9;
	pthread_join(sampler, NULL);
	if (stall_ms)
		pthread_join(staller, NULL);
	uint64_t end_rss = bench_rss_bytes();
	if (end_rss > peak_rss)
		peak_rss = end_rss;
	uint64_t t1 = bench_now_ns();
	D->thread_start();
	D->barrier();
	D->thread_stop();
	double settle = (double)(bench_now_ns() - t1) * 1e-9;
	double cpu = (double)(bench_process_cpu_ns() - c0) * 1e-9;
	uint64_t waits = D->bound_waits ? D->bound_waits() - w0 : 0;

	const char *b = "flood";
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "frees_per_s", (double)total / secs,
		      "1/s");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "seconds", secs, "s");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "peak_rss_mb", mb(peak_rss), "MB");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "maxrss_mb", bench_maxrss_mb(),
		      "MB");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "base_rss_mb", mb(base), "MB");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "end_rss_mb", mb(end_rss), "MB");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "settle_s", settle, "s");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "cpu_s", cpu, "s");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "bound_waits", (double)waits, "");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "stalls", (double)stalls, "");
	bench_csv_row(csv, b, D->name, (int)nthreads, (int)run, "capped",
		      (double)__atomic_load_n(&capped, __ATOMIC_RELAXED), "");
	if (csv != stdout)
		fclose(csv);
	fprintf(stderr,
		"freeflood: %s, %u threads, %.1f s%s: %.2f M frees/s, peak RSS %.1f MB (base %.1f, "
		"end %.1f), settle %.3f s, bound waits %" PRIu64 "%s\n",
		D->name, nthreads, secs, stall_ms ? " with a stalling reader" : "",
		(double)total / secs / 1e6, mb(peak_rss), mb(base), mb(end_rss), settle, waits,
		capped ? ", CUT SHORT at --abort-rss-mb" : "");
	if (max_rss_mb > 0 && (mb(peak_rss) > max_rss_mb || capped)) {
		fprintf(stderr, "freeflood: %s: peak RSS %.1f MB exceeds the bound of %.0f MB\n",
			D->name, mb(peak_rss), max_rss_mb);
		return 1;
	}
	return 0;
}
