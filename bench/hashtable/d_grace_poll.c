/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor, deferred free with polled grace periods: each updater keeps the
 * elements it retired in batches of PB_BATCH, tags each closed batch with
 * start_poll_synchronize_rcu(), and frees a batch itself once poll_state_synchronize_rcu() says
 * its grace period has ended (past PB_MAX pending batches it waits with cond_synchronize_rcu,
 * which bounds memory). Frees then happen on the thread that allocated, while the elements are
 * still in its cache, and no callback crosses to another CPU: the pattern of Linux's polled
 * grace-period API, an alternative to call_rcu() for update-heavy code.
 */
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

#define PB_BATCH 64 /* retired elements per batch (one cookie) */
#define PB_MAX 256  /* closed batches a thread holds before it waits for the oldest */

struct pb_batch {
	struct rcu_head *head; /* chained through rcu_head.next: the element's links stay intact
				* for readers that may still stand on it */
	unsigned long cookie;
};

struct pb_state {
	struct pb_batch ring[PB_MAX];
	unsigned int first, count;
	struct rcu_head *cur;
	unsigned int ncur;
};

static void pb_free_batch(struct rcu_head *h);

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el) pb_retire((struct pb_state *)th->dstate, &(el)->rh)
#define RD_THREAD_START(th) pb_start(th)
#define RD_THREAD_STOP(th) pb_stop(th)
#define RD_BATCH_END(th) pb_reap((struct pb_state *)(th)->dstate)
#define RD_SETTLE() ((void)0)

struct hb_thread;
static void pb_start(struct hb_thread *th);
static void pb_stop(struct hb_thread *th);
static inline void pb_retire(struct pb_state *st, struct rcu_head *h);
static inline void pb_reap(struct pb_state *st);

#define HB_SYM grace_poll
#define HB_NAME "grace-poll"
#define HB_LABEL "grace default (polled grace periods, updater frees)"
#define HB_KIND "rcu"
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"

static void pb_free_batch(struct rcu_head *h)
{
	while (h) {
		struct rcu_head *next = h->next;

		rd_free_cb(h);
		h = next;
	}
}

/* Free every batch whose grace period has ended (poll_state: a load, and a full barrier when it
 * says yes, which orders the frees after the grace period). */
static inline void pb_reap(struct pb_state *st)
{
	while (st->count && poll_state_synchronize_rcu(st->ring[st->first].cookie)) {
		pb_free_batch(st->ring[st->first].head);
		st->first = (st->first + 1) % PB_MAX;
		st->count--;
	}
}

static void pb_close(struct pb_state *st)
{
	struct pb_batch *b;

	if (!st->ncur)
		return;
	if (st->count == PB_MAX) { /* memory bound: wait for the oldest batch */
		cond_synchronize_rcu(st->ring[st->first].cookie);
		pb_reap(st);
	}
	b = &st->ring[(st->first + st->count) % PB_MAX];
	b->head = st->cur;
	b->cookie = start_poll_synchronize_rcu(); /* and make sure that grace period runs */
	st->count++;
	st->cur = NULL;
	st->ncur = 0;
}

static inline void pb_retire(struct pb_state *st, struct rcu_head *h)
{
	h->next = st->cur;
	st->cur = h;
	if (++st->ncur == PB_BATCH) {
		pb_close(st);
		pb_reap(st);
	}
}

static void pb_start(struct hb_thread *th)
{
	struct pb_state *st = (struct pb_state *)calloc(1, sizeof(*st));

	if (!st)
		hb_fatal("out of memory");
	th->dstate = st;
}

static void pb_stop(struct hb_thread *th)
{
	struct pb_state *st = (struct pb_state *)th->dstate;

	pb_close(st);
	while (st->count) {
		cond_synchronize_rcu(st->ring[st->first].cookie);
		pb_reap(st);
	}
	free(st);
	th->dstate = NULL;
}
