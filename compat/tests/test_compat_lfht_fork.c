/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht and fork(): a thread resizes a table back and forth without pause while the main
 * thread forks. Each child resizes its copy, looks up every key, empties and destroys it, and
 * exits 0. Without the table's fork handlers (lfht.c, "fork()") a child often inherits a resize
 * step in progress, its lock held by a thread the child does not have: it could neither resize
 * nor destroy the table (it got a misuse report and aborted).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

struct item {
	unsigned long key;
	struct cds_lfht_node node;
	struct rcu_head rh;
};

enum { NKEYS = 4000, NFORKS = 40 };

static struct cds_lfht *ht;
static int stop;

static unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	x ^= x >> 29;
	return x;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, node)->key == *(const unsigned long *)key;
}

static void item_free(struct rcu_head *rh)
{
	free(caa_container_of(rh, struct item, rh));
}

static void *resizer(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	urcu_memb_register_thread();
	while (!uatomic_read(&stop))
		cds_lfht_resize(ht, (i++ & 1) ? 2 : 65536);
	urcu_memb_unregister_thread();
	return NULL;
}

/* Empty the table (every node retired with call_rcu) and destroy it; 0 on success. */
static int empty_and_destroy(void)
{
	struct cds_lfht_iter iter;
	struct item *pos;
	int bad = 0;

	urcu_memb_read_lock();
	cds_lfht_for_each_entry(ht, &iter, pos, node) {
		if (cds_lfht_del(ht, &pos->node) != 0)
			bad = 1;
		else
			urcu_memb_call_rcu(&pos->rh, item_free);
	}
	urcu_memb_read_unlock();
	if (cds_lfht_destroy(ht, NULL) != 0)
		bad = 1;
	urcu_memb_barrier();
	return bad;
}

/* The child: one thread, a copy of the table taken in the middle of the parent's resizes. */
static int child(void)
{
	struct cds_lfht_iter iter;

	cds_lfht_resize(ht, 64);
	if (ht->size != 64)
		return 2;
	urcu_memb_read_lock();
	for (unsigned long k = 0; k < NKEYS; k++) {
		cds_lfht_lookup(ht, mix(k), match, &k, &iter);
		if (!cds_lfht_iter_get_node(&iter)) {
			urcu_memb_read_unlock();
			return 3;
		}
	}
	urcu_memb_read_unlock();
	return empty_and_destroy() ? 4 : 0;
}

TEST(fork_while_another_thread_resizes)
{
	pthread_t t;
	int failed = 0, first_status = 0;

	ht = cds_lfht_new_flavor(1, 1, 0, 0, &urcu_memb_flavor, NULL);
	REQUIRE(ht);
	for (unsigned long k = 0; k < NKEYS; k++) {
		struct item *it = (struct item *)calloc(1, sizeof(*it));
		REQUIRE(it);
		it->key = k;
		cds_lfht_add(ht, mix(k), &it->node);
	}
	REQUIRE(pthread_create(&t, NULL, resizer, NULL) == 0);
	for (int i = 0; i < NFORKS; i++) {
		int status;
		pid_t pid = fork();

		REQUIRE(pid >= 0);
		if (pid == 0)
			_exit(child());
		REQUIRE(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!failed++)
				first_status = status;
		}
		usleep(1000);
	}
	uatomic_set(&stop, 1);
	pthread_join(t, NULL);
	CHECK_MSG(failed == 0,
		  "%d of %d children failed; the first: %s %d (exit 2: resize, 3: lookup, 4: "
		  "destroy)",
		  failed, (int)NFORKS, WIFSIGNALED(first_status) ? "signal" : "exit status",
		  WIFSIGNALED(first_status) ? WTERMSIG(first_status) : WEXITSTATUS(first_status));
	CHECK(empty_and_destroy() == 0);
}

GT_MAIN()
