/* SPDX-License-Identifier: MIT */
/*
 * Resizable RCU hash table (include/grace/hash.h): relativistic hash table (Triplett, McKenney,
 * Walpole, "Resizable, Scalable, Concurrent Hash Tables via Relativistic Programming", USENIX
 * ATC 2011) with per-stripe update locks and resizing driven by grace periods.
 *
 * Structure. A bucket array (struct grace_hash_table, 2^k heads) of singly linked chains; each
 * node stores the full hash of its key. The class of a node in a table of mask m is hash & m:
 * the bucket it belongs to. Readers go to the bucket of their hash and walk the chain, skipping
 * nodes whose stored hash differs (foreign nodes of other classes may appear in a chain while a
 * resize is in progress); iteration yields in bucket b only the nodes of class b. Updaters lock
 * stripe (hash & (nlocks - 1)). Every size is >= nlocks and a power of two, so every node that
 * can appear in one chain, at any size or during any resize (classes b and b + S of a doubling,
 * b and b + S/2 of a halving), maps to the same stripe: one lock covers a whole chain.
 *
 * Readers never miss a node that is present for the whole traversal, and never see one twice
 * when iterating. The argument, by phase:
 *
 * STABLE. Each chain holds exactly its class. Insertion publishes a fully initialised node at
 * the head (rcu_assign_pointer: release; readers load with rcu_dereference: dependency).
 * Deletion redirects the one link to the node to its successor and leaves node->next intact,
 * so a reader standing on it continues; the node is retired through ops->call, so it is freed
 * after every reader that could stand on it has finished. Replacement redirects that link to the
 * new node, whose next is the old node's next.
 *
 * SHRINK (2S -> S), stripe by stripe under that stripe's lock: for each new bucket i, the tail
 * of old chain i is linked to the head of old chain j = i + S (a release store of an already
 * published pointer) and the new array's bucket i gets old head i (or old head j if chain i is
 * empty). Readers of the old array in bucket i see extra nodes of class j (skipped: their hash
 * differs; iteration filters them); readers of old bucket j see their chain unchanged.
 * Updaters of a stripe not yet zipped work on the old array as usual (the zip sees their
 * result). Updaters of a zipped stripe keep the pair consistent: an insertion goes to the
 * head of its old chain, and every other link of the pair that pointed to that chain's first
 * node (future[i]; for chain j the zip link, or old head i and future[i] once chain i holds no
 * node of its class) is redirected to the new node, whose next is that first node
 * (zipped_insert); deletions and replacements redirect every link to the node reachable from
 * old heads i and j and future[i] (relink_all). Then, all stripes locked, the new array is
 * published and the old one retired through ops->call. Appending never removes a path, so
 * consecutive halvings need no grace period in between.
 *
 * GROW (S -> 2S), phase 1, "build": the new array `future` is attached to the table
 * (upd->future, release), then stripe by stripe, under that stripe's lock, each new head A and
 * B = A + S is set to the first node of its class in old chain A. Readers still use the old
 * array. Updaters that run meanwhile keep both arrays consistent: an insertion of X (class A in
 * the new array) goes to the old head (X->next = old head) and also sets future[A] = X, which
 * precedes every node of class A; a deletion or replacement redirects every link to the node
 * reachable from the old head and from both future heads (see relink_all: in this phase they
 * all point into the same old chain). A stripe not yet built gets its heads recomputed by the
 * build anyway. So after the build every node of class A is reachable from future[A].
 * Then, all stripes locked, the new array is published (rcu_assign_pointer) and upd->future
 * cleared: from now on updaters use the new array only. Readers that loaded the old array keep
 * walking unmodified old chains; they may miss nodes inserted after the publication (inserted
 * at new heads only) or see nodes deleted after it (still reachable from old heads): both
 * operations are concurrent with such a reader, which began before the publication.
 *
 * GROW phase 2, "unzip", after one grace period (so no reader uses the old array any more; it is
 * then freed). For a pair of new buckets A and B = A + S, the chains from head A and head B are
 * two paths that may merge: CA = PA + T and CB = PB + T, where T is their shared suffix and the
 * private prefixes PA, PB hold only nodes of their own class (a node of class B in CA is also
 * in CB, since CB contains every node of class B, so it is in T). Invariant I: CA contains every
 * live node of class A, CB every live node of class B. If T is empty both chains are clean. Else
 * let s0 be the first node of T, and suppose it has class A (the other case is symmetric). The
 * last link of PB (the B head itself if PB is empty) points to s0; one unzip step redirects it
 * to m, the first node of class B after s0 in T (or NULL). CB loses only the run of class-A
 * nodes from s0 to m: I holds. Readers of B standing anywhere continue correctly (the link they
 * may read leads to s0..m or to m). Could a reader of A stand on that link's node p and be
 * misled into skipping A nodes? Only if p was in CA while that reader ran. Nodes leave CA only
 * when deleted (only the deleted node leaves: its predecessor's link moves past it) or by an
 * unzip step on A's chain, which removes a run of B nodes. p is live, so it left CA by an unzip
 * step of an earlier pass, and every pass is followed by a grace period before the next one:
 * every reader that could have seen p in CA has finished. Nodes never re-enter CA (insertions
 * add new nodes at the head; redirections only shorten paths). A reader standing on a node
 * deleted meanwhile follows its frozen next, which was in CA when the node was deleted: the
 * same argument applies from that moment. Hence one step per pair per pass,
 * a grace period between passes, and the pair's alternation count drops by one per step;
 * concurrent insertions (at a head, class-pure) and deletions (merging runs) never increase it,
 * so the passes end; when a pass finds every pair clean the table is STABLE again.
 * While chains share nodes, a node may have two incoming links (the last links of PA and PB
 * both point to s0): deletion and replacement therefore walk both chains of the pair and
 * redirect every link to the node (relink_all), so no reader starting later can reach it.
 *
 * Locks and callbacks. Updaters hold one stripe lock at a time, and while holding it call no
 * user code but match() (which must not use the table) and never the flavor (call_rcu may wait
 * at its hard limit for callbacks, one of which may be a resize step that needs the lock). The
 * resizer takes stripes in index order. Resizing in the background runs as a chain of flavor
 * callbacks (one step per grace period): a callback never waits for a grace period, it only
 * takes the stripe locks briefly.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <grace/hash.h>
#include <grace/qsbr.h>
#include <grace/rcu.h>

#include "core/diag.h"
#include "engine/callback.h"

#define DEFAULT_INIT 64
#define DEFAULT_MIN_CAP 64
#define DEFAULT_MAX ((size_t)1 << 30)
#define DEFAULT_LOCKS_CAP 256

struct stripe {
	pthread_mutex_t lock;
	size_t count; /* nodes of this stripe; written under lock, read relaxed */
	long delta;   /* changes not yet added to upd->approx; under lock */
	bool zipped;  /* SHRINK build: this stripe's chain pairs are concatenated; under lock */
} GRACE_ALIGNED_CACHE;

