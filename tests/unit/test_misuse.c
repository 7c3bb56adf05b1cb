/* SPDX-License-Identifier: MIT */
/*
 * Misuse diagnostics: every misuse of docs/DESIGN section 5 and issue 7 runs in a child process
 * (gt_run_child), and the test checks how it ended and that the message names the call:
 *   FATAL       grace__misuse_fatal(): message and abort in every build (a deadlock or
 *               corruption would follow otherwise);
 *   MISUSE      grace__misuse(): message in every build; abort in debug builds (GRACE_DEBUG),
 *               in release builds the call returns and the program goes on (also checked:
 *               what it does afterwards still works);
 *   DEBUG_ONLY  a check compiled only into debug builds (inline fast paths: zero cost in
 *               release): message and abort in debug builds, silence in release builds;
 *   DEBUG_UB    as DEBUG_ONLY, but in a release build the misuse is undefined behaviour (a
 *               double free), so the child is not run there;
 *   DEBUG_HANG  as DEBUG_ONLY, but in a release build the misuse would really deadlock, so the
 *               child is not run there.
 * Every child arms alarm(): a misuse that hangs instead of being diagnosed fails the test
 * (SIGALRM), never the test run.
 */
#include <pthread.h>
#include <unistd.h>
#include <grace/grace.h>
#include <grace/srcu.h>

#include "gtest_lite.h"

/* The library's own messages: "grace: misuse: CALL: ..." (tests/common/misuse_child.h). */
#define MC_WANT_FMT "grace: misuse: %s: "
#include "misuse_child.h"

#define EXPECT_MISUSE(fn, e, call, what) EXPECT_MISUSE_CHILD(fn, MC_##e, call, what)

static volatile int sink;
static int *shared_ptr;

/* ---- default flavor ---- */

/* An unlock without a lock: reported at the call in debug builds; in release builds (whose
 * inline unlock tests nothing but the waiter word) by the thread's next rcu_read_lock(), by a
 * wait it starts, or by the next grace period that finds it holding one. */
static void unlock_without_lock(void)
{
	rcu_read_lock();
	rcu_read_unlock();
	rcu_read_unlock();
	rcu_read_lock();
}
TEST(rcu_unlock_without_lock)
{
	EXPECT_MISUSE(unlock_without_lock, FATAL, "rcu_read_unlock", "without a matching");
}

static void unlock_never_locked(void)
{
	rcu_read_unlock(); /* first call of the thread: not even registered */
	rcu_read_lock();
}
TEST(rcu_unlock_in_fresh_thread)
{
	EXPECT_MISUSE(unlock_never_locked, FATAL, "rcu_read_unlock", "without a matching");
}

static void unlock_without_lock_then_sync(void)
{
	rcu_read_lock();
	rcu_read_unlock();
	rcu_read_unlock();
	synchronize_rcu();
}
TEST(rcu_unlock_without_lock_then_synchronize)
{
	EXPECT_MISUSE(unlock_without_lock_then_sync, FATAL, "rcu_read_unlock",
		      "without a matching");
}

static int unbalanced_done;
static void *unbalanced_thread(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_unlock();
	rcu_read_unlock(); /* then never reads again */
	__atomic_store_n(&unbalanced_done, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}
static void unlock_without_lock_other_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, unbalanced_thread, NULL);
	while (!__atomic_load_n(&unbalanced_done, __ATOMIC_ACQUIRE))
		usleep(1000);
	synchronize_rcu(); /* must not wait for ever on it */
}
TEST(rcu_unlock_without_lock_found_by_grace_period)
{
	EXPECT_MISUSE(unlock_without_lock_other_thread, FATAL, "rcu_read_unlock",
		      "without a matching");
}

static void sync_in_section(void)
{
	rcu_read_lock();
	synchronize_rcu();
}
TEST(rcu_synchronize_inside_section)
{
	EXPECT_MISUSE(sync_in_section, FATAL, "synchronize_rcu", "would deadlock");
}

static void exp_in_section(void)
{
	rcu_read_lock();
	rcu_read_lock();
	synchronize_rcu_expedited();
}
TEST(rcu_expedited_inside_nested_section)
{
	EXPECT_MISUSE(exp_in_section, FATAL, "synchronize_rcu_expedited", "would deadlock");
}

