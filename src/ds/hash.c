/* SPDX-License-Identifier: MIT */
/*
 * Resizable RCU hash table (include/grace/hash.h) with per-stripe update locks. Resizing uses
 * two sets of chain links per node (Herbert Xu's scheme, described in McKenney's "Is Parallel
 * Programming Hard" as the resizable hash table with per-element link pairs): a bucket array
 * links its chains through one of them, the next array is built through the other while
 * readers keep using the first, then published. A resize to any power of two takes one build
 * pass and one grace period, however far the table is from its target.
 *
 * Structure. A bucket array (struct grace_hash_table: 2^k chain heads and its link index idx)
 * holds singly linked chains through node->next[idx]; each node stores the full hash of its
 * key and lies in the chain of bucket (hash & mask). Readers load the array once (their
 * snapshot), go to the bucket of their hash, and follow next[snapshot->idx], skipping nodes
 * whose stored hash differs (the bucket holds every hash with the same low bits). Updaters lock
 * stripe (hash & (nlocks - 1)); every size is a power of two >= nlocks, so a chain of any array
 * lies under one stripe lock.
 *
 * Readers never miss a node present for their whole traversal, and never see one twice: every
 * change to a chain a reader may be walking is one of these, each an RCU-safe list operation.
 *
 * STABLE (one array, idx i). Insertion fills the node's link i, then publishes it at the head of
 * its chain (rcu_assign_pointer: release; readers load with rcu_dereference: dependency).
 * Deletion redirects the one link i that points to the node to its successor and leaves the
 * node's links intact, so a reader standing on it continues; the node is retired through
 * ops->call, hence freed after every reader that could stand on it has finished. Replacement
 * redirects that link to the new node, whose link i is the old node's.
 *
 * RESIZE (from array t, idx i, to array f of any power-of-two size, idx 1 - i).
 *  Preconditions: no reader uses link set 1 - i. It held the chains of the array t replaced;
 *  that array was retired, and a grace period passed, before this resize began (the background
 *  resize ends with that grace period; grace_hash_resize() waits for it before returning).
 *  Build: f is attached to the table (upd->future, release), then stripe by stripe, under that
 *  stripe's lock, every node of the stripe's chains in t is pushed onto its chain of f through
 *  link 1 - i (plain stores: f is invisible to readers until published), and the stripe is
 *  marked built. Updaters of a built stripe keep both arrays: an insertion goes to the head of
 *  its chain in t (link i) and in f (link 1 - i); a deletion or replacement redirects the link
 *  to the node in both. Updaters of a stripe not built yet change t only; the build reads
 *  their result. Readers use t throughout, whose chains change only as in STABLE.
 *  Publish: with every stripe locked (every stripe built, no update half-done), ht->tbl = f
 *  (store-release: a reader that loads f sees every chain built above and every update since;
 *  pairs with rcu_dereference(ht->tbl)). From here updaters change f only. t's chains are
 *  frozen: a reader of t walks them as they were; a node deleted from f after this point is
 *  still reachable in t, which is why it is retired after a grace period like any deleted node,
 *  and a node inserted into f is not reachable in t (it was inserted meanwhile: allowed).
 *  Then t is retired through ops->call (or freed after ops->synchronize()), and link set i is
 *  free again for the next resize once that grace period has passed.
 * A reader keeps one snapshot for a whole traversal (grace_hash_for_each_possible_rcu() and the
 * iterator carry it): following link i from a node found in t, never link 1 - i, so it walks
 * exactly t's chains, which hold every node present throughout.
 *
 * Locks and callbacks. Updaters hold one stripe lock at a time, and while holding it call no
 * user code but match() (which must not use the table) and never the flavor (call_rcu may wait
 * at its hard limit for callbacks, one of which may be a resize step that needs the lock). The
 * resizer takes stripes in index order. Resizing in the background runs as flavor callbacks (a
 * build-and-publish step, then a step after the grace period that frees the old array): a
 * callback never waits for a grace period, it only takes the stripe locks.
 *
 * Fork. Every live table is on a list (fk_tables, under fk_lock). The fork handlers are called
 * by the library's own (src/init.c), after the callback engine has paused its workers between
 * two callbacks and before the flavors' registry locks are taken: prepare takes fk_lock, then
 * each table's rs_lock and its stripe locks in index order (the order lock_all() and the
 * builder use; nothing takes rs_lock while holding a stripe lock). Every holder of these locks
 * finishes in bounded time without waiting for a grace period, a flavor call or another table:
 * the engine's locks are held by then, so no update path calls the flavor under a table lock
 * (match() must not either). Taken after the pause, they are never awaited by a running resize
 * callback (had they been taken first, the pause would wait for that callback, then give up and
 * count it as run in the child). So the copy has no update, build step or publication half
 * done, and the child's handler reads each table's resize state exactly:
 *  - RS_THREAD: the resizer is a thread (grace_hash_resize(), an update resizing inline, a
 *    running callback) that the child lacks. An unpublished build is rolled back (the future
 *    array is freed, the stripes unmarked: readers never saw it). A published resize whose old
 *    array still waits for its grace period becomes RS_ORPHAN: its free step is handed to the
 *    flavor by the child's next grace_hash_resize(), grace_hash_destroy() or automatic-resize
 *    update (that call_* also restarts the child's callback workers).
 *  - RS_QUEUED: the step is a queued callback, which the child's engine runs once its workers
 *    restart (its next call_*, barrier or start_poll); or its queuing thread was between
 *    rs_lock and the call_* at the fork, and it was never queued. `inherited` marks the doubt:
 *    a waiter calls the flavor's barrier (which starts the workers and runs every queued
 *    callback); if the step has not run by then, it was never queued, and the waiter queues it.
 * grace_hash_create() takes fk_lock to link a table: only fork's prepare holds it otherwise, and
 * only after the engine's pause, so a create from a callback can wait on it only while that
 * callback already counts as run in the child (the pause gave up on it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <grace/hash.h>
#include <grace/list.h>
#include <grace/qsbr.h>
#include <grace/rcu.h>

#include "core/diag.h"
#include "core/lock.h"
#include "core/sys.h"
#include "ds/hash.h"
#include "engine/callback.h"

#define DEFAULT_INIT 64
#define DEFAULT_MIN_CAP 64
#define DEFAULT_MAX ((size_t)1 << 30)
#define DEFAULT_LOCKS_CAP 256

struct stripe {
	struct grace__lock lock;
	size_t count; /* nodes of this stripe; written under lock, read relaxed */
	long delta;   /* changes not yet added to upd->approx; under lock */
	bool built;   /* RESIZE build: this stripe's nodes are in the future array; under lock */
} GRACE_ALIGNED_CACHE;

