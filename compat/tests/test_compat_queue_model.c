/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu's queues and stacks against reference models of liburcu's contract: random
 * sequences of every call of <urcu/wfcqueue.h> (enqueue and its "was the queue empty" result,
 * the blocking, non-blocking and with-state dequeues, splice and its three results, first/next
 * iteration, empty), <urcu/wfstack.h> (push and its result, pop, pop with state, pop-all and its
 * iteration), <urcu/lfstack.h> (push, pop, pop-all) and <urcu/rculfqueue.h> (enqueue, dequeue,
 * destroy of an empty or non-empty queue), each checked call by call against a deque; then
 * producers and one consumer on each queue, where every producer's elements must come out in
 * the order it put them in, each exactly once (FIFO per producer is all a concurrent queue
 * promises). GRACE_MODEL_SEEDS and GRACE_MODEL_OPS set the work.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfqueue.h>
#include <urcu/wfcqueue.h>
#include <urcu/wfstack.h>
#include <urcu/lfstack.h>

#include "gtest_lite.h"
#include "model.h"

enum { NODES = 64 };

struct elem {
	int id;
	struct cds_wfcq_node q;
	struct cds_wfs_node s;
	struct cds_lfs_node ls;
	struct cds_lfq_node_rcu lq;
	struct rcu_head rh;
};

static struct elem pool[NODES];
static struct gt_model_rng rng;
static struct gt_model_where w;
#define MCHECK(cond, ...) GT_MODEL_CHECK(&w, cond, __VA_ARGS__)

static unsigned below(unsigned n)
{
	return gt_model_below(&rng, n);
}

/* A deque of element numbers: v[0] is the front (queues) or the top (stacks). */
struct deq {
	int v[NODES];
	int n;
};
static int where[NODES]; /* the structure an element is in, -1 none */

static void d_push_back(struct deq *d, int id)
{
	d->v[d->n++] = id;
}
static void d_push_front(struct deq *d, int id)
{
	memmove(&d->v[1], &d->v[0], (size_t)d->n * sizeof(int));
	d->v[0] = id;
	d->n++;
}
static int d_pop_front(struct deq *d)
{
	int id = d->v[0];
	memmove(&d->v[0], &d->v[1], (size_t)(d->n - 1) * sizeof(int));
	d->n--;
	return id;
}

static int free_elem(void)
{
	int start = (int)below(NODES);
	for (int i = 0; i < NODES; i++) {
		int id = (start + i) % NODES;
		if (where[id] < 0)
			return id;
	}
	return -1;
}

static int id_of_q(struct cds_wfcq_node *n)
{
	return n ? caa_container_of(n, struct elem, q)->id : -1;
}

static void reset_pool(void)
{
	for (int i = 0; i < NODES; i++) {
		pool[i].id = i;
		where[i] = -1;
	}
}

/* ---- wfcqueue: two queues (A, B), B spliced into A now and then ---- */

static struct cds_wfcq_head wq_h[2];
static struct cds_wfcq_tail wq_t[2];
static struct deq wq_m[2];

static void wfcq_check(int qi)
{
	struct cds_wfcq_node *n;
	int i = 0;

	MCHECK(cds_wfcq_empty(&wq_h[qi], &wq_t[qi]) == (wq_m[qi].n == 0), "wfcq %d: empty()", qi);
	__cds_wfcq_for_each_blocking(&wq_h[qi], &wq_t[qi], n)
	{
		MCHECK(i < wq_m[qi].n && id_of_q(n) == wq_m[qi].v[i],
		       "wfcq %d: element %d is %d, the model's %d", qi, i, id_of_q(n),
		       i < wq_m[qi].n ? wq_m[qi].v[i] : -1);
		if (++i > NODES)
			break;
	}
	MCHECK(i == wq_m[qi].n, "wfcq %d: iteration gave %d, the model holds %d", qi, i,
	       wq_m[qi].n);
}

