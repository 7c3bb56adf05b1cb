/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rculfhash.h>: liburcu's resizable RCU hash table (cds_lfht), a lock-free
 * split-ordered list (Shalev and Shavit) with RCU, written for grace (compat/src/lfht.c has the
 * argument). Include it after the flavor header (<urcu.h>, <urcu-qsbr.h>, ...), as with liburcu.
 *
 * The contract is liburcu's:
 *  - lookups and traversals run inside read-side sections, with no lock, no atomic and no store;
 *    updates too run inside read-side sections, with compare-and-swap and no lock;
 *  - cds_lfht_add() allows duplicate keys; cds_lfht_add_unique() returns the node added or the
 *    one already present; cds_lfht_add_replace() returns the node replaced or NULL; each is
 *    atomic with respect to lookups (a lookup finds exactly one instance of a key that is
 *    replaced concurrently) and to the other updates (with only add_unique and add_replace
 *    inserting, no key is ever present twice);
 *  - cds_lfht_del() returns 0, or -ENOENT for a node already removed (or NULL);
 *    cds_lfht_replace() -ENOENT likewise, -EINVAL if the new node's hash or key differs;
 *    cds_lfht_is_node_deleted() says whether a node has been removed;
 *  - the table resizes while readers and updaters run (cds_lfht_resize(), or
 *    CDS_LFHT_AUTO_RESIZE); growing never waits for a grace period, shrinking waits for two;
 *  - removed nodes are the caller's to free after a grace period (call_rcu()).
 * How it differs (docs/compat.md): the memory back-ends (cds_lfht_mm_order, _chunk, _mmap) and
 * the resize thread's pthread_attr_t are accepted and have no effect (there is no resize
 * thread: the updaters resize, a bounded step at a time); cds_lfht_destroy() waits for a grace
 * period, so it must not be called inside a read-side section or from a callback.
 */
#ifndef GRACE_URCU_RCULFHASH_H
#define GRACE_URCU_RCULFHASH_H

#include <urcu/grace/base.h>
#include <urcu/compiler.h>
#include <urcu/config.h>
#include <urcu/flavor.h>

GRACE_BEGIN_DECLS

/*
 * Embed in each object (8-byte aligned: the low bits of `next` carry the removed flag). Fields
 * internal: the list link, and the split-order key (the bit-reversed hash, lowest bit set).
 */
struct cds_lfht_node {
	struct cds_lfht_node *next;
	unsigned long reverse_hash;
} __attribute__((aligned(8)));

/* A position in a lookup or a traversal: the node and its link as read. Fields internal. */
struct cds_lfht_iter {
	struct cds_lfht_node *node, *next;
};

/* Bucket levels: level 0 holds bucket 0, level o >= 1 buckets [2^(o-1), 2^o). */
#define GRACE_URCU__LFHT_ORDERS (sizeof(unsigned long) * 8 + 1)

/* A table. Fields internal: what the inline lookups read; the rest is in libgrace-urcu. */
struct cds_lfht {
	unsigned long size; /* buckets in use, a power of two (store-release when it changes) */
	struct cds_lfht_node *tbl[GRACE_URCU__LFHT_ORDERS];
};

typedef int (*cds_lfht_match_fct)(struct cds_lfht_node *node, const void *key);

enum {
	CDS_LFHT_AUTO_RESIZE = (1U << 0),
	CDS_LFHT_ACCOUNTING = (1U << 1),
};

/* liburcu's bucket-memory back-ends: accepted for source compatibility, no effect (grace
 * allocates each bucket array in one piece). */
struct cds_lfht_mm_type {
	struct cds_lfht *(*alloc_cds_lfht)(unsigned long min_nr_alloc_buckets,
					   unsigned long max_nr_buckets);
	void (*alloc_bucket_table)(struct cds_lfht *ht, unsigned long order);
	void (*free_bucket_table)(struct cds_lfht *ht, unsigned long order);
	struct cds_lfht_node *(*bucket_at)(struct cds_lfht *ht, unsigned long index);
};
GRACE_API extern const struct cds_lfht_mm_type grace_urcu_lfht_mm_order;
GRACE_API extern const struct cds_lfht_mm_type grace_urcu_lfht_mm_chunk;
GRACE_API extern const struct cds_lfht_mm_type grace_urcu_lfht_mm_mmap;
#define cds_lfht_mm_order grace_urcu_lfht_mm_order
#define cds_lfht_mm_chunk grace_urcu_lfht_mm_chunk
#define cds_lfht_mm_mmap grace_urcu_lfht_mm_mmap

