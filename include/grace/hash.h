/* SPDX-License-Identifier: MIT */
/*
 * grace resizable RCU hash table.
 *
 *  - Lookups and iteration run inside a read-side section of the readers' flavor with no lock,
 *    no atomic read-modify-write and no store: they load the bucket array pointer and follow
 *    chain pointers (rcu_dereference), comparing each node's stored hash before calling the
 *    caller's match function.
 *  - Updates (add, delete, replace) take one per-bucket lock: buckets are striped over a fixed
 *    array of locks, each on its own cache line (bucket b uses lock b mod nlocks). Deleted and
 *    replaced nodes are retired through the flavor's call_rcu (struct grace_flavor_ops) with the
 *    caller's free callback: the table does not care which flavor its readers use.
 *  - The table grows and shrinks by powers of two while readers run, never blocking them and
 *    never hiding an entry from them or showing one twice. Each node has two chain links; a
 *    bucket array uses one of them, and a resize builds the next array through the other while
 *    readers keep using the first, then publishes it (Herbert Xu's resizable hash table with
 *    per-element link pairs). A resize to any power of two costs one pass over the nodes, each
 *    stripe locked in turn, and one grace period, however far the table is from its target.
 *    Correctness argument: src/ds/hash.c. Resizing is driven by the flavor's callbacks when
 *    GRACE_HASH_AUTO_RESIZE is set, or synchronously by grace_hash_resize(). Updaters proceed
 *    during resizes: building holds one lock stripe at a time, publishing every stripe for
 *    O(nlocks).
 *
 * Kernel names: grace_hash_add ~ hash_add_rcu / rhashtable_insert_fast, grace_hash_del ~
 * hash_del_rcu / rhashtable_remove_fast, grace_hash_lookup ~ rhashtable_lookup,
 * grace_hash_for_each_possible_rcu ~ hash_for_each_possible_rcu, grace_hash_for_each_rcu ~
 * hash_for_each_rcu. See docs/ds.md.
 */
#ifndef GRACE_HASH_H
#define GRACE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

#include <grace/flavor.h>

/**
 * struct grace_hash_node - embed in each object stored in a table.
 * @next: the two chain links (RCU-protected; internal): a bucket array uses one, a resize
 *        builds the next array through the other.
 * @hash: the hash of the object's key, set by the table on insertion (read-only for callers).
 * @rcu:  used to retire the node after deletion. A table created with params.free NULL never
 *        touches it: the caller may use it (to retire the object itself, for example).
 */
struct grace_hash_node {
	struct grace_hash_node *next[2];
	uint64_t hash;
	struct rcu_head rcu;
};

/* The hash of a key. The low bits select the bucket: they must be well mixed (the identity is
 * fine for dense integer keys). */
typedef uint64_t (*grace_hash_fn)(const void *key, void *arg);
/* Does the object of @node have key @key? Called with nodes whose stored hash equals the key's. */
typedef bool (*grace_hash_match_fn)(const struct grace_hash_node *node, const void *key, void *arg);

/* grace_hash_params.flags */
#define GRACE_HASH_AUTO_RESIZE \
	1u /* grow past one entry per bucket on average, shrink below one
				   * per eight buckets, in the background (flavor callbacks) */

/**
 * struct grace_hash_params - options for grace_hash_create(); zero-initialise, set what you need.
 * @hash, @match: required.
 * @arg:          passed to hash and match.
 * @free:         called (after a grace period, from the flavor's callback context) with
 *                &node->rcu for each node the table deletes or replaces, and for each node left
 *                at grace_hash_destroy(). NULL: the table never frees nodes; retire them
 *                yourself after grace_hash_del() returns.
 * @ops:          update-side flavor operations (NULL: &grace_flavor_rcu).
 * @init_buckets: initial size (0: 64). Sizes are powers of two (rounded up); a size above 2^30
 *                (the largest table) is EINVAL.
 * @min_buckets:  never shrink below (0: min(init_buckets, 64)).
 * @max_buckets:  never grow beyond (0: 2^30).
 * @nlocks:       lock stripes (0: min(min_buckets, 256)); rounded up to a power of two, then
 *                clamped to min_buckets, whatever its value (each chain must stay under one
 *                lock at every size).
 * @flags:        GRACE_HASH_* flags.
 */