static void cond_in_section(void)
{
	rcu_read_lock();
	unsigned long c = get_state_synchronize_rcu(); /* cannot complete inside the section */
	cond_synchronize_rcu(c);
}
TEST(rcu_cond_synchronize_inside_section)
{
	EXPECT_MISUSE(cond_in_section, FATAL, "cond_synchronize_rcu", "would deadlock");
}

static void barrier_in_section(void)
{
	rcu_read_lock();
	rcu_barrier();
}
TEST(rcu_barrier_inside_section)
{
	EXPECT_MISUSE(barrier_in_section, FATAL, "rcu_barrier", "would deadlock");
}

static struct rcu_head cb_head;
static void cb_calls_barrier(struct rcu_head *h)
{
	(void)h;
	rcu_barrier();
}
static void barrier_from_callback(void)
{
	call_rcu(&cb_head, cb_calls_barrier);
	rcu_barrier(); /* runs the callback, which must be stopped */
}
TEST(rcu_barrier_from_callback)
{
	EXPECT_MISUSE(barrier_from_callback, FATAL, "rcu_barrier", "from a callback");
}

static void call_null_func(void)
{
	call_rcu(&cb_head, NULL);
}
TEST(call_rcu_null_function)
{
	EXPECT_MISUSE(call_null_func, FATAL, "call_rcu", "NULL");
}

static void unregister_in_section(void)
{
	rcu_register_thread();
	rcu_read_lock();
	rcu_unregister_thread();
}
TEST(rcu_unregister_inside_section)
{
	EXPECT_MISUSE(unregister_in_section, FATAL, "rcu_unregister_thread", "inside a read-side");
}

static void nest_too_deep(void)
{
	for (int i = 0; i < 70000; i++)
		rcu_read_lock();
}
TEST(rcu_nesting_overflow)
{
	EXPECT_MISUSE(nest_too_deep, FATAL, "rcu_read_lock", "nested deeper");
}

static void register_twice(void)
{
	rcu_register_thread();
	rcu_register_thread();
	/* release build: reported, then the thread goes on working */
	rcu_read_lock();
	rcu_read_unlock();
	synchronize_rcu();
	rcu_unregister_thread();
}
TEST(rcu_register_twice)
{
	EXPECT_MISUSE(register_twice, MISUSE, "rcu_register_thread", "already registered");
}

static void register_in_section(void)
{
	rcu_read_lock();
	rcu_register_thread();
	rcu_read_unlock();
	synchronize_rcu();
}
TEST(rcu_register_inside_section)
{
	EXPECT_MISUSE(register_in_section, MISUSE, "rcu_register_thread", "inside a read-side");
}

static void *exit_in_section_thread(void *arg)
{
	(void)arg;
	rcu_read_lock();
	rcu_read_lock();
	return NULL; /* exits holding two nested sections */
}
static void thread_exit_in_section(void)
{
	pthread_t t;
	pthread_create(&t, NULL, exit_in_section_thread, NULL);
	pthread_join(t, NULL);
	/* release build: the section was ended for the dead thread, grace periods go on */
	synchronize_rcu();
}
TEST(rcu_thread_exit_inside_section)
{
	EXPECT_MISUSE(thread_exit_in_section, MISUSE, "thread exit", "inside an rcu_read_lock()");
}

static void deref_outside(void)
{
	int *p = rcu_dereference(shared_ptr);
	sink = p != NULL;
}
TEST(rcu_dereference_outside_section)
{
	EXPECT_MISUSE(deref_outside, DEBUG_ONLY, "rcu_dereference",
		      "outside any read-side section");
}

static void deref_inside_ok(void)
{
	rcu_read_lock();
	int *p = rcu_dereference(shared_ptr);
	sink = p != NULL;
	rcu_read_unlock();
	p = rcu_dereference_protected(shared_ptr, 1); /* update side: no check */
	sink = p != NULL;
	fprintf(stderr, "fine\n");
}
TEST(rcu_dereference_inside_section_is_fine)
{
	CHECK(mc_child_is_fine(deref_inside_ok));
}

