/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht (liburcu's <urcu/rculfhash.h>) as an adapter over grace's hash table.
 *
 * grace_hash takes a key and computes its hash with the table's function; cds_lfht callers pass
 * the hash and a match function with every call. The adapter hands grace_hash a key record
 * {hash, match, key}: the table's hash function returns the recorded hash, its match function
 * calls the recorded match (none for cds_lfht_add, which never matches). Lookups do not go
 * through grace_hash_lookup() at all: they walk the candidates inline in the header.
 *
 * Why the contract holds:
 *  - Every update (add, add_unique, add_replace, replace, del) runs under the stripe lock of
 *    the key's hash in grace_hash: they are linearisable with respect to each other, and a node
 *    is in its chain exactly while it has not been removed. So del of a removed node finds it in
 *    no chain (-ENOENT), two removals of one node cannot both succeed, and with only
 *    add_unique/add_replace inserting a key never appears twice.
 *  - Replacement (add_replace, replace) redirects every link to the old node to the new one,
 *    whose next is the old one's next, in one step: a lookup reaches one of them, never neither;
 *    a reader standing on the old node continues past it and does not meet the new one, so it
 *    sees exactly one instance.
 *  - The removed mark (cds_lfht_is_node_deleted()) is node->gh.rcu.next, which grace_hash never
 *    touches because the table has no free function; it is set by the thread whose removal
 *    succeeded, before that call returns, and cleared when a node is added.
 *  - liburcu documents a full memory barrier before and after each successful update. The stripe
 *    lock is taken with an atomic read-modify-write, a full barrier on x86 (elsewhere an
 *    explicit fence precedes it); a fence follows the commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_order = { NULL, NULL, NULL, NULL };
GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_chunk = { NULL, NULL, NULL, NULL };
GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_mmap = { NULL, NULL, NULL, NULL };

struct lfht_key {
	uint64_t hash;
	cds_lfht_match_fct match; /* NULL: never matches (cds_lfht_add) */
	const void *key;
};

static uint64_t lfht_hash(const void *key, void *arg)
{
	(void)arg;
	return ((const struct lfht_key *)key)->hash;
}

static bool lfht_match(const struct grace_hash_node *n, const void *key, void *arg)
{
	const struct lfht_key *k = (const struct lfht_key *)key;

	(void)arg;
	return k->match &&
	       k->match(caa_container_of((struct grace_hash_node *)n, struct cds_lfht_node, gh),
			k->key) != 0;
}

/* Custom flavor tables (not one of grace-urcu's): call through them. */
static void custom_call(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	((const struct rcu_flavor_struct *)ctx)->update_call_rcu(head, func);
}
static void custom_sync(void *ctx)
{
	((const struct rcu_flavor_struct *)ctx)->update_synchronize_rcu();
}
static void custom_barrier(void *ctx)
{
	((const struct rcu_flavor_struct *)ctx)->barrier();
}

static void set_ops(struct cds_lfht *ht, const struct rcu_flavor_struct *flavor)
{
	if (flavor == &grace_urcu_flavor_qsbr) {
		ht->ops = grace_flavor_qsbr;
	} else if (flavor == &grace_urcu_flavor_memb || flavor == &grace_urcu_flavor_mb ||
		   flavor == &grace_urcu_flavor_signal || flavor == &grace_urcu_flavor_bp) {
		ht->ops = grace_flavor_rcu;
	} else {
		ht->ops.name = "urcu";
		ht->ops.call = custom_call;
		ht->ops.synchronize = custom_sync;
		ht->ops.barrier = custom_barrier;
		ht->ops.ctx = (void *)(uintptr_t)flavor;
	}
}

static bool pow2(unsigned long x)
{
	return x && !(x & (x - 1));
}

struct cds_lfht *grace_urcu_lfht_new(unsigned long init_size, unsigned long min_nr_alloc_buckets,
				     unsigned long max_nr_buckets, int flags,
				     const struct rcu_flavor_struct *flavor, pthread_attr_t *attr)
{
	const unsigned long cap = 1ul << 30; /* grace_hash's largest table */
	struct grace_hash_params p;
	struct cds_lfht *ht;
	unsigned long min, max;

	/* liburcu's rules: powers of two; max 0 means unbounded. */
	if (!flavor || !pow2(init_size) || !pow2(min_nr_alloc_buckets) ||
	    (max_nr_buckets && !pow2(max_nr_buckets)) ||
	    (flags & ~(CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING))) {
		errno = EINVAL;
		return NULL;
	}
	max = max_nr_buckets && max_nr_buckets < cap ? max_nr_buckets : cap;
	/*
	 * min_nr_alloc_buckets is liburcu's smallest allocation; grace keeps at least 64 buckets
	 * (or max, if smaller) so the table has enough lock stripes for concurrent updaters.
	 */
	min = min_nr_alloc_buckets > 64 ? min_nr_alloc_buckets : 64;
	if (min > max)
		min = max;
	if (init_size < min)
		init_size = min;
	if (init_size > max)
		init_size = max;

	ht = (struct cds_lfht *)calloc(1, sizeof(*ht));
	if (!ht) {
		errno = ENOMEM;
		return NULL;
	}
	ht->flavor = flavor;
	ht->attr = attr;
	ht->flags = flags;
	set_ops(ht, flavor);
	memset(&p, 0, sizeof(p));
	p.hash = lfht_hash;
	p.match = lfht_match;
	p.free = NULL; /* the caller frees its nodes (and the rcu_head carries the removed mark) */
	p.ops = &ht->ops;
	p.init_buckets = init_size;
	p.min_buckets = min;
	p.max_buckets = max;
	p.flags = (flags & CDS_LFHT_AUTO_RESIZE) ? GRACE_HASH_AUTO_RESIZE : 0;
	ht->gh = grace_hash_create(&p);
	if (!ht->gh) {
		int e = errno;
		free(ht);
		errno = e;
		return NULL;
	}
	return ht;
}

/* Calls that wait for grace periods: report them where that would deadlock, naming the call. */
static void check_may_block(struct cds_lfht *ht, const char *call)
{
	bool in = false;

	if (ht->ops.call == grace_flavor_rcu.call)
		in = grace_rcu_read_ongoing();
	else if (ht->ops.call == grace_flavor_qsbr.call)
		in = grace_urcu__qsbr_nest != 0; /* known when the caller uses GRACE_DEBUG */
	if (in)
		grace_urcu__misuse(call,
				   "called inside rcu_read_lock(): it waits for grace periods "
				   "(it would deadlock)");
}

int grace_urcu_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr)
{
	if (!ht)
		return -EINVAL;
	check_may_block(ht, "cds_lfht_destroy");
	if (grace_hash_count(ht->gh) != 0)
		return -EPERM; /* liburcu: the table must be empty */
	grace_hash_destroy(ht->gh);
	if (attr)
		*attr = ht->attr;
	free(ht);
	return 0;
}

