/* SPDX-License-Identifier: MIT */
/*
 * The object the grace_hash death and fork tests put in their tables: a 64-bit key, a
 * multiplicative hash, equality, and a free callback (test_hash.c has its own, richer object).
 */
#ifndef GRACE_TEST_HASH_OBJ_H
#define GRACE_TEST_HASH_OBJ_H

#include <stdlib.h>
#include <grace/grace.h>
#include <grace/hash.h>

struct obj {
	uint64_t key;
	struct grace_hash_node hn;
};

static inline uint64_t hash_key(const void *key, void *arg)
{
	(void)arg;
	return *(const uint64_t *)key * 0x9e3779b97f4a7c15ull;
}

static inline bool match_key(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	return container_of(n, struct obj, hn)->key == *(const uint64_t *)key;
}

static inline void obj_free(struct rcu_head *h)
{
	free(grace_hash_entry_of_rcu(h, struct obj, hn));
}

#endif
