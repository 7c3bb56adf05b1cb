/* SPDX-License-Identifier: MIT */
/*
 * Seed 004 reproduced: what rseq buys a per-CPU algorithm.
 *
 *   rseq_bench cpu --design D [--ms M] [--run R]
 *       D: rseq          grace__rseq_cpu(): one load from the rseq area
 *          sched_getcpu  glibc's sched_getcpu() (itself reads the rseq area when glibc
 *                        registered one; vDSO getcpu otherwise)
 *          vdso          the vDSO getcpu (what sched_getcpu costs without rseq)
 *          syscall       syscall(SYS_getcpu): a real system call
 *   rseq_bench inc --design D [--threads T] [--ms M] [--run R]
 *       D: rseq          grace__rseq_percpu_add(): an rseq critical section, no lock prefix
 *          getcpu-xadd   sched_getcpu() + lock xadd on that CPU's counter (the paper's baseline)
 *          rseq-xadd     rseq CPU read + lock xadd (isolates the cost of the atomic)
 *   rseq_bench count --op OP [--iters N]
 *       N calls of one operation, each in a function of its own (op_OP, noinline) for
 *       instruction counts: callgrind's totals for N and 2N calls give what a call runs under
 *       valgrind (which has no rseq(2): the fallback path), and bench/callbacks/pathcount.py
 *       --func op_OP walks the rseq path statically (bench/rseq/instructions.sh does both).
 *       OP: cpu, add, add_release, srcu_pair, push.
 *   rseq_bench list
 * Prints CSV rows: bench,design,threads,run,metric,value,unit with metric ns_per_op (thread CPU
 * time per operation, median-free: one run; run.sh repeats and interleaves) and, for inc, a
 * check that the per-CPU counters sum to the number of increments.
 *
 * One measured loop per design (noinline), the operation inlined into it.
 */
#include "bench.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <grace/internal/rseq.h>
#include <grace/srcu.h>

#define BENCH "rseq"

/* ---- CPU number ---- */

typedef long (*getcpu_fn)(unsigned int *, unsigned int *, void *);
static getcpu_fn vdso_getcpu;

static BENCH_NOINLINE uint64_t loop_cpu_rseq(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		int c = grace__rseq_cpu();
		BENCH_USE(c);
		s += (unsigned int)c;
	}
	return s;
}

static BENCH_NOINLINE uint64_t loop_cpu_sched(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		int c = sched_getcpu();
		BENCH_USE(c);
		s += (unsigned int)c;
	}
	return s;
}

static BENCH_NOINLINE uint64_t loop_cpu_vdso(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		unsigned int c = 0;
		vdso_getcpu(&c, NULL, NULL);
		BENCH_USE(c);
		s += c;
	}
	return s;
}

static BENCH_NOINLINE uint64_t loop_cpu_syscall(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		unsigned int c = 0;
		syscall(SYS_getcpu, &c, NULL, NULL);
		BENCH_USE(c);
		s += c;
	}
	return s;
}

/* ---- per-CPU increment ---- */

struct slot {
	uint64_t rseq_ctr;   /* rseq only */
	uint64_t atomic_ctr; /* lock xadd only */
	uint64_t pad_[6];
};
static struct slot *slots;
static unsigned int nslots;

static BENCH_NOINLINE void loop_inc_rseq(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (__builtin_expect(grace__rseq_percpu_add(&slots[0].rseq_ctr, sizeof(struct slot),
							    nslots, 1) < 0,
				     0)) {
			unsigned int c = (unsigned int)grace__rseq_cpu() % nslots;
			__atomic_fetch_add(&slots[c].atomic_ctr, 1, __ATOMIC_RELAXED);
		}
	}
}

static BENCH_NOINLINE void loop_inc_getcpu_xadd(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int c = sched_getcpu();
		unsigned int k = (c < 0 ? 0u : (unsigned int)c) % nslots;
		__atomic_fetch_add(&slots[k].atomic_ctr, 1, __ATOMIC_RELAXED); /* lock xadd */
	}
}

static BENCH_NOINLINE void loop_inc_rseq_xadd(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		unsigned int k = (unsigned int)grace__rseq_cpu() % nslots;
		__atomic_fetch_add(&slots[k].atomic_ctr, 1, __ATOMIC_RELAXED);
	}
}

/* ---- count: one operation per call, for instruction counts ---- */

DEFINE_STATIC_SRCU(count_dom);