static void wfcq_step(void)
{
	int qi = (int)below(2);
	struct deq *m = &wq_m[qi];
	unsigned what = below(8);
	int id;

	switch (what) {
	case 0:
	case 1:
	case 2: {
		if ((id = free_elem()) < 0)
			break;
		cds_wfcq_node_init(&pool[id].q);
		bool was_nonempty = cds_wfcq_enqueue(&wq_h[qi], &wq_t[qi], &pool[id].q);
		MCHECK(was_nonempty == (m->n != 0), "wfcq enqueue returned %d with %d queued",
		       was_nonempty, m->n);
		d_push_back(m, id);
		where[id] = qi;
		break;
	}
	case 3: {
		struct cds_wfcq_node *n = cds_wfcq_dequeue_blocking(&wq_h[qi], &wq_t[qi]);
		int want = m->n ? d_pop_front(m) : -1;
		MCHECK(id_of_q(n) == want, "wfcq dequeue gave %d, the model's front %d", id_of_q(n),
		       want);
		if (want >= 0)
			where[want] = -1;
		break;
	}
	case 4: {
		int state = 0;
		int had = m->n;
		struct cds_wfcq_node *n = cds_wfcq_dequeue_with_state_blocking(&wq_h[qi], &wq_t[qi],
									       &state);
		int want = had ? d_pop_front(m) : -1;
		MCHECK(id_of_q(n) == want, "wfcq dequeue_with_state gave %d, the model's %d",
		       id_of_q(n), want);
		if (had)
			MCHECK(!!(state & CDS_WFCQ_STATE_LAST) == (had == 1),
			       "wfcq dequeue_with_state: LAST %d with %d queued before",
			       !!(state & CDS_WFCQ_STATE_LAST), had);
		if (want >= 0)
			where[want] = -1;
		break;
	}
	case 5: {
		/* Non-blocking, under the dequeue lock: no enqueuer runs, so never WOULDBLOCK. */
		cds_wfcq_dequeue_lock(&wq_h[qi], &wq_t[qi]);
		struct cds_wfcq_node *n = __cds_wfcq_dequeue_nonblocking(&wq_h[qi], &wq_t[qi]);
		cds_wfcq_dequeue_unlock(&wq_h[qi], &wq_t[qi]);
		int want = m->n ? d_pop_front(m) : -1;
		MCHECK(n != CDS_WFCQ_WOULDBLOCK && id_of_q(n) == want,
		       "wfcq nonblocking dequeue gave %p, the model's %d", (void *)n, want);
		if (want >= 0)
			where[want] = -1;
		break;
	}
	case 6: {
		/* Splice the other queue onto the end of this one. */
		int oi = 1 - qi;
		struct deq *mo = &wq_m[oi];
		enum cds_wfcq_ret r = cds_wfcq_splice_blocking(&wq_h[qi], &wq_t[qi], &wq_h[oi],
							       &wq_t[oi]);
		enum cds_wfcq_ret want = mo->n == 0  ? CDS_WFCQ_RET_SRC_EMPTY
					 : m->n == 0 ? CDS_WFCQ_RET_DEST_EMPTY
						     : CDS_WFCQ_RET_DEST_NON_EMPTY;
		MCHECK(r == want, "wfcq splice returned %d, the model says %d (dest %d, src %d)",
		       (int)r, (int)want, m->n, mo->n);
		for (int i = 0; i < mo->n; i++) {
			d_push_back(m, mo->v[i]);
			where[mo->v[i]] = qi;
		}
		mo->n = 0;
		break;
	}
	case 7:
		break;
	}
	wfcq_check(0);
	wfcq_check(1);
}

/* ---- the two stacks, behind one model: the top is the model's v[0] ---- */

static struct cds_wfs_stack ws;
static struct cds_lfs_stack ls;
static struct deq st_m;

/*
 * A stack's calls: push returns the API's "was non-empty" result; pop returns the element
 * taken or -1, and sets *last to whether the API said it was the last (-1 where the API has no
 * with-state pop, or when not asked); pop_all writes the elements from the top and returns
 * their number; empty is the API's.
 */
struct stack_ops {
	const char *name;
	int (*push)(int id);
	int (*pop)(int *last);
	int (*pop_all)(int *ids);
	bool (*empty)(void);
};