/* The out-of-line part, in libgrace-urcu. */
GRACE_API struct cds_lfht *grace_urcu_lfht_new(unsigned long init_size,
					       unsigned long min_nr_alloc_buckets,
					       unsigned long max_nr_buckets, int flags,
					       const struct rcu_flavor_struct *flavor,
					       pthread_attr_t *attr);
GRACE_API int grace_urcu_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr);
GRACE_API void grace_urcu_lfht_count_nodes(struct cds_lfht *ht, long *split_count_before,
					   unsigned long *count, long *split_count_after);
GRACE_API void grace_urcu_lfht_add(struct cds_lfht *ht, unsigned long hash,
				   struct cds_lfht_node *node);
GRACE_API struct cds_lfht_node *grace_urcu_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
							   cds_lfht_match_fct match,
							   const void *key,
							   struct cds_lfht_node *node);
GRACE_API struct cds_lfht_node *grace_urcu_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
							    cds_lfht_match_fct match,
							    const void *key,
							    struct cds_lfht_node *node);
GRACE_API int grace_urcu_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter,
				      unsigned long hash, cds_lfht_match_fct match, const void *key,
				      struct cds_lfht_node *new_node);
GRACE_API int grace_urcu_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node);
GRACE_API void grace_urcu_lfht_resize(struct cds_lfht *ht, unsigned long new_size);

/* The flags in a node's `next`: REMOVED (bit 0) marks the node itself removed; UNLINKED (bit 1),
 * set after REMOVED, says it is off the list (lfht.c). */
#define GRACE_URCU__LFHT_REMOVED 1ul
#define GRACE_URCU__LFHT_UNLINKED 2ul
#define GRACE_URCU__LFHT_FLAGS 3ul

GRACE_INLINE struct cds_lfht_node *grace_urcu__lfht_clear(struct cds_lfht_node *p)
{
	return (struct cds_lfht_node *)((uintptr_t)p & ~(uintptr_t)GRACE_URCU__LFHT_FLAGS);
}

GRACE_INLINE int grace_urcu__lfht_removed(const struct cds_lfht_node *next)
{
	return ((uintptr_t)next & GRACE_URCU__LFHT_REMOVED) != 0;
}

/* The bits of x in reverse order (split ordering: a bucket's nodes share the high bits). */
GRACE_INLINE unsigned long grace_urcu__lfht_rev(unsigned long x)
{
#if __SIZEOF_LONG__ == 8
	x = (unsigned long)__builtin_bswap64((uint64_t)x);
	x = ((x >> 4) & 0x0f0f0f0f0f0f0f0ful) | ((x & 0x0f0f0f0f0f0f0f0ful) << 4);
	x = ((x >> 2) & 0x3333333333333333ul) | ((x & 0x3333333333333333ul) << 2);
	x = ((x >> 1) & 0x5555555555555555ul) | ((x & 0x5555555555555555ul) << 1);
#else
	x = (unsigned long)__builtin_bswap32((uint32_t)x);
	x = ((x >> 4) & 0x0f0f0f0ful) | ((x & 0x0f0f0f0ful) << 4);
	x = ((x >> 2) & 0x33333333ul) | ((x & 0x33333333ul) << 2);
	x = ((x >> 1) & 0x55555555ul) | ((x & 0x55555555ul) << 1);
#endif
	return x;
}

/* The split-order key of a node with this hash: odd, so it sorts after the bucket node of the
 * same reversed value (bucket keys are even). */
GRACE_INLINE unsigned long grace_urcu__lfht_key(unsigned long hash)
{
	return grace_urcu__lfht_rev(hash) | 1ul;
}

/* The bucket node of index b (< the size the caller loaded with acquire). */
GRACE_INLINE struct cds_lfht_node *grace_urcu__lfht_bucket(struct cds_lfht *ht, unsigned long b)
{
	unsigned int o;

	if (!b)
		return ht->tbl[0];
	o = (unsigned int)(sizeof(unsigned long) * 8) - (unsigned int)__builtin_clzl(b);
	return &ht->tbl[o][b - (1ul << (o - 1))];
}

