/* SPDX-License-Identifier: MIT */
/*
 * Regressions of the core review (wave 2): one case per fault, each failing on the code the
 * review was made against.
 *  - A thread cancelled while it drives a grace period: the stall report's write() was a
 *    cancellation point, so the thread unwound with the grace period marked "in progress" and
 *    every later synchronize_rcu() of the process slept for ever (default flavor and QSBR).
 *  - A cookie the flavor never returned (garbage, another flavor's, another srcu domain's):
 *    cond_synchronize_*() drove grace periods for ever without a word, poll_state_*() never
 *    succeeded without a word.
 *  - A stall handler that waits for its own flavor (forbidden by <grace/diag.h>) slept for
 *    ever on the grace period its own thread drives, without a word.
 *  - Another pthread key's destructor that reads under RCU after grace's thread-exit
 *    destructor, in glibc's last destructor round: the thread exited registered, and the
 *    registry kept a pointer into its dead TLS (a later grace period read whatever memory
 *    took its place: here it waits for ever on it).
 *  - rcu_barrier() waiting on a blocked callback (on a lock its caller holds: a deadlock of
 *    the program's making) hung without a word, whatever the stall timeout.
 * The cases that hang on the old code run in a child with a time limit (fault_run) or an
 * alarm (misuse_child.h).
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <grace/grace.h>
#include <grace/srcu.h>

#include "fault.h"
#include "gtest_lite.h"

#define MC_WANT_FMT "grace: misuse: %s: "
#include "misuse_child.h"

#define HANG_S 15

/* ---- cancellation while driving a grace period ---- */

static int go, in_section;

static void *rcu_stuck_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	grace_store_release(&in_section, 1);
	while (!grace_load_acquire(&go))
		fault_sleep_ms(1);
	rcu_read_unlock();
	return NULL;
}

static void *qsbr_stuck_reader(void *arg)
{
	(void)arg;
	qsbr_register_thread(); /* online, and no quiescent state until go */
	grace_store_release(&in_section, 1);
	while (!grace_load_acquire(&go))
		fault_sleep_ms(1);
	qsbr_unregister_thread();
	return NULL;
}

static void *rcu_syncer(void *arg)
{
	(void)arg;
	synchronize_rcu();
	return NULL;
}

static void *qsbr_syncer(void *arg)
{
	(void)arg;
	synchronize_qsbr();
	return NULL;
}

/* A reader holds the grace period; a thread that drives it is cancelled (deferred) before its
 * stall report; once the reader is done, a new grace period must complete. */
static void cancel_driver(void *(*reader)(void *), void *(*syncer)(void *), void (*sync)(void))
{
	pthread_t r, s;

	grace_set_stall_timeout_ms(100);
	pthread_create(&r, NULL, reader, NULL);
	while (!grace_load_acquire(&in_section))
		fault_sleep_ms(1);
	pthread_create(&s, NULL, syncer, NULL);
	fault_sleep_ms(30);
	pthread_cancel(s);   /* pending: acted on at the thread's next cancellation point */
	fault_sleep_ms(300); /* the stall report (100 ms) is over */
	grace_store_release(&go, 1);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	sync(); /* hung here: the cancelled driver left the grace period "in progress" */
	exit(7);
}

static void cancel_rcu_child(void *arg)
{
	(void)arg;
	cancel_driver(rcu_stuck_reader, rcu_syncer, grace_rcu_synchronize);
}

static void cancel_qsbr_child(void *arg)
{
	(void)arg;
	cancel_driver(qsbr_stuck_reader, qsbr_syncer, grace_qsbr_synchronize);
}

static int run_child(void (*fn)(void *), const char *what)
{
	return fault_expect_exit7(fn, what, HANG_S, NULL);
}

TEST(cancel_while_driving_rcu)
{
	CHECK(run_child(cancel_rcu_child, "synchronize_rcu after a cancelled driver") == 0);
}

TEST(cancel_while_driving_qsbr)
{
	CHECK(run_child(cancel_qsbr_child, "synchronize_qsbr after a cancelled driver") == 0);
}

/* ---- cookies the flavor never returned ---- */

static void cond_sync_garbage(void)
{
	cond_synchronize_rcu(get_state_synchronize_rcu() + (1ul << 40));
}
TEST(cond_synchronize_garbage_cookie)
{
	EXPECT_MISUSE_CHILD(cond_sync_garbage, MC_FATAL, "cond_synchronize_rcu", "not returned");
}

static void poll_garbage(void)
{
	/* Release builds: reported, false, and the flavor still works. */
	if (poll_state_synchronize_rcu(get_state_synchronize_rcu() + (1ul << 40)))
		abort();
	synchronize_rcu();
	unsigned long c = get_state_synchronize_rcu();
	synchronize_rcu();
	if (!poll_state_synchronize_rcu(c))
		abort();
}
TEST(poll_state_garbage_cookie)
{
	EXPECT_MISUSE_CHILD(poll_garbage, MC_MISUSE, "poll_state_synchronize_rcu", "not returned");
}

