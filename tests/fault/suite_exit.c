/* SPDX-License-Identifier: MIT */
/*
 * Fault-injection suite: exit() at random points.
 *
 * Each run is a child process with readers and updaters of every flavor at work (callbacks
 * queued, grace periods, barriers, polled requests), sometimes with stuck readers elsewhere (a
 * default-flavor section that never ends, an online QSBR thread that never reports, an srcu
 * section that never ends, a thread waiting in rcu_barrier() or synchronize_srcu() behind
 * one), and one exit() at a random moment from a random place: the main thread, the main
 * thread inside a section, a reader thread inside its section, a callback, a thread that has
 * just queued a flood of callbacks, an online QSBR thread. The child must end with the exit
 * status it chose (under ASan a leak report would change it: LSan stays clean), and its exit
 * must take about GRACE_EXIT_TIMEOUT_MS (set to 300 ms) at most: a child still running
 * HANG_S seconds after exit() is a failure (a hang, not a measurement). The longest exit is
 * printed. GRACE_FAULT_RUNS sets the number of runs (the long label runs thousands).
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 30.0
#define CODE 7

struct obj {
	struct rcu_head rh;
	uint64_t v;
};

DEFINE_SRCU(ex_srcu);
static struct obj *g_rcu, *g_qsbr, *g_srcu;
static int exiting; /* one exit() only: exit is not safe to call twice at once */
static int exit_cb; /* armed: the next callback to run calls exit() */
static int stop_bg;

static void do_exit(void)
{
	int z = 0;
	if (!__atomic_compare_exchange_n(&exiting, &z, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		for (;;)
			pause(); /* someone else exits */
	}
	fprintf(stderr, "EXIT-AT %.6f\n", fault_now());
	exit(CODE);
}

static void obj_free(struct rcu_head *h)
{
	if (__atomic_load_n(&exit_cb, __ATOMIC_ACQUIRE))
		do_exit();
	free(grace_container_of(h, struct obj, rh));
}

static struct obj *obj_new(uint64_t v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o != NULL);
	o->v = v;
	return o;
}

/* ---- background activity ---- */

