/* SPDX-License-Identifier: MIT */
/*
 * rcu_retire(), rcu_retire_fn() and the free hooks, as docs/api.md promises them:
 *  - legal inside a read-side section, and nothing is freed while a reader may hold it;
 *  - the frees run on the retiring thread, at its later calls, at most 32 per call;
 *  - rcu_retire_fn() calls its function once per entry, and a function that retires more
 *    (a deleter retiring its children) nests;
 *  - grace_*_set_free_hook() is taken before the first queued object, -EBUSY after; the hook
 *    gets every object of free_rcu(), free_rcu_mightsleep() and rcu_retire();
 *  - a thread that exits hands its retired objects over; free_rcu_barrier() waits for them;
 *  - while a reader holds a grace period, each waiting object costs a slot, not a block;
 *  - a new block, allocated inside a section, never makes glibc consolidate its fast bins;
 *  - inside a section or a callback with no memory left, the call returns (never waits) and
 *    says so; outside both it waits for a grace period and frees at once;
 *  - QSBR and srcu twins.
 * The hooks count frees per thread; the allocation failures come from tests/common/fail_alloc.h
 * (the calling thread's malloc() and its kin fail on demand; not under the sanitizers).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <grace/grace.h>

#include "gtest_lite.h"

#define MAGIC 0x2e71eeeu
struct node {
	uint32_t magic;
	uint32_t freed;
	struct node *child[2];
};

static pthread_t owner;
static __thread unsigned int my_frees;
static unsigned long frees_by_owner, frees_total, fn_calls, qsbr_frees, srcu_frees;
static int freed_twice;

static struct node *node_new(void)
{
	struct node *n = (struct node *)calloc(1, sizeof(*n));
	REQUIRE(n);
	n->magic = MAGIC;
	return n;
}

/* Every object of the default flavor reaches here (grace_rcu_set_free_hook). Freed memory is
 * released for real only at the end of a test (leak it meanwhile: the magic check needs the
 * bytes to stay readable), so a second free of the same object is seen, not a crash. */
static struct node *graveyard;
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;
static void bury(struct node *n)
{
	if (__atomic_exchange_n(&n->freed, 1u, __ATOMIC_RELAXED))
		__atomic_store_n(&freed_twice, 1, __ATOMIC_RELAXED);
	n->magic = 0;
	pthread_mutex_lock(&grave_lock);
	n->child[0] = graveyard;
	graveyard = n;
	pthread_mutex_unlock(&grave_lock);
}
static void empty_graveyard(void)
{
	pthread_mutex_lock(&grave_lock);
	while (graveyard) {
		struct node *nx = graveyard->child[0];
		free(graveyard);
		graveyard = nx;
	}
	pthread_mutex_unlock(&grave_lock);
}

static void rcu_hook(void *p)
{
	struct node *n = (struct node *)p;

	my_frees++;
	__atomic_fetch_add(&frees_total, 1, __ATOMIC_RELAXED);
	if (pthread_equal(pthread_self(), owner))
		__atomic_fetch_add(&frees_by_owner, 1, __ATOMIC_RELAXED);
	/* A node that still holds a child (the_free_hook_may_retire_more): the hook retires it,
	 * as a pool's release of a composite object would, before the node goes. (A node freed
	 * before holds the graveyard's link there: bury() reports it instead.) */
	struct node *child = n->child[0];
	if (child && !__atomic_load_n(&n->freed, __ATOMIC_RELAXED)) {
		n->child[0] = NULL;
		rcu_retire(child);
	}
	bury(n);
}
static void other_hook(void *p)
{
	free(p);
}
static void qsbr_hook(void *p)
{
	__atomic_fetch_add(&qsbr_frees, 1, __ATOMIC_RELAXED);
	bury((struct node *)p);
}
static void srcu_hook(void *p)
{
	__atomic_fetch_add(&srcu_frees, 1, __ATOMIC_RELAXED);
	bury((struct node *)p);
}

static void reset(void)
{
	owner = pthread_self();
	frees_by_owner = frees_total = fn_calls = 0;
	freed_twice = 0;
}

/* First: the hooks are set before any object of their flavor is queued (registered first,
 * runs first). */
static int hook_set; /* the default flavor's frees go through rcu_hook (this binary's first case) */
TEST(set_free_hook_before_the_first_object)
{
	hook_set = 1;
	CHECK(grace_rcu_set_free_hook(rcu_hook) == 0);
	CHECK(grace_rcu_set_free_hook(rcu_hook) == 0); /* the same again: fine */
	CHECK(grace_qsbr_set_free_hook(qsbr_hook) == 0);
}

/* ---- inside a section, and no early free ---- */

static struct node *gnode;
static int holding, release_holder, holder_saw_freed;
static void *holder(void *arg)
{
	(void)arg;
	rcu_read_lock();
	struct node *n = rcu_dereference(gnode);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release_holder, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC)
			__atomic_store_n(&holder_saw_freed, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	rcu_read_unlock();
	return NULL;
}

static void start_holder(pthread_t *t)
{
	holding = release_holder = holder_saw_freed = 0;
	REQUIRE(pthread_create(t, NULL, holder, NULL) == 0);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		usleep(1000);
}

TEST(retire_inside_a_section_frees_after_every_reader)
{
	pthread_t r;

	reset();
	gnode = node_new();
	start_holder(&r);
	rcu_read_lock();
	struct node *old = rcu_xchg_pointer(&gnode, node_new());
	rcu_retire(old); /* inside this thread's own section: legal, returns */
	rcu_read_unlock();
	/* Many more retires, so that blocks seal, grace periods run and the caller frees: old
	 * must not be among the frees while the holder runs. */
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 300000000ull) {
		for (int i = 0; i < 100; i++) {
			rcu_read_lock();
			rcu_retire(node_new());
			rcu_read_unlock();
		}
		usleep(1000);
	}
	bool early = __atomic_load_n(&old->freed, __ATOMIC_RELAXED) != 0;
	__atomic_store_n(&release_holder, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	free_rcu_barrier();
	CHECK_MSG(!early, "a retired object was freed while a reader held it");
	CHECK(!holder_saw_freed);
	CHECK_MSG(old->freed, "free_rcu_barrier() returned before the retired object was freed");
	CHECK(!freed_twice);
	free(gnode);
	empty_graveyard();
}

/* ---- where the frees run ---- */

TEST(retire_frees_on_the_calling_thread_at_most_32_per_call)
{
	unsigned int most = 0;
	unsigned long calls = 0;

	reset();
	uint64_t t0 = gt_now_ns();
	/* 20000 calls back to back, then (if no grace period has ended yet: a loaded machine)
	 * one every 100 us until the caller has freed, at most 10 s. */
	for (int i = 0; i < 20000 || (!__atomic_load_n(&frees_by_owner, __ATOMIC_RELAXED) &&
				      gt_now_ns() - t0 < 10000000000ull);
	     i++) {
		unsigned int before = my_frees;
		if (i >= 20000)
			usleep(100);
		rcu_retire(node_new());
		unsigned int n = my_frees - before;
		if (n > most && i < 60000) /* past 65536 waiting, a call that waits frees more */
			most = n;
		calls++;
	}
	unsigned long during = __atomic_load_n(&frees_by_owner, __ATOMIC_RELAXED);
	free_rcu_barrier();
	CHECK_MSG(most <= 32, "one rcu_retire() call freed %u objects (at most 32 promised)", most);
	CHECK_MSG(during > 0, "no object was freed by the calling thread's later calls");
	printf("  %lu of %lu freed by the caller's later calls (at most %u in one)\n", during,
	       calls, most);
	CHECK_MSG(__atomic_load_n(&frees_total, __ATOMIC_RELAXED) == calls, "%lu of %lu freed",
		  frees_total, calls);
	CHECK(!freed_twice);
	empty_graveyard();
}

/* ---- the inline run: GRACE_RETIRE_RUN objects between two out-of-line calls ---- */