static void cond_sync_qsbr_cookie(void)
{
	for (int i = 0; i < 100; i++)
		synchronize_qsbr();
	cond_synchronize_rcu(get_state_synchronize_qsbr());
}
TEST(cond_synchronize_rcu_with_qsbr_cookie)
{
	EXPECT_MISUSE_CHILD(cond_sync_qsbr_cookie, MC_FATAL, "cond_synchronize_rcu",
			    "not returned");
}

static void cond_sync_other_domain(void)
{
	static struct srcu_struct a, b;

	init_srcu_struct(&a);
	init_srcu_struct(&b);
	for (int i = 0; i < 50; i++)
		synchronize_srcu(&a);
	cond_synchronize_srcu(&b, get_state_synchronize_srcu(&a));
}
TEST(cond_synchronize_srcu_with_other_domains_cookie)
{
	EXPECT_MISUSE_CHILD(cond_sync_other_domain, MC_FATAL, "cond_synchronize_srcu",
			    "not returned");
}

/* Cookies the flavor did return never trip the check, however they are used. Every case runs in
 * a child: start_poll starts a callback worker, and TSan refuses threads after a fork in a
 * multi-threaded process (the later cases fork). */
static void valid_cookies_child(void *arg)
{
	unsigned long c[3];
	bool bad = false;

	(void)arg;
	c[0] = get_state_synchronize_rcu();
	c[1] = start_poll_synchronize_rcu();
	rcu_read_lock();
	c[2] = get_state_synchronize_rcu();
	bad |= poll_state_synchronize_rcu(c[2]);
	rcu_read_unlock();
	for (int i = 0; i < 3; i++)
		cond_synchronize_rcu(c[i]);
	for (int i = 0; i < 3; i++)
		bad |= !poll_state_synchronize_rcu(c[i]);
	unsigned long q = get_state_synchronize_qsbr();
	cond_synchronize_qsbr(q);
	bad |= !poll_state_synchronize_qsbr(q);
	exit(bad ? 3 : 7);
}

TEST(valid_cookies_are_accepted)
{
	CHECK(run_child(valid_cookies_child, "valid cookies") == 0);
}

/* ---- a stall handler that waits for its own flavor ---- */

static void *rcu_brief_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	grace_store_release(&in_section, 1);
	fault_sleep_ms(300);
	rcu_read_unlock();
	return NULL;
}

static void handler_sync_rcu(const struct grace_stall_info *info, void *arg)
{
	(void)info;
	(void)arg;
	synchronize_rcu();
}

static void handler_barrier_rcu(const struct grace_stall_info *info, void *arg)
{
	(void)info;
	(void)arg;
	rcu_barrier();
}

DEFINE_STATIC_SRCU(test_srcu);
static int other_flavor_done;
static void handler_sync_qsbr(const struct grace_stall_info *info, void *arg)
{
	(void)info;
	(void)arg;
	synchronize_qsbr(); /* another flavor's grace period: allowed */
	unsigned long c = get_state_synchronize_srcu(&test_srcu);
	cond_synchronize_srcu(&test_srcu, c);
	other_flavor_done = 1;
}

static void stall_with(grace_stall_handler_t h)
{
	pthread_t r;

	grace_set_stall_timeout_ms(50);
	grace_set_stall_handler(h, NULL);
	pthread_create(&r, NULL, rcu_brief_reader, NULL);
	while (!grace_load_acquire(&in_section))
		fault_sleep_ms(1);
	synchronize_rcu();
	pthread_join(r, NULL);
	grace_set_stall_handler(NULL, NULL);
}

static void stall_sync_same(void)
{
	stall_with(handler_sync_rcu);
}
TEST(stall_handler_synchronize_own_flavor)
{
	EXPECT_MISUSE_CHILD(stall_sync_same, MC_FATAL, "synchronize_rcu", "stall handler");
}

static void noop_cb(struct rcu_head *h)
{
	(void)h;
}

static void stall_barrier_same(void)
{
	static struct rcu_head h;

	call_rcu(&h, noop_cb);
	stall_with(handler_barrier_rcu);
}
TEST(stall_handler_barrier_own_flavor)
{
	EXPECT_MISUSE_CHILD(stall_barrier_same, MC_FATAL, "rcu_barrier", "stall handler");
}

static void stall_other_child(void *arg)
{
	(void)arg;
	stall_with(handler_sync_qsbr);
	exit(other_flavor_done == 1 ? 7 : 3);
}

TEST(stall_handler_other_flavor_is_fine)
{
	CHECK(run_child(stall_other_child, "stall handler waiting for other flavors") == 0);
}

/* ---- sections in other keys' destructors, after grace's ---- */

static pthread_key_t late_key;
static bool late_unregister;

/* Created after grace's keys, so in each round it runs after grace's destructor; it keeps
 * itself set, so it runs in every one of glibc's rounds, the last included. */