enum rs_step { RS_START, RS_UNZIP_FIRST, RS_UNZIP };

struct grace__hash_upd {
	const struct grace_flavor_ops *ops;
	rcu_callback_t free_fn;
	size_t min_buckets, max_buckets;
	size_t size; /* buckets of the current array; written with every stripe locked */
	unsigned int nlocks;
	uint64_t lock_mask;
	unsigned int flags;
	struct stripe *stripes;

	/* Resize state seen by updaters under their stripe lock. */
	struct grace_hash_table *future;        /* GROW build phase: the array being built */
	struct grace_hash_table *shrink_future; /* SHRINK build phase: the array being built */
	uint64_t unzip_half;                    /* UNZIP phase: S (pairs A, A + S); 0 otherwise */

	/* Resize driver, under rs_lock. */
	pthread_mutex_t rs_lock;
	bool resizing, dying;
	enum rs_step step;
	struct grace_hash_table *rs_old; /* old array freed after the first unzip grace period */
	struct rcu_head rs_rcu;
	struct grace_hash *ht;

	/*
	 * Approximate node count for the automatic-resize thresholds, like Linux's percpu_counter:
	 * each stripe adds its changes here once they reach `batch` (about size / (16 nlocks)), so
	 * the count is off by at most size / 16 and its cache line is written rarely; updaters
	 * never sum the stripes on the fast path. Alone on its line.
	 */
	long approx GRACE_ALIGNED_CACHE;
	long batch;

	/* Statistics (relaxed atomics). */
	uint64_t grows, shrinks, unzip_passes, unzip_links;
};

static size_t roundup_pow2(size_t x)
{
	size_t p = 1;

	while (p < x && p < ((size_t)1 << (sizeof(size_t) * 8 - 2)))
		p <<= 1;
	return p;
}

static struct grace_hash_table *tbl_alloc(size_t nbuckets)
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
		pthread_mutex_lock(&u->stripes[i].lock);
}