/* docs/build.md, GRACE_RETIRE_RUN: rcu_retire() and rcu_retire_fn() append that many objects
 * inline between two out-of-line calls (2 unset or out of range). Where the inline path is
 * closed (debug and TSan builds, no membarrier: docs/api.md, rcu_retire(), "Misuse"), every
 * call is out of line. */
static unsigned int expected_run(void)
{
#if GRACE__DEBUG || GRACE__TSAN_MODE
	return 0;
#else
	const char *e = getenv("GRACE_RETIRE_RUN");
	char *end;
	long v;

	if (strcmp(grace_membarrier_mode(), "membarrier") != 0)
		return 0;
	if (!e || !*e)
		return 2;
	v = strtol(e, &end, 10);
	return *end || v < 0 || v > 32 ? 2u : (unsigned int)v;
#endif
}

static void counted_fn(void *p)
{
	bury((struct node *)p);
}

/* How many calls in a row stay inline between two out-of-line calls, most often, over 20000
 * calls. A call stayed inline when the thread's window on its block (the inline path's
 * struct grace__retire, <grace/internal/retire.h>) only moved its count by the call's slots;
 * an out-of-line call reopens the window (a new limit) or leaves it closed. Runs of 0 count
 * only if no other occurs: the call after a block was sealed goes out of line too, to start
 * the next block. */
static unsigned int inline_run(bool fn)
{
	unsigned long hist[64] = { 0 };
	unsigned int streak = 0;
	uint32_t k = fn ? 3u : 1u;

	for (int i = 0; i < 20000; i++) {
		struct grace__retire *t = grace__memb_retire;
		/* Relaxed loads: a thread that takes the cache (its monitor) writes n and lim too.
		 * A call during such a take counts as out of line; the run that occurs most does
		 * not move. */
		uint32_t n0 = t ? __atomic_load_n(&t->n, __ATOMIC_RELAXED) : 0;
		uint32_t l0 = t ? __atomic_load_n(&t->lim, __ATOMIC_RELAXED) : 0;

		if (fn)
			rcu_retire_fn(counted_fn, node_new());
		else
			rcu_retire(node_new());
		if (t && grace__memb_retire == t && l0 &&
		    __atomic_load_n(&t->lim, __ATOMIC_RELAXED) == l0 &&
		    __atomic_load_n(&t->n, __ATOMIC_RELAXED) == n0 + k) {
			streak++;
		} else {
			if (streak < 64)
				hist[streak]++;
			streak = 0;
		}
	}
	unsigned int best = 0;
	for (unsigned int r = 1; r < 64; r++)
		if (hist[r] > (best ? hist[best] : 0ul))
			best = r;
	return best;
}

TEST(the_inline_run_is_GRACE_RETIRE_RUN_objects)
{
	unsigned int run = expected_run();

	/* Run alone (ctest's contract_retire_run*), the first test did not set the hook. */
	(void)grace_rcu_set_free_hook(rcu_hook);
	reset();
	unsigned int r = inline_run(false), rf = inline_run(true);
	free_rcu_barrier();
	printf("  GRACE_RETIRE_RUN %u: %u calls inline between two out of line (rcu_retire()), %u "
	       "(rcu_retire_fn())\n",
	       run, r, rf);
	CHECK_MSG(r == run, "rcu_retire(): %u calls inline between two out of line; %u expected", r,
		  run);
	CHECK_MSG(rf == run,
		  "rcu_retire_fn(): %u calls inline between two out of line; %u expected", rf, run);
	CHECK(!freed_twice);
	empty_graveyard();
}

/* docs/api.md (rcu_retire(), "Cost"): the out-of-line call that seals the thread's block starts
 * the next one from the thread's empty block at hand, so the call after it stays inline. A call
 * sealed when its window moved to another block or closed; the next call stayed inline when
 * the window only moved its count. The empty block is at hand whenever an older block was
 * emptied since the last seal: in this loop, where the thread drives its own grace periods
 * (it is the only reader, outside any section), most of the time; never when a seal leaves
 * the window closed until the next call. */
static void after_seal(bool fn, unsigned long *seals, unsigned long *inline_after)
{
	uint32_t k = fn ? 3u : 1u;
	bool sealed = false;

	*seals = *inline_after = 0;
	for (int i = 0; i < 20000; i++) {
		struct grace__retire *t = grace__memb_retire;
		/* Relaxed loads: as in inline_run(). */
		uint32_t n0 = t ? __atomic_load_n(&t->n, __ATOMIC_RELAXED) : 0;
		uint32_t l0 = t ? __atomic_load_n(&t->lim, __ATOMIC_RELAXED) : 0;
		void **s0 = t ? t->slot : NULL;

		if (fn)
			rcu_retire_fn(counted_fn, node_new());
		else
			rcu_retire(node_new());
		if (!t || grace__memb_retire != t) {
			sealed = false;
			continue;
		}
		uint32_t n1 = __atomic_load_n(&t->n, __ATOMIC_RELAXED);
		uint32_t l1 = __atomic_load_n(&t->lim, __ATOMIC_RELAXED);
		bool stayed = l0 && l1 == l0 && n1 == n0 + k && t->slot == s0;

		if (sealed) {
			(*seals)++;
			*inline_after += stayed;
		}
		/* This call went out of line from an open window and left it on another block, or
		 * closed. (From a closed window, the call opens the next block: not a seal.) */
		sealed = !stayed && l0 && s0 && (t->slot != s0 || l1 == 0);
	}
}

TEST(the_call_after_a_seal_stays_inline)
{
	unsigned long seals, after, seals_fn, after_fn;

	if (expected_run() == 0) {
		printf("  skipped: the inline path is closed here (every call out of line)\n");
		return;
	}
	(void)grace_rcu_set_free_hook(rcu_hook);
	reset();
	after_seal(false, &seals, &after);
	after_seal(true, &seals_fn, &after_fn);
	free_rcu_barrier();
	printf("  after %lu seals, %lu next calls stayed inline (rcu_retire()); %lu of %lu "
	       "(rcu_retire_fn())\n",
	       seals, after, after_fn, seals_fn);
	CHECK_MSG(seals > 20 && seals_fn > 20, "too few seals to tell: %lu, %lu", seals, seals_fn);
	/* A quarter: most seals find the empty block at hand (it was about 9 in 10 for
	 * rcu_retire() and 2 in 3 for rcu_retire_fn() where this was written); without it, none. */
	CHECK_MSG(after * 4 >= seals,
		  "rcu_retire(): the call after a seal stayed inline %lu times in %lu", after,
		  seals);
	CHECK_MSG(after_fn * 4 >= seals_fn,
		  "rcu_retire_fn(): the call after a seal stayed inline %lu times in %lu", after_fn,
		  seals_fn);
	CHECK(!freed_twice);
	empty_graveyard();
}

/* ---- memory while a grace period is held up ---- */

/* docs/api.md (free_rcu(), "Memory while a grace period is held up"): with a reader stuck in
 * its section, each retired object costs one slot of a full block, about 8.5 bytes, not a
 * block sealed at every step's length (16 slots: 65 bytes an object). Counted as the heap
 * that glibc's arenas hand out (mallinfo2(), every arena), around retires of objects
 * allocated before; the debug library keeps a set of queued pointers and the sanitizers
 * have heaps of their own, so it runs in release builds only. */