struct plist {
	struct grace__rseq_list l;
	char pad_[64 - sizeof(struct grace__rseq_list)];
};
static struct plist *count_lists;

static BENCH_NOINLINE void op_cpu(void)
{
	int c = grace__rseq_cpu();
	BENCH_USE(c);
}

static BENCH_NOINLINE void op_add(void)
{
	if (__builtin_expect(grace__rseq_percpu_add(&slots[0].rseq_ctr, sizeof(struct slot), nslots,
						    1) < 0,
			     0)) {
		unsigned int c = (unsigned int)grace__rseq_cpu() % nslots;
		__atomic_fetch_add(&slots[c].atomic_ctr, 1, __ATOMIC_RELAXED);
	}
}

static BENCH_NOINLINE void op_add_release(void)
{
	if (__builtin_expect(grace__rseq_percpu_add_release(&slots[0].rseq_ctr, sizeof(struct slot),
							    nslots, 1) < 0,
			     0)) {
		unsigned int c = (unsigned int)grace__rseq_cpu() % nslots;
		__atomic_fetch_add(&slots[c].atomic_ctr, 1, __ATOMIC_RELEASE);
	}
}

/* srcu_read_lock() + srcu_read_unlock(): the two inline rseq sections of the srcu read side. */
static BENCH_NOINLINE void op_srcu_pair(void)
{
	int idx = srcu_read_lock(&count_dom);
	BENCH_CLOBBER();
	srcu_read_unlock(&count_dom, idx);
}

static BENCH_NOINLINE void op_push(struct rcu_head *node)
{
	grace__rseq_list_push(&count_lists[0].l, sizeof(struct plist), nslots, node);
}

static int run_count(const char *op, uint64_t iters)
{
	struct rcu_head *nodes = NULL;

	if (strcmp(op, "push") == 0) {
		nodes = (struct rcu_head *)calloc(4096, sizeof(*nodes));
		if (posix_memalign((void **)&count_lists, 64, nslots * sizeof(struct plist)) != 0 ||
		    !nodes)
			return 1;
		for (unsigned int i = 0; i < nslots; i++)
			grace__rseq_list_init(&count_lists[i].l);
	}
	for (uint64_t i = 0; i < iters; i++) {
		if (strcmp(op, "cpu") == 0) {
			op_cpu();
		} else if (strcmp(op, "add") == 0) {
			op_add();
		} else if (strcmp(op, "add_release") == 0) {
			op_add_release();
		} else if (strcmp(op, "srcu_pair") == 0) {
			op_srcu_pair();
		} else if (strcmp(op, "push") == 0) {
			op_push(&nodes[i % 4096]);
			if (i % 4096 == 4095) /* every node is pushed once before it is reused */
				for (unsigned int c = 0; c < nslots; c++)
					(void)grace__rseq_list_take(&count_lists[c].l);
		} else {
			fprintf(stderr, "rseq_bench count: unknown --op '%s'\n", op);
			return 2;
		}
	}
	bench_csv_row(stdout, "count", op, 1, 0, "calls", (double)iters, "count");
	free(nodes);
	free(count_lists);
	return 0;
}

/* ---- driver ---- */

struct design {
	const char *name;
	int inc; /* 0: cpu test, 1: inc test */
	void *fn;
};

static const struct design designs[] = {
	{ "rseq", 0, (void *)loop_cpu_rseq },
	{ "sched_getcpu", 0, (void *)loop_cpu_sched },
	{ "vdso", 0, (void *)loop_cpu_vdso },
	{ "syscall", 0, (void *)loop_cpu_syscall },
	{ "rseq", 1, (void *)loop_inc_rseq },
	{ "getcpu-xadd", 1, (void *)loop_inc_getcpu_xadd },
	{ "rseq-xadd", 1, (void *)loop_inc_rseq_xadd },
};

struct worker {
	pthread_t th;
	const struct design *d;
	int cpu;
	uint64_t ms;
	struct bench_start *start;
	uint64_t ops, cpu_ns;
};

/* Run the design's loop in batches for ms of wall-clock time; report the thread's CPU time (on a
 * shared machine it excludes the time other processes held the CPU). */
