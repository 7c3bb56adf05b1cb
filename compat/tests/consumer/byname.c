/* SPDX-License-Identifier: MIT */
/*
 * A liburcu program linked by liburcu's library names from <libdir>/grace-urcu (run_consumer.cmake
 * links it with each of -lurcu, -lurcu-qsbr, ..., -lurcu-common, with and without _LGPL_SOURCE):
 * every name resolves to libgrace-urcu, which serves every flavor: here QSBR, whose read side is
 * a library function without _LGPL_SOURCE only under DEBUG_RCU, as in liburcu.
 */
#include <urcu-qsbr.h>

#include <stdio.h>

struct item {
	int value;
};

static struct item *shared_item;

int main(void)
{
	static struct item a = { 1 }, b = { 2 };

	rcu_register_thread();
	rcu_set_pointer(&shared_item, &a);
	rcu_read_lock();
	struct item *p = rcu_dereference(shared_item);
	int v = p->value;
	rcu_read_unlock();
	rcu_quiescent_state();
	struct item *old = rcu_xchg_pointer(&shared_item, &b);
	synchronize_rcu();
	rcu_barrier();
	rcu_unregister_thread();
	if (v != 1 || old != &a || shared_item != &b) {
		fprintf(stderr, "byname: wrong values\n");
		return 1;
	}
	return 0;
}