static void register_twice_abort_env(void)
{
	setenv("GRACE_ABORT_ON_MISUSE", "1", 1);
	rcu_register_thread();
	rcu_register_thread();
}
TEST(abort_on_misuse_environment)
{
	/* GRACE_ABORT_ON_MISUSE=1 turns every reported misuse into an abort, also in release. */
	EXPECT_MISUSE(register_twice_abort_env, FATAL, "rcu_register_thread", "already registered");
}

/* ---- QSBR ---- */

static void qs_offline(void)
{
	qsbr_register_thread();
	qsbr_thread_offline();
	qsbr_quiescent_state();
}
TEST(qsbr_quiescent_state_while_offline)
{
	EXPECT_MISUSE(qs_offline, FATAL, "qsbr_quiescent_state", "offline");
}

static void qs_unregistered(void)
{
	qsbr_quiescent_state();
}
TEST(qsbr_quiescent_state_unregistered)
{
	EXPECT_MISUSE(qs_unregistered, FATAL, "qsbr_quiescent_state", "not registered");
}

static void qsbr_read_offline(void)
{
	qsbr_register_thread();
	qsbr_thread_offline();
	qsbr_read_lock(); /* reading while offline: no grace period waits for this thread */
	int *p = rcu_dereference_raw(shared_ptr);
	sink = p != NULL;
	qsbr_read_unlock();
}
TEST(qsbr_read_while_offline)
{
	EXPECT_MISUSE(qsbr_read_offline, DEBUG_ONLY, "qsbr_read_lock", "offline");
}

static void qsbr_deref_offline(void)
{
	qsbr_register_thread();
	qsbr_thread_offline();
	int *p = rcu_dereference(shared_ptr);
	sink = p != NULL;
}
TEST(qsbr_dereference_while_offline)
{
	EXPECT_MISUSE(qsbr_deref_offline, DEBUG_ONLY, "rcu_dereference", "outside any read-side");
}

static void qsbr_unlock_without_lock(void)
{
	qsbr_register_thread();
	qsbr_read_unlock();
}
TEST(qsbr_unlock_without_lock)
{
	EXPECT_MISUSE(qsbr_unlock_without_lock, DEBUG_ONLY, "qsbr_read_unlock", "without");
}

static void qsbr_qs_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	qsbr_quiescent_state();
	qsbr_read_unlock();
	qsbr_unregister_thread();
}
TEST(qsbr_quiescent_state_inside_section)
{
	EXPECT_MISUSE(qsbr_qs_in_section, DEBUG_ONLY, "qsbr_quiescent_state", "inside");
}

static void qsbr_sync_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	synchronize_qsbr(); /* release: the thread is put offline for the wait, it returns */
	qsbr_read_unlock();
	qsbr_unregister_thread();
}
TEST(qsbr_synchronize_inside_section)
{
	EXPECT_MISUSE(qsbr_sync_in_section, DEBUG_ONLY, "synchronize_qsbr", "inside");
}

static void qsbr_barrier_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	qsbr_barrier();
	qsbr_read_unlock();
	qsbr_unregister_thread();
}
TEST(qsbr_barrier_inside_section)
{
	EXPECT_MISUSE(qsbr_barrier_in_section, DEBUG_ONLY, "qsbr_barrier", "inside");
}

static void qsbr_unregister_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	qsbr_unregister_thread();
}
TEST(qsbr_unregister_inside_section)
{
	EXPECT_MISUSE(qsbr_unregister_in_section, DEBUG_ONLY, "qsbr_unregister_thread", "inside");
}

static void qsbr_offline_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	qsbr_thread_offline();
}
TEST(qsbr_offline_inside_section)
{
	EXPECT_MISUSE(qsbr_offline_in_section, DEBUG_ONLY, "qsbr_thread_offline", "inside");
}

static void qsbr_register_twice(void)
{
	qsbr_register_thread();
	qsbr_register_thread();
	qsbr_quiescent_state(); /* release: still registered and online */
	synchronize_qsbr();
	qsbr_unregister_thread();
}
TEST(qsbr_register_twice)
{
	EXPECT_MISUSE(qsbr_register_twice, MISUSE, "qsbr_register_thread", "already registered");
}

