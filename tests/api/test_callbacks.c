/* SPDX-License-Identifier: MIT */
/* Callback engine and polled grace periods, default and QSBR flavors. */
#include <pthread.h>
#include <sys/resource.h>
#include <grace/grace.h>
#include "gtest_lite.h"

struct obj {
	struct rcu_head rh;
	unsigned long *counter;
	int poison;
};

static void obj_free(struct rcu_head *h)
{
	struct obj *o = grace_container_of(h, struct obj, rh);
	__atomic_fetch_add(o->counter, 1, __ATOMIC_RELAXED);
	free(o);
}

static struct obj *obj_new(unsigned long *counter)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->counter = counter;
	o->poison = 0;
	return o;
}

TEST(barrier_counts_single_thread)
{
	static unsigned long invoked;
	invoked = 0;
	for (int i = 0; i < 10000; i++)
		call_rcu(&obj_new(&invoked)->rh, obj_free);
	rcu_barrier();
	CHECK_MSG(invoked == 10000, "invoked %lu", invoked);
}

static unsigned long mt_invoked;
static void *poster(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		call_rcu(&obj_new(&mt_invoked)->rh, obj_free);
	return NULL; /* this thread never registered: call_rcu from an unregistered thread */
}

TEST(barrier_counts_several_threads)
{
	pthread_t t[4];
	mt_invoked = 0;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, poster, (void *)20000L);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	rcu_barrier();
	CHECK_MSG(mt_invoked == 80000, "posted 80000, invoked %lu", mt_invoked);
	/* The engine's own count agrees as soon as the barrier returns. */
	struct grace_cb_stats st;
	grace_rcu_callback_stats(&st);
	CHECK_MSG(st.pending == 0, "pending %llu after rcu_barrier",
		  (unsigned long long)st.pending);
}

static unsigned long chain_invoked;
struct chain {
	struct rcu_head rh;
	int left;
};
static void chain_cb(struct rcu_head *h)
{
	struct chain *c = grace_container_of(h, struct chain, rh);
	__atomic_fetch_add(&chain_invoked, 1, __ATOMIC_RELAXED);
	if (c->left-- > 0)
		call_rcu(&c->rh, chain_cb); /* a callback queues a callback */
	else
		free(c);
}

TEST(callbacks_queue_callbacks)
{
	chain_invoked = 0;
	for (int i = 0; i < 10; i++) {
		struct chain *c = (struct chain *)malloc(sizeof(*c));
		c->left = 9;
		call_rcu(&c->rh, chain_cb);
	}
	/* Each rcu_barrier waits for one generation at least; at most 10 are needed. */
	for (int i = 0; i < 12 && __atomic_load_n(&chain_invoked, __ATOMIC_RELAXED) < 100; i++)
		rcu_barrier();
	unsigned long got = __atomic_load_n(&chain_invoked, __ATOMIC_RELAXED);
	CHECK_MSG(got == 100, "invoked %lu of 100", got);
}

TEST(cookie_inside_section)
{
	rcu_read_lock();
	unsigned long c = start_poll_synchronize_rcu();
	unsigned long g = get_state_synchronize_rcu();
	gt_sleep_ms(50); /* the engine runs grace periods meanwhile, which must wait for us */
	CHECK(!poll_state_synchronize_rcu(c));
	CHECK(!poll_state_synchronize_rcu(g));
	rcu_read_unlock();
	synchronize_rcu();
	CHECK(poll_state_synchronize_rcu(c));
	CHECK(poll_state_synchronize_rcu(g));
	cond_synchronize_rcu(c); /* returns at once */
}

TEST(start_poll_completes_without_waiting)
{
	unsigned long c = start_poll_synchronize_rcu();
	uint64_t t0 = gt_now_ns();
	while (!poll_state_synchronize_rcu(c)) {
		CHECK_MSG(gt_now_ns() - t0 < 30ull * 1000000000ull, "start_poll never completed");
		gt_sleep_ms(1);
	}
	unsigned long c2 = get_state_synchronize_rcu();
	cond_synchronize_rcu(c2);
	CHECK(poll_state_synchronize_rcu(c2));
}

TEST(expedited)
{
	for (int i = 0; i < 100; i++)
		synchronize_rcu_expedited();
	unsigned long c = get_state_synchronize_rcu();
	synchronize_rcu_expedited();
	CHECK(poll_state_synchronize_rcu(c));
}