TEST(a_held_grace_period_costs_one_slot_per_waiting_object)
{
#if !defined(GRACE_DEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	enum { N = 40000 }; /* under the per-thread bound of 65536 */
	static struct node *objs[N];
	pthread_t r;

	reset();
	gnode = node_new();
	for (int i = 0; i < N; i++)
		objs[i] = node_new();
	rcu_retire(node_new()); /* this thread's cache exists before the count */
	start_holder(&r);
	struct mallinfo2 m0 = mallinfo2();
	for (int i = 0; i < N; i++) {
		rcu_read_lock();
		rcu_retire(objs[i]);
		rcu_read_unlock();
	}
	struct mallinfo2 m1 = mallinfo2();
	bool early = false;
	for (int i = 0; i < N; i++)
		early |= __atomic_load_n(&objs[i]->freed, __ATOMIC_RELAXED) != 0;
	__atomic_store_n(&release_holder, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	free_rcu_barrier();
	double per = ((double)m1.uordblks - (double)m0.uordblks) / N;
	printf("  %.1f bytes of heap per waiting object\n", per);
	CHECK_MSG(!early, "an object was freed while the reader held the grace period");
	CHECK_MSG(per <= 12.0,
		  "%.1f bytes of heap per object waiting for a held grace period (a slot: 8.5)",
		  per);
	CHECK(!freed_twice);
	free(gnode);
	empty_graveyard();
#else
	printf("  skipped: the debug library and the sanitizers add heaps of their own\n");
#endif
}

/* ---- a new block and glibc's fast bins ---- */

/* docs/api.md (free_rcu(), "Per-thread blocks"): a block is 1000 bytes, a request glibc serves
 * from its small bins; one of 1 KiB or more first consolidates every fast-bin chunk of the
 * arena, which after millions of small frees took 60 ms inside the retiring thread's section.
 * Counted: the bytes in glibc's fast bins (mallinfo2().fsmblks) before and after a section
 * that retires 400 objects (three blocks and more, so at least two are new); a consolidation
 * empties them. glibc's allocator only: not under the sanitizers (heaps of their own) or the
 * debug library (a set of queued pointers that allocates). */
TEST(a_new_block_inside_a_section_leaves_glibc_fast_bins_alone)
{
#if !defined(GRACE_DEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
	defined(__GLIBC__)
	enum { K = 400, F = 20000 };
	static void *objs[K], *small[F];

	reset();
	/* The top of the heap keeps room for the new blocks: a request the top cannot serve
	 * consolidates the fast bins too, whatever its size. */
	REQUIRE(mallopt(M_TOP_PAD, 16 << 20) == 1);
	rcu_read_lock(); /* this thread is registered and its cache exists before the count */
	rcu_retire(node_new());
	rcu_read_unlock();
	free_rcu_barrier();
	for (int i = 0; i < K; i++)
		objs[i] = calloc(1, 200); /* above the fast bins' sizes; the hook sees a node */
	for (int i = 0; i < F; i++)
		small[i] = malloc(24);
	for (int i = 0; i < F; i++)
		free(small[i]); /* 7 to the thread cache, the rest to the fast bins */
	struct mallinfo2 m0 = mallinfo2();
	rcu_read_lock();
	for (int i = 0; i < K; i++)
		rcu_retire(objs[i]);
	rcu_read_unlock();
	struct mallinfo2 m1 = mallinfo2();
	printf("  fast bins: %zu bytes before the section, %zu after\n", m0.fsmblks, m1.fsmblks);
	CHECK_MSG(m0.fsmblks >= (size_t)F * 16, "the fast bins did not fill (%zu bytes)",
		  m0.fsmblks);
	CHECK_MSG(m1.fsmblks >= m0.fsmblks / 10 * 9,
		  "the section's new blocks consolidated glibc's fast bins (%zu -> %zu bytes)",
		  m0.fsmblks, m1.fsmblks);
	free_rcu_barrier();
	CHECK(!freed_twice);
	empty_graveyard();
#else
	printf("  skipped: glibc's own allocator only\n");
#endif
}

/* ---- rcu_retire_fn(), and a deleter that retires more ---- */

static void node_fn(void *p);
static void node_fn(void *p)
{
	struct node *n = (struct node *)p;
	__atomic_fetch_add(&fn_calls, 1, __ATOMIC_RELAXED);
	/* A tree's deleter: retire the children, then the node itself (to the hook). */
	for (int i = 0; i < 2; i++)
		if (n->child[i])
			rcu_retire_fn(node_fn, n->child[i]);
	n->child[0] = n->child[1] = NULL;
	rcu_retire(n);
}

TEST(retire_fn_runs_once_and_a_deleter_may_retire_more)
{
	unsigned long roots = 3000, nodes = 0;

	reset();
	for (unsigned long i = 0; i < roots; i++) {
		struct node *n = node_new();
		n->child[0] = node_new();
		n->child[1] = node_new();
		n->child[0]->child[0] = node_new();
		nodes += 4;
		rcu_read_lock();
		rcu_retire_fn(node_fn, n);
		rcu_read_unlock();
		if (i % 64 == 0)
			rcu_retire_fn(node_fn, NULL); /* NULL: nothing, fn not called */
	}
	/* A deleter run by a barrier's pass queues its children anew, after that barrier began:
	 * the next barrier waits for those (the contract: objects queued before the call). The
	 * deepest chain here is four entries long. */
	for (int k = 0; k < 5; k++)
		free_rcu_barrier();
	CHECK_MSG(fn_calls == nodes, "the function ran %lu times for %lu entries", fn_calls, nodes);
	CHECK_MSG(frees_total == nodes, "%lu of %lu nodes reached the free hook", frees_total,
		  nodes);
	CHECK(!freed_twice);
	empty_graveyard();
}

/* docs/api.md (grace_rcu_set_free_hook()): the hook runs "under the rules of rcu_retire_fn()'s
 * fn", whose retires only queue: here it retires the child each node still holds (rcu_hook),
 * on whatever thread frees the node, the retiring thread's own calls among them, where the call
 * holds its cache. Every node and child reaches the hook once. */
TEST(the_free_hook_may_retire_more)
{
	unsigned long nodes = 0;

	hook_set = 1;
	REQUIRE(grace_rcu_set_free_hook(rcu_hook) == 0); /* run alone: not set yet */
	reset();
	for (int i = 0; i < 3000; i++) {
		struct node *n = node_new();
		n->child[0] = node_new();
		nodes += 2;
		rcu_retire(n);
	}
	for (int k = 0; k < 3; k++)
		free_rcu_barrier(); /* a child retired by a barrier's pass: the next one */
	CHECK_MSG(frees_total == nodes, "%lu of %lu nodes reached the free hook", frees_total,
		  nodes);
	CHECK_MSG(frees_by_owner > 0, "no node was freed by the retiring thread's own calls");
	CHECK(!freed_twice);
	empty_graveyard();
}

/* ---- the hook gets free_rcu()'s and free_rcu_mightsleep()'s objects too; -EBUSY after ---- */

struct headed {
	struct node n;
	struct rcu_head rh;
};

static unsigned long headed_cbs;
static void headed_cb(struct rcu_head *rh)
{
	__atomic_fetch_add(&headed_cbs, 1, __ATOMIC_RELAXED);
	free(grace_container_of(rh, struct headed, rh));
}

TEST(the_hook_frees_every_path_and_is_fixed_once_used)
{
	reset();
	for (int i = 0; i < 1000; i++) {
		struct headed *h = (struct headed *)calloc(1, sizeof(*h));
		REQUIRE(h);
		h->n.magic = MAGIC;
		free_rcu(h, rh);
		free_rcu_mightsleep(node_new());
		rcu_retire(node_new());
	}
	free_rcu_barrier();
	CHECK_MSG(frees_total == 3000, "%lu of 3000 objects reached the hook", frees_total);
	CHECK(!freed_twice);
	CHECK(grace_rcu_set_free_hook(other_hook) == -EBUSY);
	CHECK(grace_rcu_set_free_hook(NULL) == -EBUSY);
	CHECK(grace_rcu_set_free_hook(rcu_hook) == 0);
	/* docs/api.md (grace_rcu_set_free_hook(), "Thread-safety"): callbacks are not affected:
	 * call_rcu()'s functions run, and nothing of theirs reaches the hook. */
	for (int i = 0; i < 100; i++) {
		struct headed *h = (struct headed *)calloc(1, sizeof(*h));
		REQUIRE(h);
		call_rcu(&h->rh, headed_cb);
	}
	rcu_barrier();
	unsigned long cbs = __atomic_load_n(&headed_cbs,
					    __ATOMIC_RELAXED); /* after rcu_barrier() */
	CHECK_MSG(cbs == 100, "%lu of 100 callbacks ran", cbs);
	CHECK_MSG(frees_total == 3000, "callbacks reached the hook: %lu objects", frees_total);
	empty_graveyard();
}

/* ---- rcu_barrier() and qsbr_barrier() wait for what threads' caches hold ---- */

static unsigned long fn_runs;
static void count_fn(void *p)
{
	__atomic_fetch_add(&fn_runs, 1, __ATOMIC_RELAXED);
	free(p);
}

static void *retire_and_stay(void *arg)
{
	int *go = (int *)arg;
	for (int i = 0; i < 300; i++) {
		rcu_retire_fn(count_fn, node_new());
		qsbr_retire_fn(count_fn, node_new());
	}
	__atomic_store_n(go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(go, __ATOMIC_ACQUIRE) != 2)
		usleep(1000); /* alive, its cache holding entries, until both barriers returned */
	return NULL;
}

TEST(rcu_barrier_waits_for_what_threads_hold)
{
	pthread_t t;
	int go = 0;

	fn_runs = 0;
	REQUIRE(pthread_create(&t, NULL, retire_and_stay, &go) == 0);
	while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) != 1)
		usleep(1000);
	rcu_barrier();
	unsigned long after_rcu = __atomic_load_n(&fn_runs, __ATOMIC_RELAXED);
	qsbr_barrier();
	unsigned long after_qsbr = __atomic_load_n(&fn_runs, __ATOMIC_RELAXED);
	__atomic_store_n(&go, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_MSG(after_rcu >= 300, "rcu_barrier() returned with %lu of the 300 rcu entries run",
		  after_rcu);
	CHECK_MSG(after_qsbr == 600, "qsbr_barrier() returned with %lu of 600 entries run",
		  after_qsbr);
}