static void qsbr_online_unregistered(void)
{
	qsbr_thread_online();
}
TEST(qsbr_online_unregistered)
{
	EXPECT_MISUSE(qsbr_online_unregistered, MISUSE, "qsbr_thread_online", "not registered");
}

static void qsbr_offline_unregistered(void)
{
	qsbr_thread_offline();
}
TEST(qsbr_offline_unregistered)
{
	EXPECT_MISUSE(qsbr_offline_unregistered, MISUSE, "qsbr_thread_offline", "not registered");
}

static void *qsbr_exit_in_section_thread(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	qsbr_read_lock();
	return NULL;
}
static void qsbr_thread_exit_in_section(void)
{
	pthread_t t;
	pthread_create(&t, NULL, qsbr_exit_in_section_thread, NULL);
	pthread_join(t, NULL);
	synchronize_qsbr(); /* the dead thread was put offline and unregistered */
}
TEST(qsbr_thread_exit_inside_section)
{
	EXPECT_MISUSE(qsbr_thread_exit_in_section, DEBUG_ONLY, "thread exit", "qsbr_read_lock");
}

/* ---- srcu ---- */

DEFINE_STATIC_SRCU(ss);

static void srcu_bad_index(void)
{
	int idx = srcu_read_lock(&ss);
	srcu_read_unlock(&ss, idx + 7);
}
TEST(srcu_unlock_bad_index)
{
	EXPECT_MISUSE(srcu_bad_index, FATAL, "srcu_read_unlock", "index");
}

/* docs/api.md (srcu_read_unlock(), "Thread-safety"): the thread that locked, checked in debug
 * builds. Another thread ends the section: a debug build reports it, naming the call; a release
 * build does not look (the domain's sums still balance). */
static int srcu_other_idx;

static void *srcu_other_unlock(void *arg)
{
	(void)arg;
	srcu_read_unlock(&ss, srcu_other_idx);
	return NULL;
}

static void srcu_unlock_other_thread(void)
{
	pthread_t t;

	srcu_other_idx = srcu_read_lock(&ss);
	REQUIRE(pthread_create(&t, NULL, srcu_other_unlock, NULL) == 0);
	pthread_join(t, NULL);
}
TEST(srcu_unlock_on_another_thread)
{
	EXPECT_MISUSE(srcu_unlock_other_thread, DEBUG_ONLY, "srcu_read_unlock",
		      "open in this thread");
}

/* docs/api.md (grace_flavor_ops_srcu(): "NULL or uninitialised `ssp`: misuse naming
 * `grace_flavor_ops_srcu`, abort"; NULL ops likewise). */
static void ops_srcu_null_ssp(void)
{
	struct grace_flavor_ops ops;
	grace_flavor_ops_srcu(&ops, NULL);
}
static void ops_srcu_uninitialised(void)
{
	static struct srcu_struct never; /* zeroed, neither init_srcu_struct() nor DEFINE_SRCU() */
	struct grace_flavor_ops ops;
	grace_flavor_ops_srcu(&ops, &never);
}
static void ops_srcu_null_ops(void)
{
	grace_flavor_ops_srcu(NULL, &ss);
}
TEST(flavor_ops_srcu_bad_arguments)
{
	EXPECT_MISUSE(ops_srcu_null_ssp, FATAL, "grace_flavor_ops_srcu", "NULL srcu_struct");
	EXPECT_MISUSE(ops_srcu_uninitialised, FATAL, "grace_flavor_ops_srcu", "not initialised");
	EXPECT_MISUSE(ops_srcu_null_ops, FATAL, "grace_flavor_ops_srcu", "NULL struct");
}

static void srcu_sync_in_own_section(void)
{
	int idx = srcu_read_lock(&ss);
	synchronize_srcu(&ss);
	srcu_read_unlock(&ss, idx);
}
TEST(srcu_synchronize_inside_own_section)
{
	EXPECT_MISUSE(srcu_sync_in_own_section, DEBUG_HANG, "synchronize_srcu", "same srcu_struct");
}

static void srcu_sync_in_other_section(void)
{
	static struct srcu_struct other;
	init_srcu_struct(&other);
	int idx = srcu_read_lock(&other);
	synchronize_srcu(&ss); /* legal: another domain */
	srcu_read_unlock(&other, idx);
	cleanup_srcu_struct(&other);
	fprintf(stderr, "fine\n");
}
TEST(srcu_synchronize_inside_other_domain_is_fine)
{
	CHECK(mc_child_is_fine(srcu_sync_in_other_section));
}

