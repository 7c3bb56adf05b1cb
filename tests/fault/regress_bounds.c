/* SPDX-License-Identifier: MIT */
/*
 * Regressions of issue 12 about bounds and per-domain rules:
 *  5. call_rcu() past the soft limit while the caller holds a lock that a reader inside its
 *     section waits for (BATCH policy, low soft limit): the call must return (engine.h: call_*
 *     waits at most the stall timeout), not drive the grace period the reader holds.
 *  7. BATCH policy: a grace period requested by start_poll_synchronize_*() with no callback
 *     queued must start (rcu, qsbr, srcu).
 *  8. srcu_barrier() from a call_rcu() callback is legal (the in-callback check is per domain).
 *  6. call_qsbr() past the hard limit: an online caller counts as inside a section and never
 *     waits there; an offline one waits. free_qsbr() past its per-thread bound, online: no wait.
 * 11. srcu flood behind a stuck reader: the program is told (a warning naming the srcu_struct
 *     past the hard limit), and the stall warning names the domain.
 * Tests that could hang on the old code run in a child process with a hang limit.
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define HANG_S 30

/* A check inside a child of fault_run(): exit 1 on failure (a CHECK would only return, and the
 * child then exits 0). */
#define CHILD_CHECK(cond, ...)                                                                   \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "  %s:%d: child check failed: %s: ", __FILE__, __LINE__, \
				#cond);                                                          \
			fprintf(stderr, __VA_ARGS__);                                            \
			fprintf(stderr, "\n");                                                   \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

struct obj {
	struct rcu_head rh;
};

static void obj_free(struct rcu_head *h)
{
	free(h);
}

static int check_child(struct fault_child *c, const char *err, int code, const char *what)
{
	char how[96];
	printf("  %s: child %s\n", what, fault_how(c, how, sizeof(how)));
	if (!fault_exited(c, code)) {
		fprintf(stderr, "  %s: expected exit %d, child %s; its stderr:\n%s\n", what, code,
			how, err);
		return 1;
	}
	return 0;
}

/* ---- 5: call_rcu() with a lock held that a reader waits for ---- */

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
static int rd_state; /* 1: in its section, about to take L; 2: done */

static void *lock_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&rd_state, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&L); /* waits while the updater holds L */
	pthread_mutex_unlock(&L);
	rcu_read_unlock();
	__atomic_store_n(&rd_state, 2, __ATOMIC_RELEASE);
	return NULL;
}

static void call_with_lock_held(void *arg)
{
	pthread_t th;
	size_t hard = (size_t)(uintptr_t)arg;

	grace_set_stall_timeout_ms(100); /* the documented bound of one call: max(100 ms, 1 s) */
	CHILD_CHECK(grace_rcu_set_policy(GRACE_POLICY_BATCH, 2000000) == 0, "set_policy");
	CHILD_CHECK(grace_rcu_set_callback_limits(1, hard) == 0, "set_callback_limits");
	call_rcu(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free); /* workers exist */
	pthread_mutex_lock(&L);
	pthread_create(&th, NULL, lock_reader, NULL);
	while (__atomic_load_n(&rd_state, __ATOMIC_ACQUIRE) != 1)
		fault_sleep_ms(1);
	fault_sleep_ms(20); /* the reader now waits for L inside its section */
	for (int i = 0; i < 256; i++)
		call_rcu(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free);
	pthread_mutex_unlock(&L);
	grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0);
	pthread_join(th, NULL);
	rcu_barrier();
	exit(0);
}

TEST(call_rcu_past_soft_limit_with_lock_held)
{
	static char err[16384];
	struct fault_child c = fault_run(call_with_lock_held, (void *)(uintptr_t)1000000, HANG_S,
					 err, sizeof(err));
	CHECK(check_child(&c, err, 0, "call_rcu past the soft limit, lock held") == 0);
}

TEST(call_rcu_past_hard_limit_with_lock_held)
{
	static char err[16384];
	struct fault_child c = fault_run(call_with_lock_held, (void *)(uintptr_t)2, HANG_S, err,
					 sizeof(err));
	CHECK(check_child(&c, err, 0, "call_rcu past the hard limit, lock held") == 0);
}

/*
 * docs/api.md (call_qsbr()): an online caller counts as inside a read-side section (a release
 * build cannot tell one from the other), so it never waits at the hard limit; an offline caller
 * waits there as call_rcu()'s does. A thread that reports no quiescent state floods call_qsbr()
 * online, past a hard limit of 2 callbacks per CPU: it must return without a wait (no QSBR
 * grace period can end meanwhile: a wait would last until it gave up, at a stall timeout set to
 * 120 s, past the hang limit), every callback still pending. Then offline, where it must wait.
 */
