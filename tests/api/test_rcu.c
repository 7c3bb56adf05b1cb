/* SPDX-License-Identifier: MIT */
/* Default flavor API: nesting, implicit registration, synchronize with and without readers.
 * Runs twice under ctest: with membarrier, and with GRACE_NO_MEMBARRIER=1 (fence fallback). */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <grace/grace.h>
#include "gtest_lite.h"

static int expect_fallback(void)
{
	const char *e = getenv("GRACE_NO_MEMBARRIER");
	return e && strcmp(e, "1") == 0;
}

TEST(mode_is_as_requested)
{
	const char *m = grace_membarrier_mode();
	printf("  mode: %s\n", m);
	if (expect_fallback())
		CHECK(strcmp(m, "fence") == 0);
}

/* grace_membarrier_calls(): counts the expedited membarriers a grace period makes in
 * "membarrier" mode (a synchronize while another registered thread sits idle outside any
 * section, so never answers the grace period's ask and is not parked yet, needs at least one:
 * docs/api.md, synchronize_rcu(), "Cost"), and stays 0 in "fence" mode; it never goes back. */
static int mb_stop, mb_ready;
static void *mb_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	__atomic_store_n(&mb_ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&mb_stop, __ATOMIC_ACQUIRE))
		usleep(1000); /* idle, outside any section */
	rcu_unregister_thread();
	return NULL;
}