enum rs_step { RS_START, RS_FREE };

/* Who drives the resize in progress (`resizing` set); under rs_lock. See "Fork" above. */
enum rs_who {
	RS_NONE,   /* no resize */
	RS_THREAD, /* a thread runs its steps now (a caller, an update, a callback) */
	RS_QUEUED, /* its next step is queued as a flavor callback, or is being queued */
	RS_ORPHAN, /* fork child: published by a thread it lacks; the free step is not queued */
};

struct grace__hash_upd {
	const struct grace_flavor_ops *ops;
	rcu_callback_t free_fn;
	size_t min_buckets, max_buckets;
	size_t size; /* buckets of the current array; written with every stripe locked */
	unsigned int nlocks;
	uint64_t lock_mask;
	unsigned int flags;
	struct stripe *stripes;

	/* RESIZE build: the array being built (updaters of built stripes keep it in step). */
	struct grace_hash_table *future;

	/* Resize driver, under rs_lock. */
	struct grace__lock rs_lock;
	bool resizing, dying;
	bool inherited; /* fork child: `who` was RS_QUEUED at the fork (see "Fork") */
	enum rs_step step;
	enum rs_who who; /* written under rs_lock; maybe_resize() reads it relaxed */
	/* Published over, freed after the next grace period. Set by the resizer with every stripe
	 * locked, cleared under rs_lock: fork's prepare holds both. */
	struct grace_hash_table *rs_old;
	struct rcu_head rs_rcu;
	struct grace_hash *ht;

	/* On fk_tables (fk_lock). */
	struct grace_list_head fk_node;

	/*
	 * Approximate node count for the automatic-resize thresholds, like Linux's percpu_counter:
	 * each stripe adds its changes here once they reach `batch` (about size / (16 nlocks)), so
	 * the count is off by at most size / 16 and its cache line is written rarely; updaters
	 * never sum the stripes on the fast path. Alone on its line.
	 */
	long approx GRACE_ALIGNED_CACHE;
	long batch;

	/* Statistics (relaxed atomics). */
	uint64_t grows, shrinks, relinked;
};

static size_t roundup_pow2(size_t x)
{
	size_t p = 1;

	while (p < x && p < ((size_t)1 << (sizeof(size_t) * 8 - 2)))
		p <<= 1;
	return p;
}

static struct grace_hash_table *tbl_alloc(size_t nbuckets, unsigned int idx)
{
	size_t bytes = sizeof(struct grace_hash_table) +
		       nbuckets * sizeof(struct grace_hash_node *);
	struct grace_hash_table *t;

	bytes = (bytes + GRACE_CACHE_LINE - 1) & ~(size_t)(GRACE_CACHE_LINE - 1);
	t = (struct grace_hash_table *)aligned_alloc(GRACE_CACHE_LINE, bytes);
	if (!t)
		return NULL;
	memset(t, 0, bytes);
	t->mask = nbuckets - 1;
	t->idx = idx;
	return t;
}

static void tbl_free_cb(struct rcu_head *head)
{
	free(grace_container_of(head, struct grace_hash_table, rcu));
}

static struct grace_hash_table *cur_tbl(struct grace_hash *ht)
{
	/* Update side: the array changes only with every stripe locked, and the caller holds a
	 * stripe lock or is the resizer. */
	return rcu_dereference_protected(ht->tbl, 1);
}

static struct stripe *stripe_of(struct grace__hash_upd *u, uint64_t h)
{
	return &u->stripes[h & u->lock_mask];
}

static void lock_all(struct grace__hash_upd *u)
{
	for (unsigned int i = 0; i < u->nlocks; i++)
		grace__lock(&u->stripes[i].lock);
}

static void unlock_all(struct grace__hash_upd *u)
{
	for (unsigned int i = u->nlocks; i-- > 0;)
		grace__unlock(&u->stripes[i].lock);
}

/* The approximate counter's batch for a table of `size` buckets. */
static void set_batch(struct grace__hash_upd *u, size_t size)
{
	size_t b = size / ((size_t)u->nlocks * 16);

	grace_store_relaxed(&u->batch, (long)(b ? b : 1));
}

/* Account one insertion (+1) or deletion (-1) in stripe st, whose lock the caller holds. */
static void count_change(struct grace__hash_upd *u, struct stripe *st, long d)
{
	long b = grace_load_relaxed(&u->batch);

	grace__lock_assert_held(&st->lock);
	grace_store_relaxed(&st->count, st->count + (size_t)d);
	st->delta += d;
	if (st->delta >= b || st->delta <= -b) {
		grace_fetch_add(&u->approx, st->delta, __ATOMIC_RELAXED);
		st->delta = 0;
	}
}

/* ---- the updater's view of a hash's chains, under its stripe lock ---- */

/* The chains an update must change: the current array's, and during a resize build of a built
 * stripe the future array's; each with the link index its array uses. */
struct view {
	struct grace_hash_node **head[2];
	unsigned int idx[2];
	int n;
#if GRACE__LIB_DEBUG
	struct stripe *st; /* whose lock the updater holds */
#endif
};