static void srcu_cb_barrier(struct rcu_head *h)
{
	(void)h;
	srcu_barrier(&ss);
}
static void srcu_barrier_from_callback(void)
{
	call_srcu(&ss, &cb_head, srcu_cb_barrier);
	srcu_barrier(&ss);
}
TEST(srcu_barrier_from_callback)
{
	EXPECT_MISUSE(srcu_barrier_from_callback, FATAL, "srcu_barrier", "from a callback");
}

static void srcu_deref_outside(void)
{
	int *p = srcu_dereference(shared_ptr, &ss);
	sink = p != NULL;
}
TEST(srcu_dereference_outside_section)
{
	EXPECT_MISUSE(srcu_deref_outside, DEBUG_ONLY, "srcu_dereference", "outside");
}

/* docs/api.md (srcu_dereference()): the check asks for a section of that domain; one of
 * another domain is not enough. */
static void srcu_deref_other_domain(void)
{
	static struct srcu_struct other;
	init_srcu_struct(&other);
	int idx = srcu_read_lock(&other);
	int *p = srcu_dereference(shared_ptr, &ss);
	sink = p != NULL;
	srcu_read_unlock(&other, idx);
}
TEST(srcu_dereference_inside_another_domains_section)
{
	EXPECT_MISUSE(srcu_deref_other_domain, DEBUG_ONLY, "srcu_dereference",
		      "outside a srcu_read_lock() section of that srcu_struct");
}

/* srcu_dereference_check(p, ssp, c) also accepts c being true: outside any section (the update
 * side's lock held), and inside a section of ssp whatever c. */
static void srcu_deref_check_ok(void)
{
	int *p = srcu_dereference_check(shared_ptr, &ss, 1 /* the update lock held */);
	sink = p != NULL;
	int idx = srcu_read_lock(&ss);
	p = srcu_dereference_check(shared_ptr, &ss, 0);
	sink = p != NULL;
	p = srcu_dereference(shared_ptr, &ss);
	sink = p != NULL;
	srcu_read_unlock(&ss, idx);
	fprintf(stderr, "fine\n");
}
static void srcu_deref_check_false_outside(void)
{
	int *p = srcu_dereference_check(shared_ptr, &ss, 0);
	sink = p != NULL;
}
TEST(srcu_dereference_check_accepts_its_condition)
{
	CHECK(mc_child_is_fine(srcu_deref_check_ok));
	EXPECT_MISUSE(srcu_deref_check_false_outside, DEBUG_ONLY, "srcu_dereference", "outside");
}

/* docs/api.md (grace_debug_in_read_section()): non-zero inside a section of any flavor: the
 * default flavor's (nesting), QSBR's (online), srcu's (debug builds only). */
static int in_online, in_offline, in_unregistered;
static void *qsbr_in_section(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	in_online = grace_debug_in_read_section();
	qsbr_thread_offline();
	in_offline = grace_debug_in_read_section();
	qsbr_thread_online();
	qsbr_unregister_thread();
	in_unregistered = grace_debug_in_read_section();
	return NULL;
}
TEST(debug_in_read_section_sees_every_flavor)
{
	pthread_t t;

	CHECK(!grace_debug_in_read_section());
	rcu_read_lock();
	rcu_read_lock();
	CHECK(grace_debug_in_read_section());
	rcu_read_unlock();
	CHECK_MSG(grace_debug_in_read_section(), "a nested unlock ended the section");
	rcu_read_unlock();
	CHECK(!grace_debug_in_read_section());
	REQUIRE(pthread_create(&t, NULL, qsbr_in_section, NULL) == 0);
	pthread_join(t, NULL);
	CHECK_MSG(in_online, "an online QSBR thread is not in a section");
	CHECK(!in_offline);
	CHECK(!in_unregistered);
	int idx = srcu_read_lock(&ss);
	int in_srcu = grace_debug_in_read_section();
	srcu_read_unlock(&ss, idx);
#ifdef GRACE_DEBUG
	CHECK_MSG(in_srcu, "a srcu section of a GRACE_DEBUG build is not seen");
#else
	(void)in_srcu; /* release builds do not track srcu sections */
#endif
	CHECK(!grace_debug_in_read_section());
}

