/* SPDX-License-Identifier: MIT */
/*
 * The plugin of tests/unit/test_rseq_dlclose.c: code that a program loads with dlopen(), runs
 * from several threads, then unloads with dlclose(). Its srcu read-side sections are inlined
 * here (include/grace/srcu.h), so their rseq critical-section descriptors live in this object;
 * its call_rcu() pushes inside libgrace.so.
 */
#include <grace/rcu.h>
#include <grace/srcu.h>

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API unsigned long plugin_read(struct srcu_struct *ssp, const unsigned long *word,
				     unsigned long n);
PLUGIN_API int plugin_lock(struct srcu_struct *ssp);
PLUGIN_API void plugin_call(struct rcu_head *head, unsigned long *counter);

/* n read-side sections of ssp, each reading *word. */
PLUGIN_API unsigned long plugin_read(struct srcu_struct *ssp, const unsigned long *word,
				     unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		int idx = srcu_read_lock(ssp);

		sum += grace_load_relaxed(word);
		srcu_read_unlock(ssp, idx);
	}
	return sum;
}

/* Opens a section that the caller closes, after this object is gone. */
PLUGIN_API int plugin_lock(struct srcu_struct *ssp)
{
	return srcu_read_lock(ssp);
}

struct plugin_cb {
	struct rcu_head head;
	unsigned long *counter;
};

static void plugin_cb_fn(struct rcu_head *head)
{
	struct plugin_cb *cb = container_of(head, struct plugin_cb, head);

	grace_fetch_add(cb->counter, 1, __ATOMIC_RELAXED);
}

/* call_rcu() with a callback in this object; head must be a struct plugin_cb's first member. */
PLUGIN_API void plugin_call(struct rcu_head *head, unsigned long *counter)
{
	struct plugin_cb *cb = container_of(head, struct plugin_cb, head);

	cb->counter = counter;
	call_rcu(head, plugin_cb_fn);
}