/* Walk from n (inclusive) to the first live node of key k that match() accepts, stopping at the
 * first larger key. Loads of the links are rcu_dereference()s (address dependency, no fence);
 * keys never change once a node is linked. */
GRACE_INLINE void grace_urcu__lfht_find(struct cds_lfht_node *n, unsigned long k,
					cds_lfht_match_fct match, const void *key,
					struct cds_lfht_iter *iter)
{
	for (; n; n = grace_urcu__lfht_clear(iter->next)) {
		unsigned long nk = n->reverse_hash;

		iter->next = rcu_dereference_raw(n->next);
		if (nk > k)
			break;
		if (nk == k && !grace_urcu__lfht_removed(iter->next) && match(n, key)) {
			iter->node = n;
			return;
		}
	}
	iter->node = NULL;
	iter->next = NULL;
}

/* Walk from n (inclusive) to the first live node that is not a bucket node. */
GRACE_INLINE void grace_urcu__lfht_scan(struct cds_lfht_node *n, struct cds_lfht_iter *iter)
{
	for (; n; n = grace_urcu__lfht_clear(iter->next)) {
		iter->next = rcu_dereference_raw(n->next);
		if ((n->reverse_hash & 1ul) && !grace_urcu__lfht_removed(iter->next)) {
			iter->node = n;
			return;
		}
	}
	iter->node = NULL;
	iter->next = NULL;
}

GRACE_INLINE struct cds_lfht_node *cds_lfht_iter_get_node(struct cds_lfht_iter *iter)
{
	return iter->node;
}

/* A no-op, as in liburcu: the table initialises what it needs when the node is added. */
GRACE_INLINE void cds_lfht_node_init(struct cds_lfht_node *node)
{
	(void)node;
}

/* The table with an explicit flavor table (liburcu's cds_lfht_new_flavor()). */
GRACE_INLINE struct cds_lfht *cds_lfht_new_flavor(unsigned long init_size,
						  unsigned long min_nr_alloc_buckets,
						  unsigned long max_nr_buckets, int flags,
						  const struct rcu_flavor_struct *flavor,
						  pthread_attr_t *attr)
{
	return grace_urcu_lfht_new(init_size, min_nr_alloc_buckets, max_nr_buckets, flags, flavor,
				   attr);
}

/* liburcu's internal constructor, which some programs call to choose a memory back-end. */
GRACE_INLINE struct cds_lfht *_cds_lfht_new(unsigned long init_size,
					    unsigned long min_nr_alloc_buckets,
					    unsigned long max_nr_buckets, int flags,
					    const struct cds_lfht_mm_type *mm,
					    const struct rcu_flavor_struct *flavor,
					    pthread_attr_t *attr)
{
	(void)mm;
	return grace_urcu_lfht_new(init_size, min_nr_alloc_buckets, max_nr_buckets, flags, flavor,
				   attr);
}

/*
 * Lookup inside a read-side section: the first node with this hash that @match accepts, in
 * iter->node (NULL if none). Inline, so the caller's match function can be inlined too. The
 * size is loaded with acquire: it is stored with release once every bucket node below it is
 * linked (pairs with the store-release in the resize, lfht.c).
 */
GRACE_INLINE void cds_lfht_lookup(struct cds_lfht *ht, unsigned long hash, cds_lfht_match_fct match,
				  const void *key, struct cds_lfht_iter *iter)
{
	unsigned long size = grace_load_acquire(&ht->size);
	struct cds_lfht_node *b = grace_urcu__lfht_bucket(ht, hash & (size - 1));

	grace_urcu__lfht_find(grace_urcu__lfht_clear(rcu_dereference_raw(b->next)),
			      grace_urcu__lfht_key(hash), match, key, iter);
}

/* The next node after iter's with the same key (iter from a lookup or a traversal). */
GRACE_INLINE void cds_lfht_next_duplicate(struct cds_lfht *ht, cds_lfht_match_fct match,
					  const void *key, struct cds_lfht_iter *iter)
{
	(void)ht;
	if (!iter->node)
		return;
	grace_urcu__lfht_find(grace_urcu__lfht_clear(iter->next), iter->node->reverse_hash, match,
			      key, iter);
}

/* Traversal of every node, inside one read-side section: each node present throughout is seen
 * exactly once, resize or not (the table is one list in split order; buckets are shortcuts). */