static int wfs_push(int id)
{
	cds_wfs_node_init(&pool[id].s);
	return cds_wfs_push(&ws, &pool[id].s);
}
static int wfs_pop(int *last)
{
	struct cds_wfs_node *n;
	if (below(2)) {
		int state = 0;
		n = cds_wfs_pop_with_state_blocking(&ws, &state);
		*last = !!(state & CDS_WFS_STATE_LAST);
	} else {
		n = cds_wfs_pop_blocking(&ws);
		*last = -1;
	}
	return n ? caa_container_of(n, struct elem, s)->id : -1;
}
static int wfs_pop_all(int *ids)
{
	struct cds_wfs_head *h = cds_wfs_pop_all_blocking(&ws);
	struct cds_wfs_node *n, *nn;
	int i = 0;
	cds_wfs_for_each_blocking_safe(h, n, nn)
	{
		if (i < NODES)
			ids[i] = caa_container_of(n, struct elem, s)->id;
		i++;
	}
	return i;
}
static bool wfs_empty(void)
{
	return cds_wfs_empty(&ws);
}

static int lfs_push(int id)
{
	cds_lfs_node_init(&pool[id].ls);
	return cds_lfs_push(&ls, &pool[id].ls);
}
static int lfs_pop(int *last)
{
	struct cds_lfs_node *n = cds_lfs_pop_blocking(&ls);
	*last = -1;
	return n ? caa_container_of(n, struct elem, ls)->id : -1;
}
static int lfs_pop_all(int *ids)
{
	struct cds_lfs_head *h = cds_lfs_pop_all_blocking(&ls);
	struct cds_lfs_node *n, *nn;
	int i = 0;
	cds_lfs_for_each_safe(h, n, nn)
	{
		if (i < NODES)
			ids[i] = caa_container_of(n, struct elem, ls)->id;
		i++;
	}
	return i;
}
static bool lfs_empty(void)
{
	return cds_lfs_empty(&ls);
}

static const struct stack_ops wfs_ops = { "wfs", wfs_push, wfs_pop, wfs_pop_all, wfs_empty };
static const struct stack_ops lfs_ops = { "lfs", lfs_push, lfs_pop, lfs_pop_all, lfs_empty };

static void stack_step(const struct stack_ops *o)
{
	struct deq *m = &st_m;
	unsigned what = below(6);
	int id, last, had = m->n;

	if (what < 3) {
		if ((id = free_elem()) < 0)
			return;
		int r = o->push(id);
		MCHECK(r == (had != 0), "%s push returned %d with %d pushed", o->name, r, had);
		d_push_front(m, id);
		where[id] = 0;
	} else if (what < 5) {
		int got = o->pop(&last);
		int want = had ? d_pop_front(m) : -1;
		MCHECK(got == want, "%s pop gave %d, the model's top %d", o->name, got, want);
		if (had && last >= 0)
			MCHECK(last == (had == 1), "%s pop with state: LAST %d with %d before",
			       o->name, last, had);
		if (want >= 0)
			where[want] = -1;
	} else {
		int ids[NODES];
		int n = o->pop_all(ids);
		MCHECK(n == had, "%s pop_all gave %d, the model held %d", o->name, n, had);
		for (int i = 0; i < n && i < had; i++)
			MCHECK(ids[i] == m->v[i], "%s pop_all: element %d is %d, the model's %d",
			       o->name, i, ids[i], m->v[i]);
		for (int k = 0; k < had; k++)
			where[m->v[k]] = -1;
		m->n = 0;
	}
	MCHECK(o->empty() == (m->n == 0), "%s empty()", o->name);
}

/* ---- rculfqueue: a dequeued element is reused only after a grace period ---- */

static struct cds_lfq_queue_rcu lq;
static struct deq lq_m;
static bool cooling[NODES];

