/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu reports the misuse liburcu leaves silent (issue 16, item 5), naming the liburcu
 * call: a QSBR reader that never registered or is offline, synchronize_rcu() and
 * rcu_quiescent_state() inside a read-side section, unbalanced unlocks, defer_rcu() from a
 * thread that did not register for it, blocking cds_lfht and defer calls inside a section, list
 * corruption; and a QSBR thread that never reports a quiescent state is named in the stall
 * report. Each misuse runs in a child process (tests/common/misuse_child.h): debug-build checks
 * abort with GRACE_DEBUG and stay silent without it; the others abort in every build.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>
#include <urcu/rculfhash.h>
#include <urcu/list.h>
#include <grace/diag.h> /* grace_set_stall_timeout_ms(): a short stall timeout */

#include "gtest_lite.h"
#include "misuse_child.h"

/* ---- QSBR ---- */

static int *shared;

static void qsbr_unregistered_reader(void)
{
	urcu_qsbr_read_lock(); /* never registered: grace periods do not wait for it */
	int *p = rcu_dereference(shared);
	(void)p;
	urcu_qsbr_read_unlock();
}
TEST(qsbr_reader_never_registered)
{
	EXPECT_MISUSE_CHILD(qsbr_unregistered_reader, MC_DEBUG_ONLY, "rcu_read_lock",
			    "not registered");
}

static void qsbr_offline_reader(void)
{
	urcu_qsbr_register_thread();
	urcu_qsbr_thread_offline();
	urcu_qsbr_read_lock();
	urcu_qsbr_read_unlock();
}
TEST(qsbr_reader_offline)
{
	EXPECT_MISUSE_CHILD(qsbr_offline_reader, MC_DEBUG_ONLY, "rcu_read_lock", "offline");
}

static void qsbr_sync_in_section(void)
{
	urcu_qsbr_register_thread();
	urcu_qsbr_read_lock();
	urcu_qsbr_synchronize_rcu(); /* liburcu: puts the thread offline, silently */
	urcu_qsbr_read_unlock();
	urcu_qsbr_unregister_thread();
}
TEST(qsbr_synchronize_rcu_inside_section)
{
	EXPECT_MISUSE_CHILD(qsbr_sync_in_section, MC_DEBUG_ONLY,
			    "synchronize_rcu (urcu_qsbr_synchronize_rcu)",
			    "inside rcu_read_lock()");
}

static void qsbr_qs_in_section(void)
{
	urcu_qsbr_register_thread();
	urcu_qsbr_read_lock();
	urcu_qsbr_quiescent_state();
	urcu_qsbr_read_unlock();
	urcu_qsbr_unregister_thread();
}
TEST(qsbr_quiescent_state_inside_section)
{
	EXPECT_MISUSE_CHILD(qsbr_qs_in_section, MC_DEBUG_ONLY, "rcu_quiescent_state",
			    "inside rcu_read_lock()");
}

static void qsbr_unlock_without_lock(void)
{
	urcu_qsbr_register_thread();
	urcu_qsbr_read_unlock();
	urcu_qsbr_unregister_thread();
}
TEST(qsbr_unlock_without_lock)
{
	EXPECT_MISUSE_CHILD(qsbr_unlock_without_lock, MC_DEBUG_ONLY, "rcu_read_unlock",
			    "without a matching");
}

/* A QSBR thread that reports no quiescent state for a while: the stall report names the call
 * it is missing (liburcu waits in silence). Not a misuse to abort on: it may resume. The silent
 * thread is registered before the grace period starts and stays silent for 3 s after it started
 * (15 stall timeouts), so the report comes first on a loaded machine too (under ASan at load 18,
 * a thread that slept a fixed 1.5 s from its start once woke before the report). */
static sem_t silent_registered;
static int sync_started; /* atomic: the main thread is about to wait for the grace period */

