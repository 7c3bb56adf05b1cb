/* SPDX-License-Identifier: MIT */
/*
 * Fault-injection suite: fork() at random points during a torture run.
 *
 * The parent runs readers and updaters of every flavor (default, QSBR, srcu domain A with
 * readers; srcu domain B with callbacks only), retiring through every path: call_*,
 * synchronize_*, the polled API, barriers from their own threads. A forker thread forks at
 * random moments, so the fork lands inside sections, grace periods, barriers, callback batches
 * and call_* pushes. Each child:
 *  - runs its own short torture run (reader and updater threads on the default flavor, QSBR
 *    and a fresh srcu domain C; the parent's srcu domain A is left alone: sections that parent
 *    threads held at the fork never end in the child, docs/guide.md);
 *  - checks a barrier on every flavor it can use (default, QSBR, B, C): callbacks queued
 *    before the barrier have all run when it returns, and nothing is pending afterwards, the
 *    parent's inherited callbacks included;
 *  - exits with status 0 (exit() outside ASan builds, so the exit drain runs in a fork child
 *    too; _exit() under ASan, whose leak checker cannot see the objects that the parent's
 *    threads, absent in the child, held only in their registers).
 * Readers check that nothing they find was freed (objects are poisoned before free; ASan sees
 * a use after free directly). GRACE_FAULT_MS sets the parent's run time.
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define LIVE 0x11u
#define DEAD 0xddu
#define CHILD_HANG_S 60.0

struct obj {
	struct rcu_head rh;
	uint32_t magic;
	uint64_t v;
};

static struct obj *g_rcu, *g_qsbr, *g_srcu_a, *g_srcu_c;
static struct srcu_struct srcu_a, srcu_b, srcu_c;
static int stop;
static unsigned long bad, child_cbs;

static void obj_free(struct rcu_head *h)
{
	struct obj *o = grace_container_of(h, struct obj, rh);
	o->magic = DEAD;
	free(o);
}

/* A callback that takes a while: batches take long enough for forks to land inside them, and
 * a barrier that returned early would see callbacks still unrun. */
static void spin_us(unsigned int us)
{
	double t = fault_now() + us / 1e6;
	while (fault_now() < t) {
	}
}

static void slow_free(struct rcu_head *h)
{
	spin_us(20);
	obj_free(h);
}

static void count_cb(struct rcu_head *h)
{
	spin_us(20);
	free(h);
	__atomic_fetch_add(&child_cbs, 1, __ATOMIC_RELAXED);
}

static struct obj *obj_new(uint64_t v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o != NULL);
	o->magic = LIVE;
	o->v = v;
	return o;
}

static void check(const struct obj *o)
{
	if (o && o->magic != LIVE)
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
}

/* ---- the torture workload, used by the parent and (smaller) by each child ---- */

struct worker_arg {
	uint64_t seed;
	struct srcu_struct *ssp; /* the srcu domain with readers */
	struct obj **srcu_ptr;
};

static void *reader(void *arg)
{
	struct worker_arg *a = (struct worker_arg *)arg;

	uint64_t seed = a->seed;

	qsbr_register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		/* Now and then a long section: grace periods then take milliseconds, and forks
		 * land while callbacks and barrier markers wait behind them. */
		bool slow = fault_rand(&seed) % 512 == 0;
		rcu_read_lock();
		check(rcu_dereference(g_rcu));
		if (slow)
			fault_sleep_ms(2);
		rcu_read_unlock();
		check(rcu_dereference(g_qsbr));
		if (slow)
			fault_sleep_ms(2);
		qsbr_quiescent_state();
		int i = srcu_read_lock(a->ssp);
		check(srcu_dereference(*a->srcu_ptr, a->ssp));
		srcu_read_unlock(a->ssp, i);
	}
	qsbr_unregister_thread();
	return NULL;
}