GRACE_INLINE void cds_lfht_first(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	grace_urcu__lfht_scan(grace_urcu__lfht_clear(rcu_dereference_raw(ht->tbl[0]->next)), iter);
}

/* The node after iter's in the traversal order (after a lookup too, as in liburcu). */
GRACE_INLINE void cds_lfht_next(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	(void)ht;
	if (!iter->node)
		return;
	grace_urcu__lfht_scan(grace_urcu__lfht_clear(iter->next), iter);
}

/* Has @node been removed (del, replace, add_replace)? No memory barrier, as in liburcu. */
GRACE_INLINE int cds_lfht_is_node_deleted(const struct cds_lfht_node *node)
{
	return grace_urcu__lfht_removed(grace_load_relaxed(&node->next));
}

GRACE_INLINE int cds_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr)
{
	return grace_urcu_lfht_destroy(ht, attr);
}

GRACE_INLINE void cds_lfht_count_nodes(struct cds_lfht *ht, long *split_count_before,
				       unsigned long *count, long *split_count_after)
{
	grace_urcu_lfht_count_nodes(ht, split_count_before, count, split_count_after);
}

GRACE_INLINE void cds_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node)
{
	grace_urcu_lfht_add(ht, hash, node);
}

GRACE_INLINE struct cds_lfht_node *cds_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
						       cds_lfht_match_fct match, const void *key,
						       struct cds_lfht_node *node)
{
	return grace_urcu_lfht_add_unique(ht, hash, match, key, node);
}

GRACE_INLINE struct cds_lfht_node *cds_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
							cds_lfht_match_fct match, const void *key,
							struct cds_lfht_node *node)
{
	return grace_urcu_lfht_add_replace(ht, hash, match, key, node);
}

GRACE_INLINE int cds_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter,
				  unsigned long hash, cds_lfht_match_fct match, const void *key,
				  struct cds_lfht_node *new_node)
{
	return grace_urcu_lfht_replace(ht, old_iter, hash, match, key, new_node);
}

GRACE_INLINE int cds_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node)
{
	return grace_urcu_lfht_del(ht, node);
}

GRACE_INLINE void cds_lfht_resize(struct cds_lfht *ht, unsigned long new_size)
{
	grace_urcu_lfht_resize(ht, new_size);
}

GRACE_END_DECLS

/* With a flavor included through its main header (URCU_API_MAP): its table is the default. */
#ifdef URCU_API_MAP
GRACE_INLINE struct cds_lfht *cds_lfht_new(unsigned long init_size,
					   unsigned long min_nr_alloc_buckets,
					   unsigned long max_nr_buckets, int flags,
					   pthread_attr_t *attr)
{
	return grace_urcu_lfht_new(init_size, min_nr_alloc_buckets, max_nr_buckets, flags,
				   &rcu_flavor, attr);
}
#endif

#define cds_lfht_for_each(ht, iter, node)                                                     \
	for (cds_lfht_first(ht, iter), (node) = cds_lfht_iter_get_node(iter); (node) != NULL; \
	     cds_lfht_next(ht, iter), (node) = cds_lfht_iter_get_node(iter))
#define cds_lfht_for_each_duplicate(ht, hash, match, key, iter, node)                            \
	for (cds_lfht_lookup(ht, hash, match, key, iter), (node) = cds_lfht_iter_get_node(iter); \
	     (node) != NULL;                                                                     \
	     cds_lfht_next_duplicate(ht, match, key, iter), (node) = cds_lfht_iter_get_node(iter))
#define cds_lfht_for_each_entry(ht, iter, pos, member)                                             \
	for (cds_lfht_first(ht, iter),                                                             \
	     (pos) = caa_container_of_check_null(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), \
						 member);                                          \
	     cds_lfht_iter_get_node(iter) != NULL; cds_lfht_next(ht, iter),                        \
	     (pos) = caa_container_of_check_null(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), \
						 member))
#define cds_lfht_for_each_entry_duplicate(ht, hash, match, key, iter, pos, member)                 \
	for (cds_lfht_lookup(ht, hash, match, key, iter),                                          \
	     (pos) = caa_container_of_check_null(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), \
						 member);                                          \
	     cds_lfht_iter_get_node(iter) != NULL; cds_lfht_next_duplicate(ht, match, key, iter),  \
	     (pos) = caa_container_of_check_null(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), \
						 member))

#endif
