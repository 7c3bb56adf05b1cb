/* SPDX-License-Identifier: MIT */
/*
 * The segmented callback list (src/engine/segcb.h), driven alone, with no thread: a grace-period
 * sequence whose value the test sets by hand stands for the grace periods. Checks the rules
 * segcb.h states: order (chains in the order queued, within a segment, across segments, past a
 * segment's chain slots), nothing taken before its cookie completes (also when every segment is
 * in use and the last one takes a later cookie), and the bookkeeping the worker reads (first
 * cookie and time, last cookie, empty).
 */
#include <stdlib.h>
#include <string.h>

#include "core/gp.h"
#include "engine/segcb.h"
#include "gtest_lite.h"

#define MAXN 4096
static struct rcu_head nodes[MAXN];
static int nnodes;

/* A chain of k new nodes, in order; returns its head. */
static struct rcu_head *chain(int k)
{
	struct rcu_head *h = NULL, **t = &h;
	for (int i = 0; i < k; i++) {
		REQUIRE(nnodes < MAXN);
		struct rcu_head *n = &nodes[nnodes++];
		n->next = NULL;
		*t = n;
		t = &n->next;
	}
	return h;
}

/* Walk the ready chains in order; return how many nodes, checking they are consecutive from
 * *expect (node indexes). */
static int walk(struct rcu_head **ready, unsigned int n, int *expect, int *bad)
{
	int count = 0;
	for (unsigned int c = 0; c < n; c++)
		for (struct rcu_head *h = ready[c]; h; h = h->next) {
			if (h - nodes != *expect)
				*bad = 1;
			(*expect)++;
			count++;
		}
	return count;
}

static struct grace__gp gp;
static struct rcu_head *ready[GRACE__SEGCB_MAX_READY];

static void gp_set(uint64_t seq)
{
	gp.seq = seq;
}

/* Grace period k complete (cookies are multiples of 4: GRACE__SEQ_STATE_MASK is 3). */
#define GP(k) ((uint64_t)(k)*4)

TEST(order_within_and_across_segments)
{
	struct grace__segcb s;
	int expect = 0, bad = 0;

	memset(&s, 0, sizeof(s));
	nnodes = 0;
	gp_set(0);
	CHECK(grace__segcb_empty(&s));
	grace__segcb_enqueue(&s, chain(3), GP(1), 100);
	grace__segcb_enqueue(&s, chain(2), GP(1), 200); /* same cookie: same segment */
	grace__segcb_enqueue(&s, chain(4), GP(2), 300);
	CHECK(s.nseg == 2);
	CHECK(grace__segcb_first_cookie(&s) == GP(1) && grace__segcb_first_time(&s) == 100);
	CHECK(grace__segcb_last_cookie(&s) == GP(2));
	CHECK(grace__segcb_take_ready(&s, &gp, ready) == 0); /* nothing complete */
	gp_set(GP(1));
	unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
	CHECK(n == 2 && walk(ready, n, &expect, &bad) == 5 && !bad);
	CHECK(grace__segcb_first_cookie(&s) == GP(2) && grace__segcb_first_time(&s) == 300);
	gp_set(GP(3));
	n = grace__segcb_take_ready(&s, &gp, ready);
	CHECK(n == 1 && walk(ready, n, &expect, &bad) == 4 && !bad);
	CHECK(grace__segcb_empty(&s));
}

TEST(every_segment_in_use_waits_for_the_later_cookie)
{
	struct grace__segcb s;
	int expect = 0, bad = 0;

	memset(&s, 0, sizeof(s));
	nnodes = 0;
	gp_set(0);
	for (int k = 1; k <= GRACE__SEGCB_NSEG + 3; k++)
		grace__segcb_enqueue(&s, chain(1), GP(k), (uint64_t)k);
	CHECK(s.nseg == GRACE__SEGCB_NSEG);
	CHECK(grace__segcb_last_cookie(&s) == GP(GRACE__SEGCB_NSEG + 3));
	/* The first NSEG-1 segments complete one by one; the last waits for the latest cookie,
	 * never for an earlier one. */
	for (int k = 1; k < GRACE__SEGCB_NSEG; k++) {
		gp_set(GP(k));
		unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
		CHECK_MSG(n == 1, "grace period %d: %u chains", k, n);
		walk(ready, n, &expect, &bad);
	}
	gp_set(GP(GRACE__SEGCB_NSEG + 2));
	CHECK_MSG(grace__segcb_take_ready(&s, &gp, ready) == 0,
		  "a merged segment was taken before its latest cookie");
	gp_set(GP(GRACE__SEGCB_NSEG + 3));
	unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
	CHECK(walk(ready, n, &expect, &bad) == 4 && !bad);
	CHECK(grace__segcb_empty(&s));
}

TEST(more_chains_than_slots_stay_in_order)
{
	struct grace__segcb s;
	int expect = 0, bad = 0;

	memset(&s, 0, sizeof(s));
	nnodes = 0;
	gp_set(0);
	for (int i = 0; i < 3 * GRACE__SEGCB_NCHAIN; i++)
		grace__segcb_enqueue(&s, chain(1 + i % 3), GP(1), 0);
	CHECK(s.nseg == 1);
	gp_set(GP(1));
	unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
	int total = walk(ready, n, &expect, &bad);
	CHECK_MSG(!bad, "chains queued past the slots came out of order");
	CHECK(total == nnodes);
}

/* Random cookies that never decrease, random completions: nothing is ever taken early, every
 * node comes out once, in order. */
TEST(random_sequences_keep_the_rules)
{
	unsigned int seed = 42;

	for (int round = 0; round < 200; round++) {
		struct grace__segcb s;
		int expect = 0, bad = 0, out = 0;
		uint64_t cookie = GP(1), done = 0;
		uint64_t cookie_of[MAXN];

		memset(&s, 0, sizeof(s));
		nnodes = 0;
		gp_set(0);
		for (int step = 0; step < 300 && nnodes < MAXN - 8; step++) {
			if (rand_r(&seed) % 3 == 0)
				cookie += GP(1 + rand_r(&seed) % 2);
			int first = nnodes;
			grace__segcb_enqueue(&s, chain(1 + (int)(rand_r(&seed) % 4)), cookie, 0);
			for (int i = first; i < nnodes; i++)
				cookie_of[i] = cookie;
			if (rand_r(&seed) % 4 == 0) {
				done += GP(rand_r(&seed) % 3);
				gp_set(done);
				unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
				for (unsigned int c = 0; c < n; c++)
					for (struct rcu_head *h = ready[c]; h; h = h->next)
						if ((int64_t)(done - cookie_of[h - nodes]) < 0)
							bad = 2; /* taken before its cookie completed */
				out += walk(ready, n, &expect, &bad);
			}
		}
		gp_set(cookie);
		unsigned int n = grace__segcb_take_ready(&s, &gp, ready);
		out += walk(ready, n, &expect, &bad);
		CHECK_MSG(bad == 0, "round %d: %s", round,
			  bad == 2 ? "a chain was taken before its cookie completed"
				   : "chains came out of order");
		CHECK_MSG(out == nnodes && grace__segcb_empty(&s), "round %d: %d of %d nodes",
			  round, out, nnodes);
	}
}

GT_MAIN()
