/* SPDX-License-Identifier: MIT */
/*
 * hashapi_bench: grace_hash against liburcu's cds_lfht (and cds_lfht on grace), library against
 * library. Prints CSV rows (bench,design,threads,update_pct,run,value,unit):
 *   ops      lookups and update mixes: Mops/s of T threads, each operation a lookup of a random
 *            present key or, for the update fraction, a delete and re-insert of a key the thread
 *            owns (new node; the old one freed after a grace period)
 *   resize   lookups (Mops/s) of T threads while this thread resizes the table back and forth
 *            between nkeys/8 and 2*nkeys buckets, and the resizes completed per second
 *   memory   bytes per node: the structure the user embeds, the table's own heap per node at
 *            load factor 1, and their sum
 *   grow     a table started at 64 buckets with automatic resizing receives nkeys insertions
 *            from one thread while T threads look keys up: insertions per second, lookups
 *            meanwhile, and lookups on the grown table
 * Designs run interleaved (their order rotates with each repetition); every design keeps one
 * table of --nkeys keys for the whole run.
 *   hashapi_bench [--designs a,b] [--threads 1,2] [--updates 0,1,10,50] [--nkeys N]
 *                 [--duration S] [--reps N] [--bench ops,resize,memory,grow] [--symbol DESIGN]
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hashapi.h"

#ifdef HA_HAVE_URCU
#define URCU_DESIGN &ha_urcu,
#else
#define URCU_DESIGN
#endif
static const struct ha_design *all[] = { &ha_grace, &ha_grace_inline, URCU_DESIGN &ha_grace_urcu };
#define NALL (sizeof(all) / sizeof(all[0]))

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_list(const char *s, double *v, int max)
{
	int n = 0;
	char *dup = strdup(s), *tok, *save = NULL;
	for (tok = strtok_r(dup, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
		v[n++] = atof(tok);
	free(dup);
	return n;
}

struct thr {
	pthread_t t;
	const struct ha_design *d;
	void *table;
	struct ha_work w;
};

static void *thr_main(void *arg)
{
	struct thr *t = (struct thr *)arg;
	t->d->run(t->table, &t->w);
	return NULL;
}

/* A group of measured threads: started together, released by *go, stopped by *stop. */
struct crew {
	struct thr th[64];
	unsigned n;
	volatile int stop, go;
	int ready;
};

/* Start n threads (at most 64) running d on table; return once every one is registered and
 * spinning on go, so the caller's clock starts with all of them ready. */
static void crew_start(struct crew *c, const struct ha_design *d, void *table, uint64_t nkeys,
		       unsigned n, unsigned update_pm)
{
	c->n = n > 64 ? 64 : n;
	c->stop = c->go = 0;
	c->ready = 0;
	for (unsigned i = 0; i < c->n; i++) {
		struct thr *t = &c->th[i];
		t->d = d;
		t->table = table;
		memset(&t->w, 0, sizeof(t->w));
		t->w.nkeys = nkeys;
		t->w.update_pm = update_pm;
		t->w.thread = i;
		t->w.nthreads = c->n;
		t->w.stop = &c->stop;
		t->w.go = &c->go;
		t->w.ready = &c->ready;
		t->w.seed = 0x9e3779b97f4a7c15ull * (i + 1);
		pthread_create(&t->t, NULL, thr_main, t);
	}
	while (__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE) < (int)c->n)
		usleep(100);
}

/* Stop and join the threads; their operations in all. */
static uint64_t crew_stop(struct crew *c)
{
	uint64_t ops = 0;

	c->stop = 1;
	for (unsigned i = 0; i < c->n; i++) {
		pthread_join(c->th[i].t, NULL);
		ops += c->th[i].w.ops;
	}
	return ops;
}

/* T threads for @duration seconds; @resize_too: this thread resizes meanwhile. Returns
 * Mops/s; *resizes_per_s the resizes completed. */
static uint64_t last_ops; /* operations of the last timed run */