struct grace_hash_params {
	grace_hash_fn hash;
	grace_hash_match_fn match;
	void *arg;
	rcu_callback_t free;
	const struct grace_flavor_ops *ops;
	size_t init_buckets;
	size_t min_buckets;
	size_t max_buckets;
	unsigned int nlocks;
	unsigned int flags;
};

/* A bucket array: this header, then mask + 1 chain heads linked through node->next[idx].
 * Internal. */
struct grace_hash_table {
	uint64_t mask;
	struct rcu_head rcu;
	uint32_t idx;
	uint32_t pad_;
};

struct grace__hash_upd;

/**
 * struct grace_hash - a table, created by grace_hash_create(). Every field is internal. The
 * fields lookups read share no cache line with anything updaters write.
 */
struct grace_hash {
	struct grace_hash_table *tbl; /* RCU-protected */
	grace_hash_fn hash;
	grace_hash_match_fn match;
	void *arg;
	struct grace__hash_upd *upd; /* update-side state, allocated separately */
	uint64_t pad_[3];
} GRACE_ALIGNED_CACHE;

/**
 * grace_hash_create() - a new empty table. Returns NULL with errno set: EINVAL (params NULL,
 * hash or match NULL, ops without call, synchronize or barrier, min > init or init > max after
 * rounding, a size above 2^30), ENOMEM.
 * Context: may block (allocates).
 * fork(): the library's fork handlers take every table's locks, so a child inherits no update
 *   or resize step half done; a resize whose resizer was another thread is dropped (not yet
 *   published) or finished (its old array freed after a grace period) in the child, which can
 *   use, resize and destroy the table. See docs/ds.md.
 */
GRACE_API struct grace_hash *grace_hash_create(const struct grace_hash_params *params);

/**
 * grace_hash_destroy() - free the table. Nodes still in it are retired with params.free (if
 * set) after a grace period, as are the bucket arrays, so readers still inside a section that
 * found the table finish safely; a background resize is finished first; the flavor's barrier is
 * awaited, so nothing the table retired is pending when this returns. No update may run
 * concurrently or afterwards. NULL is ignored.
 * Context: blocks (grace periods); not inside a read-side section of the table's flavor, not
 *   from a callback (either would deadlock: reported with a message naming grace_hash_destroy,
 *   then abort).
 */
GRACE_API void grace_hash_destroy(struct grace_hash *ht);

/**
 * grace_hash_add() - insert @node with key @key (duplicates allowed: see add_unique).
 * @node is published with a store-release: initialise the object before the call.
 * Returns 0, or -EINVAL (ht, node or key NULL). @node must not be in the table: adding it
 * again would link it to itself (reported naming grace_hash_add, then abort: every build when
 * it is its chain's head, anywhere in the chain with GRACE_DEBUG).
 * Thread-safety: any thread. Context: takes the bucket's lock; never waits for a grace period,
 *   so it may be called inside a read-side section. Cost: hash + lock + two stores + unlock.
 */
GRACE_API int grace_hash_add(struct grace_hash *ht, struct grace_hash_node *node, const void *key);

/**
 * grace_hash_add_unique() - insert @node unless an object with key @key is present.
 * Returns 0, -EEXIST (present: @node is not inserted), or -EINVAL. Context: as grace_hash_add().
 */
GRACE_API int grace_hash_add_unique(struct grace_hash *ht, struct grace_hash_node *node,
				    const void *key);

/**
 * grace_hash_add_or_get() - insert @node unless an object with key @key is present, and return
 * the node that holds the key afterwards: @node if it was inserted, else the present node
 * (@node is then not inserted, and the caller may free or reuse it at once). Atomic with
 * respect to the other updates: if only add_or_get, add_unique and add_replace insert, no key
 * is ever present twice. The present node stays valid until the caller's read-side section
 * ends: call inside one to use it. Returns NULL with errno EINVAL (ht, node or key NULL).
 * Context: as grace_hash_add(). liburcu: cds_lfht_add_unique().
 */
GRACE_API struct grace_hash_node *grace_hash_add_or_get(struct grace_hash *ht,
							struct grace_hash_node *node,
							const void *key);