static void *silent_reader(void *arg)
{
	(void)arg;
	urcu_qsbr_register_thread();
	sem_post(&silent_registered);
	while (!__atomic_load_n(&sync_started, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(3000 * 1000); /* online, no quiescent state */
	urcu_qsbr_quiescent_state();
	urcu_qsbr_unregister_thread();
	return NULL;
}
static void qsbr_silent_thread(void *arg)
{
	pthread_t t;

	(void)arg;
	alarm(30);
	grace_set_stall_timeout_ms(200);
	sem_init(&silent_registered, 0, 0);
	pthread_create(&t, NULL, silent_reader, NULL);
	while (sem_wait(&silent_registered) != 0)
		;
	__atomic_store_n(&sync_started, 1, __ATOMIC_RELEASE);
	urcu_qsbr_synchronize_rcu(); /* waits for the silent thread */
	pthread_join(t, NULL);
	fprintf(stderr, "done\n");
}
TEST(qsbr_thread_without_quiescent_state_is_named)
{
	static char out[8192];
	int st = gt_run_child(qsbr_silent_thread, NULL, out, sizeof(out));
	printf("  stderr: %.400s\n", out);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
	CHECK(strstr(out, "stall: rcu_quiescent_state: QSBR thread") != NULL);
	CHECK(strstr(out, "done") != NULL);
}

/* ---- default flavor ---- */

static void memb_sync_in_section(void)
{
	urcu_memb_read_lock();
	urcu_memb_synchronize_rcu(); /* liburcu: deadlocks */
}
TEST(memb_synchronize_rcu_inside_section)
{
	/* Debug builds: the compat check ("synchronize_rcu (urcu_memb_synchronize_rcu)"); release
	 * builds: grace's own ("synchronize_rcu: ... would deadlock"). */
	EXPECT_MISUSE_CHILD(memb_sync_in_section, MC_FATAL, "synchronize_rcu", NULL);
}

static void memb_defer_barrier_in_section(void)
{
	urcu_memb_defer_register_thread();
	urcu_memb_read_lock();
	urcu_memb_defer_barrier();
}
TEST(defer_barrier_inside_section)
{
	EXPECT_MISUSE_CHILD(memb_defer_barrier_in_section, MC_FATAL, "rcu_defer_barrier",
			    "inside rcu_read_lock()");
}

static void nop(void *p)
{
	(void)p;
}
static void defer_unregistered(void)
{
	urcu_memb_defer_rcu(nop, NULL); /* liburcu requires rcu_defer_register_thread() first */
	urcu_memb_defer_barrier();
}
TEST(defer_rcu_without_registration)
{
	EXPECT_MISUSE_CHILD(defer_unregistered, MC_DEBUG_ONLY, "defer_rcu", "not registered");
}

static void defer_in_section(void)
{
	urcu_memb_defer_register_thread();
	urcu_memb_read_lock();
	urcu_memb_defer_rcu(nop, NULL);
	urcu_memb_read_unlock();
	urcu_memb_defer_barrier();
}
TEST(defer_rcu_inside_section)
{
	EXPECT_MISUSE_CHILD(defer_in_section, MC_DEBUG_ONLY, "defer_rcu", "inside rcu_read_lock()");
}

static void lfht_destroy_in_section(void)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, NULL);
	urcu_memb_read_lock();
	cds_lfht_destroy(ht, NULL);
}
TEST(lfht_destroy_inside_section)
{
	EXPECT_MISUSE_CHILD(lfht_destroy_in_section, MC_FATAL, "cds_lfht_destroy",
			    "inside rcu_read_lock()");
}

/* docs/compat.md ("Not matched"): cds_lfht_destroy() from a call_rcu callback, allowed by
 * liburcu since 0.10, works: it waits for a grace period there (the worker's queue waits with
 * it) and frees the table. */
