/* SPDX-License-Identifier: MIT */
/*
 * No memory left: the calls whose documented errors include ENOMEM return it, and leave what
 * they were given working (docs/api.md, "Conventions": errors are returned, never silent
 * corruption):
 *  - grace_hash_create(): NULL with errno ENOMEM;
 *  - grace_hash_resize(): -ENOMEM, the table unchanged in size and every key still found;
 *  - grace_idr_init(): -ENOMEM; grace_idr_alloc() that must grow the array: -ENOMEM, the IDs
 *    already allocated still resolve, and the next call with memory succeeds;
 *  - init_srcu_struct(): -ENOMEM, and the domain can be initialised again afterwards;
 *  - the first call_rcu() of a process with no memory for the callback queues: an error of
 *    the environment the call cannot return (it returns void): "grace: fatal: ..." and abort.
 * The allocations fail through tests/common/fail_alloc.h (the calling thread's malloc() and its
 * kin fail while fail_alloc is set; not under the sanitizers).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>
#include <grace/hash.h>
#include <grace/idr.h>

#include "gtest_lite.h"

#include "fail_alloc.h"

struct obj {
	struct grace_hash_node hn;
	uint64_t key;
};

static __attribute__((unused)) uint64_t hash_key(const void *key, void *arg)
{
	(void)arg;
	return *(const uint64_t *)key * 0x9e3779b97f4a7c15ull;
}

static __attribute__((unused)) bool match_key(const struct grace_hash_node *n, const void *key,
					      void *arg)
{
	(void)arg;
	return grace_container_of(n, struct obj, hn)->key == *(const uint64_t *)key;
}

static __attribute__((unused)) void obj_free(struct rcu_head *h)
{
	free(grace_container_of(grace_hash_node_of_rcu(h), struct obj, hn));
}

static __attribute__((unused)) void nothing_cb(struct rcu_head *h)
{
	(void)h;
}

/* First: later cases set up the engine in this process (their frees are callbacks). */
static __attribute__((unused)) void first_call_without_memory(void *arg)
{
	(void)arg;
#ifdef GT_FAIL_ALLOC
	static struct rcu_head h;
	fail_alloc = GT_FAIL_ALL;
	call_rcu(&h, nothing_cb);
	fail_alloc = 0;
#endif
	fprintf(stderr, "child: call_rcu() returned\n");
}

TEST(first_call_rcu_without_memory_is_fatal)
{
#ifdef GT_FAIL_ALLOC
	/* In a child of this process before its first call_rcu(): the engine is not set up. */
	CHECK(gt_child_aborts_with(first_call_without_memory, NULL, "grace: fatal: call_rcu",
				   "out of memory creating the callback queues"));
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

TEST(hash_create_and_resize_without_memory)
{
#ifdef GT_FAIL_ALLOC
	struct grace_hash_params p;
	enum { N = 256 };

	memset(&p, 0, sizeof(p));
	p.hash = hash_key;
	p.match = match_key;
	p.free = obj_free;
	p.init_buckets = 16;
	errno = 0;
	fail_alloc = GT_FAIL_ALL;
	struct grace_hash *ht = grace_hash_create(&p);
	fail_alloc = 0;
	CHECK_MSG(ht == NULL && errno == ENOMEM, "grace_hash_create(): %p, errno %d", (void *)ht,
		  errno);
	ht = grace_hash_create(&p);
	REQUIRE(ht);
	for (uint64_t k = 0; k < N; k++) {
		struct obj *o = (struct obj *)calloc(1, sizeof(*o));
		REQUIRE(o);
		o->key = k;
		REQUIRE(grace_hash_add_unique(ht, &o->hn, &o->key) == 0);
	}
	size_t before = grace_hash_buckets(ht);
	fail_alloc = GT_FAIL_ALL;
	int r = grace_hash_resize(ht, 4096);
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM, "grace_hash_resize() with no memory returned %d", r);
	CHECK(grace_hash_buckets(ht) == before);
	rcu_read_lock();
	unsigned found = 0;
	for (uint64_t k = 0; k < N; k++)
		found += grace_hash_lookup(ht, &k) != NULL;
	rcu_read_unlock();
	CHECK_MSG(found == N, "%u of %d keys found after the failed resize", found, (int)N);
	CHECK(grace_hash_count(ht) == N);
	CHECK(grace_hash_resize(ht, 4096) == 0); /* with memory: done */
	CHECK(grace_hash_buckets(ht) == 4096);
	grace_hash_destroy(ht);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

TEST(idr_init_and_alloc_without_memory)
{
#ifdef GT_FAIL_ALLOC
	static struct grace_idr idr;
	struct grace_idr_params p;
	static int objs[64];

	memset(&p, 0, sizeof(p));
	p.init_size = 4;
	fail_alloc = GT_FAIL_ALL;
	int r = grace_idr_init(&idr, &p);
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM, "grace_idr_init() with no memory returned %d", r);
	REQUIRE(grace_idr_init(&idr, &p) == 0);
	int ids[4];
	for (int i = 0; i < 4; i++) {
		ids[i] = grace_idr_alloc(&idr, &objs[i]);
		REQUIRE(ids[i] >= 0);
	}
	fail_alloc = GT_FAIL_ALL;
	r = grace_idr_alloc(&idr, &objs[4]); /* the array is full: it must grow */
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM, "grace_idr_alloc() that must grow, with no memory: %d", r);
	CHECK(grace_idr_count(&idr) == 4);
	rcu_read_lock();
	for (int i = 0; i < 4; i++)
		CHECK(grace_idr_lookup(&idr, ids[i]) == &objs[i]);
	rcu_read_unlock();
	r = grace_idr_alloc(&idr, &objs[4]);
	CHECK_MSG(r >= 0, "grace_idr_alloc() with memory again: %d", r);
	for (int i = 0; i < 4; i++)
		CHECK(grace_idr_remove(&idr, ids[i]) == &objs[i]);
	CHECK(grace_idr_remove(&idr, r) == &objs[4]);
	grace_idr_destroy(&idr);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

TEST(srcu_init_without_memory)
{
#ifdef GT_FAIL_ALLOC
	static struct srcu_struct d;

	fail_alloc = GT_FAIL_ALL;
	int r = init_srcu_struct(&d);
	fail_alloc = 0;
	CHECK_MSG(r == -ENOMEM, "init_srcu_struct() with no memory returned %d", r);
	REQUIRE(init_srcu_struct(&d) == 0);
	int idx = srcu_read_lock(&d);
	srcu_read_unlock(&d, idx);
	synchronize_srcu(&d);
	cleanup_srcu_struct(&d);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

GT_MAIN()