/**
 * grace_hash_add_replace() - insert @node with key @key, or, if an object with that key is
 * present, put @node in its place atomically: each reader sees the old node or @node, never
 * neither and never both (a reader standing on the old node goes on past it). Returns the
 * replaced node, or NULL if @node was inserted as a new object. The replaced node is retired
 * with params.free after a grace period (if set: then the pointer returned is valid only until
 * the caller's read-side section ends); with free NULL, retire it yourself after a grace period.
 * Bad arguments (ht, node or key NULL): nothing is inserted, NULL is returned with errno
 * EINVAL. Context: as grace_hash_add(). liburcu: cds_lfht_add_replace().
 */
GRACE_API struct grace_hash_node *grace_hash_add_replace(struct grace_hash *ht,
							 struct grace_hash_node *node,
							 const void *key);

/**
 * grace_hash_del() - remove @node; it is retired with params.free after a grace period (if
 * set). Readers that found it may keep using it until their section ends.
 * Returns 0, -ENOENT (@node is not in the table: never added, or already removed), or -EINVAL.
 * Context: takes the bucket's lock; never waits for a grace period. Call inside a read-side
 *   section of the table's flavor: the call reads @node (its stored hash, to find the lock)
 *   before locking, so if another thread may delete the same node, only the section keeps it
 *   from being freed under the call. Debug builds report a call outside any read-side section
 *   (message naming grace_hash_del, abort). grace_hash_del_key() has no such requirement.
 */
GRACE_API int grace_hash_del(struct grace_hash *ht, struct grace_hash_node *node);

/** grace_hash_del_key() - remove the first object with key @key, as grace_hash_del(). */
GRACE_API int grace_hash_del_key(struct grace_hash *ht, const void *key);

/**
 * grace_hash_replace() - put @new_node in the place of @old (same key: the stored hash is
 * copied); each reader sees one or the other, never neither. @old is retired as by
 * grace_hash_del(). Returns 0, -ENOENT (@old is not in the table), or -EINVAL.
 * Context: as grace_hash_del(), inside a read-side section (it reads @old before locking;
 *   debug builds check).
 */
GRACE_API int grace_hash_replace(struct grace_hash *ht, struct grace_hash_node *old,
				 struct grace_hash_node *new_node);

/**
 * grace_hash_lookup() - the first object with key @key, or NULL. The caller is inside a
 * read-side section of the readers' flavor; the node stays valid until the section ends.
 * An object present for the whole lookup is found, resize or not.
 * Context: never blocks, never writes shared memory.
 * Cost (callgrind, bench/hashapi: 65536 keys at load factor 1, with the caller's loop and
 *   read-side section): 106 instructions, against 202 for liburcu's cds_lfht_lookup; the
 *   inline grace_hash_for_each_possible_rcu() loop: 68. docs/ds.md.
 */
GRACE_API struct grace_hash_node *grace_hash_lookup(struct grace_hash *ht, const void *key);

/**
 * grace_hash_resize() - resize to @nbuckets (rounded up to a power of two, clamped to
 * [min_buckets, max_buckets]) and return once done; waits for a background resize first.
 * Returns 0, -EINVAL, or -ENOMEM.
 * Context: blocks (several grace periods); not inside a read-side section of the table's flavor
 *   and not from a callback (either would deadlock: reported with a message naming
 *   grace_hash_resize, then abort), no lock held.
 */
GRACE_API int grace_hash_resize(struct grace_hash *ht, size_t nbuckets);

/** Number of objects (a snapshot: a sum over the lock stripes). */
GRACE_API size_t grace_hash_count(struct grace_hash *ht);
/** Number of buckets of the current bucket array. */
GRACE_API size_t grace_hash_buckets(struct grace_hash *ht);

struct grace_hash_stats {
	size_t buckets, count;
	uint64_t grows, shrinks; /* completed resizes to a larger, a smaller array */
	uint64_t relinked;       /* nodes linked into new arrays by those resizes */
	unsigned int nlocks;
	bool resizing;
};
/** Counters, for tests and tuning. */
GRACE_API void grace_hash_get_stats(struct grace_hash *ht, struct grace_hash_stats *st);

/* ---- read-side iteration ---- */

GRACE_INLINE struct grace_hash_node **grace__hash_heads(struct grace_hash_table *t)
{
	return (struct grace_hash_node **)(void *)(t + 1);
}