static void unlock_all(struct grace__hash_upd *u)
{
	for (unsigned int i = u->nlocks; i-- > 0;)
		pthread_mutex_unlock(&u->stripes[i].lock);
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

	grace_store_relaxed(&st->count, st->count + (size_t)d);
	st->delta += d;
	if (st->delta >= b || st->delta <= -b) {
		grace_fetch_add(&u->approx, st->delta, __ATOMIC_RELAXED);
		st->delta = 0;
	}
}

/* ---- the updater's view of a hash's chain, under its stripe lock ---- */

struct view {
	struct grace_hash_node **home;     /* reader-visible head for this hash */
	struct grace_hash_node **future;   /* GROW build: the future head to keep in step */
	struct grace_hash_node **heads[3]; /* every head a node of this hash may be reached from */
	int nheads;
	/*
	 * How far relink_all() must walk from heads[1..]: their paths join heads[0]'s at a node
	 * known to lie on it, after which every link is one heads[0]'s walk already saw.
	 *  EXTRA_ALL    to the end (SHRINK build, zipped: kept simple, the phase is short);
	 *  EXTRA_HEAD   the head pointer only (GROW build: a future head points into the old
	 *               chain, which heads[0] walks whole);
	 *  EXTRA_CLASS  up to the first node of class extra_cls under extra_mask (UNZIP: the
	 *               sibling path is pure up to its first node of the home class, which by
	 *               invariant I lies on the home path, and shares every link after it).
	 */
	enum { EXTRA_ALL, EXTRA_HEAD, EXTRA_CLASS } extra;
	uint64_t extra_mask, extra_cls;
	/* SHRINK build, stripe already zipped: old heads i and j = i + S/2, future head i. */
	bool zipped;
	bool upper; /* the hash's old bucket is j */
	uint64_t old_mask, i;
	struct grace_hash_node **old_i, **old_j, **fut_i;
};

static void get_view(struct grace_hash *ht, struct stripe *st, uint64_t h, struct view *v)
{
	struct grace__hash_upd *u = ht->upd;
	struct grace_hash_table *t = cur_tbl(ht);
	struct grace_hash_node **th = grace__hash_heads(t);
	/* Acquire: a future array seen here is initialised (pairs with the releases in
	 * grow_publish and shrink_publish). */
	struct grace_hash_table *f = grace_load_acquire(&u->future);
	struct grace_hash_table *sf = grace_load_acquire(&u->shrink_future);
	uint64_t half;

	v->home = &th[h & t->mask];
	v->heads[0] = v->home;
	v->nheads = 1;
	v->extra = EXTRA_ALL;
	v->future = NULL;
	v->zipped = false;
	if (f) {
		struct grace_hash_node **fh = grace__hash_heads(f);
		uint64_t a = h & f->mask;

		v->future = &fh[a];
		v->heads[1] = &fh[a];
		v->heads[2] = &fh[a ^ (t->mask + 1)];
		v->nheads = 3;
		v->extra = EXTRA_HEAD;
	} else if (sf && st->zipped) {
		uint64_t i = h & sf->mask;

		v->zipped = true;
		v->upper = (h & t->mask) != i;
		v->old_mask = t->mask;
		v->i = i;
		v->old_i = &th[i];
		v->old_j = &th[i + sf->mask + 1];
		v->fut_i = &grace__hash_heads(sf)[i];
		v->heads[0] = v->old_i;
		v->heads[1] = v->old_j;
		v->heads[2] = v->fut_i;
		v->nheads = 3;
	} else if ((half = grace_load_relaxed(&u->unzip_half)) != 0) {
		v->heads[1] = &th[(h & t->mask) ^ half];
		v->nheads = 2;
		v->extra = EXTRA_CLASS;
		v->extra_mask = t->mask;
		v->extra_cls = h & t->mask;
	}
}

/*
 * Insertion into a zipped pair during a SHRINK build: old chain i is followed by old chain j
 * (the last node of class i links to j's first node) and future[i] is the pair's first node.
 * x goes to the head of its old chain, and every link of the pair that pointed to that chain's
 * old first node (the zip link, old head i or future[i] when chain i holds no node of class i
 * any more) now points to x, whose next is that node.
 */