static void srcu_use_after_cleanup(void)
{
	static struct srcu_struct dyn;
	init_srcu_struct(&dyn);
	cleanup_srcu_struct(&dyn);
	synchronize_srcu(&dyn);
}
TEST(srcu_use_after_cleanup)
{
	EXPECT_MISUSE(srcu_use_after_cleanup, FATAL, "synchronize_srcu", "after cleanup");
}

static void srcu_uninitialised(void)
{
	static struct srcu_struct never; /* zeroed, neither DEFINE_SRCU nor init_srcu_struct */
	srcu_read_lock(&never);
}
TEST(srcu_not_initialised)
{
	EXPECT_MISUSE(srcu_uninitialised, FATAL, "srcu_read_lock", "not initialised");
}

static void srcu_cleanup_with_reader(void)
{
	static struct srcu_struct dyn;
	init_srcu_struct(&dyn);
	int idx = srcu_read_lock(&dyn);
	cleanup_srcu_struct(&dyn); /* release: reported, nothing freed, the domain still works */
	srcu_read_unlock(&dyn, idx);
	synchronize_srcu(&dyn);
	cleanup_srcu_struct(&dyn);
}
TEST(srcu_cleanup_with_reader)
{
	EXPECT_MISUSE(srcu_cleanup_with_reader, MISUSE, "cleanup_srcu_struct", "still inside");
}

/* docs/api.md (cleanup_srcu_struct(), "Context"): not from the domain's callbacks. One of them
 * cleans its own domain up: reported, naming the call, and nothing freed (release builds go
 * on; the domain still works). */
static struct srcu_struct cb_dom;
static volatile int cb_dom_done;

static void cleanup_own_cb(struct rcu_head *h)
{
	(void)h;
	cleanup_srcu_struct(&cb_dom);
	cb_dom_done = 1;
}

static void srcu_cleanup_from_own_callback(void)
{
	static struct rcu_head h;

	REQUIRE(init_srcu_struct(&cb_dom) == 0);
	call_srcu(&cb_dom, &h, cleanup_own_cb);
	srcu_barrier(&cb_dom);
	REQUIRE(cb_dom_done);
	synchronize_srcu(&cb_dom); /* not freed: still a domain */
	cleanup_srcu_struct(&cb_dom);
}
TEST(srcu_cleanup_from_own_callback)
{
	EXPECT_MISUSE(srcu_cleanup_from_own_callback, MISUSE, "cleanup_srcu_struct",
		      "called from a callback of srcu_struct");
}

static void free_nothing(struct rcu_head *h)
{
	(void)h;
}
static void srcu_cleanup_with_callbacks(void)
{
	static struct srcu_struct dyn;
	static struct rcu_head h;
	init_srcu_struct(&dyn);
	int idx = srcu_read_lock(&dyn); /* keeps the callback pending */
	call_srcu(&dyn, &h, free_nothing);
	cleanup_srcu_struct(&dyn);
	srcu_read_unlock(&dyn, idx);
	srcu_barrier(&dyn);
	cleanup_srcu_struct(&dyn);
}
TEST(srcu_cleanup_with_pending_callbacks)
{
	EXPECT_MISUSE(srcu_cleanup_with_callbacks, MISUSE, "cleanup_srcu_struct", "srcu_barrier");
}

static void srcu_cleanup_twice(void)
{
	static struct srcu_struct dyn;
	init_srcu_struct(&dyn);
	cleanup_srcu_struct(&dyn);
	cleanup_srcu_struct(&dyn);
}
TEST(srcu_cleanup_twice)
{
	EXPECT_MISUSE(srcu_cleanup_twice, MISUSE, "cleanup_srcu_struct", "twice");
}

/* ---- free_rcu() and its twins (issue 13) ---- */

struct fobj {
	long v;
	struct rcu_head rh;
};