/* The view's stripe lock is held (debug builds; release builds keep no stripe in the view). */
#if GRACE__LIB_DEBUG
#define view_assert_locked(v) grace__lock_assert_held(&(v)->st->lock)
#else
#define view_assert_locked(v) ((void)(v))
#endif

static void get_view(struct grace_hash *ht, struct stripe *st, uint64_t h, struct view *v)
{
	struct grace_hash_table *t = cur_tbl(ht);
	/* Acquire: a future array seen here is initialised (pairs with the release in
	 * resize_publish()); only a built stripe uses it. */
	struct grace_hash_table *f = grace_load_acquire(&ht->upd->future);

	grace__lock_assert_held(&st->lock);
#if GRACE__LIB_DEBUG
	v->st = st;
#endif
	v->head[0] = &grace__hash_heads(t)[h & t->mask];
	v->idx[0] = t->idx;
	v->n = 1;
	if (f && st->built) {
		v->head[1] = &grace__hash_heads(f)[h & f->mask];
		v->idx[1] = f->idx;
		v->n = 2;
	}
}

/* Publish x at the head of its chain in each array of the view. */
static void view_insert(struct view *v, struct grace_hash_node *x)
{
	view_assert_locked(v);
	/* x is not reachable yet: plain stores of its links first. */
	for (int c = 0; c < v->n; c++)
		x->next[v->idx[c]] = grace_load_relaxed(v->head[c]);
	/* Publish: store-release, so a reader that loads the head sees x initialised. Pairs with
	 * rcu_dereference() of the head in lookups and iteration. (The future array is invisible
	 * until published: the release is for that later moment's sake, free on x86.) */
	for (int c = 0; c < v->n; c++)
		rcu_assign_pointer(*v->head[c], x);
}

/* The first node with hash h matching key in the current chain, or NULL. */
static struct grace_hash_node *view_find(struct grace_hash *ht, struct view *v, uint64_t h,
					 const void *key)
{
	unsigned int i = v->idx[0];

	view_assert_locked(v);
	for (struct grace_hash_node *n = *v->head[0]; n; n = n->next[i])
		if (n->hash == h && ht->match(n, key, ht->arg))
			return n;
	return NULL;
}

/*
 * Redirect the link to n in each chain of the view to n's successor there (target NULL: a
 * deletion) or to target (a replacement, whose links the caller copied from n). Each chain holds
 * n at most once: the walk stops there, so an update costs the node's position in its chain.
 * Returns whether n was in the current chain. Release stores: a reader that follows the new
 * link sees its target initialised (a replacement; a successor was published before).
 */
static bool relink(struct view *v, struct grace_hash_node *n, struct grace_hash_node *target)
{
	bool found = false;

	view_assert_locked(v);
	for (int c = 0; c < v->n; c++) {
		unsigned int i = v->idx[c];
		struct grace_hash_node **link = v->head[c];
		struct grace_hash_node *cur;

		while ((cur = *link) != NULL) {
			if (cur == n) {
				grace_store_release(link, target ? target : n->next[i]);
				if (c == 0)
					found = true;
				break;
			}
			link = &cur->next[i];
		}
	}
	return found;
}

/* ---- resizing ---- */

/*
 * RESIZE: build an array of @nbuckets through the other link set and publish it (argument at
 * the top). Returns the replaced array, also left in upd->rs_old to free after a grace period,
 * or NULL if the new one cannot be allocated. Called by the one resizer (`resizing` set).
 */
static struct grace_hash_table *resize_publish(struct grace_hash *ht, size_t nbuckets)
{
	struct grace__hash_upd *u = ht->upd;
	struct grace_hash_table *t = cur_tbl(ht), *f;
	unsigned int i = t->idx, j = 1 - t->idx;
	struct grace_hash_node **th = grace__hash_heads(t), **fh;
	uint64_t moved = 0;

	f = tbl_alloc(nbuckets, j);
	if (!f)
		return NULL;
	fh = grace__hash_heads(f);
	/* Release: updaters that see `future` (acquire in get_view) see it zeroed and sized. */
	grace_store_release(&u->future, f);
	for (unsigned int s = 0; s < u->nlocks; s++) {
		grace__lock(&u->stripes[s].lock);
		for (uint64_t b = s; b <= t->mask; b += u->nlocks)
			for (struct grace_hash_node *n = th[b]; n; n = n->next[i]) {
				struct grace_hash_node **head = &fh[n->hash & f->mask];

				/* Link set j is no reader's (precondition) and f is invisible until
				 * published: plain stores. */
				n->next[j] = *head;
				*head = n;
				moved++;
			}
		u->stripes[s].built = true;
		grace__unlock(&u->stripes[s].lock);
	}
	lock_all(u);
	/* Publish: store-release, so a reader that loads the new array sees every chain built
	 * above and every update made since. Pairs with rcu_dereference(ht->tbl). */
	rcu_assign_pointer(ht->tbl, f);
	grace_store_relaxed(&u->size, (size_t)nbuckets);
	set_batch(u, (size_t)nbuckets);
	grace_store_relaxed(&u->future, (struct grace_hash_table *)NULL);
	for (unsigned int s = 0; s < u->nlocks; s++)
		u->stripes[s].built = false;
	/* With every stripe locked: a fork copies either the build (future set) or this. */
	u->rs_old = t;
	unlock_all(u);
	grace_fetch_add(nbuckets > t->mask + 1 ? &u->grows : &u->shrinks, 1, __ATOMIC_RELAXED);
	grace_fetch_add(&u->relinked, moved, __ATOMIC_RELAXED);
	return t;
}

static size_t total_count(struct grace__hash_upd *u)
{
	size_t n = 0;

	for (unsigned int i = 0; i < u->nlocks; i++)
		n += grace_load_relaxed(&u->stripes[i].count);
	return n;
}

static size_t cur_size(struct grace_hash *ht)
{
	/* A copy of the current array's size: any thread may read it without touching an array
	 * that a resize may be retiring. */
	return grace_load_relaxed(&ht->upd->size);
}