static void zipped_insert(struct view *v, struct grace_hash_node *x)
{
	struct grace_hash_node **own = v->upper ? v->old_j : v->old_i;
	struct grace_hash_node *first = grace_load_relaxed(own);

	if (!v->upper && !first)
		first = grace_load_relaxed(v->old_j); /* chain i empty: it continues into chain j */
	x->next = first;                              /* not reachable yet: plain store */
	/* Publish: store-release, so a reader that loads the head sees x initialised. Pairs with
	 * rcu_dereference() of the head in lookups and iteration. */
	rcu_assign_pointer(*own, x);
	/* The other ways into `first` from within the pair (walks stop at x: a path that already
	 * leads to it was redirected by an earlier walk). Release: as above. */
	struct grace_hash_node **starts[2] = { v->upper ? v->old_i : v->old_j, v->fut_i };
	for (int k = v->upper ? 0 : 1; k < 2; k++) {
		struct grace_hash_node **link = starts[k];

		while (*link && *link != first && *link != x)
			link = &(*link)->next;
		if (*link == first)
			grace_store_release(link, x);
	}
}

/* Publish x at the head of its chain (and of its future chain while resizing). */
static void view_insert(struct view *v, struct grace_hash_node *x)
{
	if (v->zipped) {
		zipped_insert(v, x);
		return;
	}
	x->next = grace_load_relaxed(v->home); /* x is not reachable yet: plain store */
	/* Publish: store-release, so a reader that loads the head sees x initialised. Pairs with
	 * rcu_dereference() of the head in lookups and iteration. */
	rcu_assign_pointer(*v->home, x);
	if (v->future)
		/* Not yet visible to readers; release for the same pairing once it is. */
		grace_store_release(v->future, x);
}

/* The first node with hash h matching key in the home chain, or NULL. */
static struct grace_hash_node *view_find(struct grace_hash *ht, struct view *v, uint64_t h,
					 const void *key)
{
	for (struct grace_hash_node *n = *v->home; n; n = n->next)
		if (n->hash == h && ht->match(n, key, ht->arg))
			return n;
	return NULL;
}

/*
 * Redirect every link to n that is reachable from the view's heads to target (n->next for a
 * deletion, the replacement node for a replacement). Returns whether n was found.
 * The walk from one head follows an acyclic path, which holds at most one link to n: it stops
 * there (what follows the new link is n's successor, never n again). Only paths from different
 * heads can both lead to n (shared tails of zipped chains), so every head is walked, the extra
 * ones only until they join heads[0]'s path (view.extra). A deletion thus costs the position
 * of the node in its chain, not the chain's length.
 * Release stores: a reader that follows the new link to target sees target initialised (for a
 * replacement: pairs with rcu_dereference(); for a deletion the target was published before).
 */
static bool relink_all(struct view *v, struct grace_hash_node *n, struct grace_hash_node *target)
{
	bool found = false;

	for (int i = 0; i < v->nheads; i++) {
		struct grace_hash_node **link = v->heads[i];
		struct grace_hash_node *cur;

		while ((cur = *link) != NULL) {
			if (cur == n) {
				grace_store_release(link, target);
				found = true;
				break;
			}
			if (i > 0 && (v->extra == EXTRA_HEAD ||
				      (v->extra == EXTRA_CLASS &&
				       (cur->hash & v->extra_mask) == v->extra_cls)))
				break; /* joined heads[0]'s path: its walk saw the rest */
			link = &cur->next;
		}
	}
	return found;
}

/* ---- resizing ---- */

/* GROW phase 1: build the doubled array and publish it. Returns the old array (free it after a
 * grace period), or NULL if the new one cannot be allocated. Called by the one resizer. */
static struct grace_hash_table *grow_publish(struct grace_hash *ht)
{
	struct grace__hash_upd *u = ht->upd;
	struct grace_hash_table *t = cur_tbl(ht), *f;
	uint64_t s_old = t->mask + 1;
	struct grace_hash_node **th = grace__hash_heads(t), **fh;

	f = tbl_alloc(2 * s_old);
	if (!f)
		return NULL;
	fh = grace__hash_heads(f);
	/* Release: updaters that see `future` (acquire in get_view) see it zeroed and sized. */
	grace_store_release(&u->future, f);
	for (unsigned int s = 0; s < u->nlocks; s++) {
		pthread_mutex_lock(&u->stripes[s].lock);
		for (uint64_t b = s; b < s_old; b += u->nlocks) {
			struct grace_hash_node *fa = NULL, *fb = NULL;

			for (struct grace_hash_node *n = th[b]; n && !(fa && fb); n = n->next) {
				if ((n->hash & f->mask) == b) {
					if (!fa)
						fa = n;
				} else if (!fb) {
					fb = n;
				}
			}
			/* Not visible to readers until f is published (release below). */
			grace_store_relaxed(&fh[b], fa);
			grace_store_relaxed(&fh[b + s_old], fb);
		}
		pthread_mutex_unlock(&u->stripes[s].lock);
	}
	lock_all(u);
	/* Publish: store-release, so a reader that loads the new array sees every head built
	 * above (and by updaters since). Pairs with rcu_dereference(ht->tbl). */
	rcu_assign_pointer(ht->tbl, f);
	grace_store_relaxed(&u->size, (size_t)(2 * s_old));
	set_batch(u, (size_t)(2 * s_old));
	grace_store_relaxed(&u->unzip_half, s_old);
	grace_store_relaxed(&u->future, (struct grace_hash_table *)NULL);
	unlock_all(u);
	return t;
}