static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	uint64_t batch = 1000;

	if (w->cpu >= 0)
		bench_pin_cpu(w->cpu);
	(void)grace__rseq_cpu(); /* registration (grace's own area) outside the timing */
	bench_start_wait(w->start);
	uint64_t t0 = bench_thread_cpu_ns(), w0 = bench_now_ns(), t, ops = 0;
	do {
		if (w->d->inc) {
			((void (*)(uint64_t))w->d->fn)(batch);
		} else {
			uint64_t s = ((uint64_t(*)(uint64_t))w->d->fn)(batch);
			BENCH_USE(s);
		}
		ops += batch;
		t = bench_now_ns() - w0;
		if (batch < 1000000 && t < w->ms * 50000)
			batch *= 2; /* batches << 1 % of the run: clock reads do not count */
	} while (t < w->ms * 1000000);
	w->ops = ops;
	w->cpu_ns = bench_thread_cpu_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *test = argc > 1 ? argv[1] : "list";
	const char *dname = bench_arg_str(argc, argv, "--design");
	const char *as = bench_arg_str(argc, argv, "--as");
	unsigned int threads = (unsigned int)bench_arg_u64(argc, argv, "--threads", 1);
	uint64_t ms = bench_arg_u64(argc, argv, "--ms", 100);
	int run = (int)bench_arg_u64(argc, argv, "--run", 0);
	const struct design *d = NULL;
	int inc = strcmp(test, "inc") == 0;
	int cpus[BENCH_MAX_CPUS];
	int ncpu = bench_affinity_cpus(cpus, BENCH_MAX_CPUS);

	if (strcmp(test, "count") == 0) {
		const char *op = bench_arg_str(argc, argv, "--op");
		uint64_t iters = bench_arg_u64(argc, argv, "--iters", 100000);
		int r;

		nslots = grace__rseq_nr_cpus();
		if (!op || posix_memalign((void **)&slots, 64, nslots * sizeof(struct slot)) != 0)
			return 2;
		memset(slots, 0, nslots * sizeof(struct slot));
		r = run_count(op, iters);
		free(slots);
		return r;
	}
	if (strcmp(test, "list") == 0) {
		for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++)
			printf("%s\t%s\n", designs[i].inc ? "inc" : "cpu", designs[i].name);
		printf("# rseq mode: %s\n", grace_rseq_mode());
		return 0;
	}
	if (!inc && strcmp(test, "cpu") != 0) {
		fprintf(stderr,
			"usage: rseq_bench cpu|inc|list --design D [--threads T] [--ms M]\n"
			"       rseq_bench count --op cpu|add|add_release|srcu_pair|push [--iters N]\n");
		return 2;
	}
	for (size_t i = 0; dname && i < sizeof(designs) / sizeof(designs[0]); i++)
		if (designs[i].inc == inc && strcmp(designs[i].name, dname) == 0)
			d = &designs[i];
	if (!d) {
		fprintf(stderr, "rseq_bench: unknown %s design '%s'\n", test, dname ? dname : "");
		return 2;
	}
	if (d->fn == (void *)loop_cpu_vdso) {
		void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			vdso_getcpu = (getcpu_fn)dlsym(h, "__vdso_getcpu");
		if (!vdso_getcpu) {
			fprintf(stderr, "rseq_bench: no vDSO getcpu on this system\n");
			return 3;
		}
	}
	nslots = grace__rseq_nr_cpus();
	if (posix_memalign((void **)&slots, 64, nslots * sizeof(struct slot)) != 0)
		return 1;
	memset(slots, 0, nslots * sizeof(struct slot));

	struct bench_start start;
	struct worker *w = (struct worker *)calloc(threads, sizeof(*w));
	bench_start_init(&start, threads);
	for (unsigned int i = 0; i < threads; i++) {
		w[i].d = d;
		w[i].cpu = cpus[i % (unsigned int)ncpu];
		w[i].ms = ms;
		w[i].start = &start;
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	}
	uint64_t ops = 0, cpu_ns = 0;
	for (unsigned int i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		ops += w[i].ops;
		cpu_ns += w[i].cpu_ns;
	}
	const char *name = as ? as : d->name;
	bench_csv_row(stdout, inc ? "rseq_inc" : "rseq_cpu", name, (int)threads, run, "ns_per_op",
		      (double)cpu_ns / (double)ops, "ns");
	if (inc) {
		uint64_t sum = 0;
		for (unsigned int i = 0; i < nslots; i++)
			sum += slots[i].rseq_ctr + slots[i].atomic_ctr;
		if (sum != ops) {
			fprintf(stderr, "rseq_bench: counters sum to %llu, %llu increments made\n",
				(unsigned long long)sum, (unsigned long long)ops);
			return 1;
		}
	}
	free(w);
	free(slots);
	return 0;
}
