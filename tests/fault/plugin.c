/* SPDX-License-Identifier: MIT */
/*
 * A plugin for the dlopen/dlclose tests (issue 12, fault 4, and the fault-injection suite): a
 * shared object that pulls grace in (linked against libgrace.so, or with libgrace.a inside)
 * and uses every flavor's read side and call_* from the threads of its loader. The loader (a
 * program that does not link grace) finds the functions below with dlsym().
 *
 * The contract the plugin keeps before it is unloaded (docs/guide.md, "dlclose()"): its
 * callbacks point into its code, so plugin_fini() waits for them (rcu_barrier(),
 * qsbr_barrier(), srcu_barrier()), and its DEFINE_SRCU() domain lives in its data, so
 * plugin_fini() cleans it up.
 */
#include <stdlib.h>
#include <grace/grace.h>

#include "plugin.h"

DEFINE_SRCU(plugin_srcu);

struct item {
	struct rcu_head rh;
	int v;
};

static struct item *cur_rcu, *cur_qsbr, *cur_srcu;
static unsigned long freed;

static void item_free(struct rcu_head *h)
{
	struct item *it = grace_container_of(h, struct item, rh);
	it->v = -1;
	free(it);
	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
}

static struct item *item_new(int v)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	if (!it)
		abort();
	it->v = v;
	return it;
}

/* Default flavor and QSBR read sides (the calling thread registers with both). */
int plugin_read_rcu(void)
{
	int s = 0;
	struct item *it;

	rcu_read_lock();
	it = rcu_dereference(cur_rcu);
	if (it)
		s += it->v < 0;
	rcu_read_unlock();
	qsbr_register_thread();
	it = rcu_dereference(cur_qsbr);
	if (it)
		s += it->v < 0;
	qsbr_quiescent_state();
	qsbr_unregister_thread();
	return s; /* 0: nothing freed was seen */
}

/* The srcu read side, inline (an rseq critical section in this object's code). */
int plugin_read_srcu(void)
{
	int s = 0, i = srcu_read_lock(&plugin_srcu);
	struct item *it = srcu_dereference(cur_srcu, &plugin_srcu);
	if (it)
		s += it->v < 0;
	srcu_read_unlock(&plugin_srcu, i);
	return s;
}

/* Replace each flavor's item n times; retire the old ones through call_*. */
void plugin_update(int n)
{
	for (int k = 0; k < n; k++) {
		/* The slot exchanges below are acq_rel: the new object's initialisation (release) happens
		 * before the retire of the thread that later takes it out (acquire). */
		struct item *o = __atomic_exchange_n(&cur_rcu, item_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_rcu(&o->rh, item_free);
		o = __atomic_exchange_n(&cur_qsbr, item_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_qsbr(&o->rh, item_free);
		o = __atomic_exchange_n(&cur_srcu, item_new(k), __ATOMIC_ACQ_REL);
		if (o)
			call_srcu(&plugin_srcu, &o->rh, item_free);
		/* The thread's cache of the inline retire (and, with GRACE_STEP_GARBAGE=1, its
		 * steps of the default flavor's grace periods): an object nobody reads. */
		rcu_read_lock();
		rcu_retire(item_new(k));
		rcu_read_unlock();
	}
}

unsigned long plugin_freed(void)
{
	return __atomic_load_n(&freed, __ATOMIC_RELAXED);
}

/* Before dlclose(): no callback of ours may still be queued, no domain of ours known. */
void plugin_fini(void)
{
	/* Acquire: pairs with the acq_rel exchanges that filled the slots. */
	struct item *o = __atomic_exchange_n(&cur_rcu, (struct item *)NULL, __ATOMIC_ACQUIRE);
	if (o)
		call_rcu(&o->rh, item_free);
	o = __atomic_exchange_n(&cur_qsbr, (struct item *)NULL, __ATOMIC_ACQUIRE);
	if (o)
		call_qsbr(&o->rh, item_free);
	o = __atomic_exchange_n(&cur_srcu, (struct item *)NULL, __ATOMIC_ACQUIRE);
	if (o)
		call_srcu(&plugin_srcu, &o->rh, item_free);
	rcu_barrier(); /* also every thread's retired objects (docs/api.md, rcu_barrier()) */
	qsbr_barrier();
	srcu_barrier(&plugin_srcu);
	cleanup_srcu_struct(&plugin_srcu);
}