/*
 * Is the caller inside a read-side section of the table's flavor, where waiting for one of its
 * grace periods would deadlock? Default flavor: always known. QSBR: known when the caller was
 * compiled with GRACE_DEBUG (the qsbr_read_lock() depth); an online QSBR thread outside
 * qsbr_read_lock() is put offline by synchronize_qsbr() and does not deadlock. Other flavors
 * (srcu, the caller's own ops): their synchronize and barrier report the misuse themselves.
 */
static bool caller_in_section(const struct grace_flavor_ops *ops)
{
	if (ops == &grace_flavor_rcu)
		return grace_rcu_read_ongoing();
	if (ops == &grace_flavor_qsbr)
		return grace__qsbr_reader.dbg_nest != 0;
	return false;
}

/* grace_hash_resize() and grace_hash_destroy() wait for grace periods and callbacks: report a
 * call from where that would deadlock, naming the call the user made. */
static void check_may_block(const struct grace__hash_upd *u, const char *call)
{
	if (caller_in_section(u->ops))
		grace__misuse_fatal(call,
				    "called inside a read-side section of the table's %s "
				    "flavor (it waits for grace periods: it would deadlock)",
				    u->ops->name ? u->ops->name : "");
	if (grace__in_callback())
		grace__misuse_fatal(call, "called from a callback (it waits for grace periods and "
					  "callbacks: it would deadlock)");
}

/*
 * grace_hash_del() and grace_hash_replace() read the node (its stored hash, to find its lock)
 * before locking: if another thread may delete the same node, only a read-side section keeps it
 * from being freed under the call. Debug builds check that the caller is inside one.
 */
static void check_node_protected(const char *call)
{
#if GRACE__LIB_DEBUG
	if (!grace_debug_in_read_section())
		grace__misuse_fatal(call,
				    "called outside a read-side section: it reads the node "
				    "before taking its lock, so a concurrent deletion could free "
				    "it under the call (enter a read-side section first)");
#else
	(void)call;
#endif
}

/*
 * Background resizing: the size to resize to, given the count now, or 0 for none. Growing goes
 * to the power of two at or above the count (load factor at most 1) in one step; shrinking below
 * one node per eight buckets goes to twice the power of two at or above the count.
 */
static size_t wanted(struct grace_hash *ht, size_t size)
{
	struct grace__hash_upd *u = ht->upd;
	size_t n = total_count(u), target;

	if (n > size && size < u->max_buckets) {
		target = roundup_pow2(n);
		return target > u->max_buckets ? u->max_buckets : target;
	}
	if (n < size / 8 && size > u->min_buckets) {
		target = 2 * roundup_pow2(n ? n : 1);
		return target < u->min_buckets ? u->min_buckets : target;
	}
	return 0;
}

static void resize_cb(struct rcu_head *head);
static void rs_start(struct grace_hash *ht, bool dying);

/* Queue the next background step (u->step): it runs after a grace period. The caller set
 * `who` to RS_QUEUED under rs_lock; no lock held now (call_rcu may wait at its hard limit). */
static void rs_requeue(struct grace__hash_upd *u)
{
	u->ops->call(u->ops->ctx, &u->rs_rcu, resize_cb);
}

/* Hand the next step to the flavor: rs_lock held (released and taken again). */
static void rs_queue_locked(struct grace__hash_upd *u)
{
	grace__lock_assert_held(&u->rs_lock);
	grace_store_relaxed(&u->who, RS_QUEUED);
	grace__unlock(&u->rs_lock);
	rs_requeue(u);
	grace__lock(&u->rs_lock);
}

/*
 * End a resize. A background resize that leaves the table still outside its load limits starts
 * the next one at once instead (its free step ran after the grace period that frees the link
 * set; decided under rs_lock, so destroy never frees the table under a callback that is still
 * running). After the unlock that clears `resizing`, the caller must not touch the
 * table: destroy may free it.
 */
static void rs_end(struct grace_hash *ht, bool background)
{
	struct grace__hash_upd *u = ht->upd;
	bool again = false;

	grace__lock(&u->rs_lock);
	if (background && !u->dying && wanted(ht, cur_size(ht)) != 0) {
		u->step = RS_START; /* `who` stays RS_THREAD: this thread goes on */
		again = true;
	} else {
		grace_store_relaxed(&u->who, RS_NONE);
		grace_store_relaxed(&u->resizing, false);
	}
	grace__unlock(&u->rs_lock);
	if (again)
		rs_start(ht, false); /* `resizing` is still set: the table stays alive */
}

/*
 * Wait, rs_lock held, until no background resize runs. Its steps are flavor callbacks that run
 * after grace periods, so the wait must not hold grace periods back, as an online QSBR caller
 * sleeping on a condition variable would (a deadlock: the step waits for this thread's quiescent
 * state). The flavor's synchronize is the sleep instead: it puts an online QSBR caller offline
 * while it waits, and each round lets at least one grace period, so the next step, happen.
 * In a fork child (see "Fork" at the top) synchronize alone does not run a step inherited
 * queued: the child's callback workers start at its next call_*, barrier or start_poll. An
 * orphaned step is queued here (the call_* starts them); an inherited one is waited for with
 * the barrier, and queued here if the barrier shows it was never queued. A wait that lasts
 * (a reader stuck in a section of the table's flavor) is reported, naming @call.
 */
