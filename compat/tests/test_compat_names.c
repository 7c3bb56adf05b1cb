/* SPDX-License-Identifier: MIT */
/*
 * liburcu's functions are symbols of libgrace-urcu (compat/src/names.c), called by a program
 * built without _LGPL_SOURCE, as with liburcu:
 *  - a program may define one itself: multipath-tools's tools define
 *    rcu_register_thread_memb() (the macro urcu_memb_register_thread), and theirs is called;
 *  - dlsym() finds them, under both API generations' names and as rcu_*_sym, and the queues',
 *    stacks' and hash table's functions of liburcu-common and liburcu-cds;
 *  - the non-LGPL pointer operations (through rcu_*_sym) and read side work.
 */
#include <urcu.h>
#include <urcu/lfstack.h>
#include <urcu/rculfhash.h>
#include <urcu/rculfqueue.h>
#include <urcu/wfcqueue.h>
#include <urcu/wfqueue.h>
#include <urcu/wfstack.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(_LGPL_SOURCE)
#error "test_compat_names: built without _LGPL_SOURCE on purpose"
#endif

/* The structures a liburcu program holds have liburcu 0.13's sizes and offsets on LP64
 * (docs/compat.md, "Binary compatibility"); the flavor table is larger (0.14's members). */
#if defined(__LP64__) && defined(__x86_64__)
_Static_assert(sizeof(struct rcu_head) == 16 && offsetof(struct rcu_head, func) == 8, "rcu_head");
_Static_assert(sizeof(struct cds_lfht_node) == 16, "cds_lfht_node");
_Static_assert(sizeof(struct cds_lfht_iter) == 16, "cds_lfht_iter");
_Static_assert(sizeof(struct cds_wfcq_head) == 48, "cds_wfcq_head");
_Static_assert(sizeof(struct cds_wfs_stack) == 48, "cds_wfs_stack");
_Static_assert(sizeof(struct cds_lfs_stack) == 48, "cds_lfs_stack");
_Static_assert(sizeof(struct cds_lfq_queue_rcu) == 24, "cds_lfq_queue_rcu");
_Static_assert(sizeof(struct cds_wfq_queue) == 64, "cds_wfq_queue");
_Static_assert(sizeof(struct urcu_atfork) == 32, "urcu_atfork");
_Static_assert(sizeof(struct rcu_flavor_struct) == 128, "rcu_flavor_struct");
#endif

static int own_register_calls;

/* As multipath-tools: the program's definition replaces the library's. */
void rcu_register_thread_memb(void)
{
	own_register_calls++;
}

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "compat_names: FAILED: %s\n", what);
		failures++;
	}
}

struct item {
	int value;
};

static struct item *shared_item;

