/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht_add_replace() or cds_lfht_replace() of a node by itself (an "upsert" of the object
 * already in the table) is misuse: the node would link to itself and every later walk of its
 * bucket would spin forever (liburcu asserts new_node != old_node). Each call runs in a child
 * (tests/common/misuse_child.h) that must abort with a message naming the call, in every build;
 * the child then looks the key up, which would hang (its alarm fails the test) had the call
 * returned.
 */
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "gtest_lite.h"
#include "misuse_child.h"

struct item {
	unsigned long key;
	struct cds_lfht_node node;
};

static int match(struct cds_lfht_node *n, const void *k)
{
	return caa_container_of(n, struct item, node)->key == *(const unsigned long *)k;
}

static void replace_self(int by_iter)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, NULL);
	static struct item a = { 42, { NULL, 0 } };
	struct cds_lfht_iter it;

	urcu_memb_register_thread();
	urcu_memb_read_lock();
	cds_lfht_add_replace(ht, 42, match, &a.key, &a.node);
	if (by_iter) {
		cds_lfht_lookup(ht, 42, match, &a.key, &it);
		(void)cds_lfht_replace(ht, &it, 42, match, &a.key, &a.node);
	} else {
		(void)cds_lfht_add_replace(ht, 42, match, &a.key, &a.node);
	}
	cds_lfht_lookup(ht, 42, match, &a.key, &it); /* spins if the node points at itself */
	urcu_memb_read_unlock();
	urcu_memb_unregister_thread();
}

static void add_replace_self(void)
{
	replace_self(0);
}

static void replace_by_iter_self(void)
{
	replace_self(1);
}

TEST(add_replace_node_by_itself_is_misuse)
{
	EXPECT_MISUSE_CHILD(add_replace_self, MC_FATAL, "cds_lfht_add_replace",
			    "already in the table");
}

TEST(replace_node_by_itself_is_misuse)
{
	EXPECT_MISUSE_CHILD(replace_by_iter_self, MC_FATAL, "cds_lfht_replace",
			    "the node it replaces");
}

GT_MAIN()