static void free_rcu_twice(void)
{
	struct fobj *p = (struct fobj *)malloc(sizeof(*p));
	/* This thread's own section holds the grace period, so the first free cannot have run
	 * when the second call comes (as free_srcu_twice() below): without it a worker could
	 * take the block and free p in between, and the second call is then a use after free
	 * the library cannot see, not the misuse to diagnose. */
	rcu_read_lock();
	free_rcu(p, rh);
	free_rcu(p, rh); /* still waiting: a double free */
	rcu_read_unlock();
	free_rcu_barrier();
}
TEST(free_rcu_queued_twice)
{
	/* Release builds: not run (a double free there, caught by the allocator or not). */
	EXPECT_MISUSE(free_rcu_twice, DEBUG_UB, "free_rcu", "queued twice");
}

static void free_mightsleep_twice(void)
{
	void *p = malloc(16);
	/* Online and reporting no quiescent state between the two calls: the first free cannot
	 * have run when the second comes (see free_rcu_twice()). An ASan run of the test command
	 * failed so, under load: a worker freed p between the calls, and the second free was
	 * ASan's report of a double free instead of this library's message. */
	qsbr_register_thread();
	free_qsbr_mightsleep(p);
	free_qsbr(((struct fobj *)p), rh); /* the same object, through the other entry point */
	qsbr_unregister_thread();
	free_qsbr_barrier();
}
TEST(free_qsbr_queued_twice)
{
	EXPECT_MISUSE(free_mightsleep_twice, DEBUG_UB, "free_qsbr", "queued twice");
}

static void retire_twice(void)
{
	void *p = malloc(16);
	/* Inside a section, as rcu_retire() is mostly called: it also holds the grace period,
	 * so p still waits at the second call (see free_rcu_twice()). */
	rcu_read_lock();
	rcu_retire(p);
	rcu_retire(p); /* still waiting: a double free */
	rcu_read_unlock();
	free_rcu_barrier();
}
TEST(rcu_retire_retired_twice)
{
	EXPECT_MISUSE(retire_twice, DEBUG_UB, "rcu_retire", "queued twice");
}

DEFINE_STATIC_SRCU(free_srcu_dom);
static void free_srcu_twice(void)
{
	struct fobj *p = (struct fobj *)malloc(sizeof(*p));
	/* A reader of the domain holds the grace period, so the first free cannot have run
	 * (and freed p) when the second call comes: that is the misuse to diagnose, not a use
	 * after free of the test's own making. */
	int idx = srcu_read_lock(&free_srcu_dom);
	free_srcu(&free_srcu_dom, p, rh);
	free_srcu(&free_srcu_dom, p, rh);
	srcu_read_unlock(&free_srcu_dom, idx);
	free_srcu_barrier(&free_srcu_dom);
}
TEST(free_srcu_queued_twice)
{
	EXPECT_MISUSE(free_srcu_twice, DEBUG_UB, "free_srcu", "queued twice");
}

static void free_head_outside(void)
{
	struct fobj *p = (struct fobj *)malloc(sizeof(*p));
	grace_rcu_free(p, (struct rcu_head *)((char *)p + 8192));
}
TEST(free_rcu_head_outside_object)
{
	EXPECT_MISUSE(free_head_outside, FATAL, "free_rcu", "first 4096 bytes");
}

static void free_mightsleep_in_section(void)
{
	rcu_read_lock();
	free_rcu_mightsleep(malloc(16)); /* may wait for a grace period: would deadlock */
	rcu_read_unlock();
	free_rcu_barrier();
}
TEST(free_rcu_mightsleep_in_section)
{
	EXPECT_MISUSE(free_mightsleep_in_section, DEBUG_ONLY, "free_rcu_mightsleep",
		      "rcu_read_lock");
}

static void free_qsbr_mightsleep_in_section(void)
{
	qsbr_register_thread();
	qsbr_read_lock();
	free_qsbr_mightsleep(malloc(16));
	qsbr_read_unlock();
	qsbr_thread_offline();
	free_qsbr_barrier();
	qsbr_unregister_thread();
}
TEST(free_qsbr_mightsleep_in_section)
{
	EXPECT_MISUSE(free_qsbr_mightsleep_in_section, DEBUG_ONLY, "free_qsbr_mightsleep",
		      "qsbr_read_lock");
}