static void lfq_step(void)
{
	struct deq *m = &lq_m;
	unsigned what = below(6);
	int id;

	switch (what) {
	case 0:
	case 1:
	case 2:
		if ((id = free_elem()) < 0)
			break;
		cds_lfq_node_init_rcu(&pool[id].lq);
		urcu_memb_read_lock();
		cds_lfq_enqueue_rcu(&lq, &pool[id].lq);
		urcu_memb_read_unlock();
		d_push_back(m, id);
		where[id] = 0;
		break;
	case 3:
	case 4: {
		urcu_memb_read_lock();
		struct cds_lfq_node_rcu *n = cds_lfq_dequeue_rcu(&lq);
		urcu_memb_read_unlock();
		int got = n ? caa_container_of(n, struct elem, lq)->id : -1;
		int want = m->n ? d_pop_front(m) : -1;
		MCHECK(got == want, "lfq dequeue gave %d, the model's front %d", got, want);
		if (want >= 0) {
			where[want] = NODES; /* not free until a grace period has passed */
			cooling[want] = true;
		}
		break;
	}
	case 5:
		urcu_memb_synchronize_rcu();
		for (int i = 0; i < NODES; i++)
			if (cooling[i]) {
				cooling[i] = false;
				where[i] = -1;
			}
		if (below(8) == 0) {
			int e = cds_lfq_destroy_rcu(&lq);
			MCHECK(e == (m->n ? -EPERM : 0), "lfq destroy returned %d with %d queued",
			       e, m->n);
			if (e == 0) {
				urcu_memb_barrier(); /* the placeholders it retired */
				cds_lfq_init_rcu(&lq, urcu_memb_call_rcu);
			}
		}
		break;
	}
}

static void run_sequential(unsigned long long seed, unsigned long nops)
{
	w.seed = seed;
	gt_model_seed(&rng, seed, 17);
	reset_pool();
	for (int i = 0; i < 2; i++) {
		cds_wfcq_init(&wq_h[i], &wq_t[i]);
		wq_m[i].n = 0;
	}
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++)
		wfcq_step();
	for (int i = 0; i < 2; i++) {
		while (cds_wfcq_dequeue_blocking(&wq_h[i], &wq_t[i]))
			;
		cds_wfcq_destroy(&wq_h[i], &wq_t[i]);
	}
	reset_pool();
	cds_wfs_init(&ws);
	st_m.n = 0;
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++)
		stack_step(&wfs_ops);
	cds_wfs_destroy(&ws);
	reset_pool();
	cds_lfs_init(&ls);
	st_m.n = 0;
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++)
		stack_step(&lfs_ops);
	cds_lfs_destroy(&ls);
	reset_pool();
	memset(cooling, 0, sizeof(cooling));
	cds_lfq_init_rcu(&lq, urcu_memb_call_rcu);
	lq_m.n = 0;
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++)
		lfq_step();
	urcu_memb_read_lock();
	while (cds_lfq_dequeue_rcu(&lq))
		;
	urcu_memb_read_unlock();
	urcu_memb_synchronize_rcu();
	MCHECK(cds_lfq_destroy_rcu(&lq) == 0, "lfq destroy of the emptied queue failed");
	urcu_memb_barrier();
}

TEST(sequential_calls_match_the_models)
{
	urcu_memb_register_thread();
	gt_model_run_seeds(run_sequential, 24, 6000, 1, 0);
	urcu_memb_unregister_thread();
}

/* ---- producers and one consumer: FIFO per producer, each element once ---- */

enum { PRODUCERS = 2, PER = 100000 };
struct pelem {
	unsigned producer, seq;
	struct cds_wfcq_node q;
	struct cds_lfq_node_rcu lq;
	struct rcu_head rh;
};
static struct pelem *ppool;
static int conc_kind; /* 0 wfcq dequeue, 1 wfcq splice, 2 rculfqueue */
static struct cds_wfcq_head cq_h;
static struct cds_wfcq_tail cq_t;
static struct cds_lfq_queue_rcu clq;
static unsigned producers_done;

static void nop_free(struct rcu_head *h)
{
	(void)h; /* pool memory */
}

static void *producer(void *arg)
{
	unsigned p = (unsigned)(uintptr_t)arg;
	urcu_memb_register_thread();
	for (unsigned k = 0; k < PER; k++) {
		struct pelem *e = &ppool[p * PER + k];
		e->producer = p;
		e->seq = k;
		if (conc_kind < 2) {
			cds_wfcq_node_init(&e->q);
			cds_wfcq_enqueue(&cq_h, &cq_t, &e->q);
		} else {
			cds_lfq_node_init_rcu(&e->lq);
			urcu_memb_read_lock();
			cds_lfq_enqueue_rcu(&clq, &e->lq);
			urcu_memb_read_unlock();
		}
	}
	/* Release: every enqueue of this producer before the consumer's acquire of the count. */
	__atomic_fetch_add(&producers_done, 1, __ATOMIC_RELEASE);
	urcu_memb_unregister_thread();
	return NULL;
}