TEST(membarrier_calls_count)
{
	pthread_t th;

	CHECK(pthread_create(&th, NULL, mb_reader, NULL) == 0);
	while (!__atomic_load_n(&mb_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	uint64_t before = grace_membarrier_calls();

	synchronize_rcu();
	synchronize_rcu();
	uint64_t after = grace_membarrier_calls();
	__atomic_store_n(&mb_stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("  membarrier calls: %llu -> %llu\n", (unsigned long long)before,
	       (unsigned long long)after);
	CHECK(after >= before);
	if (strcmp(grace_membarrier_mode(), "fence") == 0)
		CHECK(after == 0);
	else
		CHECK(after > before);
}

TEST(nesting)
{
	CHECK(!rcu_read_ongoing());
	rcu_read_lock();
	CHECK(rcu_read_ongoing());
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_unlock();
	CHECK(rcu_read_ongoing());
	rcu_read_unlock();
	CHECK(rcu_read_ongoing());
	rcu_read_unlock();
	CHECK(!rcu_read_ongoing());
}

TEST(deep_nesting)
{
	for (int i = 0; i < 1000; i++)
		rcu_read_lock();
	CHECK(rcu_read_ongoing());
	for (int i = 0; i < 1000; i++)
		rcu_read_unlock();
	CHECK(!rcu_read_ongoing());
}

/* docs/api.md, "Pointers": what each macro stores and returns, which arguments it evaluates
 * once, and that the update-side loads need no section (debug builds check
 * rcu_dereference() alone; this case runs in the debug and ASan builds too). */
struct pm_obj {
	int v;
};
static struct pm_obj *pm_gp;
static int pm_evals;
static struct pm_obj *pm_count(struct pm_obj *p)
{
	pm_evals++;
	return p;
}

TEST(pointer_macros)
{
	struct pm_obj a = { 1 }, b = { 2 }, c = { 3 };

	CHECK(!rcu_read_ongoing());
	RCU_INIT_POINTER(pm_gp, &a);
	CHECK(rcu_access_pointer(pm_gp) == &a); /* outside a section: comparison only */
	pm_evals = 0;
	CHECK(rcu_dereference_protected(pm_gp, pm_evals++ == 0 /* "updater lock" */) == &a);
	CHECK_MSG(pm_evals == 1, "rcu_dereference_protected() evaluated c %d times", pm_evals);
	CHECK(rcu_dereference_raw(pm_gp)->v == 1);

	pm_evals = 0;
	rcu_assign_pointer(pm_gp, pm_count(&b)); /* "Evaluates v once." */
	CHECK_MSG(pm_evals == 1, "rcu_assign_pointer() evaluated v %d times", pm_evals);
	rcu_read_lock();
	CHECK(rcu_dereference(pm_gp) == &b && rcu_dereference(pm_gp)->v == 2);
	rcu_read_unlock();

	/* Exchange: the old value back, the new one stored. */
	pm_evals = 0;
	CHECK(rcu_xchg_pointer(&pm_gp, pm_count(&c)) == &b);
	CHECK(pm_evals == 1);
	CHECK(rcu_access_pointer(pm_gp) == &c);

	/* Compare-and-exchange: "returning the value found (equal to old on success)". */
	pm_evals = 0;
	CHECK(rcu_cmpxchg_pointer(&pm_gp, pm_count(&c), pm_count(&a)) == &c); /* succeeds */
	CHECK_MSG(pm_evals == 2, "rcu_cmpxchg_pointer() evaluated its arguments %d times",
		  pm_evals);
	CHECK(rcu_access_pointer(pm_gp) == &a);
	CHECK(rcu_cmpxchg_pointer(&pm_gp, &b, &c) == &a); /* fails: finds a, stores nothing */
	CHECK(rcu_access_pointer(pm_gp) == &a);
	CHECK(rcu_cmpxchg_pointer(&pm_gp, &a, (struct pm_obj *)NULL) == &a);
	CHECK(rcu_access_pointer(pm_gp) == NULL);
	CHECK(!rcu_read_ongoing());
}

TEST(synchronize_no_readers)
{
	for (int i = 0; i < 100; i++)
		synchronize_rcu();
}

struct holder {
	volatile int phase; /* 0 start, 1 in section, 2 release requested, 3 done */
	volatile int sync_done;
};

static void *hold_section(void *arg)
{
	struct holder *h = (struct holder *)arg;
	rcu_read_lock(); /* implicit registration */
	__atomic_store_n(&h->phase, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) != 2)
		gt_sleep_ms(1);
	/* The synchronize that started while we were inside must not have returned. */
	REQUIRE(!__atomic_load_n(&h->sync_done, __ATOMIC_SEQ_CST));
	rcu_read_unlock();
	__atomic_store_n(&h->phase, 3, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *do_sync(void *arg)
{
	struct holder *h = (struct holder *)arg;
	synchronize_rcu();
	__atomic_store_n(&h->sync_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(reader_blocks_synchronize)
{
	struct holder h = { 0, 0 };
	pthread_t r, s;
	pthread_create(&r, NULL, hold_section, &h);
	while (__atomic_load_n(&h.phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	pthread_create(&s, NULL, do_sync, &h);
	gt_sleep_ms(100); /* past the spin phase: the updater sleeps on the futex */
	CHECK(!__atomic_load_n(&h.sync_done, __ATOMIC_SEQ_CST));
	__atomic_store_n(&h.phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(s, NULL); /* the reader's unlock must wake it */
	pthread_join(r, NULL);
	CHECK(h.sync_done);
}

static void *idle_registered(void *arg)
{
	volatile int *stop = (volatile int *)arg;
	rcu_read_lock();
	rcu_read_unlock();
	while (!__atomic_load_n(stop, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	return NULL;
}

TEST(readers_outside_sections_do_not_block)
{
	int stop = 0;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, idle_registered, &stop);
	gt_sleep_ms(20);
	uint64_t t0 = gt_now_ns();
	for (int i = 0; i < 50; i++)
		synchronize_rcu();
	double ms = (double)(gt_now_ns() - t0) / 1e6;
	printf("  50 grace periods with 4 idle readers: %.2f ms\n", ms);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void *exit_after_read(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	return NULL; /* unregistered by the thread-exit hook */
}

TEST(threads_unregister_at_exit)
{
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		pthread_create(&t, NULL, exit_after_read, NULL);
		pthread_join(t, NULL);
	}
	/* If an exited thread stayed registered, this would scan freed TLS (ASan) or hang. */
	synchronize_rcu();
}

TEST(explicit_registration)
{
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	rcu_unregister_thread();
	rcu_unregister_thread(); /* harmless when not registered */
	rcu_read_lock();         /* registers again, implicitly */
	rcu_read_unlock();
	synchronize_rcu();
}

static void *register_then_exit(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	return NULL;
}

TEST(explicit_registration_thread_exit)
{
	pthread_t t;
	pthread_create(&t, NULL, register_then_exit, NULL);
	pthread_join(t, NULL);
	synchronize_rcu();
}

struct conc {
	int stop;
	int started;
	unsigned long sections;
};

static void *busy_reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	unsigned long n = 0;
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		rcu_read_lock();
		rcu_read_unlock();
		rcu_read_unlock();
		if (n++ == 0)
			__atomic_fetch_add(&c->started, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&c->sections, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++)
		synchronize_rcu();
	return NULL;
}

TEST(concurrent_synchronize_callers_share)
{
	struct conc c = { 0, 0, 0 };
	pthread_t r[2], s[3];
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, busy_reader, &c);
	/* The synchronizes must overlap busy readers: without this wait, 600 grace periods with
	 * no reader registered yet can end before a reader is first scheduled. */
	while (__atomic_load_n(&c.started, __ATOMIC_RELAXED) != 2)
		gt_sleep_ms(1);
	for (int i = 0; i < 3; i++)
		pthread_create(&s[i], NULL, syncer, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(s[i], NULL);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	CHECK(c.sections > 0);
}

static void *exit_inside_section(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_lock();
	return NULL; /* misuse: exits with the section open */
}

static void exit_in_section_child(void *arg)
{
	(void)arg;
	pthread_t t;
	pthread_create(&t, NULL, exit_inside_section, NULL);
	pthread_join(t, NULL);
	synchronize_rcu(); /* must not hang on the dead thread */
}

TEST(thread_exit_inside_section_is_diagnosed)
{
	char out[4096];
	int st = gt_run_child(exit_in_section_child, NULL, out, sizeof(out));
	CHECK_MSG(strstr(out, "thread exited inside an rcu_read_lock() section (nesting 2)") !=
			  NULL,
		  "stderr: %s", out);
#ifdef GRACE_DEBUG
	CHECK(WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGABRT); /* debug builds abort after the message */
#else
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st); /* no hang, no crash */
#endif
}

/* The updater pays one membarrier per grace period (two where the CPU is not TSO), and a
 * callback that queues itself again adds none: a worker that finds the callback its pass just
 * ran queued on its own queue goes round again, not into an idle sleep whose barrier (a
 * membarrier) would find it and return at once. A chain of 300 callbacks, each queueing the
 * next from inside itself, under the POLL policy (no timed naps), while a registered thread
 * reads now and then (so that grace periods and idle sleeps need their membarriers; it is
 * rarely inside a section when a grace period looks, which would cost one more): the
 * membarriers the process makes meanwhile are the grace periods' share, plus a quarter for
 * those rare sections and a small slack. Before that look, the chain paid one more per
 * link. Last in the file: its threads (the reader, a second worker) would change the thread
 * layout the fork cases above run in, and TSan's runtime refuses a thread in a fork child
 * whose id a parent's thread still holds ("dup thread with used id"). */
#define CHAIN_LINKS 300
static int chain_left, chain_stop, chain_ready;
static struct rcu_head chain_head;
static void chain_cb(struct rcu_head *h)
{
	if (__atomic_sub_fetch(&chain_left, 1, __ATOMIC_RELAXED) > 0)
		call_rcu(h, chain_cb);
}

static void *chain_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!__atomic_load_n(&chain_stop, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		rcu_read_unlock();
		__atomic_store_n(&chain_ready, 1, __ATOMIC_RELEASE);
		usleep(50);
	}
	rcu_unregister_thread();
	return NULL;
}

TEST(a_callback_chain_pays_only_its_grace_periods_membarriers)
{
	struct grace_cb_stats a, b;
	pthread_t th;
#if defined(__x86_64__) || defined(__i386__)
	const uint64_t per_gp = 1;
#else
	const uint64_t per_gp = 2;
#endif

	/* POLL: a worker with nothing waiting sleeps until woken (the adaptive policy's busy
	 * worker naps on a timer instead, and so never reaches the idle sleep here). */
	REQUIRE(grace_rcu_set_policy(GRACE_POLICY_POLL, 0) == 0);
	__atomic_store_n(&chain_stop, 0, __ATOMIC_RELAXED);
	REQUIRE(pthread_create(&th, NULL, chain_reader, NULL) == 0);
	while (!__atomic_load_n(&chain_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	rcu_barrier();
	grace_rcu_callback_stats(&a);
	uint64_t m0 = grace_membarrier_calls();
	__atomic_store_n(&chain_left, CHAIN_LINKS, __ATOMIC_RELAXED);
	call_rcu(&chain_head, chain_cb);
	for (int i = 0; i < 20000 && __atomic_load_n(&chain_left, __ATOMIC_RELAXED) > 0; i++)
		usleep(1000);
	uint64_t m1 = grace_membarrier_calls();
	grace_rcu_callback_stats(&b);
	__atomic_store_n(&chain_stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	uint64_t gps = b.grace_periods - a.grace_periods, mbs = m1 - m0;
	printf("  %d links: %llu grace periods, %llu membarrier calls\n", CHAIN_LINKS,
	       (unsigned long long)gps, (unsigned long long)mbs);
	REQUIRE(grace_rcu_set_policy(GRACE_POLICY_ADAPTIVE, 0) == 0);
	CHECK_MSG(__atomic_load_n(&chain_left, __ATOMIC_RELAXED) == 0,
		  "the chain did not end in 20 s");
	CHECK_MSG(mbs <= per_gp * gps + gps / 4 + 16,
		  "%llu membarrier calls for %llu grace periods of a %d-link callback chain",
		  (unsigned long long)mbs, (unsigned long long)gps, CHAIN_LINKS);
}

GT_MAIN()