static void call_qsbr_past_hard_limit(void *arg)
{
	struct grace_cb_stats st0, st1, st2;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int n = 8 * (int)(ncpu > 0 ? ncpu : 1) + 64;

	(void)arg;
	grace_set_stall_timeout_ms(120000);
	CHILD_CHECK(grace_qsbr_set_callback_limits(1, 2) == 0, "set_callback_limits");
	qsbr_register_thread();
	grace_qsbr_callback_stats(&st0);
	for (int i = 0; i < n; i++)
		call_qsbr(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free);
	grace_qsbr_callback_stats(&st1);
	CHILD_CHECK(st1.waits == st0.waits, "an online call_qsbr() waited at the hard limit");
	CHILD_CHECK(st1.pending >= (unsigned long)n,
		    "%lu of %d callbacks pending: a grace period "
		    "ended while this online thread reported "
		    "no quiescent state",
		    (unsigned long)st1.pending, n);
	qsbr_thread_offline();
	for (int i = 0; i < n; i++)
		call_qsbr(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free);
	grace_qsbr_callback_stats(&st2);
	CHILD_CHECK(st2.waits > st1.waits,
		    "an offline call_qsbr() past the hard limit did not wait");
	qsbr_thread_online();
	qsbr_barrier(); /* takes this online caller offline for the wait */
	qsbr_unregister_thread();
	exit(0);
}

TEST(call_qsbr_past_hard_limit_waits_only_offline)
{
	static char err[16384];
	struct fault_child c = fault_run(call_qsbr_past_hard_limit, NULL, HANG_S, err, sizeof(err));
	CHECK(check_child(&c, err, 0, "call_qsbr past the hard limit, online then offline") == 0);
}

/*
 * docs/api.md (context table, free_qsbr()): an online caller counts as inside a section at the
 * per-thread bound (65536 objects held), so it does not wait there: taken offline for a wait,
 * it would let a grace period end under its section. An online thread inside qsbr_read_lock()
 * frees an object it still holds, then 70000 more: none may reach the free hook before the
 * thread leaves its section, and no call may wait (a wait could only give up at the stall
 * timeout, 120 s here, past the hang limit: no QSBR grace period ends while the thread is
 * online). Offline, free_qsbr_barrier() frees them all.
 */
static void *held_obj;
static int held_freed;
static void mark_free(void *p)
{
	if (p == held_obj)
		held_freed = 1; /* freed by the child at the end */
	else
		free(p);
}

static void free_qsbr_past_bound(void *arg)
{
	(void)arg;
	grace_set_stall_timeout_ms(120000);
	CHILD_CHECK(grace_qsbr_set_free_hook(mark_free) == 0, "set_free_hook");
	qsbr_register_thread();
	qsbr_read_lock();
	struct obj *h = (struct obj *)malloc(sizeof(*h));
	CHILD_CHECK(h != NULL, "malloc");
	held_obj = h;
	free_qsbr(h, rh); /* unlinked, still held by this section */
	for (int i = 0; i < 70000; i++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		CHILD_CHECK(o != NULL, "malloc");
		free_qsbr(o, rh);
	}
	CHILD_CHECK(!held_freed, "an object was freed while the online thread held it");
	CHILD_CHECK(grace_qsbr_thread_is_online(), "offline after free_qsbr()");
	qsbr_read_unlock();
	qsbr_thread_offline();
	free_qsbr_barrier();
	CHILD_CHECK(held_freed, "free_qsbr_barrier() returned before the object was freed");
	free(h);
	qsbr_unregister_thread();
	exit(0);
}

TEST(free_qsbr_past_the_bound_online_does_not_wait)
{
	static char err[16384];
	struct fault_child c = fault_run(free_qsbr_past_bound, NULL, HANG_S, err, sizeof(err));
	CHECK(check_child(&c, err, 0, "free_qsbr past the per-thread bound, online") == 0);
}

/* ---- 7: BATCH, start_poll with no callback ---- */

static int wait_polled(const struct grace_flavor_ops *ops, const char *what)
{
	double t0 = fault_now();
	if (ops->set_policy(ops->ctx, GRACE_POLICY_BATCH, 20000) != 0)
		return 1;
	unsigned long c = ops->start_poll(ops->ctx);
	while (!ops->poll_state(ops->ctx, c)) {
		if (fault_now() - t0 > HANG_S) {
			fprintf(stderr, "  %s: BATCH start_poll: the grace period never started\n",
				what);
			ops->set_policy(ops->ctx, GRACE_POLICY_ADAPTIVE, 0);
			return 1;
		}
		fault_sleep_ms(1);
	}
	ops->set_policy(ops->ctx, GRACE_POLICY_ADAPTIVE, 0);
	return 0;
}

TEST(batch_start_poll_rcu)
{
	CHECK(wait_polled(&grace_flavor_rcu, "rcu") == 0);
}

TEST(batch_start_poll_qsbr)
{
	CHECK(wait_polled(&grace_flavor_qsbr, "qsbr") == 0);
}