static unsigned next_seq[PRODUCERS], order_errors, taken;

static void took(const struct pelem *e)
{
	if (e->seq != next_seq[e->producer] && order_errors++ < 5)
		fprintf(stderr, "  kind %d: producer %u's element %u came out when %u was due\n",
			conc_kind, e->producer, e->seq, next_seq[e->producer]);
	next_seq[e->producer] = e->seq + 1;
	taken++;
}

static void run_concurrent(int kind)
{
	pthread_t th[PRODUCERS];

	conc_kind = kind;
	producers_done = 0;
	order_errors = taken = 0;
	memset(next_seq, 0, sizeof(next_seq));
	if (kind < 2)
		cds_wfcq_init(&cq_h, &cq_t);
	else
		cds_lfq_init_rcu(&clq, urcu_memb_call_rcu);
	for (unsigned p = 0; p < PRODUCERS; p++)
		REQUIRE(pthread_create(&th[p], NULL, producer, (void *)(uintptr_t)p) == 0);
	for (;;) {
		/* Acquire: pairs with the producers' release; an empty queue after it is final. */
		bool done = __atomic_load_n(&producers_done, __ATOMIC_ACQUIRE) == PRODUCERS;
		bool got = false;
		if (kind == 0) {
			struct cds_wfcq_node *n = cds_wfcq_dequeue_blocking(&cq_h, &cq_t);
			if (n) {
				took(caa_container_of(n, struct pelem, q));
				got = true;
			}
		} else if (kind == 1) {
			struct __cds_wfcq_head h;
			struct cds_wfcq_tail t;
			struct cds_wfcq_node *n, *nn;
			__cds_wfcq_init(&h, &t);
			/* The one consumer: no other dequeuer or splicer to exclude. */
			if (__cds_wfcq_splice_blocking(&h, &t, &cq_h, &cq_t) !=
			    CDS_WFCQ_RET_SRC_EMPTY) {
				__cds_wfcq_for_each_blocking_safe(&h, &t, n, nn)
					took(caa_container_of(n, struct pelem, q));
				got = true;
			}
		} else {
			urcu_memb_read_lock();
			struct cds_lfq_node_rcu *n = cds_lfq_dequeue_rcu(&clq);
			urcu_memb_read_unlock();
			if (n) {
				struct pelem *e = caa_container_of(n, struct pelem, lq);
				took(e);
				urcu_memb_call_rcu(&e->rh, nop_free);
				got = true;
			}
		}
		if (!got && done)
			break;
	}
	for (unsigned p = 0; p < PRODUCERS; p++)
		pthread_join(th[p], NULL);
	CHECK_MSG(order_errors == 0 && taken == PRODUCERS * PER,
		  "kind %d: %u order errors, %u of %u taken", kind, order_errors, taken,
		  PRODUCERS * PER);
	for (unsigned p = 0; p < PRODUCERS; p++)
		CHECK_MSG(next_seq[p] == PER, "kind %d: producer %u ended at %u", kind, p,
			  next_seq[p]);
	if (kind < 2) {
		CHECK(cds_wfcq_empty(&cq_h, &cq_t));
		cds_wfcq_destroy(&cq_h, &cq_t);
	} else {
		urcu_memb_barrier();
		CHECK(cds_lfq_destroy_rcu(&clq) == 0);
	}
}

TEST(concurrent_producers_keep_their_order)
{
	ppool = calloc(PRODUCERS * PER, sizeof(*ppool));
	REQUIRE(ppool);
	urcu_memb_register_thread();
	for (int kind = 0; kind < 3; kind++)
		run_concurrent(kind);
	urcu_memb_unregister_thread();
	urcu_memb_barrier();
	free(ppool);
}

GT_MAIN()