int main(void)
{
	static struct item a = { 1 }, b = { 2 }, c = { 3 };

	/* The program's own definition. */
	rcu_register_thread();
	check(own_register_calls == 1, "rcu_register_thread() calls the program's definition");
	check(dlsym(RTLD_DEFAULT, "urcu_memb_register_thread") ==
		      (void *)&urcu_memb_register_thread,
	      "dlsym finds the program's urcu_memb_register_thread");

	/* dlsym: liburcu's names, both generations, the pointer functions. */
	static const char *const names[] = {
		"rcu_dereference_sym",
		"rcu_set_pointer_sym",
		"rcu_xchg_pointer_sym",
		"rcu_cmpxchg_pointer_sym",
		"urcu_memb_read_lock",
		"urcu_memb_synchronize_rcu",
		"urcu_memb_call_rcu",
		"urcu_memb_defer_rcu",
		"urcu_memb_get_call_rcu_thread",
		"urcu_memb_flavor",
		"urcu_mb_barrier",
		"urcu_signal_exit",
		"urcu_bp_dereference_sym",
		"urcu_bp_before_fork",
		"urcu_qsbr_read_lock",
		"urcu_qsbr_quiescent_state",
		"urcu_qsbr_thread_offline",
		"rcu_read_lock_memb",
		"synchronize_rcu_qsbr",
		"call_rcu_sig",
		"rcu_defer_barrier_bp",
		"rcu_bp_after_fork_child",
		/* liburcu-common and liburcu-cds (compat/src/names-cds.c) */
		"cds_wfcq_enqueue",
		"cds_wfcq_dequeue_blocking",
		"cds_wfq_enqueue",
		"cds_wfs_push",
		"cds_wfs_pop_blocking",
		"cds_lfs_push",
		"cds_lfq_enqueue_rcu",
		"cds_lfs_push_rcu",
		"cds_lfht_add",
		"cds_lfht_lookup",
		"cds_lfht_resize",
		"cds_lfht_mm_order",
		"cds_lfht_get_count_order_ulong",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!dlsym(RTLD_DEFAULT, names[i])) {
			fprintf(stderr, "compat_names: dlsym(%s): %s\n", names[i], dlerror());
			failures++;
		}
	}
	void (*sync_old)(void) = NULL;
	*(void **)&sync_old = dlsym(RTLD_DEFAULT, "synchronize_rcu_memb");
	check(sync_old != NULL, "dlsym(synchronize_rcu_memb)");
	if (sync_old)
		sync_old(); /* a grace period, through the first generation's name */

	/* The pointer operations and the read side, as functions. */
	rcu_set_pointer(&shared_item, &a);
	rcu_read_lock();
	check(rcu_read_ongoing(), "rcu_read_ongoing() inside rcu_read_lock()");
	struct item *p = rcu_dereference(shared_item);
	check(p == &a && p->value == 1, "rcu_dereference() through rcu_dereference_sym");
	rcu_read_unlock();
	check(!rcu_read_ongoing(), "rcu_read_ongoing() after rcu_read_unlock()");
	check(rcu_xchg_pointer(&shared_item, &b) == &a, "rcu_xchg_pointer() returns the old value");
	check(rcu_cmpxchg_pointer(&shared_item, &a, &c) == &b,
	      "rcu_cmpxchg_pointer() fails on a stale old value, returns the one found");
	check(rcu_cmpxchg_pointer(&shared_item, &b, &c) == &b && shared_item == &c,
	      "rcu_cmpxchg_pointer() swaps on the right old value");
	synchronize_rcu();
	rcu_unregister_thread();

	/* The exported queue functions are the headers' code: a node enqueued through the symbol
	 * is dequeued inline, and the reverse. */
	{
		struct cds_wfcq_head qh;
		struct cds_wfcq_tail qt;
		struct cds_wfcq_node n1, n2;
		bool (*enq)(cds_wfcq_head_ptr_t, struct cds_wfcq_tail *, struct cds_wfcq_node *);
		struct cds_wfcq_node *(*deq)(struct cds_wfcq_head *, struct cds_wfcq_tail *);

		*(void **)&enq = dlsym(RTLD_DEFAULT, "cds_wfcq_enqueue");
		*(void **)&deq = dlsym(RTLD_DEFAULT, "cds_wfcq_dequeue_blocking");
		cds_wfcq_init(&qh, &qt);
		cds_wfcq_node_init(&n1);
		cds_wfcq_node_init(&n2);
		if (enq && deq) {
			enq(&qh, &qt, &n1);
			cds_wfcq_enqueue(&qh, &qt, &n2);
			check(cds_wfcq_dequeue_blocking(&qh, &qt) == &n1,
			      "a node enqueued by the exported cds_wfcq_enqueue dequeues inline");
			check(deq(&qh, &qt) == &n2,
			      "a node enqueued inline dequeues through the exported function");
			check(cds_wfcq_empty(&qh, &qt), "the queue is empty after both");
		}
		cds_wfcq_destroy(&qh, &qt);
	}
	{
		int (*order)(unsigned long);
		*(void **)&order = dlsym(RTLD_DEFAULT, "cds_lfht_get_count_order_ulong");
		check(order && order(0) == -1 && order(1) == 0 && order(2) == 1 && order(3) == 2 &&
			      order(1024) == 10 && order(1025) == 11,
		      "cds_lfht_get_count_order_ulong() is liburcu's (ceil log2, -1 for 0)");
	}

	if (failures)
		return 1;
	printf("compat_names: ok\n");
	return 0;
}