TEST(policy_and_limits_validate)
{
	CHECK(grace_rcu_set_policy((enum grace_gp_policy)7, 0) == -EINVAL);
	CHECK(grace_rcu_set_policy(GRACE_POLICY_BATCH, 0) == -EINVAL);
	CHECK(grace_rcu_set_policy(GRACE_POLICY_LAZY, 10000001) == -EINVAL);
	CHECK(grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 10000001) == -EINVAL);
	CHECK(grace_rcu_set_policy(GRACE_POLICY_LAZY, 0) == 0); /* 0: the default period, 1 s */
	CHECK(grace_qsbr_set_policy(GRACE_POLICY_LAZY, 10000001) == -EINVAL);
	CHECK(grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0) == 0);
	CHECK(grace_rcu_set_callback_limits(10, 5) == -EINVAL);
	CHECK(grace_rcu_set_callback_limits(0, 5) == -EINVAL);
	CHECK(grace_rcu_set_callback_limits(10000, 100000) == 0);
	grace_set_stall_timeout_ms(10000);
}

TEST(batch_policy)
{
	static unsigned long n;
	n = 0;
	CHECK(grace_rcu_set_policy(GRACE_POLICY_BATCH, 5000) == 0);
	struct grace_cb_stats s0, s1;
	grace_rcu_callback_stats(&s0);
	for (int i = 0; i < 1000; i++) {
		call_rcu(&obj_new(&n)->rh, obj_free);
		if (i % 100 == 0)
			gt_sleep_ms(1);
	}
	rcu_barrier();
	grace_rcu_callback_stats(&s1);
	CHECK(n == 1000);
	printf("  batch: %llu grace periods for 1000 callbacks over ~10 ms\n",
	       (unsigned long long)(s1.grace_periods - s0.grace_periods));
	CHECK(grace_rcu_set_policy(GRACE_POLICY_POLL, 0) == 0);
}

/* Lazy callbacks still run, in every way they can: a barrier, a hurried callback, a polled
 * request (what ends a lazy wait early, and the laziness itself: fault_regress_lazy). */
TEST(lazy_policy)
{
	static unsigned long n;
	n = 0;
	CHECK(grace_rcu_set_policy(GRACE_POLICY_LAZY, 10000000) == 0);
	for (int i = 0; i < 1000; i++)
		call_rcu(&obj_new(&n)->rh, obj_free);
	rcu_barrier();
	CHECK(n == 1000);
	call_rcu_hurry(&obj_new(&n)->rh, obj_free);
	for (int i = 0; i < 5000 && __atomic_load_n(&n, __ATOMIC_RELAXED) != 1001; i++)
		gt_sleep_ms(1);
	CHECK(__atomic_load_n(&n, __ATOMIC_RELAXED) == 1001);
	unsigned long c = start_poll_synchronize_rcu();
	for (int i = 0; i < 5000 && !poll_state_synchronize_rcu(c); i++)
		gt_sleep_ms(1);
	CHECK(poll_state_synchronize_rcu(c));
	CHECK(grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0) == 0);
}

TEST(qsbr_callbacks_and_poll)
{
	static unsigned long n;
	n = 0;
	qsbr_register_thread();
	for (int i = 0; i < 1000; i++) {
		call_qsbr(&obj_new(&n)->rh, obj_free);
		qsbr_quiescent_state();
	}
	unsigned long c = start_poll_synchronize_qsbr();
	qsbr_barrier(); /* online caller: put offline for the wait */
	CHECK(n == 1000);
	CHECK(grace_qsbr_thread_is_online());
	qsbr_thread_offline();
	cond_synchronize_qsbr(c);
	CHECK(poll_state_synchronize_qsbr(c));
	synchronize_qsbr_expedited();
	qsbr_thread_online();
	qsbr_unregister_thread();
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

struct flood {
	int stop;
	unsigned long posted;
};
static unsigned long flood_invoked;
static void *flooder(void *arg)
{
	struct flood *f = (struct flood *)arg;
	unsigned long n = 0;
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		call_rcu(&obj_new(&flood_invoked)->rh, obj_free);
		n++;
	}
	__atomic_fetch_add(&f->posted, n, __ATOMIC_RELAXED);
	return NULL;
}
static void *flood_reader(void *arg)
{
	struct flood *f = (struct flood *)arg;
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		for (volatile int i = 0; i < 100; i++) {
		}
		rcu_read_unlock();
	}
	return NULL;
}