static size_t chain_len(struct grace_hash_node *n)
{
	size_t len = 0;

	for (; n; n = n->next)
		len++;
	return len;
}

/* One unzip step for the pair (a, b = a + S) of t (argument: see the top). Stripe locked. */
static bool unzip_step(struct grace_hash_table *t, uint64_t a, uint64_t b)
{
	struct grace_hash_node **heads = grace__hash_heads(t);
	struct grace_hash_node **la = &heads[a], **lb = &heads[b], **link, *s0, *m;
	size_t na = chain_len(*la), nb = chain_len(*lb);
	uint64_t want;

	/* Align both paths on their remaining length, then advance together to the first shared
	 * node: la and lb end as the last private links of each chain. */
	for (; na > nb; na--)
		la = &(*la)->next;
	for (; nb > na; nb--)
		lb = &(*lb)->next;
	/* The remaining lengths are equal, so *la and *lb are both NULL or both not: neither
	 * advance can start from NULL (the analyzer cannot see that through chain_len()). */
	// NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
	while (*la != *lb) {
		la = &(*la)->next;
		lb = &(*lb)->next;
	}
	s0 = *la;
	if (!s0)
		return false;
	if ((s0->hash & t->mask) == a) {
		link = lb; /* s0 starts a run of A nodes: B's last private link skips it */
		want = b;
	} else {
		link = la;
		want = a;
	}
	for (m = s0->next; m && (m->hash & t->mask) != want; m = m->next)
		;
	/* Release: m was published long ago, but a reader reaching it through this new link must
	 * see it initialised in the memory model too (pairs with rcu_dereference()). */
	grace_store_release(link, m);
	return true;
}

/* GROW phase 2: one pass, one step per unclean pair. Returns the number of links redirected. */
static size_t unzip_pass(struct grace_hash *ht)
{
	struct grace__hash_upd *u = ht->upd;
	uint64_t half = grace_load_relaxed(&u->unzip_half);
	size_t n = 0;

	for (unsigned int s = 0; s < u->nlocks; s++) {
		pthread_mutex_lock(&u->stripes[s].lock);
		struct grace_hash_table *t = cur_tbl(ht);
		for (uint64_t a = s; a < half; a += u->nlocks)
			n += unzip_step(t, a, a + half);
		pthread_mutex_unlock(&u->stripes[s].lock);
	}
	grace_fetch_add(&u->unzip_passes, 1, __ATOMIC_RELAXED);
	grace_fetch_add(&u->unzip_links, n, __ATOMIC_RELAXED);
	return n;
}

static void unzip_done(struct grace__hash_upd *u)
{
	/* Every pair is clean and stays clean (insertions are class-pure, deletions merge runs):
	 * updaters may use single-chain deletion again. */
	lock_all(u);
	grace_store_relaxed(&u->unzip_half, 0);
	unlock_all(u);
	grace_fetch_add(&u->grows, 1, __ATOMIC_RELAXED);
}

/* SHRINK: concatenate chain pairs stripe by stripe, then publish. Returns the old array
 * (retire it), or NULL. */
static struct grace_hash_table *shrink_publish(struct grace_hash *ht)
{
	struct grace__hash_upd *u = ht->upd;
	struct grace_hash_table *t = cur_tbl(ht), *nt;
	uint64_t half = (t->mask + 1) / 2;
	struct grace_hash_node **th = grace__hash_heads(t), **nh;