void grace_urcu_lfht_count_nodes(struct cds_lfht *ht, long *split_count_before,
				 unsigned long *count, long *split_count_after)
{
	struct grace_hash_iter it;
	struct grace_hash_node *n;
	unsigned long c = 0;

	if (split_count_before)
		*split_count_before = (long)grace_hash_count(ht->gh);
	grace_hash_for_each_rcu(ht->gh, it, n)
		c++;
	if (count)
		*count = c;
	if (split_count_after)
		*split_count_after = (long)grace_hash_count(ht->gh);
}

/* Full barrier before the commit: the stripe lock's atomic read-modify-write on x86. */
static inline void barrier_before(void)
{
#if !GRACE_ARCH_TSO
	grace_smp_mb();
#endif
}

static void mark_removed(struct cds_lfht_node *n)
{
	/* Release: a thread that sees the mark (acquire or not, "no barrier" in liburcu) has the
	 * removal's effects ordered before it when it synchronises with this thread. */
	grace_store_release(&n->gh.rcu.next, GRACE_URCU__LFHT_REMOVED);
}

static void clear_removed(struct cds_lfht_node *n)
{
	/* The node is not reachable yet: relaxed. */
	grace_store_relaxed(&n->gh.rcu.next, (struct rcu_head *)NULL);
}

void grace_urcu_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node)
{
	struct lfht_key k = { hash, NULL, NULL };

	clear_removed(node);
	barrier_before();
	grace_hash_add(ht->gh, &node->gh, &k);
	grace_smp_mb(); /* full barrier after the commit (liburcu's contract) */
}

struct cds_lfht_node *grace_urcu_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
						 cds_lfht_match_fct match, const void *key,
						 struct cds_lfht_node *node)
{
	struct lfht_key k = { hash, match, key };
	struct grace_hash_node *r;

	clear_removed(node);
	barrier_before();
	r = grace_hash_add_or_get(ht->gh, &node->gh, &k);
	if (r == &node->gh)
		grace_smp_mb(); /* full barrier after a successful commit */
	return caa_container_of(r, struct cds_lfht_node, gh);
}

struct cds_lfht_node *grace_urcu_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
						  cds_lfht_match_fct match, const void *key,
						  struct cds_lfht_node *node)
{
	struct lfht_key k = { hash, match, key };
	struct grace_hash_node *old;

	clear_removed(node);
	barrier_before();
	old = grace_hash_add_replace(ht->gh, &node->gh, &k);
	grace_smp_mb(); /* full barrier after the commit */
	if (!old)
		return NULL;
	struct cds_lfht_node *o = caa_container_of(old, struct cds_lfht_node, gh);
	mark_removed(o);
	return o;
}

int grace_urcu_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter, unsigned long hash,
			    cds_lfht_match_fct match, const void *key,
			    struct cds_lfht_node *new_node)
{
	struct cds_lfht_node *old = old_iter ? old_iter->node : NULL;
	int r;

	if (!old)
		return -ENOENT;
	if (old->gh.hash != (uint64_t)hash || !match(old, key))
		return -EINVAL; /* the new node must have the old one's hash and key */
	clear_removed(new_node);
	barrier_before();
	r = grace_hash_replace(ht->gh, &old->gh, &new_node->gh);
	if (r != 0)
		return r == -EINVAL ? -EINVAL : -ENOENT;
	grace_smp_mb(); /* full barrier after a successful commit */
	mark_removed(old);
	return 0;
}

int grace_urcu_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node)
{
	int r;

	if (!node)
		return -ENOENT;
	barrier_before();
	r = grace_hash_del(ht->gh, &node->gh);
	if (r != 0)
		return -ENOENT;
	grace_smp_mb(); /* full barrier after a successful commit */
	mark_removed(node);
	return 0;
}

void grace_urcu_lfht_resize(struct cds_lfht *ht, unsigned long new_size)
{
	check_may_block(ht, "cds_lfht_resize");
	if (new_size == 0)
		new_size = 1; /* clamped to the table's minimum */
	(void)grace_hash_resize(ht->gh, new_size);
}