static void *updater(void *arg)
{
	struct worker_arg *a = (struct worker_arg *)arg;
	uint64_t seed = a->seed;
	unsigned long cookie = get_state_synchronize_rcu();
	struct obj *polled = NULL;

	for (uint64_t k = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); k++) {
		uint64_t r = fault_rand(&seed);
		/* The slot exchanges below are acq_rel: the new object's initialisation (release) happens
		 * before the retire of the thread that later takes it out (acquire). */
		struct obj *o = __atomic_exchange_n(&g_rcu, obj_new(k), __ATOMIC_ACQ_REL);
		if (!o) /* the first replacement */
			o = obj_new(k);
		switch (r % 4) {
		case 0:
			call_rcu(&o->rh, obj_free);
			break;
		case 1:
			synchronize_rcu();
			obj_free(&o->rh);
			break;
		default:
			if (polled) {
				cond_synchronize_rcu(cookie);
				obj_free(&polled->rh);
			}
			polled = o;
			cookie = start_poll_synchronize_rcu();
			break;
		}
		o = __atomic_exchange_n(&g_qsbr, obj_new(k), __ATOMIC_ACQ_REL);
		if (!o)
			o = obj_new(k);
		if (r & 16) {
			call_qsbr(&o->rh, obj_free);
		} else {
			synchronize_qsbr();
			obj_free(&o->rh);
		}
		o = __atomic_exchange_n(a->srcu_ptr, obj_new(k), __ATOMIC_ACQ_REL);
		if (!o)
			o = obj_new(k);
		if (r & 32) {
			call_srcu(a->ssp, &o->rh, obj_free);
		} else {
			synchronize_srcu(a->ssp);
			obj_free(&o->rh);
		}
		if (a->ssp == &srcu_a) /* the parent: domain B gets callbacks only */
			call_srcu(&srcu_b, &obj_new(k)->rh, slow_free);
		if (r % 128 == 0)
			fault_sleep_ms(1);
	}
	if (polled) {
		cond_synchronize_rcu(cookie);
		obj_free(&polled->rh);
	}
	return NULL;
}

static void *barrier_thread(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		switch (fault_rand(&seed) % 4) {
		case 0:
			rcu_barrier();
			break;
		case 1:
			qsbr_barrier();
			break;
		case 2:
			srcu_barrier(&srcu_a);
			break;
		default:
			srcu_barrier(&srcu_b);
			break;
		}
		fault_sleep_ms((unsigned int)(fault_rand(&seed) % 5));
	}
	return NULL;
}

/* ---- the child ---- */

static int barrier_check(const char *what, void (*call)(struct rcu_head *, rcu_callback_t),
			 void (*barrier)(void), void (*stats)(struct grace_cb_stats *))
{
	struct grace_cb_stats st;
	__atomic_store_n(&child_cbs, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 100; i++)
		call((struct rcu_head *)calloc(1, sizeof(struct rcu_head)), count_cb);
	barrier();
	unsigned long n = __atomic_load_n(&child_cbs, __ATOMIC_RELAXED);
	stats(&st);
	if (n != 100 || st.pending != 0) {
		fprintf(stderr,
			"child: %s barrier: %lu of 100 callbacks ran, %llu pending after it\n",
			what, n, (unsigned long long)st.pending);
		return 1;
	}
	return 0;
}

static void c_call_rcu(struct rcu_head *h, rcu_callback_t f)
{
	call_rcu(h, f);
}
static void c_call_qsbr(struct rcu_head *h, rcu_callback_t f)
{
	call_qsbr(h, f);
}
static void c_call_b(struct rcu_head *h, rcu_callback_t f)
{
	call_srcu(&srcu_b, h, f);
}
static void c_call_c(struct rcu_head *h, rcu_callback_t f)
{
	call_srcu(&srcu_c, h, f);
}
static void c_barrier_b(void)
{
	srcu_barrier(&srcu_b);
}
static void c_barrier_c(void)
{
	srcu_barrier(&srcu_c);
}
static void c_stats_b(struct grace_cb_stats *st)
{
	grace_srcu_callback_stats(&srcu_b, st);
}
static void c_stats_c(struct grace_cb_stats *st)
{
	grace_srcu_callback_stats(&srcu_c, st);
}