static void wait_background_resize(struct grace__hash_upd *u, const char *call)
{
	uint64_t t0 = grace__now_ns();
	/* A wait longer than the stall timeout (grace_set_stall_timeout_ms(); 0: never) is
	 * reported, once per call. */
	uint64_t cap = grace__stall_timeout_ns();
	bool warned = false;

	grace__lock_assert_held(&u->rs_lock);
	while (u->resizing) {
		if (u->who == RS_ORPHAN) {
			rs_queue_locked(u);
			continue;
		}
		if (u->inherited) {
			grace__unlock(&u->rs_lock);
			u->ops->barrier(u->ops->ctx);
			grace__lock(&u->rs_lock);
			/* Every callback queued before the barrier has run, and a step that ran
			 * cleared `inherited` (resize_cb()). Still set: it was never queued. */
			if (u->inherited) {
				u->inherited = false;
				rs_queue_locked(u);
			}
			continue;
		}
		grace__unlock(&u->rs_lock);
		u->ops->synchronize(u->ops->ctx);
		if (!warned && cap && grace__now_ns() - t0 >= cap) {
			warned = true;
			grace__warn(
				"%s: still waiting for a background resize of the table after "
				"%.1f s (a reader of the table's %s flavor stuck in a read-side "
				"section holds its grace periods back)",
				call, (double)(grace__now_ns() - t0) / 1e9,
				u->ops->name ? u->ops->name : "");
		}
		grace__lock(&u->rs_lock);
	}
}

/* The fork child's orphaned resize (see "Fork"), met by an update of an automatically resizing
 * table: hand its free step to the flavor, so the table resizes again. No lock held. */
static GRACE_COLD void adopt_orphan(struct grace__hash_upd *u)
{
	grace__lock(&u->rs_lock);
	if (u->resizing && u->who == RS_ORPHAN)
		rs_queue_locked(u);
	grace__unlock(&u->rs_lock);
}

/*
 * The first step of a background resize: build and publish the array the count calls for, then
 * queue the step that frees the old one after a grace period. `resizing` is set. Called by the
 * flavor callback, or directly by the update that crossed a limit (kick_resize()).
 */
static void rs_start(struct grace_hash *ht, bool dying)
{
	struct grace__hash_upd *u = ht->upd;
	size_t target = dying ? 0 : wanted(ht, cur_size(ht));

	if (target && target != cur_size(ht) && resize_publish(ht, target)) {
		/* The old array, and its link set, are free after a grace period. */
		grace__lock(&u->rs_lock);
		u->step = RS_FREE;
		grace_store_relaxed(&u->who, RS_QUEUED);
		grace__unlock(&u->rs_lock);
		rs_requeue(u);
		return;
	}
	/* Nothing to do, or no memory: stop (the next update past a limit retries). */
	rs_end(ht, false);
}

/*
 * Up to this many buckets, the update that crosses a load limit resizes the table itself (it
 * relinks about as many nodes: tens of microseconds), so a small table that fills fast never
 * waits a grace period for its first growth; larger tables resize in a flavor callback.
 */
#define INLINE_RESIZE_MAX 16384

static void kick_resize(struct grace_hash *ht)
{
	struct grace__hash_upd *u = ht->upd;
	bool inline_step;

	grace__lock(&u->rs_lock);
	if (u->resizing || u->dying) {
		grace__unlock(&u->rs_lock);
		return;
	}
	/* The size changes only under `resizing`, which is clear: stable here. */
	inline_step = cur_size(ht) <= INLINE_RESIZE_MAX;
	grace_store_relaxed(&u->resizing, true);
	grace_store_relaxed(&u->who, inline_step ? RS_THREAD : RS_QUEUED);
	u->step = RS_START;
	grace__unlock(&u->rs_lock);
	/* Outside every lock: call_rcu may wait at its hard limit, and the build takes the
	 * stripe locks. Neither waits for a grace period, so any updater may do this. */
	if (inline_step)
		rs_start(ht, false);
	else
		rs_requeue(u);
}

/* A step of a background resize, invoked by the flavor after a grace period. */
static void resize_cb(struct rcu_head *head)
{
	struct grace__hash_upd *u = grace_container_of(head, struct grace__hash_upd, rs_rcu);
	struct grace_hash *ht = u->ht;
	enum rs_step step;
	bool dying;

	grace__lock(&u->rs_lock);
	dying = u->dying;
	step = u->step;
	grace_store_relaxed(&u->who, RS_THREAD);
	u->inherited = false; /* a fork child's inherited step ran (wait_background_resize()) */
	if (step == RS_FREE) {
		/* A grace period has passed since the publication: no reader uses the old array.
		 * Freed and cleared under rs_lock, so a fork copies it either pending or gone. */
		free(u->rs_old);
		u->rs_old = NULL;
	}
	grace__unlock(&u->rs_lock);

	switch (step) {
	case RS_START:
		rs_start(ht, dying);
		return;
	case RS_FREE:
		rs_end(ht, true);
		return;
	}
}

/* After an update with GRACE_HASH_AUTO_RESIZE: start a background resize if the approximate
 * count crossed a limit (confirmed with the exact count). Cost: two relaxed loads. */
static void maybe_resize(struct grace_hash *ht, bool grew)
{
	struct grace__hash_upd *u = ht->upd;
	long a = grace_load_relaxed(&u->approx);
	size_t size = cur_size(ht);

	if (grace_load_relaxed(&u->resizing)) {
		if (GRACE_UNLIKELY(grace_load_relaxed(&u->who) == RS_ORPHAN))
			adopt_orphan(u);
		return;
	}
	if (grew ? a <= (long)size || size >= u->max_buckets
		 : a >= (long)(size / 8) || size <= u->min_buckets)
		return;
	if (wanted(ht, size) != 0)
		kick_resize(ht);
}

/* ---- fork (argument: "Fork" at the top) ---- */

static struct grace__lock fk_lock = GRACE__LOCK_INIT;
static GRACE_LIST_HEAD(fk_tables); /* every live table, under fk_lock */

static void fk_add(struct grace__hash_upd *u)
{
	grace__lock(&fk_lock);
	grace_list_add(&u->fk_node, &fk_tables);
	grace__unlock(&fk_lock);
}

/* No table lock held (lock order: fk_lock first). */
static void fk_del(struct grace__hash_upd *u)
{
	grace__lock(&fk_lock);
	grace_list_del(&u->fk_node);
	grace__unlock(&fk_lock);
}

/* Walk fk_tables. struct grace__hash_upd is cache-line aligned (`approx`), so no pointer to one
 * is formed from the list's head, as list.h's typed iterators do to detect the end (UBSan
 * rightly calls that a misaligned object; engine/free.c walks its caches the same way). */