/* ---- a thread that exits ---- */

static void *retire_and_exit(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++)
		rcu_retire(node_new());
	return NULL; /* with objects in its cache */
}

TEST(an_exiting_thread_hands_its_retired_objects_over)
{
	pthread_t t[4];

	reset();
	for (int i = 0; i < 4; i++)
		REQUIRE(pthread_create(&t[i], NULL, retire_and_exit, NULL) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	free_rcu_barrier();
	CHECK_MSG(frees_total == 2000, "%lu of 2000 retired objects freed", frees_total);
	CHECK(!freed_twice);
	empty_graveyard();
}

/* ---- no memory left inside a section: returns, says so ---- */

#include "fail_alloc.h"

/* A child that must return (exit 0, "child: returned" on its stderr) and report a dropped
 * object with the message report; and, unless NULL, must not print absent. */
static __attribute__((unused)) void check_returns_and_reports(void (*fn)(void *),
							      const char *report,
							      const char *absent)
{
	char out[4096];
	int st = gt_run_child(fn, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child did not return (status %#x): %s", st, out);
	CHECK_MSG(strstr(out, "child: returned"), "%s", out);
	CHECK_MSG(strstr(out, report), "no report of the dropped object: %s", out);
	CHECK_MSG(!absent || !strstr(out, absent), "%s", out);
}

static void *retire_without_memory(void *arg)
{
#ifdef GT_FAIL_ALLOC
	rcu_read_lock();
	fail_alloc = GT_FAIL_MALLOC;
	rcu_retire(arg); /* a new thread: no cache, no block, no carrier */
	fail_alloc = 0;
	rcu_read_unlock();
#endif
	(void)arg;
	return NULL;
}

static __attribute__((unused)) void no_memory_child(void *arg)
{
	pthread_t r, m;
	(void)arg;
	alarm(20); /* a call that waited would wait for its own section: never */
	gnode = node_new();
	start_holder(&r);
	struct node *old = rcu_xchg_pointer(&gnode, node_new());
	REQUIRE(pthread_create(&m, NULL, retire_without_memory, old) == 0);
	pthread_join(m, NULL);
	__atomic_store_n(&release_holder, 1, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	fprintf(stderr, "child: returned\n");
}

TEST(retire_without_memory_inside_a_section_returns_and_says_so)
{
#ifdef GT_FAIL_ALLOC
	check_returns_and_reports(no_memory_child,
				  "rcu_retire: out of memory inside a read-side section", NULL);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* docs/api.md (rcu_retire(), "Context"): outside a section and a callback, "with no memory it
 * waits for a grace period and frees at once, as free_rcu_mightsleep()"; rcu_retire_fn() is
 * rcu_retire() with fn in place of free(). A new thread with no memory retires a node that a
 * reader holds: the call must not return while the reader runs, and when it returns the node
 * has gone to the hook (or to fn) on that thread, once. */
static unsigned int oom_frees_at_return;
static int oom_returned, oom_with_fn;
static __thread unsigned int my_fn_calls;
static __attribute__((unused)) void oom_fn(void *p)
{
	my_fn_calls++;
	rcu_hook(p);
}

static __attribute__((unused)) void *retire_outside_without_memory(void *arg)
{
#ifdef GT_FAIL_ALLOC
	fail_alloc = GT_FAIL_MALLOC;
	if (oom_with_fn)
		rcu_retire_fn(oom_fn, arg);
	else
		rcu_retire(arg);
	fail_alloc = 0;
#endif
	oom_frees_at_return = oom_with_fn ? my_fn_calls : my_frees;
	__atomic_store_n(&oom_returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(retire_without_memory_outside_a_section_waits_then_frees_at_once)
{
#ifdef GT_FAIL_ALLOC
	hook_set = 1;
	REQUIRE(grace_rcu_set_free_hook(rcu_hook) == 0); /* run alone: not set yet */
	for (oom_with_fn = 0; oom_with_fn < 2; oom_with_fn++) {
		pthread_t r, m;
		const char *call = oom_with_fn ? "rcu_retire_fn()" : "rcu_retire()";

		reset();
		gnode = node_new();
		start_holder(&r);
		struct node *old = rcu_xchg_pointer(&gnode, node_new());
		oom_returned = 0;
		oom_frees_at_return = 0;
		REQUIRE(pthread_create(&m, NULL, retire_outside_without_memory, old) == 0);
		usleep(100000);
		bool returned_early = __atomic_load_n(&oom_returned, __ATOMIC_ACQUIRE);
		bool freed_early = __atomic_load_n(&old->freed, __ATOMIC_RELAXED) != 0;
		__atomic_store_n(&release_holder, 1, __ATOMIC_RELEASE);
		pthread_join(r, NULL);
		pthread_join(m, NULL);
		CHECK_MSG(!returned_early,
			  "%s with no memory returned while a reader held the "
			  "object",
			  call);
		CHECK_MSG(!freed_early && !holder_saw_freed,
			  "%s freed the object while a reader "
			  "held it",
			  call);
		CHECK_MSG(oom_frees_at_return == 1,
			  "%s with no memory returned having freed %u "
			  "objects itself, not the one it was given",
			  call, oom_frees_at_return);
		CHECK(old->freed);
		free_rcu_barrier();
		CHECK(!freed_twice);
		free(gnode);
		empty_graveyard();
	}
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* docs/api.md (rcu_retire(), "Context"): from a callback, too, it "never waits for a grace
 * period ... even when memory runs out": the object is dropped and the first loss reported. A
 * callback of the default flavor retires with no memory; the child's alarm ends a wait. */
static int cb_retired;
static struct rcu_head oom_head;
static void retire_in_callback(struct rcu_head *h)
{
	(void)h;
#ifdef GT_FAIL_ALLOC
	struct node *n = node_new();
	fail_alloc = GT_FAIL_MALLOC;
	rcu_retire(n);
	fail_alloc = 0;
#endif
	__atomic_store_n(&cb_retired, 1, __ATOMIC_RELEASE);
}

static __attribute__((unused)) void no_memory_callback_child(void *arg)
{
	(void)arg;
	alarm(20);
	call_rcu(&oom_head, retire_in_callback);
	rcu_barrier();
	if (__atomic_load_n(&cb_retired, __ATOMIC_ACQUIRE))
		fprintf(stderr, "child: returned\n");
}

TEST(retire_without_memory_in_a_callback_returns_and_says_so)
{
#ifdef GT_FAIL_ALLOC
	check_returns_and_reports(no_memory_callback_child,
				  "rcu_retire: out of memory inside a read-side section or a "
				  "callback",
				  NULL);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* ---- a barrier from a deleter that the retiring thread's own call runs ---- */

/* docs/api.md (rcu_retire_fn()): fn must not wait for a grace period; rcu_barrier() or
 * free_rcu_barrier() from fn, where it runs inside the retiring thread's own call, is reported
 * in every build, naming the barrier, and aborts: the barrier takes every cache of the flavor,
 * the thread's own among them, which that call holds. A child retires one object with a
 * deleter that calls the barrier, then keeps retiring (so that its own calls, not a worker,
 * run the deleter) for 10 s at most; its alarm ends a deadlock. */
static int deleter_kind; /* 0: free_rcu_barrier(), 1: rcu_barrier() */

static void barrier_deleter(void *p)
{
	free(p);
	if (deleter_kind)
		rcu_barrier();
	else
		free_rcu_barrier();
}

static void deleter_barrier_child(void *arg)
{
	deleter_kind = arg != NULL;
	alarm(30);
	rcu_retire_fn(barrier_deleter, node_new());
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 10000000000ull)
		rcu_retire(node_new());
	fprintf(stderr, "child: returned\n");
}

TEST(a_barrier_from_a_deleter_on_the_retiring_thread_is_reported)
{
	for (int kind = 0; kind < 2; kind++) {
		char out[4096];
		int st = gt_run_child(deleter_barrier_child, kind ? &deleter_kind : NULL, out,
				      sizeof(out));
		const char *want = kind ? "misuse: rcu_barrier" : "misuse: free_rcu_barrier";
		printf("  %s: child status %#x: %.200s\n", want, st, out);
		CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
			  "the child was not aborted (status %#x): %s", st, out);
		/* The deleter named: the own-cache check that reports a handler's barrier
		 * inside the call would also stop it, with a message that names neither. Or, when
		 * the deleter ran on a callback worker instead (the thread's block went to the
		 * engine: seen once under qemu-user with the short steps), the callback check:
		 * "called from a callback (would deadlock)", the same misuse reported. */
		CHECK_MSG(strstr(out, want) && strstr(out, "deadlock") &&
				  (strstr(out, "deleter") || strstr(out, "called from a callback")),
			  "no report naming the barrier and the deleter or callback: %s", out);
	}
}

/* ---- a signal handler inside a deleter the thread's own call runs ---- */

/* docs/api.md (rcu_retire(), "Signals"): a handler that interrupts the function of an entry the
 * call runs is taken as that function's own retire, which only queues. A child retires an
 * object whose deleter raises a signal; the handler retires an object of its pool with a
 * counting function. Neither build reports it, and after free_rcu_barrier() the handler's
 * object has been freed exactly once. */
static int nested_runs, nested_raised;
static struct node *nested_pool_node;

static void nested_count(void *p)
{
	free(p);
	__atomic_fetch_add(&nested_runs, 1, __ATOMIC_RELAXED);
}

static void nested_handler(int s)
{
	(void)s;
	rcu_retire_fn(nested_count, nested_pool_node); /* nests: only queues */
}

static void raising_deleter(void *p)
{
	free(p);
	__atomic_store_n(&nested_raised, 1, __ATOMIC_RELAXED);
	raise(SIGUSR1);
}

static __attribute__((unused)) void nested_handler_child(void *arg)
{
	(void)arg;
	alarm(30);
	nested_pool_node = node_new();
	gt_on_signal(SIGUSR1, nested_handler, 0);
	rcu_retire_fn(raising_deleter, node_new());
	/* Retire until the thread's own call has run the deleter (10 s at most). */
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(&nested_raised, __ATOMIC_RELAXED) &&
	       gt_now_ns() - t0 < 10000000000ull)
		rcu_retire(node_new());
	free_rcu_barrier();
	fprintf(stderr, "child: raised %d, handler's object freed %d times\n",
		__atomic_load_n(&nested_raised, __ATOMIC_RELAXED),
		__atomic_load_n(&nested_runs, __ATOMIC_RELAXED));
}

TEST(a_handler_inside_a_deleter_is_taken_as_the_deleters_retire)
{
#ifdef __SANITIZE_THREAD__
	printf("  skipped under TSan (its handler's nested retire may allocate a block)\n");
	return;
#endif
	char out[4096];
	int st = gt_run_child(nested_handler_child, NULL, out, sizeof(out));
	printf("  child status %#x: %.200s\n", st, out);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %#x): %s", st,
		  out);
	CHECK_MSG(strstr(out, "raised 1, handler's object freed 1 times"),
		  "the handler's object was not freed once: %s", out);
}

/* ---- a signal handler that retires inside the thread's own call ---- */

/* docs/api.md (rcu_retire(), "Signals"): not async-signal-safe; a handler that retires while the
 * interrupted code of the same thread is inside a call on the same cache is reported by a debug
 * library, naming the call, and aborts. A child retires in a loop while another thread signals
 * it every 100 us; the handler retires too. Both take their objects from a pool made
 * beforehand (a handler that interrupts malloc() must not call it), and the thread's cache
 * exists before the first signal. A signal that lands between two calls, or while a call runs
 * the hook (a deleter's nesting: it only appends), is legal; one inside a call's own work must
 * end the child with the report within a few signals, not in a deadlock. Every build: the
 * owner's call marks the cache busy (core/ownsteal.h), and a call that finds it so reports. */
enum { SIG_POOL = 200000 };
static struct node *sig_pool[SIG_POOL];
static int sig_used;

static struct node *sig_take(void)
{
	int i = __atomic_fetch_add(&sig_used, 1, __ATOMIC_RELAXED);
	return i < SIG_POOL ? sig_pool[i] : NULL;
}

static void retire_handler(int s)
{
	(void)s;
	rcu_retire(sig_take()); /* NULL (pool spent): nothing */
}

static __attribute__((unused)) void *node_new_any(void)
{
	return node_new();
}

static void retire_one(void *p)
{
	rcu_retire(p);
}

/* Retire fresh objects (make's) for 10 s in batches of n (gt_retire_batches()). */
static __attribute__((unused)) void retire_batches(void *(*make)(void), int n)
{
	gt_retire_batches(make, n, retire_one, SIGUSR1, 10000000000ull);
}

static __attribute__((unused)) void signal_retire_child(void *arg)
{
	struct gt_rain rain;
	(void)arg;
	alarm(30); /* a deadlock ends in SIGALRM, which the parent reports */
	for (int i = 0; i < SIG_POOL; i++)
		sig_pool[i] = node_new();
	rcu_retire(sig_take()); /* the thread's cache, before any signal */
	gt_on_signal(SIGUSR1, retire_handler, SA_RESTART);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 100) == 0);
	/* A release library sees a handler only inside the out-of-line work of a call (one call
	 * in three), a small part of the time: the loop retires fresh objects until the report
	 * (10 s at most). They are allocated in batches with the signal blocked: a handler's
	 * retire between two calls is legal and may free what is ready, which must not interrupt
	 * this thread's malloc(). The pool is the handler's. */
	retire_batches(node_new_any, 1024);
	gt_rain_stop(&rain);
	fprintf(stderr, "child: returned\n");
}

/* Run child in a forked process and expect the debug library's report of a retiring signal
 * handler: SIGABRT, and a message naming rcu_retire. site: the GRACE_TEST_PAUSE site the test's
 * ctest entry (ctest) sets; without it in the environment, skipped (NULL: none needed). Release
 * libraries check only the call itself (site NULL); the spans of a pause site are skipped. */
static void expect_handler_report(void (*child)(void *), const char *site, const char *ctest)
{
#ifdef __SANITIZE_THREAD__
	/* TSan reports any free() in a signal handler, which a handler's legal retire between
	 * two calls may make; its library is a release one, which checks only the call itself. */
	(void)child;
	printf("  skipped under TSan (%s)\n", site ? site : "the call itself");
	return;
#endif
	/* A handler inside the thread's lock-free call (no pause site needed) is reported by
	 * every build (core/ownsteal.h); the spans of a pause site only by a debug library. */
	if (!GRACE__DEBUG && site) {
		printf("  skipped: a release library does not check this span (docs/api.md: a "
		       "debug library reports it)\n");
		return;
	}
	const char *e = getenv("GRACE_TEST_PAUSE");
	if (site && (!e || !strstr(e, site))) {
		printf("  skipped: run as %s (GRACE_TEST_PAUSE=%s...)\n", ctest, site);
		return;
	}
	char out[4096];
	int st = gt_run_child(child, NULL, out, sizeof(out));
	printf("  child status %#x: %.200s\n", st, out);
	CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
		  "the child was not aborted (status %#x): %s", st, out);
	CHECK_MSG(strstr(out, "rcu_retire") && strstr(out, "not async-signal-safe"),
		  "no report naming the call: %s", out);
}

TEST(a_handler_retiring_inside_the_threads_call_is_reported)
{
	expect_handler_report(signal_retire_child, NULL, NULL);
}

/* The window of the inline append itself (docs/api.md, rcu_retire(), "Signals": every build
 * reports a handler's call that finds the interrupted call inside "the inline append"). It is
 * a few instructions long, between the append's store of busy and its release store, which no
 * signal rain hits reliably; so the child makes that state by hand, as the interrupted append
 * leaves it (busy 1, the window open: its cache made by an earlier call), and raises the signal
 * there. The handler's rcu_retire() must not append beside the interrupted one (both would
 * write the same slot, and one of the two objects would never be freed), but be reported. */
static __attribute__((unused)) void inline_window_child(void *arg)
{
	(void)arg;
	alarm(30);
	for (int i = 0; i < 4; i++)
		sig_pool[i] = node_new();
	rcu_retire(node_new()); /* the thread's cache, and its window opened */
	rcu_retire(node_new());
	gt_on_signal(SIGUSR1, retire_handler, 0);
	struct grace__retire *t = grace__memb_retire;
	REQUIRE(t != NULL);
	/* The interrupted append: busy stored (relaxed, as retire.h's own store), not yet let go. */
	__atomic_store_n(&t->busy, 1u, __ATOMIC_RELAXED);
	raise(SIGUSR1);
	__atomic_store_n(&t->busy, 0u, __ATOMIC_RELEASE);
	fprintf(stderr, "child: returned\n");
}

TEST(a_handler_inside_the_threads_inline_append_is_reported)
{
	expect_handler_report(inline_window_child, NULL, NULL);
}

/* ---- a signal handler that interrupts the thread's first call ---- */

/* The same promise for the call that creates the thread's cache (docs/api.md, rcu_retire(),
 * "Signals"). Run as contract_retire_first_call, with GRACE_TEST_PAUSE=cache_new:1000000: a
 * debug library stops a thread's first call there for 1 s, inside the cache's creation. A new
 * thread's first rcu_retire() sleeps in that pause; once the thread sleeps, the child signals
 * it and the handler retires. Unmarked, the handler's call created a second cache, which the
 * interrupted call then overwrote (or, stopped later, waited for the lock its own thread held):
 * the child returned and nothing was reported. Debug libraries only. */
static struct node *first_handler_node;
static int first_tid;

static __attribute__((unused)) void first_call_handler(int s)
{
	(void)s;
	rcu_retire(first_handler_node);
}

static __attribute__((unused)) void *first_call_thread(void *arg)
{
	__atomic_store_n(&first_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	rcu_retire((struct node *)arg); /* the thread's first call: it creates its cache */
	return NULL;
}

/* The children's handler (rcu_retire(first_handler_node)) on SIGUSR1, and their alarm: a
 * deadlock ends in SIGALRM, which the parent reports. */
static __attribute__((unused)) void handler_setup(unsigned int alarm_s)
{
	alarm(alarm_s);
	first_handler_node = node_new();
	gt_on_signal(SIGUSR1, first_call_handler, SA_RESTART);
}

/* Signal t once it sleeps (it stores its first_tid first), then wait for it. The caller knows
 * that t's first sleep from then on is the pause it wants interrupted. */
static __attribute__((unused)) void signal_once_asleep(pthread_t t)
{
	int tid;

	while (!(tid = __atomic_load_n(&first_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	while (!gt_thread_sleeps(tid))
		usleep(1000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	fprintf(stderr, "child: returned\n");
}

static __attribute__((unused)) void first_call_child(void *arg)
{
	pthread_t t;
	(void)arg;
	handler_setup(30);
	REQUIRE(pthread_create(&t, NULL, first_call_thread, node_new()) == 0);
	/* Its first sleep is inside the call's creation of the cache: the pause, or a lock the
	 * creation waits for (preempted, a thread is runnable, not asleep). */
	signal_once_asleep(t);
}

TEST(a_handler_interrupting_the_first_call_is_reported)
{
	expect_handler_report(first_call_child, "cache_new:", "contract_retire_first_call");
}

/* ---- a signal handler that retires while its thread is in a barrier ---- */

/* docs/api.md (rcu_retire(), "Signals"): nor while the interrupted code is inside
 * free_rcu_barrier() or rcu_barrier(), which take the flavor's caches (the thread's own among
 * them: the handler's call would wait for it forever). Run as contract_retire_barrier_signal,
 * with GRACE_TEST_PAUSE=flush:1000000: a debug library stops the barrier for 1 s once it holds
 * a cache. A thread with a cache calls free_rcu_barrier(), which takes another thread's cache
 * first; once it sleeps there, the child signals it and the handler retires: reported, naming
 * the call (the debug span of the whole barrier). Unmarked, the handler's retire takes its own
 * cache, which the barrier has marked but not taken, and the child returns. Debug libraries
 * only. */
static struct node *barrier_thread_node;
static int barrier_made, barrier_go;

static __attribute__((unused)) void *barrier_thread(void *arg)
{
	(void)arg;
	rcu_retire(barrier_thread_node); /* the thread's cache, before the barrier */
	__atomic_store_n(&barrier_made, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&barrier_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	__atomic_store_n(&first_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	free_rcu_barrier();
	return NULL;
}

/* A cache newer than the barrier thread's, which the barrier takes first (the newest cache
 * heads the list): the pause holds another thread's cache, not the barrier thread's own,
 * whose hold every build reports anyway (the rain's test below). */
static __attribute__((unused)) void *barrier_other(void *arg)
{
	(void)arg;
	rcu_retire(node_new());
	__atomic_store_n(&barrier_go, 1, __ATOMIC_RELEASE);
	for (;;)
		pause(); /* the child ends with the report */
	return NULL;
}

static __attribute__((unused)) void barrier_signal_child(void *arg)
{
	pthread_t t, u;
	(void)arg;
	handler_setup(30);
	barrier_thread_node = node_new();
	REQUIRE(pthread_create(&t, NULL, barrier_thread, NULL) == 0);
	while (!__atomic_load_n(&barrier_made, __ATOMIC_ACQUIRE))
		usleep(1000);
	REQUIRE(pthread_create(&u, NULL, barrier_other, NULL) == 0);
	/* Its first sleep is in the barrier's flush (the pause); the barrier waits for grace
	 * periods only after it. */
	signal_once_asleep(t);
}

TEST(a_handler_retiring_inside_the_threads_barrier_is_reported)
{
	expect_handler_report(barrier_signal_child, "flush:", "contract_retire_barrier_signal");
}

/* The same in every build, for the span in which the barrier holds the thread's own cache: a
 * handler's retire there would wait for that cache (its lock, which its own thread holds)
 * forever. No pause site in a release library: the child rains signals on a thread that calls
 * free_rcu_barrier() with a cache of some 120 blocks to hand over (retired inside a read-side
 * section, so that none is freed before, even where grace periods are quick), the signal blocked
 * everywhere else (its allocations and retires). The handler retires only while a thread has
 * marked the cache to take it (its `steal`, <grace/internal/retire.h>): the barrier's span from
 * its mark to its release, so never inside this thread's malloc() or free(). Once a signal
 * lands where the barrier holds the cache (a few microseconds a barrier, on the order of a
 * hundred times in 10 s), the handler's call is reported; unchecked, it waits until the
 * child's alarm. */
/* The rain children's start: their alarm (a deadlock ends in SIGALRM), the handler's pool, the
 * thread's cache made before any signal, and handler on SIGUSR1. */
static __attribute__((unused)) void rain_setup(void (*handler)(int))
{
	alarm(30);
	__atomic_store_n(&sig_used, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 1000; i++)
		sig_pool[i] = node_new();
	rcu_retire(node_new());
	gt_on_signal(SIGUSR1, handler, SA_RESTART);
}

static void held_handler(int s)
{
	(void)s;
	struct grace__retire *t = grace__memb_retire;
	if (t && __atomic_load_n(&t->steal, __ATOMIC_RELAXED))
		rcu_retire(sig_take());
}

static __attribute__((unused)) void barrier_rain_child(void *arg)
{
	struct gt_rain rain;
	sigset_t set;
	(void)arg;
	rain_setup(held_handler);
	set = gt_block_signal(SIGUSR1);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 10000000000ull) {
		rcu_read_lock(); /* no grace period ends: the cache keeps all 30000 */
		for (int i = 0; i < 30000; i++)
			rcu_retire(node_new());
		rcu_read_unlock();
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		free_rcu_barrier();
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	gt_rain_stop(&rain);
	fprintf(stderr, "child: returned\n");
}

TEST(a_handler_retiring_where_the_barrier_holds_the_threads_cache_is_reported)
{
	expect_handler_report(barrier_rain_child, NULL, NULL);
}

/* The same for a call that holds the thread's cache locked: one that finds the cache marked by
 * another thread (a barrier) takes its lock instead of the lock-free path. A handler's retire
 * there would take the lock-free path beside it once the other thread is done, or wait for
 * the lock its own thread holds: every build reports it. A thread retires in a loop (its
 * allocations with the signal blocked) while another calls free_rcu_barrier() in a loop; the
 * handler retires only while the cache is marked and the thread is not in its lock-free work
 * (`busy` not 1: that window is reported anyway, and would hide this one). */
static void locked_handler(int s)
{
	(void)s;
	struct grace__retire *t = grace__memb_retire;
	if (t && __atomic_load_n(&t->steal, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&t->busy, __ATOMIC_RELAXED) != 1)
		rcu_retire(sig_take());
}

static int locked_stop;

static __attribute__((unused)) void *locked_barriers(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&locked_stop, __ATOMIC_RELAXED))
		free_rcu_barrier();
	return NULL;
}

static __attribute__((unused)) void locked_rain_child(void *arg)
{
	struct gt_rain rain;
	pthread_t u;
	(void)arg;
	rain_setup(locked_handler);
	REQUIRE(pthread_create(&u, NULL, locked_barriers, NULL) == 0);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	retire_batches(node_new_any, 1024);
	gt_rain_stop(&rain);
	__atomic_store_n(&locked_stop, 1, __ATOMIC_RELAXED);
	pthread_join(u, NULL);
	fprintf(stderr, "child: returned\n");
}

TEST(a_handler_retiring_inside_the_threads_locked_call_is_reported)
{
	expect_handler_report(locked_rain_child, NULL, NULL);
}

/* ---- a signal handler that retires while its thread's call frees what is ready ---- */

/* docs/api.md (rcu_retire(), "Signals"): a call frees ready objects from its blocks; a handler's
 * retire while it works on them (outside an entry's function, whose own retires nest) would
 * change the blocks under it. Run as contract_retire_ready_signal, with
 * GRACE_TEST_PAUSE=release_ready:1000000: a debug library stops a call for 1 s where it finds a
 * sealed block ready, before its entries run. A thread retires until then; once it sleeps
 * there, the child signals it and the handler retires: reported, naming the call (the call's
 * busy word, every build). With the nesting flag over the whole of the frees, the handler's
 * retire nests as a deleter's would, and the child returns after 10 s of retiring. Debug
 * libraries only (the pause site); contract_retire_frees_rain tests release ones. */
static __attribute__((unused)) void *ready_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&first_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 10000000000ull)
		rcu_retire(node_new());
	return NULL;
}

static __attribute__((unused)) void ready_signal_child(void *arg)
{
	pthread_t t;
	(void)arg;
	handler_setup(30);
	REQUIRE(pthread_create(&t, NULL, ready_thread, NULL) == 0);
	/* Its first sleep is the pause: a retire waits for nothing else. */
	signal_once_asleep(t);
}

TEST(a_handler_retiring_inside_the_threads_frees_is_reported)
{
	expect_handler_report(ready_signal_child, "release_ready:", "contract_retire_ready_signal");
}

/* The same in every build: nothing but an entry's function (a deleter, the free hook) lets a
 * handler's retire nest. Run as contract_retire_frees_rain, alone: this binary's first case
 * sets the free hook, inside which a retire does nest. The objects are 8 KB, past a 4 KB
 * mmap threshold (mallopt()), so that each free() of a ready one is a munmap() of some
 * microseconds and the thread's calls spend nearly all their time in their frees; they are
 * allocated in batches with the signal blocked. The handler retires only while the thread is
 * inside a call (its cache's `busy`, <grace/internal/retire.h>), and must not come back: every
 * such retire is reported. One that returns, nested beside the call's work on its blocks (a
 * library whose nesting flag covers the whole of the frees), makes the child say so and exit. */
static void frees_handler(int s)
{
	(void)s;
	struct grace__retire *t = grace__memb_retire;
	if (!t || !__atomic_load_n(&t->busy, __ATOMIC_RELAXED))
		return; /* between two calls: legal, and not the case */
	rcu_retire(sig_take());
	gt_handler_came_back();
}

static __attribute__((unused)) void *big_new(void)
{
	void *p = malloc(8192);
	REQUIRE(p);
	return p;
}

static __attribute__((unused)) void frees_rain_child(void *arg)
{
	struct gt_rain rain;
	(void)arg;
	/* glibc; ASan's allocator refuses it, and its frees are then cheap: every report still
	 * counts, only the frees are a smaller part of the calls. */
	(void)mallopt(M_MMAP_THRESHOLD, 4096);
	rain_setup(frees_handler);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	retire_batches(big_new, 256);
	gt_rain_stop(&rain);
	fprintf(stderr, "child: returned\n");
}

TEST(a_handler_retiring_inside_the_threads_frees_is_reported_in_every_build)
{
	if (hook_set) {
		printf("  skipped: run alone as contract_retire_frees_rain (the free hook set by "
		       "this binary's first case is a function inside which a retire nests)\n");
		return;
	}
	expect_handler_report(frees_rain_child, NULL, NULL);
}

/* ---- a signal handler that retires while its thread is in fork() ---- */

/* docs/api.md (rcu_retire(), "Signals"): nor while the interrupted code is inside fork(), whose
 * handlers take every cache (the thread's own among them) and the library's locks. Run as
 * contract_retire_fork_signal, with GRACE_TEST_PAUSE=fork:1000000: a debug library stops the
 * last prepare handler for 1 s. A thread with a cache forks; once it sleeps in fork(), the child
 * signals it and the handler retires: reported, naming the call, not a deadlock (the child's
 * alarm). Debug libraries only. */
static __attribute__((unused)) void *fork_thread(void *arg)
{
	(void)arg;
	rcu_retire(barrier_thread_node); /* the thread's cache, before the fork */
	__atomic_store_n(&first_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	gt_fork_and_wait();
	return NULL;
}

static __attribute__((unused)) void fork_signal_child(void *arg)
{
	pthread_t t;
	(void)arg;
	handler_setup(30);
	barrier_thread_node = node_new();
	REQUIRE(pthread_create(&t, NULL, fork_thread, NULL) == 0);
	/* Its first sleep is inside fork(): the pause, or the prepare handlers' wait for a worker
	 * between two callbacks (marked too). */
	signal_once_asleep(t);
}

TEST(a_handler_retiring_inside_the_threads_fork_is_reported)
{
	expect_handler_report(fork_signal_child, "fork:", "contract_retire_fork_signal");
}

/* ---- a signal handler that retires while its thread's call is at the per-thread bound ---- */

/* docs/api.md (rcu_retire(), "Signals"): a call past the per-thread bound (65536 slots held)
 * locks its cache to seal and then to free what its wait let go; a handler's call in those
 * spans would work on the cache beside it. Run as contract_retire_bound_signal, with
 * GRACE_TEST_PAUSE=over_limit:1000000: a debug library stops that call for 1 s with the cache
 * locked. A reader holds a section, so a thread's retires pile up to the bound; once the
 * thread sleeps there, the child signals it and the handler retires: reported, naming the call.
 * Debug libraries only. */
enum { BOUND_N = 65536 + 256 };
static int bound_hold, bound_count;

static __attribute__((unused)) void *bound_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&bound_hold, 1, __ATOMIC_RELEASE);
	for (;;)
		pause(); /* the child ends with the report */
	return NULL;
}

static __attribute__((unused)) void *bound_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&first_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (int i = 0; i < BOUND_N; i++) {
		rcu_retire(malloc(16));
		__atomic_store_n(&bound_count, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static __attribute__((unused)) void bound_signal_child(void *arg)
{
	pthread_t r, t;
	(void)arg;
	handler_setup(60);
	REQUIRE(pthread_create(&r, NULL, bound_reader, NULL) == 0);
	while (!__atomic_load_n(&bound_hold, __ATOMIC_ACQUIRE))
		usleep(1000);
	REQUIRE(pthread_create(&t, NULL, bound_thread, NULL) == 0);
	/* Near the bound, its first sleep is the pause in the call past it. */
	while (__atomic_load_n(&bound_count, __ATOMIC_ACQUIRE) < 65536 - 256)
		usleep(1000);
	signal_once_asleep(t);
}

TEST(a_handler_retiring_inside_a_call_at_the_bound_is_reported)
{
	expect_handler_report(bound_signal_child, "over_limit:", "contract_retire_bound_signal");
}

/* ---- QSBR and srcu ---- */

TEST(qsbr_retire_online_frees_after_quiescent_states)
{
	qsbr_frees = 0;
	freed_twice = 0;
	qsbr_register_thread();
	for (int i = 0; i < 5000; i++) {
		qsbr_read_lock();
		qsbr_retire(node_new());
		qsbr_read_unlock();
		if (i % 100 == 0)
			qsbr_quiescent_state();
	}
	free_qsbr_barrier();
	qsbr_unregister_thread();
	CHECK_MSG(qsbr_frees == 5000, "%lu of 5000 freed", qsbr_frees);
	CHECK(!freed_twice);
	empty_graveyard();
}

TEST(srcu_retire_inside_a_section_and_its_domain_hook)
{
	static struct srcu_struct d;

	srcu_frees = 0;
	freed_twice = 0;
	REQUIRE(init_srcu_struct(&d) == 0);
	CHECK(grace_srcu_set_free_hook(&d, srcu_hook) == 0);
	struct node *held = node_new();
	int idx = srcu_read_lock(&d);
	srcu_retire(&d, held); /* inside a section of d: returns */
	for (int i = 0; i < 999; i++)
		srcu_retire_fn(&d, i & 1 ? srcu_hook : NULL, node_new());
	usleep(50000);
	bool early = __atomic_load_n(&held->freed, __ATOMIC_RELAXED) != 0;
	srcu_read_unlock(&d, idx);
	srcu_barrier(&d);
	CHECK_MSG(!early, "freed while a section of the domain was open");
	CHECK_MSG(srcu_frees == 1000, "%lu of 1000 freed", srcu_frees);
	CHECK(grace_srcu_set_free_hook(&d, other_hook) == -EBUSY);
	CHECK(!freed_twice);
	cleanup_srcu_struct(&d);
	empty_graveyard();
}

/* docs/api.md (srcu_retire()): the object "is a pending callback of the domain (srcu_barrier()
 * waits for it, cleanup_srcu_struct() refuses a domain that has one)". A section of the domain
 * holds the retired object's grace period while the domain is cleaned up: reported, nothing
 * freed (an abort in debug builds); the domain works on, and its barrier frees the object. */
static void srcu_cleanup_pending_child(void *arg)
{
	static struct srcu_struct d;
	(void)arg;
	alarm(20);
	REQUIRE(init_srcu_struct(&d) == 0);
	REQUIRE(grace_srcu_set_free_hook(&d, srcu_hook) == 0);
	srcu_frees = 0;
	int idx = srcu_read_lock(&d);
	srcu_retire(&d, node_new()); /* its grace period waits for this section */
	cleanup_srcu_struct(&d);
	srcu_read_unlock(&d, idx);
	srcu_barrier(&d);
	fprintf(stderr, "child: %lu freed after the barrier\n", srcu_frees);
	cleanup_srcu_struct(&d);
}

TEST(srcu_retire_is_a_pending_callback_of_its_domain)
{
	char out[4096];
	if (GRACE__TSAN_MODE) {
		printf("  skipped under TSan: the child starts threads after a multi-threaded fork\n");
		return;
	}
	int st = gt_run_child(srcu_cleanup_pending_child, NULL, out, sizeof(out));
	CHECK_MSG(strstr(out, "cleanup_srcu_struct") && strstr(out, "callback") &&
			  strstr(out, "not freed"),
		  "cleanup_srcu_struct() of a domain with a retired object pending was not "
		  "reported: %s",
		  out);
	if (GRACE__DEBUG)
		CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %#x: %s", st, out);
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
				  strstr(out, "child: 1 freed after the barrier"),
			  "status %#x: %s", st, out);
}

/* docs/api.md (srcu_retire()): "Never waits, also inside sections of ssp: with no memory for
 * the carrier there, the object is dropped and the first loss is reported. NULL ptr: nothing
 * (ssp is not looked at)." */
static void srcu_fn_never(void *p)
{
	(void)p;
	fprintf(stderr, "child: fn called for NULL\n");
}

static __attribute__((unused)) void srcu_no_memory_child(void *arg)
{
	static struct srcu_struct d;
	(void)arg;
	alarm(20);
	srcu_retire((struct srcu_struct *)NULL, NULL);
	srcu_retire_fn((struct srcu_struct *)NULL, srcu_fn_never, NULL);
	REQUIRE(init_srcu_struct(&d) == 0);
	int idx = srcu_read_lock(&d);
	struct node *n = node_new();
#ifdef GT_FAIL_ALLOC
	fail_alloc = GT_FAIL_MALLOC;
	srcu_retire(&d, n);
	fail_alloc = 0;
#endif
	srcu_read_unlock(&d, idx);
	srcu_barrier(&d);
	cleanup_srcu_struct(&d);
	free(n); /* dropped: never freed by the library */
	fprintf(stderr, "child: returned\n");
}

TEST(srcu_retire_without_memory_inside_a_section_returns_and_says_so)
{
#ifdef GT_FAIL_ALLOC
	/* "fn called for NULL": srcu_retire_fn() called fn for a NULL object */
	check_returns_and_reports(srcu_no_memory_child,
				  "srcu_retire: out of memory inside a read-side section",
				  "fn called for NULL");
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

GT_MAIN()