static double timed(const struct ha_design *d, void *table, uint64_t nkeys, unsigned nthreads,
		    unsigned update_pm, double duration, int resize_too, double *resizes_per_s)
{
	static struct crew c;
	unsigned long resizes = 0;

	crew_start(&c, d, table, nkeys, nthreads, update_pm);
	double t0 = now();
	c.go = 1;
	if (resize_too) {
		while (now() - t0 < duration) {
			d->resize(table, resizes % 2 ? 2 * nkeys : nkeys / 8);
			resizes++;
		}
	} else {
		while (now() - t0 < duration)
			usleep(1000);
	}
	c.stop = 1;
	double el = now() - t0;
	uint64_t ops = crew_stop(&c);
	last_ops = ops;
	if (resize_too) {
		/* Back to load factor 1 for the next point. */
		d->resize(table, nkeys);
		*resizes_per_s = (double)resizes / el;
	}
	return (double)ops / el / 1e6;
}

/*
 * Growth: a table created with 64 buckets and automatic resizing receives nkeys insertions
 * from this thread while @nthreads threads look keys up. Returns the insertions per second;
 * *lookups the lookups' Mops/s meanwhile, *after their Mops/s on the grown table.
 */
static double grow_run(const struct ha_design *d, uint64_t nkeys, unsigned nthreads,
		       double duration, double *lookups, double *after)
{
	static struct crew c;
	void *table = d->create(0, 64, 1);

	crew_start(&c, d, table, nkeys, nthreads, 0);
	double t0 = now();
	c.go = 1;
	d->insert(table, 0, nkeys);
	double el = now() - t0;
	uint64_t ops = crew_stop(&c);
	*lookups = (double)ops / el / 1e6;
	double x;
	*after = timed(d, table, nkeys, nthreads, 0, duration, 0, &x);
	d->destroy(table);
	return (double)nkeys / el / 1e6;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

int main(int argc, char **argv)
{
	const char *designs = NULL, *benches = "ops,resize,memory,grow";
	double threads[16] = { 1, 2 }, updates[16] = { 0, 1, 10, 50 };
	int nthr = 2, nupd = 4, reps = 3;
	uint64_t nkeys = 65536;
	double duration = 0.2;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--symbol") && v) {
			for (size_t k = 0; k < NALL; k++)
				if (!strcmp(all[k]->name, v)) {
					printf("%s\n", all[k]->loop_symbol);
					return 0;
				}
			return 1;
		} else if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < NALL; k++)
				printf("%s\t%s\n", all[k]->name, all[k]->loop_symbol);
			return 0;
		} else if (!strcmp(a, "--designs") && v) {
			designs = v, i++;
		} else if (!strcmp(a, "--threads") && v) {
			nthr = parse_list(v, threads, 16), i++;
		} else if (!strcmp(a, "--updates") && v) {
			nupd = parse_list(v, updates, 16), i++;
		} else if (!strcmp(a, "--nkeys") && v) {
			nkeys = strtoull(v, NULL, 0), i++;
		} else if (!strcmp(a, "--duration") && v) {
			duration = atof(v), i++;
		} else if (!strcmp(a, "--reps") && v) {
			reps = atoi(v), i++;
		} else if (!strcmp(a, "--bench") && v) {
			benches = v, i++;
		} else {
			fprintf(stderr, "hashapi_bench: bad argument %s (see the top of main.c)\n",
				a);
			return 2;
		}
	}
	const struct ha_design *ds[NALL];
	size_t nd = 0;
	for (size_t k = 0; k < NALL; k++) {
		if (designs) {
			char pat[64];
			snprintf(pat, sizeof(pat), ",%s,", all[k]->name);
			char list[512];
			snprintf(list, sizeof(list), ",%s,", designs);
			if (!strstr(list, pat))
				continue;
		}
		if (!all[k]->run)
			continue; /* not built */
		ds[nd++] = all[k];
	}
	printf("bench,design,threads,update_pct,run,value,unit\n");

	if (strstr(benches, "memory")) {
		/* create() allocates the objects too: subtract what nkeys objects of the design's
		 * size cost the allocator, measured the same way. */
		for (size_t k = 0; k < nd; k++) {
			size_t before = heap_in_use();
			void **objs = (void **)malloc(nkeys * sizeof(void *));
			size_t mid = heap_in_use();
			for (uint64_t i = 0; i < nkeys; i++)
				objs[i] = malloc(ds[k]->obj_bytes);
			double obj = (double)(heap_in_use() - mid) / (double)nkeys;
			for (uint64_t i = 0; i < nkeys; i++)
				free(objs[i]);
			free(objs);
			(void)before;
			size_t b0 = heap_in_use();
			void *t = ds[k]->create(nkeys, nkeys, 0);
			double per = (double)(heap_in_use() - b0) / (double)nkeys;
			double table = per - obj;
			printf("memory,%s,0,0,0,%zu,node_bytes\n", ds[k]->name, ds[k]->node_bytes);
			printf("memory,%s,0,0,0,%.1f,table_bytes_per_node\n", ds[k]->name, table);
			printf("memory,%s,0,0,0,%.1f,bytes_per_node\n", ds[k]->name,
			       table + (double)ds[k]->node_bytes);
			ds[k]->destroy(t);
		}
		fflush(stdout);
	}

	void *tables[NALL];
	if (strstr(benches, "ops") || strstr(benches, "resize"))
		for (size_t k = 0; k < nd; k++)
			tables[k] = ds[k]->create(nkeys, nkeys, 0);

	if (strstr(benches, "ops")) {
		for (int ti = 0; ti < nthr; ti++)
			for (int ui = 0; ui < nupd; ui++)
				for (int r = 0; r < reps; r++)
					for (size_t j = 0; j < nd; j++) {
						size_t k = (j + (size_t)r) % nd;
						double x;
						double m = timed(ds[k], tables[k], nkeys,
								 (unsigned)threads[ti],
								 (unsigned)(updates[ui] * 10),
								 duration, 0, &x);
						printf("ops,%s,%u,%g,%d,%.4f,Mops/s\n", ds[k]->name,
						       (unsigned)threads[ti], updates[ui], r, m);
						printf("ops,%s,%u,%g,%d,%llu,ops\n", ds[k]->name,
						       (unsigned)threads[ti], updates[ui], r,
						       (unsigned long long)last_ops);
						fflush(stdout);
					}
	}
	if (strstr(benches, "resize")) {
		for (int ti = 0; ti < nthr; ti++)
			for (int r = 0; r < reps; r++)
				for (size_t j = 0; j < nd; j++) {
					size_t k = (j + (size_t)r) % nd;
					if (!strcmp(ds[k]->name, "grace-inline"))
						continue; /* same table as grace */
					double rs = 0;
					double m = timed(ds[k], tables[k], nkeys,
							 (unsigned)threads[ti], 0, duration, 1,
							 &rs);
					printf("resize,%s,%u,0,%d,%.4f,Mops/s\n", ds[k]->name,
					       (unsigned)threads[ti], r, m);
					printf("resize,%s,%u,0,%d,%.2f,resizes/s\n", ds[k]->name,
					       (unsigned)threads[ti], r, rs);
					fflush(stdout);
				}
	}
	if (strstr(benches, "ops") || strstr(benches, "resize"))
		for (size_t k = 0; k < nd; k++)
			ds[k]->destroy(tables[k]);
	if (strstr(benches, "grow")) {
		for (int r = 0; r < reps; r++)
			for (size_t j = 0; j < nd; j++) {
				size_t k = (j + (size_t)r) % nd;
				if (!strcmp(ds[k]->name, "grace-inline"))
					continue; /* same table as grace */
				double lk, af;
				double ins = grow_run(ds[k], nkeys, (unsigned)threads[0], duration,
						      &lk, &af);
				printf("grow,%s,%u,0,%d,%.4f,Minserts/s\n", ds[k]->name,
				       (unsigned)threads[0], r, ins);
				printf("grow,%s,%u,0,%d,%.4f,lookups Mops/s during\n", ds[k]->name,
				       (unsigned)threads[0], r, lk);
				printf("grow,%s,%u,0,%d,%.4f,lookups Mops/s after\n", ds[k]->name,
				       (unsigned)threads[0], r, af);
				fflush(stdout);
			}
	}
	return 0;
}