TEST(batch_start_poll_srcu)
{
	static struct srcu_struct ss;
	struct grace_flavor_ops ops;
	CHECK(init_srcu_struct(&ss) == 0);
	grace_flavor_ops_srcu(&ops, &ss);
	CHECK(wait_polled(&ops, "srcu") == 0);
	cleanup_srcu_struct(&ss);
}

/* ---- 8: srcu_barrier() from a call_rcu() callback ---- */

static struct srcu_struct cb_srcu;
static int srcu_cb_ran, rcu_cb_done;

static void srcu_cb(struct rcu_head *h)
{
	free(h);
	__atomic_store_n(&srcu_cb_ran, 1, __ATOMIC_RELEASE);
}

static void rcu_cb_barrier(struct rcu_head *h)
{
	free(h);
	call_srcu(&cb_srcu, &((struct obj *)malloc(sizeof(struct obj)))->rh, srcu_cb);
	srcu_barrier(&cb_srcu); /* another domain: no deadlock, no misuse */
	if (__atomic_load_n(&srcu_cb_ran, __ATOMIC_ACQUIRE))
		__atomic_store_n(&rcu_cb_done, 1, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&rcu_cb_done, 2, __ATOMIC_RELEASE);
}

static void srcu_barrier_in_rcu_cb(void *arg)
{
	(void)arg;
	init_srcu_struct(&cb_srcu);
	call_rcu(&((struct obj *)malloc(sizeof(struct obj)))->rh, rcu_cb_barrier);
	rcu_barrier();
	if (__atomic_load_n(&rcu_cb_done, __ATOMIC_ACQUIRE) != 1) {
		fprintf(stderr, "srcu_barrier() in the callback returned before call_srcu ran\n");
		exit(1);
	}
	cleanup_srcu_struct(&cb_srcu);
	exit(0);
}

TEST(srcu_barrier_from_rcu_callback)
{
	static char err[8192];
	struct fault_child c = fault_run(srcu_barrier_in_rcu_cb, NULL, HANG_S, err, sizeof(err));
	CHECK(check_child(&c, err, 0, "srcu_barrier() from a call_rcu() callback") == 0);
}

/* ---- 11: srcu flood behind a stuck reader ---- */

#define FLOOD 100000
static struct obj flood_objs[FLOOD];
static struct srcu_struct flood_srcu;
static int flood_state;

static void flood_cb(struct rcu_head *h)
{
	(void)h;
}

static void *stuck_srcu_reader(void *arg)
{
	(void)arg;
	int i = srcu_read_lock(&flood_srcu);
	__atomic_store_n(&flood_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&flood_state, __ATOMIC_ACQUIRE) != 2)
		fault_sleep_ms(1);
	srcu_read_unlock(&flood_srcu, i);
	return NULL;
}

static void srcu_flood(void *arg)
{
	pthread_t th;
	(void)arg;
	init_srcu_struct(&flood_srcu);
	grace_set_stall_timeout_ms(200);
	grace_srcu_set_callback_limits(&flood_srcu, 10, 100);
	pthread_create(&th, NULL, stuck_srcu_reader, NULL);
	while (__atomic_load_n(&flood_state, __ATOMIC_ACQUIRE) != 1)
		fault_sleep_ms(1);
	for (int i = 0; i < FLOOD; i++)
		call_srcu(&flood_srcu, &flood_objs[i].rh, flood_cb);
	fault_sleep_ms(600); /* past the stall timeout: the stall is reported */
	__atomic_store_n(&flood_state, 2, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	srcu_barrier(&flood_srcu);
	fprintf(stderr, "domain %p\n", (void *)&flood_srcu);
	exit(0);
}

/* A line of text that contains both needles. */
static bool line_with(const char *text, const char *a, const char *b)
{
	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char line[1024];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, l, n);
		line[n] = 0;
		if (strstr(line, a) && strstr(line, b))
			return true;
		l = e ? e + 1 : NULL;
	}
	return false;
}

TEST(srcu_flood_with_stuck_reader_is_told)
{
	static char err[65536];
	char dom[64];
	struct fault_child c = fault_run(srcu_flood, NULL, HANG_S, err, sizeof(err));
	CHECK(check_child(&c, err, 0, "srcu flood behind a stuck reader") == 0);
	const char *d = strstr(err, "domain ");
	CHECK(d != NULL);
	CHECK(sscanf(d, "domain %63s", dom) == 1);
	printf("  stderr of the child:\n%s", err);
	CHECK_MSG(line_with(err, "grace: stall warning:", dom),
		  "no stall warning naming srcu_struct %s", dom);
	CHECK_MSG(line_with(err, "call_srcu", dom),
		  "no warning from call_srcu naming srcu_struct %s past the hard limit", dom);
}

GT_MAIN()
