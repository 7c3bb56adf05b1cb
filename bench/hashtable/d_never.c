/* SPDX-License-Identifier: MIT */
/*
 * never-free: the reference that "Are Your Epochs Too Epic?" (PPoPP 2024) measures reclamation
 * against. Readers use grace default's read side (so the difference to grace-free and
 * grace-call is what freeing costs, nothing else); an update leaks the old element: it is
 * never freed while the run lasts, so every insertion takes memory the allocator has not
 * handed out before (cold lines, page faults), which is what leaking costs. The leaked
 * elements are chained per thread through their unused rcu_head (a store to a line the update
 * has just written) and freed after the run, followed by malloc_trim(0), so that the next run
 * leaks fresh memory again.
 */
#include <malloc.h>
#include <pthread.h>
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

static __thread struct rcu_head *nf_leaked;
static pthread_mutex_t nf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rcu_head *nf_all;

static void nf_hand_over(void);
static void nf_free_all(void);

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el)                      \
	do {                               \
		(el)->rh.next = nf_leaked; \
		nf_leaked = &(el)->rh;     \
	} while (0)
#define RD_THREAD_START(th) ((void)(th))
#define RD_THREAD_STOP(th) nf_hand_over()
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() nf_free_all()

#define HB_SYM never_free
#define HB_NAME "never-free"
#define HB_LABEL "never free (grace default read side, old element leaked)"
#define HB_KIND "ref"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"

/* The thread's leaked elements go on the run's list (the thread is about to exit). */
static void nf_hand_over(void)
{
	struct rcu_head *l = nf_leaked, *t;

	if (!l)
		return;
	for (t = l; t->next; t = t->next)
		continue;
	pthread_mutex_lock(&nf_lock);
	t->next = nf_all;
	nf_all = l;
	pthread_mutex_unlock(&nf_lock);
	nf_leaked = NULL;
}

/* After the run (no reader left): free what leaked, give the memory back to the system. */
static void nf_free_all(void)
{
	struct rcu_head *l;

	pthread_mutex_lock(&nf_lock);
	l = nf_all;
	nf_all = NULL;
	pthread_mutex_unlock(&nf_lock);
	while (l) {
		struct rcu_head *next = l->next;

		hb_el_free(&((struct d_el *)(void *)((char *)l - offsetof(struct d_el, rh)))->e);
		l = next;
	}
	hb_quarantine_drain();
	malloc_trim(0);
}
