/* SPDX-License-Identifier: MIT */
/*
 * The pace of the grace periods a retiring thread steps (engine/free.c, step_len()), as
 * docs/api.md promises it for rcu_retire() and free_rcu(): a thread starts one only once it has
 * sealed at least 16 slots (GRACE_STEP_GARBAGE, when smaller; a pointer is one slot, an entry
 * with its function three) that no grace period started since covers, so it pays at most one
 * membarrier(2) per 16 of its slots, however cheap a membarrier is; and its garbage still
 * goes, whatever the pace. QSBR's least step is 256 slots.
 * The bound counts every membarrier the process makes meanwhile (grace_membarrier_calls()):
 * the worker's, on its own pace, get a slack of one per 64 entries. A step on every slow call
 * (one per 7 pointers) breaks it. Without membarrier (fence mode) the count is 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <grace/grace.h>

#include "gtest_lite.h"

#define N 64000

static unsigned long frees;

static void count_free(void *p)
{
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
	free(p);
}

enum how { RETIRE, RETIRE_FN, FREE_RCU };

static void run(bool in_section, enum how how)
{
	struct obj {
		struct rcu_head rh;
		char pad[16];
	};
	unsigned long f0 = __atomic_load_n(&frees, __ATOMIC_RELAXED);

	rcu_register_thread();
	uint64_t m0 = grace_membarrier_calls();
	for (int i = 0; i < N; i++) {
		if (in_section)
			rcu_read_lock();
		if (how == FREE_RCU) {
			struct obj *o = (struct obj *)malloc(sizeof(*o));
			REQUIRE(o);
			free_rcu(o, rh);
		} else if (how == RETIRE) {
			rcu_retire(malloc(32));
		} else {
			rcu_retire_fn(count_free, malloc(32));
		}
		if (in_section)
			rcu_read_unlock();
	}
	uint64_t m = grace_membarrier_calls() - m0;
	unsigned long slots = how == RETIRE_FN ? 3ul * N : (unsigned long)N;
	printf("  %d entries, %lu slots (%s, %s): %llu membarrier calls\n", N, slots,
	       how == FREE_RCU ? "free_rcu"
	       : how == RETIRE ? "rcu_retire"
			       : "rcu_retire_fn",
	       in_section ? "inside sections" : "outside", (unsigned long long)m);
	CHECK_MSG(m <= slots / 16 + N / 64,
		  "%llu membarrier calls for %lu slots: more than one per 16 slots",
		  (unsigned long long)m, slots);
	free_rcu_barrier();
	if (how == RETIRE_FN)
		CHECK(__atomic_load_n(&frees, __ATOMIC_RELAXED) - f0 == N);
	rcu_unregister_thread();
}

TEST(a_retiring_thread_pays_at_most_one_membarrier_per_16_slots)
{
	run(false, RETIRE);
	run(true, RETIRE);
	run(false, RETIRE_FN);
	run(true, RETIRE_FN);
}

TEST(free_rcu_pays_at_most_one_membarrier_per_16_slots)
{
	run(false, FREE_RCU);
	run(true, FREE_RCU);
}

/* QSBR (docs/api.md, rcu_retire(), "Grace periods"): a thread steps one grace period every 256
 * slots it seals, not every 16: each one costs the other online threads their quiescent
 * states' lines. Counted as the flavor's grace periods (grace_qsbr_callback_stats()) over N
 * retires by a thread online alone, with a quiescent state after each; the engine's own, on
 * its pace, get a slack of one per 512 retires. At least one per GRACE_STEP_GARBAGE (1024)
 * slots, or the thread's garbage would not go. Not with GRACE_STEP_GARBAGE below 256, which
 * wins. */
TEST(qsbr_steps_one_grace_period_per_256_slots)
{
	struct grace_cb_stats st;
	const char *e = getenv("GRACE_STEP_GARBAGE");

	if (e && *e && atoi(e) > 0 && atoi(e) < 256) {
		printf("  skipped: GRACE_STEP_GARBAGE=%s wins over the least step\n", e);
		return;
	}
	qsbr_register_thread();
	qsbr_retire(malloc(32)); /* the thread's cache, before the count */
	grace_qsbr_callback_stats(&st);
	uint64_t g0 = st.grace_periods;
	for (int i = 0; i < N; i++) {
		qsbr_retire(malloc(32));
		qsbr_quiescent_state();
	}
	grace_qsbr_callback_stats(&st);
	uint64_t g = st.grace_periods - g0;
	qsbr_unregister_thread();
	free_qsbr_barrier();
	printf("  %d retires under QSBR: %llu grace periods\n", N, (unsigned long long)g);
	CHECK_MSG(g <= N / 256 + N / 512, "%llu grace periods for %d slots: more than one per 256",
		  (unsigned long long)g, N);
	CHECK_MSG(g >= N / 1024 / 2, "%llu grace periods for %d slots: the steps stopped",
		  (unsigned long long)g, N);
}

GT_MAIN()
