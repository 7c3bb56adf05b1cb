/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht_new() from a call_rcu() callback while fork() is being prepared. The table's fork
 * handler holds the list of tables then (lfht.c, "fork()"), and libgrace's, which runs after it,
 * waits for the worker to leave the callback: the callback must not wait for that list's lock
 * (every fork would stall for libgrace's whole pause, and the child inherit the callback half
 * run). A fork handler of this test, which runs between the two, lets the callback go on and
 * waits for cds_lfht_new() to return (3 s: a deadlock detector, not a timing check). Then the
 * child and the parent each use and destroy both tables.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "fork_gate.h"

#include "gtest_lite.h"

struct item {
	unsigned long key;
	struct cds_lfht_node node;
};

static int match(struct cds_lfht_node *n, const void *k)
{
	return caa_container_of(n, struct item, node)->key == *(const unsigned long *)k;
}

static struct cds_lfht *made;

static void make_table(struct rcu_head *rh)
{
	(void)rh;
	uatomic_set(&started, 1);
	for (int i = 0; i < 10000 && !uatomic_read(&go); i++)
		usleep(1000);
	rcu_set_pointer(&made, cds_lfht_new_flavor(8, 1, 0, CDS_LFHT_AUTO_RESIZE, &urcu_memb_flavor,
						   NULL));
	uatomic_set(&returned, 1);
}

/* Add, look up, delete and destroy: the table works (0) or not. */
static int use_and_destroy(struct cds_lfht *ht)
{
	struct item it = { 7, { NULL, 0 } };
	struct cds_lfht_iter iter;
	int ok;

	urcu_memb_read_lock();
	cds_lfht_add(ht, 7, &it.node);
	cds_lfht_lookup(ht, 7, match, &it.key, &iter);
	ok = cds_lfht_iter_get_node(&iter) == &it.node && cds_lfht_del(ht, &it.node) == 0;
	urcu_memb_read_unlock();
	urcu_memb_synchronize_rcu();
	return ok && cds_lfht_destroy(ht, NULL) == 0 ? 0 : 1;
}

TEST(fork_while_callback_creates_a_table)
{
#if defined(__SANITIZE_THREAD__)
	printf("  skipped under TSan (its fork child cannot start threads)\n");
	return;
#endif
	static struct rcu_head rh;
	int status;

	urcu_memb_register_thread();
	struct cds_lfht *first = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, NULL);

	REQUIRE(first);
	uatomic_set(&in_test, 1);
	urcu_memb_call_rcu(&rh, make_table);
	while (!uatomic_read(&started))
		usleep(1000);
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		struct cds_lfht *ht = rcu_dereference(made);
		int r = use_and_destroy(first) | (ht ? use_and_destroy(ht) : 0);

		urcu_memb_unregister_thread();
		_exit(r);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	uatomic_set(&in_test, 0);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK_MSG(uatomic_read(&prepare_saw) == 1,
		  "the callback was still inside cds_lfht_new() 3 s into fork()'s prepare: it "
		  "waits for a lock fork() holds");
	urcu_memb_barrier();
	REQUIRE(made);
	CHECK(use_and_destroy(made) == 0);
	CHECK(use_and_destroy(first) == 0);
	urcu_memb_unregister_thread();
}

GT_MAIN()