static void child(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	pthread_t th[3];
	struct worker_arg wa = { seed, &srcu_c, &g_srcu_c };
	int fail = 0;

	alarm((unsigned int)CHILD_HANG_S - 5);
	/* The parent's threads are gone: this is a fresh torture run on inherited state. */
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bad, 0, __ATOMIC_RELAXED);
	if (init_srcu_struct(&srcu_c) != 0)
		_exit(2);
	pthread_create(&th[0], NULL, reader, &wa);
	pthread_create(&th[1], NULL, reader, &wa);
	pthread_create(&th[2], NULL, updater, &wa);
	fault_sleep_ms(30 + (unsigned int)(fault_rand(&seed) % 50));
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	fail |= barrier_check("rcu", c_call_rcu, rcu_barrier, grace_rcu_callback_stats);
	fail |= barrier_check("qsbr", c_call_qsbr, qsbr_barrier, grace_qsbr_callback_stats);
	fail |= barrier_check("srcu B (inherited)", c_call_b, c_barrier_b, c_stats_b);
	fail |= barrier_check("srcu C (the child's)", c_call_c, c_barrier_c, c_stats_c);
	/* Acquire: pairs with the acq_rel exchanges that filled the slots. */
	struct obj *o = __atomic_exchange_n(&g_srcu_c, (struct obj *)NULL, __ATOMIC_ACQUIRE);
	if (o)
		call_srcu(&srcu_c, &o->rh, obj_free);
	srcu_barrier(&srcu_c);
	cleanup_srcu_struct(&srcu_c);
	if (__atomic_load_n(&bad, __ATOMIC_RELAXED)) {
		fprintf(stderr, "child: readers found %lu freed objects\n", bad);
		fail = 1;
	}
#if defined(__SANITIZE_ADDRESS__)
	_exit(fail);
#else
	exit(fail);
#endif
}

struct forker_state {
	uint64_t seed;
	unsigned int forks, failed;
	double worst;
};

static void *forker(void *arg)
{
	struct forker_state *fs = (struct forker_state *)arg;
	static char err[1 << 15];

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		fault_sleep_ms((unsigned int)(fault_rand(&fs->seed) % 15));
		uint64_t cseed = fault_rand(&fs->seed) | 1;
		struct fault_child c = fault_run(child, (void *)(uintptr_t)cseed, CHILD_HANG_S, err,
						 sizeof(err));
		char how[96];
		fs->forks++;
		if (c.seconds > fs->worst)
			fs->worst = c.seconds;
		if (!fault_exited(&c, 0)) {
			fprintf(stderr,
				"  fork %u (child seed %llu): child %s; its stderr:\n%.3000s\n",
				fs->forks, (unsigned long long)cseed,
				fault_how(&c, how, sizeof(how)), err);
			fs->failed++;
		}
	}
	return NULL;
}

TEST(fork_at_random_points)
{
	uint64_t seed = fault_seed();
	unsigned int ms = fault_env_ms("GRACE_FAULT_MS", 3000);
	struct worker_arg wa[2] = { { fault_rand(&seed) | 1, &srcu_a, &g_srcu_a },
				    { fault_rand(&seed) | 1, &srcu_a, &g_srcu_a } };
	struct forker_state fs = { fault_rand(&seed) | 1, 0, 0, 0 };
	pthread_t th[7];

	CHECK(init_srcu_struct(&srcu_a) == 0);
	CHECK(init_srcu_struct(&srcu_b) == 0);
	pthread_create(&th[0], NULL, reader, &wa[0]);
	pthread_create(&th[1], NULL, reader, &wa[0]);
	pthread_create(&th[2], NULL, updater, &wa[0]);
	pthread_create(&th[3], NULL, updater, &wa[1]);
	pthread_create(&th[4], NULL, barrier_thread, (void *)(uintptr_t)(fault_rand(&seed) | 1));
	pthread_create(&th[5], NULL, forker, &fs);
	fault_sleep_ms(ms);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	struct obj *o;
	/* Acquire: pairs with the acq_rel exchanges that filled the slots. */
	if ((o = __atomic_exchange_n(&g_rcu, (struct obj *)NULL, __ATOMIC_ACQUIRE)))
		call_rcu(&o->rh, obj_free);
	if ((o = __atomic_exchange_n(&g_qsbr, (struct obj *)NULL, __ATOMIC_ACQUIRE)))
		call_qsbr(&o->rh, obj_free);
	if ((o = __atomic_exchange_n(&g_srcu_a, (struct obj *)NULL, __ATOMIC_ACQUIRE)))
		call_srcu(&srcu_a, &o->rh, obj_free);
	rcu_barrier();
	qsbr_barrier();
	srcu_barrier(&srcu_a);
	srcu_barrier(&srcu_b);
	cleanup_srcu_struct(&srcu_a);
	cleanup_srcu_struct(&srcu_b);
	printf("  %u forks, %u children failed, longest child %.2f s; parent readers found %lu "
	       "freed objects\n",
	       fs.forks, fs.failed, fs.worst, bad);
	CHECK(fs.forks > 0);
	CHECK(fs.failed == 0);
	CHECK(bad == 0);
}

int main(int argc, char **argv)
{
	setenv("GRACE_EXIT_TIMEOUT_MS", "300", 0);
	return gt_main(argc, argv);
}