/* The first node at or after @n whose stored hash is @h, following link @idx. */
GRACE_INLINE struct grace_hash_node *grace__hash_skip(struct grace_hash_node *n, uint64_t h,
						      unsigned int idx)
{
	while (n && n->hash != h)
		n = rcu_dereference(n->next[idx]);
	return n;
}

/* The first candidate for hash @h in bucket array @t (a snapshot of ht->tbl). */
GRACE_INLINE struct grace_hash_node *grace__hash_first_in(struct grace_hash_table *t, uint64_t h)
{
	return grace__hash_skip(rcu_dereference(grace__hash_heads(t)[h & t->mask]), h, t->idx);
}

/**
 * grace_hash_first_rcu() - the first node whose stored hash is @h (a candidate: compare its
 * key), or NULL; *@tp receives the bucket array it was found in, which grace_hash_next_rcu()
 * must be given for the rest of the walk (a resize may publish another one meanwhile). Read
 * side.
 */
GRACE_INLINE struct grace_hash_node *grace_hash_first_rcu(struct grace_hash *ht, uint64_t h,
							  struct grace_hash_table **tp)
{
	struct grace_hash_table *t = rcu_dereference(ht->tbl);

	*tp = t;
	return grace__hash_first_in(t, h);
}

/** The next candidate after @n for hash @h in the bucket array @t of the walk, or NULL. */
GRACE_INLINE struct grace_hash_node *grace_hash_next_rcu(struct grace_hash_table *t,
							 struct grace_hash_node *n, uint64_t h)
{
	return grace__hash_skip(rcu_dereference(n->next[t->idx]), h, t->idx);
}

#define GRACE__HASH_CAT2(a, b) a##b
#define GRACE__HASH_CAT(a, b) GRACE__HASH_CAT2(a, b)
#define GRACE__HASH_T GRACE__HASH_CAT(grace__hash_t, __LINE__)
#define GRACE__HASH_ONCE GRACE__HASH_CAT(grace__hash_once, __LINE__)

/*
 * grace_hash_for_each_possible_rcu(): visit every node whose stored hash is @h, so the caller
 * compares keys inline (no indirect call). @h is the hash the table's hash function gives the
 * key. The loop keeps its bucket-array snapshot in a variable of its own (named after the
 * line); after a break, @pos is the node the body broke at. (The second variable only gives
 * the declaration a place to set @pos.)
 */
#define grace_hash_for_each_possible_rcu(ht, pos, h)                                            \
	for (struct grace_hash_table *GRACE__HASH_T = rcu_dereference((ht)->tbl),               \
				     *GRACE__HASH_ONCE =                                        \
					     ((pos) = grace__hash_first_in(GRACE__HASH_T, (h)), \
					     GRACE__HASH_T);                                    \
	     ((void)GRACE__HASH_ONCE, (pos));                                                   \
	     (pos) = grace_hash_next_rcu(GRACE__HASH_T, (pos), (h)))

/* Iterator over every node, inside one read-side section. Fields internal. */
struct grace_hash_iter {
	struct grace_hash_table *tbl;
	uint64_t bucket;
	struct grace_hash_node *node;
};

/**
 * grace_hash_iter_first() / grace_hash_iter_next(): every node present during the whole
 * iteration is returned exactly once, even across a resize; nodes added or removed meanwhile may
 * or may not be. The whole iteration must run inside one read-side section. Cost: O(buckets +
 * nodes).
 */
GRACE_API struct grace_hash_node *grace_hash_iter_first(struct grace_hash *ht,
							struct grace_hash_iter *it);
GRACE_API struct grace_hash_node *grace_hash_iter_next(struct grace_hash_iter *it);

#define grace_hash_for_each_rcu(ht, it, pos) \
	for ((pos) = grace_hash_iter_first((ht), &(it)); (pos); (pos) = grace_hash_iter_next(&(it)))

/* The node of a retired rcu_head (for params.free callbacks). */
#define grace_hash_node_of_rcu(head) grace_container_of(head, struct grace_hash_node, rcu)
/*
 * The object of a retired rcu_head in one step, for params.free callbacks: @member is the
 * struct grace_hash_node member of @type. free(grace_hash_entry_of_rcu(h, struct obj, hn)).
 */
#define grace_hash_entry_of_rcu(head, type, member) \
	grace_container_of(head, type, member.rcu) /* NOLINT(bugprone-macro-parentheses) */

GRACE_END_DECLS

#endif /* GRACE_HASH_H */