#define TABLES_FOR_EACH(u)                                                      \
	for (struct grace_list_head *it_ = fk_tables.next;                      \
	     it_ != &fk_tables &&                                               \
	     ((u) = grace_list_entry(it_, struct grace__hash_upd, fk_node), 1); \
	     it_ = it_->next)

void grace__hash_atfork_prepare(void)
{
	struct grace__hash_upd *u;

	grace__lock(&fk_lock);
	TABLES_FOR_EACH(u)
	{
		grace__lock(&u->rs_lock);
		lock_all(u);
	}
}

/* The parent: this thread holds every lock prepare took. */
void grace__hash_atfork_parent(void)
{
	struct grace__hash_upd *u;

	grace__lock_assert_held(&fk_lock);
	TABLES_FOR_EACH(u)
	{
		unlock_all(u);
		grace__unlock(&u->rs_lock);
	}
	grace__unlock(&fk_lock);
}

/* The child: one thread, which holds every lock prepare took. Make each table's resize state
 * one the child can finish (see "Fork" at the top), then release the locks. (Nothing asserts
 * them held here: debug builds record the parent's thread id as their owner.) */
void grace__hash_atfork_child(void)
{
	struct grace__hash_upd *u;

	TABLES_FOR_EACH(u)
	{
		/* Single-threaded here; relaxed stores where maybe_resize() reads relaxed. */
		if (u->resizing && u->who == RS_THREAD) {
			/* Its resizer does not exist here. An unpublished build is dropped: no
			 * reader saw the future array, and link set 1 - idx is free again. */
			if (u->future) {
				free(u->future);
				u->future = NULL;
				for (unsigned int s = 0; s < u->nlocks; s++)
					u->stripes[s].built = false;
			}
			if (u->rs_old) {
				u->step = RS_FREE; /* published: free the old array after a GP */
				grace_store_relaxed(&u->who, RS_ORPHAN);
			} else {
				grace_store_relaxed(&u->who, RS_NONE);
				grace_store_relaxed(&u->resizing, false);
			}
		} else if (u->resizing && u->who == RS_QUEUED) {
			u->inherited = true;
		}
		unlock_all(u);
		grace__unlock(&u->rs_lock);
	}
	grace__unlock(&fk_lock);
}

/* ---- API ---- */

struct grace_hash *grace_hash_create(const struct grace_hash_params *p)
{
	struct grace_hash *ht;
	struct grace__hash_upd *u;
	size_t init, min, max;
	unsigned int nlocks;
	pthread_mutexattr_t attr;