static void free_srcu_mightsleep_in_section(void)
{
	int idx = srcu_read_lock(&free_srcu_dom);
	free_srcu_mightsleep(&free_srcu_dom, malloc(16));
	srcu_read_unlock(&free_srcu_dom, idx);
	free_srcu_barrier(&free_srcu_dom);
}
TEST(free_srcu_mightsleep_in_section)
{
	EXPECT_MISUSE(free_srcu_mightsleep_in_section, DEBUG_ONLY, "free_srcu_mightsleep",
		      "inside");
}

/* docs/api.md, the context table's row of free_srcu_mightsleep() and free_srcu_barrier():
 * not in a section of the domain (debug: abort); from one of its callbacks, the first is
 * misuse (debug), the second misuse in every build (it would wait for its own callback). */
static void free_srcu_barrier_in_section(void)
{
	int idx = srcu_read_lock(&free_srcu_dom);
	free_srcu_barrier(&free_srcu_dom);
	srcu_read_unlock(&free_srcu_dom, idx);
}
TEST(free_srcu_barrier_in_section)
{
	EXPECT_MISUSE(free_srcu_barrier_in_section, DEBUG_HANG, "free_srcu_barrier", "inside");
}

static void srcu_mightsleep_cb(struct rcu_head *h)
{
	free(h);
	free_srcu_mightsleep(&free_srcu_dom, malloc(16));
}
static void free_srcu_mightsleep_from_callback(void)
{
	call_srcu(&free_srcu_dom, (struct rcu_head *)malloc(sizeof(struct rcu_head)),
		  srcu_mightsleep_cb);
	srcu_barrier(&free_srcu_dom);
	free_srcu_barrier(&free_srcu_dom);
}
TEST(free_srcu_mightsleep_from_callback)
{
	EXPECT_MISUSE(free_srcu_mightsleep_from_callback, DEBUG_ONLY, "free_srcu_mightsleep",
		      "from a callback");
}

static void srcu_free_barrier_cb(struct rcu_head *h)
{
	free(h);
	free_srcu_barrier(&free_srcu_dom);
}
static void free_srcu_barrier_from_callback(void)
{
	call_srcu(&free_srcu_dom, (struct rcu_head *)malloc(sizeof(struct rcu_head)),
		  srcu_free_barrier_cb);
	srcu_barrier(&free_srcu_dom);
}
TEST(free_srcu_barrier_from_callback)
{
	EXPECT_MISUSE(free_srcu_barrier_from_callback, FATAL, "free_srcu_barrier", "callback");
}

static void mightsleep_cb(struct rcu_head *h)
{
	free(h);
	free_rcu_mightsleep(malloc(16));
}
static void free_mightsleep_from_callback(void)
{
	call_rcu((struct rcu_head *)malloc(sizeof(struct rcu_head)), mightsleep_cb);
	rcu_barrier();
	free_rcu_barrier();
}
TEST(free_rcu_mightsleep_from_callback)
{
	EXPECT_MISUSE(free_mightsleep_from_callback, DEBUG_ONLY, "free_rcu_mightsleep",
		      "from a callback");
}

static void free_barrier_in_section(void)
{
	rcu_read_lock();
	free_rcu_barrier();
	rcu_read_unlock();
}
TEST(free_rcu_barrier_in_section)
{
	EXPECT_MISUSE(free_barrier_in_section, FATAL, "free_rcu_barrier", "rcu_read_lock");
}

static void barrier_cb(struct rcu_head *h)
{
	free(h);
	free_rcu_barrier();
}
static void free_barrier_from_callback(void)
{
	call_rcu((struct rcu_head *)malloc(sizeof(struct rcu_head)), barrier_cb);
	rcu_barrier();
}
TEST(free_rcu_barrier_from_callback)
{
	EXPECT_MISUSE(free_barrier_from_callback, FATAL, "free_rcu_barrier", "callback");
}

static void free_srcu_uninitialised(void)
{
	static struct srcu_struct never; /* zeroed, neither DEFINE_SRCU nor init_srcu_struct */
	free_srcu(&never, (struct fobj *)malloc(sizeof(struct fobj)), rh);
}
TEST(free_srcu_not_initialised)
{
	EXPECT_MISUSE(free_srcu_uninitialised, FATAL, "free_srcu", "not initialised");
}

GT_MAIN()