TEST(flood_stays_bounded)
{
	/* 2 producers as fast as they can + a reader, for 2 s, with a hard limit of 20000 per CPU:
	 * at most about 2 CPUs x 20000 x (sizeof(struct obj) + malloc overhead) outstanding. */
	struct flood f = { 0, 0 };
	pthread_t p[2], r;
	long before = rss_kb();
	flood_invoked = 0;
	CHECK(grace_rcu_set_callback_limits(2000, 20000) == 0);
	/* A producer at the hard limit waits up to the stall timeout before giving up (and then
	 * may pass the bound): make that longer than any scheduling delay of a loaded machine. */
	grace_set_stall_timeout_ms(120000);
	pthread_create(&r, NULL, flood_reader, &f);
	for (int i = 0; i < 2; i++)
		pthread_create(&p[i], NULL, flooder, &f);
	uint64_t max_pending = 0;
	for (int i = 0; i < 200; i++) { /* sample the engine's backlog for 2 s */
		struct grace_cb_stats s;
		gt_sleep_ms(10);
		grace_rcu_callback_stats(&s);
		if (s.pending > max_pending)
			max_pending = s.pending;
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(p[i], NULL);
	pthread_join(r, NULL);
	rcu_barrier();
	long after = rss_kb();
	struct grace_cb_stats st;
	grace_rcu_callback_stats(&st);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	printf("  flood: %lu callbacks in 2 s, max pending %llu (bound %ld), peak RSS growth %ld kB, "
	       "hard-limit waits %llu\n",
	       f.posted, (unsigned long long)max_pending, ncpu * 20000 + 2 * 32 + 2, after - before,
	       (unsigned long long)st.waits);
	CHECK(flood_invoked == f.posted);
	/* The engine's bound: hard x CPUs + 32 per producer (the amortised check), + slack. */
	CHECK_MSG(max_pending <= (uint64_t)(ncpu * 20000 + 2 * 32 + 2), "pending reached %llu",
		  (unsigned long long)max_pending);
#if !defined(__SANITIZE_ADDRESS__)
	/* And in memory (ASan's quarantine keeps freed memory, so only without it): 2 queues x
	 * 20000 x 64 B = 2.5 MB, plus slack for the allocator and threads. */
	CHECK_MSG(after - before < 40 * 1024, "peak RSS grew %ld kB", after - before);
#endif
	CHECK(grace_rcu_set_callback_limits(10000, 100000) == 0);
	grace_set_stall_timeout_ms(10000);
}

static void child_uses_grace(void *arg)
{
	(void)arg;
	static unsigned long n;
	for (int i = 0; i < 100; i++)
		call_rcu(&obj_new(&n)->rh, obj_free);
	rcu_read_lock();
	rcu_read_unlock();
	synchronize_rcu();
	rcu_barrier();
	if (n != 100) {
		fprintf(stderr, "child: invoked %lu\n", n);
		_exit(3);
	}
}

TEST(fork_child_can_use_grace)
{
	static unsigned long n;
	char out[4096];
	for (int i = 0; i < 100; i++) /* workers running in the parent */
		call_rcu(&obj_new(&n)->rh, obj_free);
	int st = gt_run_child(child_uses_grace, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d: %s", st, out);
	rcu_barrier();
	CHECK(n == 100);
}

static volatile int stall_reports;
static void on_stall(const struct grace_stall_info *info, void *arg)
{
	(void)arg;
	if (strcmp(info->flavor, "rcu") == 0 && info->tid > 0 && info->duration_ns > 0)
		__atomic_fetch_add(&stall_reports, 1, __ATOMIC_SEQ_CST);
}
static void *staller(void *arg)
{
	int *go = (int *)arg;
	rcu_read_lock();
	__atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
	/* Hold the grace period until the stall is reported (4x the 100 ms timeout at least, 20 s
	 * at most): a fixed 400 ms flaked under TSan at load 15, where the updater could start
	 * its wait less than 100 ms before this section ended. */
	for (int ms = 0; ms < 20000; ms += 10) {
		if (ms >= 400 && __atomic_load_n(&stall_reports, __ATOMIC_SEQ_CST))
			break;
		gt_sleep_ms(10);
	}
	rcu_read_unlock();
	return NULL;
}

TEST(stall_warning_hook)
{
	int go = 0;
	pthread_t t;
	stall_reports = 0;
	grace_set_stall_handler(on_stall, NULL);
	grace_set_stall_timeout_ms(100);
	/* Let earlier tests' grace periods and callbacks finish first. */
	rcu_barrier();
	synchronize_rcu();
	pthread_create(&t, NULL, staller, &go);
	while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	synchronize_rcu();
	pthread_join(t, NULL);
	grace_set_stall_handler(NULL, NULL);
	grace_set_stall_timeout_ms(10000);
	CHECK_MSG(stall_reports == 1, "stall reports: %d (want exactly one per stall)",
		  stall_reports);
}

GT_MAIN()