static void late_dtor(void *v)
{
	long n = (long)v;

	/* After rcu_unregister_thread(): the first section in glibc's last round, when no
	 * destructor set then would run again. */
	if (!late_unregister || n >= PTHREAD_DESTRUCTOR_ITERATIONS) {
		rcu_register_thread(); /* optional: after the exit destructor it does nothing */
		rcu_read_lock();
		rcu_read_lock();
		rcu_read_unlock();
		rcu_read_unlock();
	}
	if (n < 16)
		pthread_setspecific(late_key, (void *)(n + 1));
}

static void *late_thread(void *arg)
{
	(void)arg;
	pthread_setspecific(late_key, (void *)1);
	rcu_read_lock();
	rcu_read_unlock();
	if (late_unregister)
		rcu_unregister_thread(); /* unregistered before exit: the destructor still runs */
	return NULL;
}

static void late_child(void *arg)
{
	const size_t sz = (size_t)4 << 20;
	pthread_attr_t at;
	pthread_t t;

	(void)arg;
	/* A stack of our own: glibc puts the thread's TLS in it, so after the join this memory is
	 * what a registry entry left behind would point into. */
	void *st = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		exit(2);
	pthread_key_create(&late_key, late_dtor);
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, st, sz);
	for (int i = 0; i < 3; i++) {
		pthread_create(&t, &at, late_thread, NULL);
		pthread_join(t, NULL);
		memset(st, 0xff, sz); /* the dead thread's TLS: a reader "in a section" for ever */
		synchronize_rcu();    /* hung here: a dead thread left in the registry */
	}
	exit(7);
}

TEST(reads_in_a_later_key_destructor)
{
#if defined(__SANITIZE_THREAD__) || defined(GRACE_TSAN)
	/* TSan keeps its own state for the thread in the memory the case then overwrites. */
	printf("  TSan: not run (the case scribbles over a dead thread's stack and TLS)\n");
	return;
#endif
	CHECK(run_child(late_child, "synchronize_rcu after reads in the last destructor round") ==
	      0);
}

/* The same after rcu_unregister_thread(): the thread's sections in the last round (or in a
 * signal handler after glibc's key destructors) must not register it for good. */
TEST(reads_in_a_later_key_destructor_after_unregister)
{
#if defined(__SANITIZE_THREAD__) || defined(GRACE_TSAN)
	printf("  TSan: not run (the case scribbles over a dead thread's stack and TLS)\n");
	return;
#endif
	late_unregister = true; /* the child inherits it */
	CHECK(run_child(late_child, "synchronize_rcu after an unregistered thread read in the last "
				    "destructor round") == 0);
	late_unregister = false;
}

/* ---- a barrier waiting on a blocked callback ---- */

static int cb_release;

static void blocked_cb(struct rcu_head *h)
{
	(void)h;
	while (!grace_load_acquire(&cb_release)) /* as if on a lock the barrier's caller holds */
		fault_sleep_ms(1);
}

/* The child's stderr goes through a pipe that this thread reads: it releases the callback
 * only once rcu_barrier() has said it waits (no timing in the test), then passes the text on
 * to the real stderr. */
static int err_pipe[2], real_stderr;

static void *release_when_told(void *arg)
{
	static char seen[4096];
	size_t n = 0;

	(void)arg;
	while (n < sizeof(seen) - 1) {
		ssize_t k = read(err_pipe[0], seen + n, sizeof(seen) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		seen[n] = 0;
		if (strstr(seen, "rcu_barrier: has waited") &&
		    strchr(strstr(seen, "has waited"), '\n'))
			break;
	}
	if (write(real_stderr, seen, n) < 0)
		exit(4);
	grace_store_release(&cb_release, 1);
	return NULL;
}

static void barrier_blocked_child(void *arg)
{
	static struct rcu_head h;
	pthread_t t;

	(void)arg;
	real_stderr = dup(2);
	if (real_stderr < 0 || pipe(err_pipe) != 0 || dup2(err_pipe[1], 2) < 0)
		exit(2);
	grace_set_stall_timeout_ms(100);
	call_rcu(&h, blocked_cb);
	pthread_create(&t, NULL, release_when_told, NULL);
	rcu_barrier(); /* hung here without a word: nothing released the callback */
	pthread_join(t, NULL);
	exit(7);
}

TEST(barrier_on_blocked_callback_is_told)
{
	static char err[8192];
	char how[96];
	struct fault_child c = fault_run(barrier_blocked_child, NULL, HANG_S, err, sizeof(err));

	printf("  child %s\n  stderr: %.400s\n", fault_how(&c, how, sizeof(how)), err);
	CHECK(fault_exited(&c, 7));
	CHECK_MSG(strstr(err, "grace: warning: rcu_barrier: has waited") != NULL,
		  "no word from rcu_barrier() about the blocked callback");
}

GT_MAIN()