	if (!p || !p->hash || !p->match || (p->flags & ~GRACE_HASH_AUTO_RESIZE)) {
		errno = EINVAL;
		return NULL;
	}
	const struct grace_flavor_ops *ops = p->ops ? p->ops : &grace_flavor_rcu;
	if (!ops->call || !ops->synchronize || !ops->barrier) {
		errno = EINVAL;
		return NULL;
	}
	init = roundup_pow2(p->init_buckets ? p->init_buckets : DEFAULT_INIT);
	max = roundup_pow2(p->max_buckets ? p->max_buckets : DEFAULT_MAX);
	min = p->min_buckets ? roundup_pow2(p->min_buckets)
			     : (init < DEFAULT_MIN_CAP ? init : DEFAULT_MIN_CAP);
	if (min > init || init > max || max > DEFAULT_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* Rounded in size_t (a request above 2^31 rounds to 2^32, which unsigned int cannot
	 * hold), then clamped to min_buckets (at most 2^30 here), as documented. */
	size_t nl = roundup_pow2(p->nlocks ? p->nlocks : DEFAULT_LOCKS_CAP);
	nlocks = (unsigned int)(nl > min ? min : nl);

	ht = (struct grace_hash *)aligned_alloc(GRACE_CACHE_LINE, sizeof(*ht));
	u = (struct grace__hash_upd *)aligned_alloc(GRACE_CACHE_LINE,
						    (sizeof(*u) + GRACE_CACHE_LINE - 1) &
							    ~(size_t)(GRACE_CACHE_LINE - 1));
	struct stripe *st = (struct stripe *)aligned_alloc(GRACE_CACHE_LINE, nlocks * sizeof(*st));
	struct grace_hash_table *t = tbl_alloc(init, 0);
	if (!ht || !u || !st || !t) {
		free(ht);
		free(u);
		free(st);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	memset(ht, 0, sizeof(*ht));
	memset(u, 0, sizeof(*u));
	pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	/* Short critical sections: spin briefly before sleeping. */
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	memset(st, 0, nlocks * sizeof(*st)); /* counts, deltas, built flags */
	for (unsigned int i = 0; i < nlocks; i++)
		grace__lock_init_attr(&st[i].lock, &attr);
	pthread_mutexattr_destroy(&attr);
	grace__lock_init(&u->rs_lock);
	u->ops = ops;
	u->free_fn = p->free;
	u->min_buckets = min;
	u->max_buckets = max;
	u->nlocks = nlocks;
	u->lock_mask = nlocks - 1;
	u->flags = p->flags;
	u->stripes = st;
	u->size = init;
	set_batch(u, init);
	u->ht = ht;
	ht->hash = p->hash;
	ht->match = p->match;
	ht->arg = p->arg;
	ht->upd = u;
	/* No reader knows the table yet: the caller publishes ht (release) after create. */
	RCU_INIT_POINTER(ht->tbl, t);
	fk_add(u);
	return ht;
}

void grace_hash_destroy(struct grace_hash *ht)
{
	struct grace__hash_upd *u;
	struct grace_hash_table *t;
	struct rcu_head *list = NULL;

	if (!ht)
		return;
	u = ht->upd;
	check_may_block(u, "grace_hash_destroy");
	grace__lock(&u->rs_lock);
	u->dying = true;
	wait_background_resize(u, "grace_hash_destroy");
	grace__unlock(&u->rs_lock);

	t = cur_tbl(ht);
	if (u->free_fn) {
		/* Collect every node (each lies in exactly one chain), then retire: a retired node
		 * may be freed at once, so no chain is walked after the first retirement. */
		struct grace_hash_node **th = grace__hash_heads(t);
		for (uint64_t b = 0; b <= t->mask; b++)
			for (struct grace_hash_node *n = th[b]; n; n = n->next[t->idx]) {
				n->rcu.next = list;
				list = &n->rcu;
			}
		while (list) {
			struct rcu_head *next = list->next;
			u->ops->call(u->ops->ctx, list, u->free_fn);
			list = next;
		}
	}
	u->ops->call(u->ops->ctx, &t->rcu, tbl_free_cb);
	u->ops->barrier(u->ops->ctx);
	free(u->rs_old); /* NULL: a background resize always ends with its free step */
	fk_del(u);
	for (unsigned int i = 0; i < u->nlocks; i++)
		grace__lock_destroy(&u->stripes[i].lock);
	grace__lock_destroy(&u->rs_lock);
	free(u->stripes);
	free(u);
	free(ht);
}

static void retire(struct grace__hash_upd *u, struct grace_hash_node *n)
{
	if (u->free_fn)
		u->ops->call(u->ops->ctx, &n->rcu, u->free_fn);
}

/* What an insertion does when an object with the same key is present. */
enum add_mode {
	ADD_DUP,     /* insert anyway (grace_hash_add) */
	ADD_UNIQUE,  /* insert nothing, hand back the present node (add_unique, add_or_get) */
	ADD_REPLACE, /* put the new node in the present node's place (add_replace) */
};

/* @node takes @old's place in every chain of the view (its links copied from old's first). */
static bool replace_in_view(struct view *v, struct grace_hash_node *old,
			    struct grace_hash_node *node)
{
	/* node is not reachable yet: plain stores; relink() publishes it (release). */
	for (int c = 0; c < v->n; c++)
		node->next[v->idx[c]] = old->next[v->idx[c]];
	return relink(v, old, node);
}

/*
 * @node is about to be inserted into the chain of the view: report it if it is already there (a
 * second add without a deletion would link it to itself, and every later walk of the chain would
 * loop). Every build checks the chain head (one compare: the add of a node just added); debug
 * builds walk the whole chain, as an add_unique does. A node in the table under another key
 * (another chain) is not found.
 */
static void check_not_in_chain(const struct view *v, const struct grace_hash_node *node,
			       const char *call)
{
	const struct grace_hash_node *n = *v->head[0];

#if GRACE__LIB_DEBUG
	for (; n && n != node; n = n->next[v->idx[0]])
		;
#endif
	if (GRACE_UNLIKELY(n == node)) /* node is not NULL (callers check) */
		grace__misuse_fatal(call, "the node is already in the table (added twice with no "
					  "deletion between): adding it again would link it to "
					  "itself and later walks of its chain would never end");
}

/*
 * Insert @node with key @key under its stripe lock. Returns NULL if @node was inserted as a new
 * object; otherwise the node of the same key found in the table: left in place (ADD_UNIQUE),
 * or replaced by @node and retired (ADD_REPLACE). The arguments are valid (callers check);
 * @call names the caller's function in misuse reports.
 */
static struct grace_hash_node *do_add(struct grace_hash *ht, struct grace_hash_node *node,
				      const void *key, enum add_mode mode, const char *call)
{
	struct grace__hash_upd *u = ht->upd;
	uint64_t h = ht->hash(key, ht->arg);
	struct stripe *st = stripe_of(u, h);
	struct grace_hash_node *old = NULL;
	struct view v;

	node->hash = h; /* not reachable yet: plain store */
	grace__lock(&st->lock);
	get_view(ht, st, h, &v);
	if (mode != ADD_DUP)
		old = view_find(ht, &v, h, key);
	if (old && mode == ADD_UNIQUE) {
		grace__unlock(&st->lock);
		return old;
	}
	if (GRACE_UNLIKELY(old == node))
		/* add_replace of a node in the table: it would retire (free) a node that stays
		 * linked. The walk found it: checked in every build. */
		grace__misuse_fatal(call, "the node is already in the table under this key: "
					  "replacing it by itself would free a node still linked");
	if (old) {
		/* Replace: each reader sees old or node, never neither, and no updater (all hold
		 * this lock) sees both. */
		replace_in_view(&v, old, node);
		grace__unlock(&st->lock);
		retire(u, old); /* outside the lock: call_rcu may wait at its hard limit */
		return old;
	}
	if (mode == ADD_DUP)
		check_not_in_chain(&v, node, call);
	view_insert(&v, node);
	count_change(u, st, 1);
	grace__unlock(&st->lock);
	if (u->flags & GRACE_HASH_AUTO_RESIZE)
		maybe_resize(ht, true);
	return NULL;
}

int grace_hash_add(struct grace_hash *ht, struct grace_hash_node *node, const void *key)
{
	if (!ht || !node || !key)
		return -EINVAL;
	do_add(ht, node, key, ADD_DUP, "grace_hash_add");
	return 0;
}

int grace_hash_add_unique(struct grace_hash *ht, struct grace_hash_node *node, const void *key)
{
	if (!ht || !node || !key)
		return -EINVAL;
	return do_add(ht, node, key, ADD_UNIQUE, "grace_hash_add_unique") ? -EEXIST : 0;
}

struct grace_hash_node *grace_hash_add_or_get(struct grace_hash *ht, struct grace_hash_node *node,
					      const void *key)
{
	struct grace_hash_node *old;

	if (!ht || !node || !key) {
		errno = EINVAL;
		return NULL;
	}
	old = do_add(ht, node, key, ADD_UNIQUE, "grace_hash_add_or_get");
	return old ? old : node;
}

struct grace_hash_node *grace_hash_add_replace(struct grace_hash *ht, struct grace_hash_node *node,
					       const void *key)
{
	if (!ht || !node || !key) {
		errno = EINVAL;
		return NULL;
	}
	return do_add(ht, node, key, ADD_REPLACE, "grace_hash_add_replace");
}

/* Remove n (hash h) under its stripe lock; if key is given, n is looked up by key instead. */
static int do_del(struct grace_hash *ht, struct grace_hash_node *n, const void *key)
{
	struct grace__hash_upd *u = ht->upd;
	uint64_t h = n ? n->hash : ht->hash(key, ht->arg); /* callers give one of n, key */
	struct stripe *st = stripe_of(u, h);
	struct view v;

	grace__lock(&st->lock);
	get_view(ht, st, h, &v);
	if (key)
		n = view_find(ht, &v, h, key);
	if (!n || !relink(&v, n, NULL)) {
		grace__unlock(&st->lock);
		return -ENOENT;
	}
	count_change(u, st, -1);
	grace__unlock(&st->lock);
	retire(u, n); /* outside the lock: call_rcu may wait at its hard limit */
	if (u->flags & GRACE_HASH_AUTO_RESIZE)
		maybe_resize(ht, false);
	return 0;
}

int grace_hash_del(struct grace_hash *ht, struct grace_hash_node *node)
{
	if (!ht || !node)
		return -EINVAL;
	check_node_protected("grace_hash_del");
	return do_del(ht, node, NULL);
}

int grace_hash_del_key(struct grace_hash *ht, const void *key)
{
	if (!ht || !key)
		return -EINVAL;
	return do_del(ht, NULL, key);
}

int grace_hash_replace(struct grace_hash *ht, struct grace_hash_node *old,
		       struct grace_hash_node *new_node)
{
	struct grace__hash_upd *u;
	struct stripe *st;
	struct view v;
	uint64_t h;

	if (!ht || !old || !new_node || old == new_node)
		return -EINVAL;
	check_node_protected("grace_hash_replace");
	u = ht->upd;
	h = old->hash;
	st = stripe_of(u, h);
	grace__lock(&st->lock);
	get_view(ht, st, h, &v);
	new_node->hash = h; /* not reachable yet */
	if (!replace_in_view(&v, old, new_node)) {
		grace__unlock(&st->lock);
		return -ENOENT;
	}
	grace__unlock(&st->lock);
	retire(u, old);
	return 0;
}

struct grace_hash_node *grace_hash_lookup(struct grace_hash *ht, const void *key)
{
	uint64_t h = ht->hash(key, ht->arg);
	struct grace_hash_node *n;

	grace_hash_for_each_possible_rcu(ht, n, h)
		if (ht->match(n, key, ht->arg))
			return n;
	return NULL;
}

/* The node at or after n in the iterator's snapshot, moving to later buckets as needed. */
static struct grace_hash_node *iter_scan(struct grace_hash_iter *it, struct grace_hash_node *n)
{
	struct grace_hash_table *t = it->tbl;

	while (!n) {
		if (it->bucket == t->mask) {
			it->node = NULL;
			return NULL;
		}
		it->bucket++;
		n = rcu_dereference(grace__hash_heads(t)[it->bucket]);
	}
	it->node = n;
	return n;
}

struct grace_hash_node *grace_hash_iter_first(struct grace_hash *ht, struct grace_hash_iter *it)
{
	it->tbl = rcu_dereference(ht->tbl);
	it->bucket = 0;
	it->node = NULL;
	return iter_scan(it, rcu_dereference(grace__hash_heads(it->tbl)[0]));
}

struct grace_hash_node *grace_hash_iter_next(struct grace_hash_iter *it)
{
	if (!it->node)
		return NULL;
	return iter_scan(it, rcu_dereference(it->node->next[it->tbl->idx]));
}

int grace_hash_resize(struct grace_hash *ht, size_t nbuckets)
{
	struct grace__hash_upd *u;
	size_t target;
	int err = 0;

	if (!ht || nbuckets == 0)
		return -EINVAL;
	u = ht->upd;
	check_may_block(u, "grace_hash_resize");
	target = roundup_pow2(nbuckets);
	if (target < u->min_buckets)
		target = u->min_buckets;
	if (target > u->max_buckets)
		target = u->max_buckets;

	grace__lock(&u->rs_lock);
	wait_background_resize(u, "grace_hash_resize");
	if (u->dying) {
		grace__unlock(&u->rs_lock);
		return -EINVAL;
	}
	grace_store_relaxed(&u->resizing, true);
	grace_store_relaxed(&u->who, RS_THREAD);
	grace__unlock(&u->rs_lock);

	if (cur_size(ht) != target) {
		if (resize_publish(ht, target)) {
			/* After this grace period no reader uses the old array or its link set:
			 * free it, and the next resize may build through that link set. Under
			 * rs_lock, so a fork copies it either pending or gone. */
			u->ops->synchronize(u->ops->ctx);
			grace__lock(&u->rs_lock);
			free(u->rs_old);
			u->rs_old = NULL;
			grace__unlock(&u->rs_lock);
		} else {
			err = -ENOMEM;
		}
	}
	rs_end(ht, false);
	return err;
}

size_t grace_hash_count(struct grace_hash *ht)
{
	return ht ? total_count(ht->upd) : 0;
}

size_t grace_hash_buckets(struct grace_hash *ht)
{
	return ht ? cur_size(ht) : 0;
}

void grace_hash_get_stats(struct grace_hash *ht, struct grace_hash_stats *st)
{
	struct grace__hash_upd *u;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!ht)
		return;
	u = ht->upd;
	st->buckets = cur_size(ht);
	st->count = total_count(u);
	st->grows = grace_load_relaxed(&u->grows);
	st->shrinks = grace_load_relaxed(&u->shrinks);
	st->relinked = grace_load_relaxed(&u->relinked);
	st->nlocks = u->nlocks;
	st->resizing = grace_load_relaxed(&u->resizing);
}