static void *updater(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	for (uint64_t k = 0; !__atomic_load_n(&stop_bg, __ATOMIC_ACQUIRE); k++) {
		uint64_t r = fault_rand(&seed);
		/* The slot exchanges below are acq_rel: the new object's initialisation (release) happens
		 * before the retire of the thread that later takes it out (acquire). */
		struct obj *o = __atomic_exchange_n(&g_rcu, obj_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_rcu(&o->rh, obj_free);
		o = __atomic_exchange_n(&g_qsbr, obj_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_qsbr(&o->rh, obj_free);
		o = __atomic_exchange_n(&g_srcu, obj_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_srcu(&ex_srcu, &o->rh, obj_free);
		switch (r % 64) {
		case 0:
			synchronize_rcu();
			break;
		case 1:
			(void)start_poll_synchronize_qsbr();
			break;
		case 2:
			synchronize_srcu(&ex_srcu);
			break;
		case 3:
			rcu_barrier();
			break;
		default:
			break;
		}
		if (r % 8 == 0)
			fault_sleep_ms(1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uintptr_t a = (uintptr_t)arg;
	bool exit_here = a & 1;
	uint64_t seed = a | 1;
	unsigned long n = 0, when = exit_here ? fault_rand(&seed) % 20000 : 0;

	qsbr_register_thread();
	for (;;) {
		rcu_read_lock();
		struct obj *o = rcu_dereference(g_rcu);
		if (o)
			(void)__atomic_load_n(&o->v, __ATOMIC_RELAXED);
		if (exit_here && ++n == when)
			do_exit(); /* inside a default-flavor section */
		rcu_read_unlock();
		o = rcu_dereference(g_qsbr);
		if (o)
			(void)__atomic_load_n(&o->v, __ATOMIC_RELAXED);
		qsbr_quiescent_state();
		int i = srcu_read_lock(&ex_srcu);
		o = srcu_dereference(g_srcu, &ex_srcu);
		if (o)
			(void)__atomic_load_n(&o->v, __ATOMIC_RELAXED);
		srcu_read_unlock(&ex_srcu, i);
		if (__atomic_load_n(&stop_bg, __ATOMIC_ACQUIRE))
			break;
	}
	qsbr_unregister_thread();
	return NULL;
}

/* ---- stuck readers elsewhere ---- */

static void *stuck_rcu(void *arg)
{
	(void)arg;
	rcu_read_lock();
	for (;;)
		pause();
	return NULL;
}

static void *stuck_qsbr(void *arg)
{
	(void)arg;
	qsbr_register_thread(); /* online, never reports */
	for (;;)
		pause();
	return NULL;
}

static void *stuck_srcu(void *arg)
{
	(void)arg;
	(void)srcu_read_lock(&ex_srcu);
	for (;;)
		pause();
	return NULL;
}

static void *barrier_waiter(void *arg)
{
	(void)arg;
	rcu_barrier(); /* behind a stuck reader: waits for ever */
	synchronize_srcu(&ex_srcu);
	return NULL;
}

static void *flooder(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	unsigned int n = 1000 + (unsigned int)(fault_rand(&seed) % 50000);
	for (unsigned int i = 0; i < n; i++) {
		call_rcu(&obj_new(i)->rh, obj_free);
		call_qsbr(&obj_new(i)->rh, obj_free);
		call_srcu(&ex_srcu, &obj_new(i)->rh, obj_free);
	}
	do_exit(); /* a thread with pending work */
	return NULL;
}

enum site { S_MAIN, S_MAIN_IN_SECTION, S_READER, S_CALLBACK, S_FLOODER, S_ONLINE_QSBR, S_N };
static const char *const site_name[S_N] = { "main",    "main in an rcu section",
					    "reader",  "callback",
					    "flooder", "online QSBR thread" };

struct run {
	uint64_t seed;
	enum site site;
	unsigned int stuck; /* bit 0 rcu, 1 qsbr, 2 srcu, 3 barrier waiter behind them */
	unsigned int live;  /* S_CALLBACK: a flavor with no stuck reader (0 rcu, 1 qsbr, 2 srcu) */
};

static void child(void *arg)
{
	struct run *r = (struct run *)arg;
	uint64_t seed = r->seed;
	pthread_t th;
	unsigned int delay = (unsigned int)(fault_rand(&seed) % 40);

	alarm((unsigned int)HANG_S + 5);
	for (int i = 0; i < 2; i++)
		pthread_create(&th, NULL, updater, (void *)(uintptr_t)(fault_rand(&seed) | 1));
	for (int i = 0; i < 2; i++)
		pthread_create(&th, NULL, reader,
			       (void *)(uintptr_t)((fault_rand(&seed) << 1) |
						   (r->site == S_READER && i == 0)));
	if (r->stuck & 1)
		pthread_create(&th, NULL, stuck_rcu, NULL);
	if (r->stuck & 2)
		pthread_create(&th, NULL, stuck_qsbr, NULL);
	if (r->stuck & 4)
		pthread_create(&th, NULL, stuck_srcu, NULL);
	if (r->stuck & 8)
		pthread_create(&th, NULL, barrier_waiter, NULL);
	fault_sleep_ms(delay);
	switch (r->site) {
	case S_MAIN:
		do_exit();
		break;
	case S_MAIN_IN_SECTION:
		rcu_read_lock();
		call_rcu(&obj_new(0)->rh, obj_free);
		do_exit();
		break;
	case S_READER:
		break; /* the reader exits */
	case S_CALLBACK:
		__atomic_store_n(&exit_cb, 1, __ATOMIC_RELEASE);
		/* The updaters may all wait behind a stuck reader by now: queue one more. */
		if (r->live == 0)
			call_rcu(&obj_new(0)->rh, obj_free);
		else if (r->live == 1)
			call_qsbr(&obj_new(0)->rh, obj_free);
		else
			call_srcu(&ex_srcu, &obj_new(0)->rh, obj_free);
		break;
	case S_FLOODER:
		pthread_create(&th, NULL, flooder, (void *)(uintptr_t)(fault_rand(&seed) | 1));
		break;
	case S_ONLINE_QSBR:
		qsbr_register_thread();
		call_qsbr(&obj_new(0)->rh, obj_free);
		do_exit();
		break;
	default:
		break;
	}
	for (;;)
		pause(); /* another thread exits */
}

TEST(exit_at_random_points)
{
	static char err[1 << 16];
	unsigned int runs = fault_env_ms("GRACE_FAULT_RUNS", 24);
	uint64_t seed = fault_seed();
	double worst = 0;
	int failed = 0;
	unsigned int per_site[S_N] = { 0 };
	const char *only = getenv("GRACE_FAULT_ONLY");

	for (unsigned int i = 0; i < runs; i++) {
		struct run r;
		r.seed = fault_rand(&seed) | 1;
		r.site = (enum site)(i % S_N);
		r.stuck = (unsigned int)(fault_rand(&seed) % 16);
		r.live = (unsigned int)(fault_rand(&seed) % 3);
		if (r.site == S_CALLBACK) /* that flavor's callbacks must run */
			r.stuck &= ~(1u << r.live);
		if (only) /* GRACE_FAULT_ONLY=site,stuck: repeat one case */
			sscanf(only, "%u,%u", (unsigned int *)&r.site, &r.stuck);
		per_site[r.site]++;
		struct fault_child c = fault_run(child, &r, HANG_S + 10, err, sizeof(err));
		const char *at = strstr(err, "EXIT-AT ");
		double t_exit = at ? strtod(at + 8, NULL) : 0, took = at ? c.end - t_exit : -1;
		char how[96];
		if (took > worst)
			worst = took;
		if (getenv("GRACE_FAULT_VERBOSE"))
			printf("  run %u: exit from %s, stuck 0x%x: exit took %.3f s\n", i,
			       site_name[r.site], r.stuck, took);
		if (!fault_exited(&c, CODE) || !at || took > HANG_S) {
			fprintf(stderr,
				"  run %u (exit from %s, stuck readers 0x%x, seed %llu): child %s, "
				"exit took %.2f s\n  its stderr:\n%.2000s\n",
				i, site_name[r.site], r.stuck, (unsigned long long)r.seed,
				fault_how(&c, how, sizeof(how)), took, err);
			failed++;
		}
	}
	printf("  %u runs (", runs);
	for (int s = 0; s < S_N; s++)
		printf("%s %u%s", site_name[s], per_site[s], s + 1 < S_N ? ", " : "");
	printf("); longest exit %.3f s (GRACE_EXIT_TIMEOUT_MS=%s)\n", worst,
	       getenv("GRACE_EXIT_TIMEOUT_MS"));
	CHECK(failed == 0);
}

int main(int argc, char **argv)
{
	setenv("GRACE_EXIT_TIMEOUT_MS", "300", 0);
	setenv("GRACE_STALL_TIMEOUT_MS", "200", 0);
	return gt_main(argc, argv);
}
