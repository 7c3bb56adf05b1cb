/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/rculfhash.h>: liburcu's resizable RCU hash table (cds_lfht) on grace's
 * hash table (<grace/hash.h>). Include it after the flavor header (<urcu.h>, <urcu-qsbr.h>, ...),
 * as with liburcu.
 *
 * The contract is liburcu's:
 *  - lookups and traversals run inside read-side sections, with no lock, no atomic and no store;
 *  - cds_lfht_add() allows duplicate keys; cds_lfht_add_unique() returns the node added or the
 *    one already present; cds_lfht_add_replace() returns the node replaced or NULL; each is
 *    atomic with respect to lookups (a lookup finds exactly one instance of a key that is
 *    replaced concurrently) and to the other updates (with only add_unique and add_replace
 *    inserting, no key is ever present twice);
 *  - cds_lfht_del() returns 0, or -ENOENT for a node already removed (or NULL);
 *    cds_lfht_replace() -ENOENT likewise, -EINVAL if the new node's hash or key differs;
 *    cds_lfht_is_node_deleted() says whether a node has been removed;
 *  - the table resizes while readers run (cds_lfht_resize(), or CDS_LFHT_AUTO_RESIZE): one
 *    pass and one grace period to any power of two;
 *  - removed nodes are the caller's to free after a grace period (call_rcu()).
 * How it differs (docs/compat.md): updates take one striped lock per bucket instead of
 * compare-and-swap loops; a struct cds_lfht_node is 40 bytes (liburcu: 16); the memory
 * back-ends (cds_lfht_mm_order, _chunk, _mmap) and the resize thread's pthread_attr_t are
 * accepted and have no effect; cds_lfht_destroy() waits for a grace period, so it must not be
 * called inside a read-side section or from a callback (liburcu >= 0.10 allows both).
 */
#ifndef GRACE_URCU_RCULFHASH_H
#define GRACE_URCU_RCULFHASH_H

#include <urcu/grace/base.h>
#include <urcu/compiler.h>
#include <urcu/config.h>
#include <urcu/flavor.h>

GRACE_BEGIN_DECLS

/*
 * Embed in each object. Fields internal: the grace node, whose rcu_head (unused by a table
 * that frees nothing) marks the node removed.
 */
struct cds_lfht_node {
	struct grace_hash_node gh;
};

/* A position in a lookup or a traversal. Fields internal. */
struct cds_lfht_iter {
	struct cds_lfht_node *node, *next;
	struct grace_hash_table *t; /* the bucket array the node was found in */
	struct grace_hash_iter it;  /* whole-table traversal (cds_lfht_first/next) */
};

/* A table. Fields internal. */
struct cds_lfht {
	struct grace_hash *gh;
	const struct rcu_flavor_struct *flavor;
	struct grace_flavor_ops ops;
	pthread_attr_t *attr;
	int flags;
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

/* The removed mark: node->gh.rcu.next (the table never touches the rcu_head: free is NULL). */
#define GRACE_URCU__LFHT_REMOVED ((struct rcu_head *)(uintptr_t)1)

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
 * iter->node (NULL if none). Inline, so the caller's match function can be inlined too: the
 * candidates are walked with grace_hash_first_rcu() and grace_hash_next_rcu() in one bucket
 * array (dependency-ordered loads of the chain links, no store).
 */
GRACE_INLINE void cds_lfht_lookup(struct cds_lfht *ht, unsigned long hash, cds_lfht_match_fct match,
				  const void *key, struct cds_lfht_iter *iter)
{
	struct grace_hash_table *t;
	struct grace_hash_node *n;

	iter->it.node = NULL; /* cds_lfht_next() after a lookup ends the walk (docs/compat.md) */
	for (n = grace_hash_first_rcu(ht->gh, (uint64_t)hash, &t); n;
	     n = grace_hash_next_rcu(t, n, (uint64_t)hash)) {
		struct cds_lfht_node *ln = caa_container_of(n, struct cds_lfht_node, gh);

		if (match(ln, key)) {
			iter->node = ln;
			iter->t = t;
			return;
		}
	}
	iter->node = NULL;
}

/* The next node after iter's with the same key (iter from a lookup or a traversal). */
GRACE_INLINE void cds_lfht_next_duplicate(struct cds_lfht *ht, cds_lfht_match_fct match,
					  const void *key, struct cds_lfht_iter *iter)
{
	struct grace_hash_node *n;
	uint64_t h;

	(void)ht;
	if (!iter->node)
		return;
	h = iter->node->gh.hash;
	for (n = grace_hash_next_rcu(iter->t, &iter->node->gh, h); n;
	     n = grace_hash_next_rcu(iter->t, n, h)) {
		struct cds_lfht_node *ln = caa_container_of(n, struct cds_lfht_node, gh);

		if (match(ln, key)) {
			iter->node = ln;
			return;
		}
	}
	iter->node = NULL;
}

/* Traversal of every node, inside one read-side section (each node present throughout is seen
 * exactly once, resize or not). */
GRACE_INLINE void cds_lfht_first(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	struct grace_hash_node *n = grace_hash_iter_first(ht->gh, &iter->it);

	iter->t = iter->it.tbl;
	iter->node = n ? caa_container_of(n, struct cds_lfht_node, gh) : NULL;
}

GRACE_INLINE void cds_lfht_next(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	struct grace_hash_node *n;

	(void)ht;
	if (!iter->node)
		return;
	/* Continues a cds_lfht_first() traversal; after a lookup the walk ends here. */
	n = grace_hash_iter_next(&iter->it);
	iter->node = n ? caa_container_of(n, struct cds_lfht_node, gh) : NULL;
}

/* Has @node been removed (del, replace, add_replace)? No memory barrier, as in liburcu. */
GRACE_INLINE int cds_lfht_is_node_deleted(const struct cds_lfht_node *node)
{
	return grace_load_relaxed(&node->gh.rcu.next) == GRACE_URCU__LFHT_REMOVED;
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