	nt = tbl_alloc(half);
	if (!nt)
		return NULL;
	nh = grace__hash_heads(nt);
	/* Release: updaters that see it (acquire in get_view) see it zeroed and sized. */
	grace_store_release(&u->shrink_future, nt);
	for (unsigned int s = 0; s < u->nlocks; s++) {
		pthread_mutex_lock(&u->stripes[s].lock);
		for (uint64_t i = s; i < half; i += u->nlocks) {
			struct grace_hash_node *hi = th[i], *hj = th[i + half];

			if (!hi) {
				grace_store_relaxed(&nh[i], hj);
				continue;
			}
			struct grace_hash_node *tail = hi;
			while (tail->next)
				tail = tail->next;
			if (hj)
				/* Release: readers of old bucket i may now reach chain i + half
				 * (published nodes; pairs with rcu_dereference()). */
				grace_store_release(&tail->next, hj);
			grace_store_relaxed(&nh[i], hi);
		}
		u->stripes[s].zipped = true;
		pthread_mutex_unlock(&u->stripes[s].lock);
	}
	lock_all(u);
	/* Publish: store-release (pairs with rcu_dereference(ht->tbl)). */
	rcu_assign_pointer(ht->tbl, nt);
	grace_store_relaxed(&u->size, (size_t)half);
	set_batch(u, (size_t)half);
	grace_store_relaxed(&u->shrink_future, (struct grace_hash_table *)NULL);
	for (unsigned int s = 0; s < u->nlocks; s++)
		u->stripes[s].zipped = false;
	unlock_all(u);
	grace_fetch_add(&u->shrinks, 1, __ATOMIC_RELAXED);
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

/* Background resizing: which way, given the count now? 1 grow, -1 shrink, 0 neither. */
static int wanted(struct grace_hash *ht, size_t size)
{
	struct grace__hash_upd *u = ht->upd;
	size_t n = total_count(u);

	if (n > size && size < u->max_buckets)
		return 1;
	if (n < size / 8 && size > u->min_buckets)
		return -1;
	return 0;
}

static void resize_cb(struct rcu_head *head);

/* Queue the next background step: it runs after a grace period. No lock held. */
static void rs_requeue(struct grace__hash_upd *u)
{
	u->ops->call(u->ops->ctx, &u->rs_rcu, resize_cb);
}

/*
 * End a resize. A background resize that leaves the table still outside its load limits starts
 * the next doubling or halving instead (decided under rs_lock, so destroy never frees the table
 * under a callback that is still running). After the unlock that clears `resizing`, the caller
 * must not touch the table: destroy may free it.
 */
static void rs_end(struct grace_hash *ht, bool background)
{
	struct grace__hash_upd *u = ht->upd;
	bool again = false;

	pthread_mutex_lock(&u->rs_lock);
	if (background && !u->dying && wanted(ht, cur_size(ht)) != 0) {
		u->step = RS_START;
		again = true;
	} else {
		grace_store_relaxed(&u->resizing, false);
	}
	pthread_mutex_unlock(&u->rs_lock);
	if (again)
		rs_requeue(u); /* `resizing` is still set: the table stays alive */
}

/*
 * Wait, rs_lock held, until no background resize runs. Its steps are flavor callbacks that run
 * after grace periods, so the wait must not hold grace periods back, as an online QSBR caller
 * sleeping on a condition variable would (a deadlock: the step waits for this thread's quiescent
 * state). The flavor's synchronize is the sleep instead: it puts an online QSBR caller offline
 * while it waits, and each round lets at least one grace period, so the next step, happen.
 */
static void wait_background_resize(struct grace__hash_upd *u)
{
	while (u->resizing) {
		pthread_mutex_unlock(&u->rs_lock);
		u->ops->synchronize(u->ops->ctx);
		pthread_mutex_lock(&u->rs_lock);
	}
}

static void kick_resize(struct grace_hash *ht)
{
	struct grace__hash_upd *u = ht->upd;

	pthread_mutex_lock(&u->rs_lock);
	if (u->resizing || u->dying) {
		pthread_mutex_unlock(&u->rs_lock);
		return;
	}
	grace_store_relaxed(&u->resizing, true);
	u->step = RS_START;
	pthread_mutex_unlock(&u->rs_lock);
	rs_requeue(u); /* outside every lock: call_rcu may wait at its hard limit */
}

/* A step of a background resize, invoked by the flavor after a grace period. */
static void resize_cb(struct rcu_head *head)
{
	struct grace__hash_upd *u = grace_container_of(head, struct grace__hash_upd, rs_rcu);
	struct grace_hash *ht = u->ht;
	bool dying;

	pthread_mutex_lock(&u->rs_lock);
	dying = u->dying;
	pthread_mutex_unlock(&u->rs_lock);

	switch (u->step) {
	case RS_START: {
		int w = dying ? 0 : wanted(ht, cur_size(ht));
		bool done = false;

		if (w > 0) {
			u->rs_old = grow_publish(ht);
			if (u->rs_old) {
				u->step = RS_UNZIP_FIRST;
				rs_requeue(u);
				return;
			}
		} else if (w < 0) {
			struct grace_hash_table *old = shrink_publish(ht);

			if (old) {
				u->ops->call(u->ops->ctx, &old->rcu, tbl_free_cb);
				done = true;
			}
		}
		/* After a halving, halve again if still sparse; after nothing or an allocation
		 * failure, stop (the next update that crosses a limit retries). */
		rs_end(ht, done);
		return;
	}
	case RS_UNZIP_FIRST:
		/* A grace period has passed since the publication: no reader uses the old array. */
		free(u->rs_old);
		u->rs_old = NULL;
		u->step = RS_UNZIP;
		/* fall through */
	case RS_UNZIP:
		if (!dying && unzip_pass(ht) > 0) {
			rs_requeue(u);
			return;
		}
		if (!dying)
			unzip_done(u);
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

	if (grace_load_relaxed(&u->resizing))
		return;
	if (grew ? a <= (long)size || size >= u->max_buckets
		 : a >= (long)(size / 8) || size <= u->min_buckets)
		return;
	if (wanted(ht, size) != 0)
		kick_resize(ht);
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
	nlocks = (unsigned int)roundup_pow2(p->nlocks ? p->nlocks : DEFAULT_LOCKS_CAP);
	if (nlocks > min)
		nlocks = (unsigned int)min;

	ht = (struct grace_hash *)aligned_alloc(GRACE_CACHE_LINE, sizeof(*ht));
	u = (struct grace__hash_upd *)aligned_alloc(GRACE_CACHE_LINE,
						    (sizeof(*u) + GRACE_CACHE_LINE - 1) &
							    ~(size_t)(GRACE_CACHE_LINE - 1));
	struct stripe *st = (struct stripe *)aligned_alloc(GRACE_CACHE_LINE, nlocks * sizeof(*st));
	struct grace_hash_table *t = tbl_alloc(init);
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
	memset(st, 0, nlocks * sizeof(*st)); /* counts, deltas, zipped flags */
	for (unsigned int i = 0; i < nlocks; i++)
		pthread_mutex_init(&st[i].lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_mutex_init(&u->rs_lock, NULL);
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
	pthread_mutex_lock(&u->rs_lock);
	u->dying = true;
	wait_background_resize(u);
	pthread_mutex_unlock(&u->rs_lock);

	t = cur_tbl(ht);
	if (u->free_fn) {
		/* Collect each node once (in the bucket of its class: chains may still share nodes
		 * if an unzip was cut short), then retire: a retired node may be freed at once. */
		struct grace_hash_node **th = grace__hash_heads(t);
		for (uint64_t b = 0; b <= t->mask; b++)
			for (struct grace_hash_node *n = th[b]; n; n = n->next)
				if ((n->hash & t->mask) == b) {
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
	free(u->rs_old); /* non-NULL only if the unzip was cut short before its first step */
	for (unsigned int i = 0; i < u->nlocks; i++)
		pthread_mutex_destroy(&u->stripes[i].lock);
	pthread_mutex_destroy(&u->rs_lock);
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

/*
 * Insert @node with key @key under its stripe lock. Returns NULL if @node was inserted as a new
 * object; otherwise the node of the same key found in the table: left in place (ADD_UNIQUE),
 * or replaced by @node and retired (ADD_REPLACE). The arguments are valid (callers check).
 */
static struct grace_hash_node *do_add(struct grace_hash *ht, struct grace_hash_node *node,
				      const void *key, enum add_mode mode)
{
	struct grace__hash_upd *u = ht->upd;
	uint64_t h = ht->hash(key, ht->arg);
	struct stripe *st = stripe_of(u, h);
	struct grace_hash_node *old = NULL;
	struct view v;

	node->hash = h; /* not reachable yet: plain store */
	pthread_mutex_lock(&st->lock);
	get_view(ht, st, h, &v);
	if (mode != ADD_DUP)
		old = view_find(ht, &v, h, key);
	if (old && mode == ADD_UNIQUE) {
		pthread_mutex_unlock(&st->lock);
		return old;
	}
	if (old) {
		/*
		 * Replace: @node takes @old's place in every chain that reaches it, so each reader
		 * sees one or the other, never neither, and no updater (all hold this lock) sees
		 * both. @node is not reachable yet: plain store of its link; relink_all publishes
		 * it with store-release (pairs with rcu_dereference() in lookups).
		 */
		node->next = old->next;
		relink_all(&v, old, node);
		pthread_mutex_unlock(&st->lock);
		retire(u, old); /* outside the lock: call_rcu may wait at its hard limit */
		return old;
	}
	view_insert(&v, node);
	count_change(u, st, 1);
	pthread_mutex_unlock(&st->lock);
	if (u->flags & GRACE_HASH_AUTO_RESIZE)
		maybe_resize(ht, true);
	return NULL;
}

int grace_hash_add(struct grace_hash *ht, struct grace_hash_node *node, const void *key)
{
	if (!ht || !node || !key)
		return -EINVAL;
	do_add(ht, node, key, ADD_DUP);
	return 0;
}

int grace_hash_add_unique(struct grace_hash *ht, struct grace_hash_node *node, const void *key)
{
	if (!ht || !node || !key)
		return -EINVAL;
	return do_add(ht, node, key, ADD_UNIQUE) ? -EEXIST : 0;
}

struct grace_hash_node *grace_hash_add_or_get(struct grace_hash *ht, struct grace_hash_node *node,
					      const void *key)
{
	struct grace_hash_node *old;

	if (!ht || !node || !key) {
		errno = EINVAL;
		return NULL;
	}
	old = do_add(ht, node, key, ADD_UNIQUE);
	return old ? old : node;
}

struct grace_hash_node *grace_hash_add_replace(struct grace_hash *ht, struct grace_hash_node *node,
					       const void *key)
{
	if (!ht || !node || !key) {
		errno = EINVAL;
		return NULL;
	}
	return do_add(ht, node, key, ADD_REPLACE);
}

/* Remove n (hash h) under its stripe lock; if key is given, n is looked up by key instead. */
static int do_del(struct grace_hash *ht, struct grace_hash_node *n, const void *key)
{
	struct grace__hash_upd *u = ht->upd;
	uint64_t h = key ? ht->hash(key, ht->arg) : n->hash;
	struct stripe *st = stripe_of(u, h);
	struct view v;

	pthread_mutex_lock(&st->lock);
	get_view(ht, st, h, &v);
	if (key)
		n = view_find(ht, &v, h, key);
	if (!n || !relink_all(&v, n, n->next)) {
		pthread_mutex_unlock(&st->lock);
		return -ENOENT;
	}
	count_change(u, st, -1);
	pthread_mutex_unlock(&st->lock);
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
	pthread_mutex_lock(&st->lock);
	get_view(ht, st, h, &v);
	/* new_node is not reachable yet: plain stores. relink_all publishes it (release). */
	new_node->hash = h;
	new_node->next = old->next;
	if (!relink_all(&v, old, new_node)) {
		pthread_mutex_unlock(&st->lock);
		return -ENOENT;
	}
	pthread_mutex_unlock(&st->lock);
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

static struct grace_hash_node *iter_scan(struct grace_hash_iter *it, struct grace_hash_node *n)
{
	struct grace_hash_table *t = it->tbl;

	for (;;) {
		for (; n; n = rcu_dereference(n->next))
			if ((n->hash & t->mask) == it->bucket) {
				it->node = n;
				return n;
			}
		if (it->bucket == t->mask) {
			it->node = NULL;
			return NULL;
		}
		it->bucket++;
		n = rcu_dereference(grace__hash_heads(t)[it->bucket]);
	}
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
	return iter_scan(it, rcu_dereference(it->node->next));
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

	pthread_mutex_lock(&u->rs_lock);
	wait_background_resize(u);
	if (u->dying) {
		pthread_mutex_unlock(&u->rs_lock);
		return -EINVAL;
	}
	grace_store_relaxed(&u->resizing, true);
	pthread_mutex_unlock(&u->rs_lock);

	while (cur_size(ht) < target) {
		struct grace_hash_table *old = grow_publish(ht);
		if (!old) {
			err = -ENOMEM;
			break;
		}
		u->ops->synchronize(u->ops->ctx);
		free(old); /* no reader uses it after that grace period */
		while (unzip_pass(ht) > 0)
			u->ops->synchronize(u->ops->ctx);
		unzip_done(u);
	}
	while (cur_size(ht) > target) {
		struct grace_hash_table *old = shrink_publish(ht);
		if (!old) {
			err = -ENOMEM;
			break;
		}
		u->ops->call(u->ops->ctx, &old->rcu, tbl_free_cb);
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
	st->unzip_passes = grace_load_relaxed(&u->unzip_passes);
	st->unzip_links = grace_load_relaxed(&u->unzip_links);
	st->nlocks = u->nlocks;
	st->resizing = grace_load_relaxed(&u->resizing);
}