static struct cds_lfht *cb_ht;
static struct rcu_head cb_rh;
static int cb_destroyed = -1;
static void destroy_cb(struct rcu_head *h)
{
	(void)h;
	cb_destroyed = cds_lfht_destroy(cb_ht, NULL);
}
static void lfht_destroy_in_callback(void)
{
	cb_ht = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, NULL);
	urcu_memb_call_rcu(&cb_rh, destroy_cb);
	urcu_memb_barrier();
	if (cb_destroyed == 0)
		fprintf(stderr, "fine\n");
	else
		fprintf(stderr, "cds_lfht_destroy() returned %d\n", cb_destroyed);
}
TEST(lfht_destroy_from_a_callback_works)
{
	CHECK(mc_child_is_fine(lfht_destroy_in_callback));
}

/* docs/compat.md (the same row): while a shrink of the table waits for its own callback, a
 * destroy from a callback would wait for itself: reported as a barrier from a callback. The
 * shrink is held in its wait: a reader thread's section keeps the grace period from ending
 * while the destroy callback is queued and then the table emptied, so the shrinks' callback
 * comes after the destroy callback, which finds the table empty and the shrink waiting. */
enum { SHRINK_N = 4096 };
static struct cds_lfht_node shrink_nodes[SHRINK_N];
static sem_t shrink_in, shrink_out;

static int match_ptr(struct cds_lfht_node *n, const void *key)
{
	return n == key;
}

static void *shrink_reader(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	sem_post(&shrink_in);
	sem_wait(&shrink_out);
	urcu_memb_read_unlock();
	urcu_memb_unregister_thread();
	return NULL;
}

static void lfht_destroy_in_callback_during_shrink(void)
{
	pthread_t th;

	cb_ht = cds_lfht_new_flavor(8, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    &urcu_memb_flavor, NULL);
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	for (unsigned long i = 0; i < SHRINK_N; i++) {
		cds_lfht_node_init(&shrink_nodes[i]);
		cds_lfht_add(cb_ht, i * 2654435761ul, &shrink_nodes[i]);
	}
	urcu_memb_read_unlock();
	sem_init(&shrink_in, 0, 0);
	sem_init(&shrink_out, 0, 0);
	pthread_create(&th, NULL, shrink_reader, NULL);
	sem_wait(&shrink_in);
	urcu_memb_call_rcu(&cb_rh, destroy_cb);
	/* Emptied under the reader's section: the shrinks start, none can end. */
	urcu_memb_read_lock();
	for (unsigned long i = 0; i < SHRINK_N; i++) {
		struct cds_lfht_iter it;
		cds_lfht_lookup(cb_ht, i * 2654435761ul, match_ptr, &shrink_nodes[i], &it);
		if (!it.node || cds_lfht_del(cb_ht, it.node) != 0) {
			fprintf(stderr, "node %lu not found or not deleted\n", i);
			abort();
		}
	}
	urcu_memb_read_unlock();
	sem_post(&shrink_out);
	pthread_join(th, NULL);
	urcu_memb_barrier();
	fprintf(stderr, "cds_lfht_destroy() returned %d: nothing reported\n", cb_destroyed);
}
TEST(lfht_destroy_from_a_callback_during_a_shrink_is_reported)
{
	EXPECT_MISUSE_CHILD(lfht_destroy_in_callback_during_shrink, MC_FATAL, "rcu_barrier",
			    "called from a callback");
}

static void lfht_resize_in_section(void)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, NULL);
	urcu_memb_read_lock();
	cds_lfht_resize(ht, 1024);
}
TEST(lfht_resize_inside_section)
{
	EXPECT_MISUSE_CHILD(lfht_resize_in_section, MC_FATAL, "cds_lfht_resize",
			    "inside rcu_read_lock()");
}

static void list_double_del(void)
{
	CDS_LIST_HEAD(head);
	struct cds_list_head a, b;
	cds_list_add(&a, &head);
	cds_list_add(&b, &head);
	cds_list_del(&a);
	cds_list_del(&a); /* liburcu: silent corruption */
}
TEST(list_double_delete)
{
	EXPECT_MISUSE_CHILD(list_double_del, MC_DEBUG_ONLY, "cds_list_del", "deleted twice");
}

GT_MAIN()
