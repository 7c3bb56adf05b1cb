/* SPDX-License-Identifier: MIT */
/*
 * compat_contract_package's consumer program, built once per grace-urcu CMake target with the
 * header of its liburcu module (CONSUMER_*): a read-side section, a grace period, a callback,
 * and for the cds targets a hash table. Each target must carry the debug definition exactly
 * when grace was built with GRACE_DEBUG=ON (CONSUMER_EXPECT_DEBUG).
 */
#include <stdio.h>
#include <stdlib.h>

#if defined(CONSUMER_URCU) || defined(CONSUMER_CDS)
#include <urcu.h>
#elif defined(CONSUMER_MEMB)
#include <urcu/urcu-memb.h>
#define PFX(x) urcu_memb_##x
#elif defined(CONSUMER_MB)
#include <urcu/urcu-mb.h>
#define PFX(x) urcu_mb_##x
#elif defined(CONSUMER_SIGNAL)
#include <urcu/urcu-signal.h>
#define PFX(x) urcu_signal_##x
#elif defined(CONSUMER_BP)
#include <urcu-bp.h>
#elif defined(CONSUMER_QSBR)
#include <urcu-qsbr.h>
#endif
#ifdef CONSUMER_CDS
#include <urcu/rculfhash.h>
#endif
#ifdef PFX /* the flavor-prefixed API (liburcu 0.13+) */
#define rcu_register_thread PFX(register_thread)
#define rcu_unregister_thread PFX(unregister_thread)
#define rcu_read_lock PFX(read_lock)
#define rcu_read_unlock PFX(read_unlock)
#define synchronize_rcu PFX(synchronize_rcu)
#define call_rcu PFX(call_rcu)
#define rcu_barrier PFX(barrier)
#endif

#if CONSUMER_EXPECT_DEBUG && !defined(GRACE_DEBUG)
#error "grace was built with GRACE_DEBUG=ON, and this grace-urcu target does not define GRACE_DEBUG"
#endif
#if !CONSUMER_EXPECT_DEBUG && defined(GRACE_DEBUG)
#error "grace was built without GRACE_DEBUG, and this grace-urcu target defines GRACE_DEBUG"
#endif

static int ran;

static void cb(struct rcu_head *h)
{
	(void)h;
	ran++;
}

int main(void)
{
	static struct rcu_head h;

	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	synchronize_rcu();
	call_rcu(&h, cb);
	rcu_barrier();
#ifdef CONSUMER_CDS
	static struct cds_lfht_node node;
	struct cds_lfht_iter iter;
	struct cds_lfht *ht = cds_lfht_new(4, 1, 0, CDS_LFHT_AUTO_RESIZE, NULL);

	if (!ht)
		return 3;
	rcu_read_lock();
	cds_lfht_add(ht, 42, &node);
	cds_lfht_first(ht, &iter);
	int found = cds_lfht_iter_get_node(&iter) == &node;
	int del = cds_lfht_del(ht, &node);
	rcu_read_unlock();
	synchronize_rcu();
	if (!found || del != 0 || cds_lfht_destroy(ht, NULL) != 0)
		return 4;
#endif
	rcu_unregister_thread();
	if (ran != 1)
		return 2;
	printf("ok\n");
	return 0;
}
