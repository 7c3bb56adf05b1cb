/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht (liburcu's <urcu/rculfhash.h>): a lock-free resizable hash table, a split-ordered
 * list (Shalev and Shavit, "Split-Ordered Lists", JACM 2006) whose nodes are freed by RCU.
 *
 * Structure. Every node of the table is on one singly linked list, sorted by its key: the
 * bit-reversed hash with the lowest bit set (grace_urcu__lfht_key()). Bucket b is a node of its
 * own on that list, whose key is b bit-reversed (even), placed just before the nodes whose hash
 * has b for its low bits: the nodes of bucket b at size S are exactly those between bucket node
 * b and the next bucket node. Growing from S to 2S links bucket nodes S..2S-1 into the list, each after
 * its parent b - S, and then publishes the size: no node moves, and every traversal, from any
 * bucket at any size, stays valid. So growth needs no grace period, however long readers stay
 * in their sections (liburcu's property; grace_hash's two-link resize needs one per step).
 *
 * Links. A node's `next` carries REMOVED in bit 0: set once, by the one compare-and-swap that
 * removes the node (del, replace), after which the link never changes. Updates follow Harris
 * and Michael's list:
 *  - insert: find prev, cur with prev live and prev->next == cur, set node->next = cur, then
 *    CAS prev->next from cur to node. The CAS fails if prev was removed (its link is flagged)
 *    or anything was linked between them; the update then walks again.
 *  - remove: CAS node->next from its (unflagged) value to the same value flagged; exactly one
 *    remover succeeds, so del and replace of one node cannot both succeed (-ENOENT for the
 *    loser). Then walk the node's bucket: every walker that meets a flagged node unlinks it,
 *    with CAS prev->next from the node to its successor. The remover's walk passes the node's
 *    place, so when del returns the node is off the list: a reader that starts after that cannot
 *    reach it, and the caller's call_rcu frees it after every earlier reader is done. The
 *    walker whose CAS unlinked the node (there is exactly one) then sets UNLINKED (bit 1) in its
 *    frozen link, so the remover's walk stops there, not at the end of a run of duplicates.
 *  - replace (add_replace, replace): CAS old->next from its successor s to (new | REMOVED), with
 *    new->next = s. In one step old is removed and new takes its place: a reader that loads
 *    old->next before the CAS sees old live and s after it, one that loads it after sees old
 *    removed and new after it; each sees one of them, never both, never neither. Walks then
 *    unlink old.
 * RCU is what makes this simple: a node unlinked is not reused before a grace period, so a CAS
 * that compares a pointer never meets a recycled node (no ABA), and a walker standing on an
 * unlinked node still finds a valid link to follow (its flagged successor, a later node).
 *
 * add_unique is atomic: it inserts at the end of the run of nodes of its key, with CAS on the
 * link of the run's last node (or of the node before the run). add_unique and add_replace
 * insert a key only at the end of its run, so a concurrent one changes that same link, or flags
 * that node, and one of the two CASes fails and walks again, where it finds the other's node.
 * (cds_lfht_add, which allows duplicates, inserts at the start of the run: O(1) however many
 * duplicates there are. Mixed with add_unique on one key it may duplicate it, as in liburcu.)
 *
 * Resizing is done by the updaters, a bounded step at a time under a try-lock (no thread waits
 * for it, and none is created): growth links up to RS_BUDGET bucket nodes per step; a shrink
 * publishes the smaller size, waits for a grace period (a flavor callback sets a flag; nobody
 * waits for it), removes the surplus bucket nodes like any node, waits for a second one, and
 * frees their level. cds_lfht_resize() runs the same steps to the end, waiting with
 * flavor->barrier().
 *
 * Ordering. Every CAS is seq_cst: the insertion's publishes the node's fields (pairs with the
 * readers' rcu_dereference of the link, an address dependency), the unlink's passes on what the
 * walker read. The size is stored with release after the bucket nodes below it are linked and
 * loaded with acquire by every walk. liburcu documents a full barrier before and after each
 * successful update: a locked instruction is one on x86; elsewhere fences are added.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grace/list.h>

#include "compat.h"

GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_order = { NULL, NULL, NULL, NULL };
GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_chunk = { NULL, NULL, NULL, NULL };
GRACE_API const struct cds_lfht_mm_type grace_urcu_lfht_mm_mmap = { NULL, NULL, NULL, NULL };
/* The same objects under liburcu's names (liburcu-cds exports them; the headers map the names
 * to the grace_urcu_ ones): a program may take their address through either. */
#undef cds_lfht_mm_order
#undef cds_lfht_mm_chunk
#undef cds_lfht_mm_mmap
extern const struct cds_lfht_mm_type cds_lfht_mm_order
	__attribute__((alias("grace_urcu_lfht_mm_order"), visibility("default")));
extern const struct cds_lfht_mm_type cds_lfht_mm_chunk
	__attribute__((alias("grace_urcu_lfht_mm_chunk"), visibility("default")));
extern const struct cds_lfht_mm_type cds_lfht_mm_mmap
	__attribute__((alias("grace_urcu_lfht_mm_mmap"), visibility("default")));

#define ULONG_BITS (sizeof(unsigned long) * CHAR_BIT)
#define LFHT_SLOTS 16    /* count slots, each on its own cache line */
#define RS_BUDGET 1024   /* bucket nodes linked or removed per updater step */
#define CHAIN_GROW 3     /* nodes walked in a bucket that make an insertion check the count */
#define COUNT_CHECK 1023 /* a slot's count checked against the limits every 1024 changes */

enum rs_state { RS_IDLE, RS_GROW, RS_WAIT1, RS_REMOVE, RS_WAIT2 };

struct lfht_slot {
	long v;
	char pad[64 - sizeof(long)];
};

struct lfht {
	struct cds_lfht pub; /* first: the header's struct cds_lfht is its prefix */
	const struct rcu_flavor_struct *flavor;
	pthread_attr_t *attr;
	int flags;
	unsigned long min_size, max_size;
	/* Resizing: state and cursors written under rs_lock; rs_state and rs_target are read
	 * relaxed by updaters as hints (the step re-reads them under the lock). */
	pthread_mutex_t rs_lock;
	pid_t rs_pid; /* the process of rs_lock's holder (0: none), for a fork child's check */
	int rs_state;
	int rs_gp_done; /* set by the callback (release), read by the step (acquire) */
	unsigned long rs_target, rs_cursor, rs_from;
	struct rcu_head rs_head;
	struct grace_list_head fk; /* on fk_tables, the tables fork() locks (fk_lock) */
	struct lfht *fk_inc_next;  /* on fk_incoming, before fk_tables */
	struct lfht_slot slots[LFHT_SLOTS] __attribute__((aligned(64)));
};

static inline struct lfht *impl(struct cds_lfht *ht)
{
	return (struct lfht *)ht;
}

static inline struct cds_lfht_node *clr(struct cds_lfht_node *p)
{
	return grace_urcu__lfht_clear(p);
}

static inline struct cds_lfht_node *flagged(struct cds_lfht_node *p)
{
	return (struct cds_lfht_node *)((uintptr_t)p | GRACE_URCU__LFHT_REMOVED);
}

/* seq_cst on success (see Ordering above); nothing is read from a failed one. */
static inline bool cas(struct cds_lfht_node **link, struct cds_lfht_node *expect,
		       struct cds_lfht_node *v)
{
	return grace_cmpxchg_mo(link, &expect, v, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* liburcu's full barrier before and after an update's commit, ordering the caller's own
 * accesses around it (the other side is whatever the caller pairs it with); on x86 the CAS's
 * locked instruction is one. */
static inline void mb_non_tso(void)
{
#if !GRACE_ARCH_TSO
	grace_smp_mb();
#endif
}

static unsigned int order_of(unsigned long size)
{
	return (unsigned int)__builtin_ctzl(size); /* size = 2^order */
}

/* The smallest power of two at or above x; above the highest one an unsigned long holds (2^63
 * on LP64), that one: defined for every x (callers clamp to the table's limits first). */
static unsigned long roundup_pow2(unsigned long x)
{
	const unsigned long top = 1ul << (ULONG_BITS - 1);

	if (x <= 1)
		return 1;
	if (x > top)
		return top;
	return 1ul << (ULONG_BITS - (unsigned int)__builtin_clzl(x - 1));
}

/* ---- the list ---- */

struct pos {
	struct cds_lfht_node *prev, *cur; /* prev live with prev->next == cur when read */
	struct cds_lfht_node *found;      /* the match */
	unsigned int chain;               /* live regular nodes walked */
};

/* Whether a removed node is off the list, as its unlinking walker marked it (acquire: pairs with
 * that walker's release store of UNLINKED, after its unlinking CAS). */
static inline bool unlinked(const struct cds_lfht_node *n)
{
	return ((uintptr_t)grace_load_acquire(&n->next) & GRACE_URCU__LFHT_UNLINKED) != 0;
}

/*
 * Walk from the bucket of `key` at the current size to the first node whose key is larger,
 * unlinking every removed node met on the way. With match, note the first live node of key
 * `key` it accepts. With target (a removed node), stop once target is off the list: this walk
 * unlinked it, or another walker did and marked it UNLINKED. Caller inside a read-side section (the
 * nodes walked stay valid).
 */
static void walk_from(struct cds_lfht_node *bucket, unsigned long key, cds_lfht_match_fct match,
		      const void *mkey, struct pos *p, const struct cds_lfht_node *target)
{
restart:
	if (target && unlinked(target))
		return;
	p->prev = bucket;
	/* Acquire on the links: the node's fields were published by the CAS that linked it. */
	p->cur = clr(grace_load_acquire(&bucket->next));
	p->found = NULL;
	p->chain = 0;
	while (p->cur) {
		struct cds_lfht_node *next = grace_load_acquire(&p->cur->next);
		unsigned long k;

		if (grace_urcu__lfht_removed(next)) {
			/* Unlink cur; fails if prev was removed or its link changed: walk again. */
			if (!cas(&p->prev->next, p->cur, clr(next)))
				goto restart;
			if (p->cur == target)
				return;
			/*
			 * Tell cur's remover, which may be walking to it, that it is off the list. This
			 * walk's CAS was the one unlink of cur (a CAS from a node that is off the list,
			 * or flagged, fails), and cur's link is frozen (flagged): a plain store. Release:
			 * orders the unlink CAS before it (pairs with the acquire loads of target->next
			 * above and below).
			 */
			grace_store_release(&p->cur->next,
					    (struct cds_lfht_node *)((uintptr_t)next |
								     GRACE_URCU__LFHT_UNLINKED));
			p->cur = clr(next);
			continue;
		}
		k = p->cur->reverse_hash;
		if (k > key)
			break;
		/* In the key's run, where a remover looks for its node among duplicates: if another
		 * walker unlinked it, stop here, not at the end of the run. */
		if (target && k == key && unlinked(target))
			return;
		if (k & 1ul) {
			p->chain++;
			if (k == key && match && !p->found && match(p->cur, mkey))
				p->found = p->cur;
		}
		p->prev = p->cur;
		p->cur = clr(next);
	}
}

static void walk(struct lfht *h, unsigned long key, cds_lfht_match_fct match, const void *mkey,
		 struct pos *p, const struct cds_lfht_node *target)
{
	/* Acquire: the bucket nodes below the size are linked (pairs with the resize's release). */
	unsigned long size = grace_load_acquire(&h->pub.size);

	walk_from(grace_urcu__lfht_bucket(&h->pub, grace_urcu__lfht_rev(key) & (size - 1)), key,
		  match, mkey, p, target);
}

/* Link node (key set) before the first node of a larger key: a bucket node, or a regular node
 * at the end of its key's run. */
static void link_node(struct lfht *h, struct cds_lfht_node *node, struct pos *p)
{
	for (;;) {
		walk(h, node->reverse_hash, NULL, NULL, p, NULL);
		grace_store_relaxed(&node->next, p->cur); /* not reachable yet */
		if (cas(&p->prev->next, p->cur, node))
			return;
	}
}

/*
 * Remove node with one CAS of its link: flagged, and pointing at repl (a replacement, whose link
 * is first set to node's successor: it takes node's place) or at node's successor (a deletion).
 * False if node was already removed: another remover won.
 */
static bool remove_node(struct cds_lfht_node *node, struct cds_lfht_node *repl)
{
	/* Relaxed: a first guess; the CAS checks it. */
	struct cds_lfht_node *next = grace_load_relaxed(&node->next);

	for (;;) {
		if (grace_urcu__lfht_removed(next))
			return false;
		if (repl)
			grace_store_relaxed(&repl->next, next); /* not reachable yet */
		/* seq_cst: publishes repl's fields to a reader that loads node->next (its
		 * rcu_dereference, an address dependency, pairs with it), and is liburcu's full
		 * barrier of the commit on x86. */
		if (grace_cmpxchg_mo(&node->next, &next, flagged(repl ? repl : next),
				     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return true;
	}
}

/* Unlink the removed node (the remover's own walk): when this returns it is off the list. */
static void unlink_removed(struct lfht *h, const struct cds_lfht_node *node)
{
	struct pos p;

	walk(h, node->reverse_hash, NULL, NULL, &p, node);
}

/* ---- counting ---- */

static __thread unsigned int lfht_slot_of = UINT_MAX;
static unsigned int lfht_slot_next;

static long count_change(struct lfht *h, long d)
{
	if (GRACE_UNLIKELY(lfht_slot_of == UINT_MAX))
		lfht_slot_of = grace_fetch_add(&lfht_slot_next, 1u, __ATOMIC_RELAXED) % LFHT_SLOTS;
	/* Relaxed: an approximate count that only steers resizing. */
	return grace_fetch_add(&h->slots[lfht_slot_of].v, d, __ATOMIC_RELAXED) + d;
}

static long count_sum(struct lfht *h)
{
	long s = 0;

	/* Relaxed: an approximation that only steers resizing (count_change()). */
	for (int i = 0; i < LFHT_SLOTS; i++)
		s += grace_load_relaxed(&h->slots[i].v);
	return s;
}

/* ---- resizing ---- */

static void rs_gp_cb(struct rcu_head *head)
{
	struct lfht *h = grace_container_of(head, struct lfht, rs_head);

	/* Release: pairs with the step's acquire; the grace period is over. */
	grace_store_release(&h->rs_gp_done, 1);
}

static void rs_gp_request(struct lfht *h)
{
	/* Relaxed: under rs_lock, and the callback that sets it again is queued after it. */
	grace_store_relaxed(&h->rs_gp_done, 0);
	h->flavor->update_call_rcu(&h->rs_head, rs_gp_cb);
}

static bool link_bucket(struct lfht *h, unsigned long i)
{
	unsigned int o = (unsigned int)ULONG_BITS - (unsigned int)__builtin_clzl(i);
	struct cds_lfht_node *b = &h->pub.tbl[o][i - (1ul << (o - 1))];
	struct pos p;

	b->reverse_hash = grace_urcu__lfht_rev(i);
	link_node(h, b, &p);
	return true;
}

/*
 * Remove bucket node i (>= the size now published). Its unlinking walk starts from its parent
 * i - 2^(o-1), not from the bucket of the new size: buckets are removed from the highest index
 * down, so between the parent and i lie only the regular nodes of one bucket of the size that
 * had i (a walk from the new size's bucket would cross every bucket node still to be removed:
 * quadratic in a shrink by several levels).
 */
static void remove_bucket(struct lfht *h, unsigned long i)
{
	unsigned int o = (unsigned int)ULONG_BITS - (unsigned int)__builtin_clzl(i);
	struct cds_lfht_node *b = grace_urcu__lfht_bucket(&h->pub, i);
	struct pos p;

	(void)remove_node(b, NULL); /* only the resizer removes bucket nodes */
	walk_from(grace_urcu__lfht_bucket(&h->pub, i - (1ul << (o - 1))), b->reverse_hash, NULL,
		  NULL, &p, b);
}

/*
 * Advance the resize by up to `budget` bucket nodes. rs_lock held, inside a read-side section.
 * Returns when the target is reached, a grace period must pass, or the budget is spent.
 */
static void rs_step(struct lfht *h, unsigned long budget)
{
	for (;;) {
		unsigned long size = h->pub.size, target;
		unsigned int o;

		switch (h->rs_state) {
		case RS_IDLE:
			target = grace_load_relaxed(&h->rs_target);
			if (target > size) {
				grace_store_relaxed(&h->rs_state, RS_GROW);
				h->rs_cursor = size;
				continue;
			}
			if (target < size) {
				/* Release: orders nothing a reader needs (the smaller size's
				 * buckets are all linked); the grace period after it is what
				 * retires the larger size. */
				grace_store_release(&h->pub.size, target);
				h->rs_from = size;
				grace_store_relaxed(&h->rs_state, RS_WAIT1);
				rs_gp_request(h);
			}
			return;
		case RS_GROW:
			o = order_of(size) + 1; /* the level of buckets [size, 2 size) */
			if (!h->pub.tbl[o]) {
				struct cds_lfht_node *lv = (struct cds_lfht_node *)
					calloc(size, sizeof(struct cds_lfht_node));
				if (!lv) {
					/* No memory: stay at this size (the next trigger retries). */
					grace_store_relaxed(&h->rs_target, size);
					grace_store_relaxed(&h->rs_state, RS_IDLE);
					return;
				}
				/* Read by walks only after they load a size above it (acquire). */
				h->pub.tbl[o] = lv;
			}
			while (h->rs_cursor < 2 * size && budget) {
				link_bucket(h, h->rs_cursor++);
				budget--;
			}
			if (h->rs_cursor < 2 * size)
				return;
			/* Release: every bucket node below 2 size is linked before a walk that
			 * loads the size (acquire) can start from one of them. */
			grace_store_release(&h->pub.size, 2 * size);
			grace_store_relaxed(&h->rs_state, RS_IDLE);
			if (!budget)
				return;
			continue;
		case RS_WAIT1:
			/* Acquire: pairs with rs_gp_cb(); no walk uses the larger size now. */
			if (!grace_load_acquire(&h->rs_gp_done))
				return;
			grace_store_relaxed(&h->rs_state, RS_REMOVE);
			h->rs_cursor =
				h->rs_from; /* from the highest bucket down (remove_bucket) */
			continue;
		case RS_REMOVE:
			while (h->rs_cursor > size && budget) {
				remove_bucket(h, --h->rs_cursor);
				budget--;
			}
			if (h->rs_cursor > size)
				return;
			grace_store_relaxed(&h->rs_state, RS_WAIT2);
			rs_gp_request(h);
			return;
		case RS_WAIT2:
			/* After this grace period no reader stands on a removed bucket node. */
			if (!grace_load_acquire(&h->rs_gp_done))
				return;
			for (o = order_of(size) + 1; o <= order_of(h->rs_from); o++) {
				free(h->pub.tbl[o]);
				h->pub.tbl[o] = NULL;
			}
			grace_store_relaxed(&h->rs_state, RS_IDLE);
			continue;
		default:
			return;
		}
	}
}

/* Is there resize work an updater could do now? Relaxed hints, re-read under the lock. */
static inline bool rs_pending(struct lfht *h)
{
	int st = grace_load_relaxed(&h->rs_state);

	if (st == RS_IDLE)
		return grace_load_relaxed(&h->rs_target) != grace_load_relaxed(&h->pub.size);
	if (st == RS_WAIT1 || st == RS_WAIT2)
		return grace_load_relaxed(&h->rs_gp_done) != 0;
	return true;
}

/* An updater's share: one bounded step, if no other thread is resizing. */
static void rs_help(struct lfht *h)
{
	if (pthread_mutex_trylock(&h->rs_lock) != 0)
		return;
	grace_store_relaxed(&h->rs_pid, getpid());
	rs_step(h, RS_BUDGET);
	grace_store_relaxed(&h->rs_pid, 0);
	pthread_mutex_unlock(&h->rs_lock);
}

/*
 * Take rs_lock and wait for it (explicit resize, destroy). The fork handlers (below) make sure
 * that no child inherits it held; a child made without them (a raw clone system call, or after
 * pthread_atfork() failed) whose parent had another thread inside a resize step inherits the lock
 * held by a thread it does not have: waiting would hang for good, and the step's state may be
 * half done. Report it instead (updaters only try-lock: in that child the table works but never
 * resizes).
 */
/* Is rs_lock held by a thread of another process (this one is a raw clone child)? Then report:
 * nothing here can ever release it. Relaxed: only its owner writes rs_pid while holding the
 * lock; a child sees the parent's value frozen. */
static void rs_check_inherited(struct lfht *h, const char *call)
{
	pid_t holder = grace_load_relaxed(&h->rs_pid);

	if (holder != 0 && holder != getpid())
		grace_urcu__misuse(call, "the process forked while another thread was resizing "
					 "this table: the child cannot resize or destroy it");
}

static void rs_lock_wait(struct lfht *h, const char *call)
{
	if (pthread_mutex_trylock(&h->rs_lock) != 0) {
		rs_check_inherited(h, call);
		pthread_mutex_lock(&h->rs_lock);
	}
	grace_store_relaxed(&h->rs_pid, getpid());
}

static void rs_unlock(struct lfht *h)
{
	grace_store_relaxed(&h->rs_pid, 0);
	pthread_mutex_unlock(&h->rs_lock);
}

static unsigned long clamp_size(struct lfht *h, unsigned long n)
{
	if (n < h->min_size)
		return h->min_size;
	if (n > h->max_size)
		return h->max_size;
	return n;
}

/* After an insertion: grow to the count's power of two when the table is full. */
static void grow_check(struct lfht *h)
{
	long n = count_sum(h);
	unsigned long size = grace_load_relaxed(&h->pub.size);

	if (n > 0 && (unsigned long)n > size && size < h->max_size) {
		unsigned long t = roundup_pow2(clamp_size(h, (unsigned long)n));

		if (t > grace_load_relaxed(&h->rs_target))
			grace_store_relaxed(&h->rs_target, t);
	}
}

/* After a removal (CDS_LFHT_ACCOUNTING): shrink below one node per eight buckets. */
static void shrink_check(struct lfht *h)
{
	long n = count_sum(h);
	unsigned long size = grace_load_relaxed(&h->pub.size);

	if (n >= 0 && (unsigned long)n < size / 8 && size > h->min_size) {
		unsigned long t = clamp_size(h, 2 * roundup_pow2((unsigned long)n));

		if (t < grace_load_relaxed(&h->rs_target))
			grace_store_relaxed(&h->rs_target, t);
	}
}

static void after_insert(struct lfht *h, unsigned int chain)
{
	long c = count_change(h, 1);

	if ((h->flags & CDS_LFHT_AUTO_RESIZE) && (chain >= CHAIN_GROW || !(c & COUNT_CHECK)))
		grow_check(h);
	if (GRACE_UNLIKELY(rs_pending(h)))
		rs_help(h);
}

static void after_remove(struct lfht *h)
{
	long c = count_change(h, -1);

	if ((h->flags & CDS_LFHT_AUTO_RESIZE) && (h->flags & CDS_LFHT_ACCOUNTING) &&
	    !(c & COUNT_CHECK))
		shrink_check(h);
	if (GRACE_UNLIKELY(rs_pending(h)))
		rs_help(h);
}

/* ---- API ---- */

static bool pow2(unsigned long x)
{
	return x && !(x & (x - 1));
}

/*
 * fork(). The resize state is changed only under a table's rs_lock, by one bounded step that
 * never waits for a grace period. The prepare handler takes every table's rs_lock (after fk_lock,
 * which guards the list of tables: lock order fk_lock, then rs_lock; nothing takes them the
 * other way round), so no step is half done when the process is copied; the parent and the child
 * release them. The child then resizes and destroys its copy like any table: a shrink that was
 * waiting for a grace period goes on when its callback runs (libgrace runs the parent's queued
 * callbacks in the child). Registered at the first cds_lfht_new(), so after libgrace's own
 * handlers: these prepare handlers run first (POSIX: in reverse order of registration), while
 * libgrace still runs. A step in progress elsewhere holds its rs_lock only for its bounded work.
 *
 * No grace worker waits for fk_lock: libgrace's prepare handler, which runs after fk_prepare(),
 * waits for the workers to leave their callbacks, so a callback that blocked on fk_lock (a
 * cds_lfht_new() from a call_rcu() callback) would hold every fork() for libgrace's whole pause
 * and be copied half run. A new table is therefore pushed on `fk_incoming`, a lock-free stack
 * (compare-and-swap, release), and every holder of fk_lock first moves the whole stack onto
 * fk_tables (fk_take_incoming(): one exchange, acquire, paired with the push). Pushes only, one
 * taker of the whole stack at a time: no ABA. A table is pushed once, by cds_lfht_new(), so it is
 * on fk_tables when cds_lfht_destroy() unlinks it (under fk_lock, after a take). A table created
 * by another thread after fk_prepare()'s take is not locked for that fork: its creator was not
 * paused, like any thread caught by fork() (a grace worker is, between two callbacks); if it was
 * inside a resize step of that new table, the child's rs_lock_wait() reports it.
 */
static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static GRACE_LIST_HEAD(fk_tables);
static struct lfht *fk_incoming; /* new tables, not yet on fk_tables */
static pthread_once_t fk_once = PTHREAD_ONCE_INIT;

/* The table of a list entry. The walks go over the plain links and convert only real entries:
 * the typed iterator would form a struct lfht (64-byte aligned) around the list head itself. */
static inline struct lfht *fk_table(struct grace_list_head *e)
{
	return grace_list_entry(e, struct lfht, fk);
}

/* Move the incoming stack onto fk_tables. fk_lock held. */
static void fk_take_incoming(void)
{
	/* Acquire: pairs with the release compare-and-swap of every push taken. */
	struct lfht *h = grace_xchg(&fk_incoming, (struct lfht *)NULL, __ATOMIC_ACQUIRE);

	while (h) {
		struct lfht *nx = h->fk_inc_next;

		grace_list_add(&h->fk, &fk_tables);
		h = nx;
	}
}

static void fk_prepare(void)
{
	struct grace_list_head *e;

	pthread_mutex_lock(&fk_lock);
	fk_take_incoming();
	grace_list_for_each(e, &fk_tables)
		pthread_mutex_lock(&fk_table(e)->rs_lock);
}

/* After fork(), in the parent and in the child alike: the thread that took every lock in
 * fk_prepare() releases them (the tables on fk_tables then; any pushed since stay on the stack,
 * unlocked). */
static void fk_release(void)
{
	struct grace_list_head *e;

	grace_list_for_each(e, &fk_tables)
		pthread_mutex_unlock(&fk_table(e)->rs_lock);
	pthread_mutex_unlock(&fk_lock);
}

static void fk_register(void)
{
	/* Without the handlers (out of memory) a fork child may inherit a resize step in progress:
	 * rs_lock_wait() reports that in the child, when it resizes or destroys the table. */
	if (pthread_atfork(fk_prepare, fk_release, fk_release) != 0)
		grace_urcu__warn("cds_lfht_new", "pthread_atfork() failed (out of memory): a fork "
						 "child may be unable to resize a table");
}

/* No lock: the caller may be a grace worker (see above). */
static void fk_add(struct lfht *h)
{
	pthread_once(&fk_once, fk_register);
	/* Relaxed: a first guess; the compare-and-swap checks it. */
	struct lfht *top = grace_load_relaxed(&fk_incoming);

	do {
		h->fk_inc_next = top;
		/* Release: the table (its rs_lock) and its link before it is reachable from the
		 * stack; pairs with the acquire exchange in fk_take_incoming(). */
	} while (!grace_cmpxchg_mo(&fk_incoming, &top, h, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Called without rs_lock held (lock order). */
static void fk_del(struct lfht *h)
{
	pthread_mutex_lock(&fk_lock);
	fk_take_incoming(); /* h may still be on the stack */
	grace_list_del(&h->fk);
	pthread_mutex_unlock(&fk_lock);
}

struct cds_lfht *grace_urcu_lfht_new(unsigned long init_size, unsigned long min_nr_alloc_buckets,
				     unsigned long max_nr_buckets, int flags,
				     const struct rcu_flavor_struct *flavor, pthread_attr_t *attr)
{
	const unsigned long cap = 1ul << (ULONG_BITS - 2);
	struct lfht *h;
	unsigned long max;

	/* liburcu's rules: powers of two; max 0 means unbounded. */
	if (!flavor || !pow2(init_size) || !pow2(min_nr_alloc_buckets) ||
	    (max_nr_buckets && !pow2(max_nr_buckets)) ||
	    (flags & ~(CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING))) {
		errno = EINVAL;
		return NULL;
	}
	if (posix_memalign((void **)&h, 64, sizeof(*h)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(h, 0, sizeof(*h));
	max = max_nr_buckets && max_nr_buckets < cap ? max_nr_buckets : cap;
	/* A minimum above the maximum raises the maximum (liburcu's rule), up to the cap. */
	if (min_nr_alloc_buckets > max)
		max = min_nr_alloc_buckets < cap ? min_nr_alloc_buckets : cap;
	h->max_size = max;
	h->min_size = min_nr_alloc_buckets < max ? min_nr_alloc_buckets : max;
	h->flavor = flavor;
	h->attr = attr;
	h->flags = flags;
	pthread_mutex_init(&h->rs_lock, NULL);
	init_size = clamp_size(h, init_size);

	/* Bucket 0, then each level up to the initial size: no reader yet, the same code. */
	h->pub.tbl[0] = (struct cds_lfht_node *)calloc(1, sizeof(struct cds_lfht_node));
	if (!h->pub.tbl[0])
		goto nomem;
	h->pub.size = 1;
	h->rs_target = init_size;
	/* No other thread can see the table yet: no read-side section needed (and a QSBR caller
	 * may create a table before it registers, as with liburcu). */
	rs_step(h, ULONG_MAX);
	if (h->pub.size != init_size)
		goto nomem;
	fk_add(h);
	return &h->pub;
nomem:
	for (unsigned int o = 0; o < GRACE_URCU__LFHT_ORDERS; o++)
		free(h->pub.tbl[o]);
	pthread_mutex_destroy(&h->rs_lock);
	free(h);
	errno = ENOMEM;
	return NULL;
}

/* Calls that wait for grace periods: report them where that would deadlock, naming the call. */
static void check_may_block(struct lfht *h, const char *call)
{
	bool in = false;

	if (h->flavor == &urcu_qsbr_flavor)
		in = grace_urcu__qsbr_nest != 0; /* known when the caller uses GRACE_DEBUG */
	else if (h->flavor == &urcu_memb_flavor || h->flavor == &urcu_mb_flavor ||
		 h->flavor == &urcu_signal_flavor || h->flavor == &urcu_bp_flavor)
		in = grace_rcu_read_ongoing();
	if (in)
		grace_urcu__misuse(call,
				   "called inside rcu_read_lock(): it waits for grace periods "
				   "(it would deadlock)");
}

/* Run the resize to its end (explicit resize, destroy): wait for its grace periods. */
static void rs_finish(struct lfht *h, const char *call)
{
	for (;;) {
		int st;

		h->flavor->read_lock();
		rs_lock_wait(h, call);
		rs_step(h, ULONG_MAX);
		st = h->rs_state;
		rs_unlock(h);
		h->flavor->read_unlock();
		if (st == RS_IDLE)
			return;
		/* WAIT1 or WAIT2: the callback that ends the wait has run after this. */
		h->flavor->barrier();
	}
}

int grace_urcu_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr)
{
	struct lfht *h = impl(ht);
	struct cds_lfht_iter it;

	if (!ht)
		return -EINVAL;
	check_may_block(h, "cds_lfht_destroy");
	/* No update runs any more (liburcu's contract for destroy), so nothing on the list is
	 * freed under this walk: no read-side section (the caller may have unregistered). */
	cds_lfht_first(ht, &it);
	if (it.node)
		return -EPERM; /* liburcu: the table must be empty */
	/* A child made without the fork handlers (a raw clone) that inherited the resize lock held
	 * by another thread of the parent: report it now. The grace period below would wait for
	 * that thread's read-side section, which never ends here, and hang without a word. */
	rs_check_inherited(h, "cds_lfht_destroy");
	/* Readers that were still walking (the caller has stopped new ones) end first; a shrink
	 * under way waits for its callback. */
	h->flavor->update_synchronize_rcu();
	rs_lock_wait(h, "cds_lfht_destroy");
	if (h->rs_state == RS_WAIT1 || h->rs_state == RS_WAIT2) {
		rs_unlock(h);
		h->flavor->barrier();
	} else {
		rs_unlock(h);
	}
	fk_del(h);
	for (unsigned int o = 0; o < GRACE_URCU__LFHT_ORDERS; o++)
		free(h->pub.tbl[o]);
	pthread_mutex_destroy(&h->rs_lock);
	if (attr)
		*attr = h->attr;
	free(h);
	return 0;
}

void grace_urcu_lfht_count_nodes(struct cds_lfht *ht, long *split_count_before,
				 unsigned long *count, long *split_count_after)
{
	struct lfht *h = impl(ht);
	struct cds_lfht_iter it;
	unsigned long c = 0;

	if (split_count_before)
		*split_count_before = count_sum(h);
	for (cds_lfht_first(ht, &it); it.node; cds_lfht_next(ht, &it))
		c++;
	if (count)
		*count = c;
	if (split_count_after)
		*split_count_after = count_sum(h);
}

enum add_mode { ADD_DUP, ADD_UNIQUE, ADD_REPLACE };

static struct cds_lfht_node *do_add(struct lfht *h, unsigned long hash, cds_lfht_match_fct match,
				    const void *key, struct cds_lfht_node *node, enum add_mode mode)
{
	struct pos p;

	node->reverse_hash = grace_urcu__lfht_key(hash); /* not reachable yet */
	mb_non_tso();
	for (;;) {
		/*
		 * add_unique and add_replace look through the key's run and insert at its end (the
		 * atomicity argument above); add, which allows duplicates, inserts at its start
		 * (walking to key - 1, even: past a bucket node of that value, to the first node of
		 * the key), so a run of duplicates costs it nothing.
		 */
		if (mode == ADD_DUP)
			walk(h, node->reverse_hash - 1, NULL, NULL, &p, NULL);
		else
			walk(h, node->reverse_hash, match, key, &p, NULL);
		if (p.found && mode == ADD_UNIQUE)
			return p.found;
		if (p.found) {
			/* A node cannot take its own place: remove_node() would link it to itself
			 * and every later walk of its bucket would spin. liburcu asserts it. */
			if (GRACE_UNLIKELY(p.found == node))
				grace_urcu__misuse("cds_lfht_add_replace",
						   "the node is already in the table (it would "
						   "replace itself): pass a new node");
			/* Replace: old removed and node in its place, in one CAS. */
			if (!remove_node(p.found, node))
				continue; /* removed meanwhile: walk again */
			unlink_removed(h, p.found);
			mb_non_tso();
			return p.found;
		}
		grace_store_relaxed(&node->next, p.cur);
		if (cas(&p.prev->next, p.cur, node))
			break;
	}
	mb_non_tso();
	after_insert(h, p.chain);
	return mode == ADD_UNIQUE ? node : NULL;
}

void grace_urcu_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node)
{
	(void)do_add(impl(ht), hash, NULL, NULL, node, ADD_DUP);
}

struct cds_lfht_node *grace_urcu_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
						 cds_lfht_match_fct match, const void *key,
						 struct cds_lfht_node *node)
{
	return do_add(impl(ht), hash, match, key, node, ADD_UNIQUE);
}

struct cds_lfht_node *grace_urcu_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
						  cds_lfht_match_fct match, const void *key,
						  struct cds_lfht_node *node)
{
	return do_add(impl(ht), hash, match, key, node, ADD_REPLACE);
}

int grace_urcu_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter, unsigned long hash,
			    cds_lfht_match_fct match, const void *key,
			    struct cds_lfht_node *new_node)
{
	struct lfht *h = impl(ht);
	struct cds_lfht_node *old = old_iter ? old_iter->node : NULL;

	if (!old)
		return -ENOENT;
	if (GRACE_UNLIKELY(old == new_node))
		grace_urcu__misuse("cds_lfht_replace", "the new node is the node it replaces (it "
						       "would link to itself): pass a new node");
	if (old->reverse_hash != grace_urcu__lfht_key(hash) || !match(old, key))
		return -EINVAL; /* the new node must have the old one's hash and key */
	new_node->reverse_hash = old->reverse_hash;
	mb_non_tso();
	if (!remove_node(old, new_node))
		return -ENOENT;
	unlink_removed(h, old);
	mb_non_tso();
	return 0;
}

int grace_urcu_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node)
{
	struct lfht *h = impl(ht);

	if (!node)
		return -ENOENT;
	if (!(node->reverse_hash & 1ul))
		grace_urcu__misuse("cds_lfht_del", "the node is a bucket node of the table, or was "
						   "never added: pass a node from a lookup");
	mb_non_tso();
	if (!remove_node(node, NULL))
		return -ENOENT;
	unlink_removed(h, node);
	mb_non_tso();
	after_remove(h);
	return 0;
}

void grace_urcu_lfht_resize(struct cds_lfht *ht, unsigned long new_size)
{
	struct lfht *h = impl(ht);

	check_may_block(h, "cds_lfht_resize");
	/* Clamp, then round: min and max are powers of two, so the result stays within them
	 * (liburcu clamps to max_nr_buckets the same way; ULONG_MAX means as large as allowed). */
	grace_store_relaxed(&h->rs_target, roundup_pow2(clamp_size(h, new_size)));
	rs_finish(h, "cds_lfht_resize");
}
