/* SPDX-License-Identifier: MIT */
/* A liburcu program: a published pointer, a cds_lfht, call_rcu, with <urcu.h> (memb) or
 * <urcu-qsbr.h> (CONSUMER_QSBR). Exits 0 when everything it checks holds. */
#include <stdio.h>
#include <stdlib.h>
#ifdef CONSUMER_QSBR
#include <urcu-qsbr.h>
#else
#include <urcu.h>
#endif
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#ifndef GRACE_URCU
#error "not grace-urcu's headers"
#endif

struct item {
	unsigned long key;
	struct cds_lfht_node node;
	struct rcu_head rh;
};

static int match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct item, node)->key == *(const unsigned long *)key;
}

/* Callbacks may run on more than one worker thread at once (one per CPU), so the count is
 * atomic; rcu_barrier() orders every increment before main's read. */
static int freed;
static void item_free(struct rcu_head *rh)
{
	free(caa_container_of(rh, struct item, rh));
	uatomic_inc(&freed);
}

int main(void)
{
	struct cds_lfht *ht = cds_lfht_new(16, 1, 0, CDS_LFHT_AUTO_RESIZE, NULL);
	struct cds_lfht_iter it;
	unsigned long k;

	if (!ht)
		return 1;
	rcu_register_thread();
	for (k = 0; k < 1000; k++) {
		struct item *i = malloc(sizeof(*i));
		i->key = k;
		rcu_read_lock();
		cds_lfht_add_unique(ht, k * 2654435761ul, match, &k, &i->node);
		rcu_read_unlock();
	}
	rcu_read_lock();
	k = 500;
	cds_lfht_lookup(ht, k * 2654435761ul, match, &k, &it);
	int found = cds_lfht_iter_get_node(&it) != NULL;
	struct item *pos;
	cds_lfht_for_each_entry(ht, &it, pos, node) {
		if (cds_lfht_del(ht, &pos->node) == 0)
			call_rcu(&pos->rh, item_free);
	}
	rcu_read_unlock();
	rcu_barrier();
	int ok = found && uatomic_read(&freed) == 1000 && cds_lfht_destroy(ht, NULL) == 0;
	rcu_unregister_thread();
#ifdef CONSUMER_QSBR
	ok = ok && &rcu_flavor == &urcu_qsbr_flavor;
#else
	ok = ok && &rcu_flavor == &urcu_memb_flavor;
#endif
	printf("grace-urcu consumer: %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
