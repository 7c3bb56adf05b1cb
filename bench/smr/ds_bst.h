/* SPDX-License-Identifier: MIT */
/*
 * Lock-free external binary search tree of Natarajan and Mittal ("Fast concurrent lock-free
 * binary search trees", PPoPP 2014), written from the paper.
 *
 * External: keys live in the leaves; an internal node holds a routing key (go left when
 * key < routing key) and always has two children. Two bits of every child field (an edge):
 *  - FLAG (bit 0): the leaf at the end of this edge is being deleted;
 *  - TAG (bit 1): the node this edge leaves (the parent) is being removed: the edge is frozen.
 * A flagged or tagged edge never changes again (every CAS expects a clean edge), except that a
 * tag may be added to a flagged edge.
 *
 * Sentinels (keys above every real key, INF0 < INF1 < INF2): internal R (INF2) has left child
 * the internal S (INF1) and right child the leaf INF2; S has the leaf INF0 on the left and the
 * leaf INF1 on the right. Real keys all go left of S; the leaf INF0 stays the rightmost leaf of
 * that subtree forever, so the tree is never empty below S.
 *
 *  - seek(key): descends to the leaf where key belongs and records four nodes: leaf, its parent,
 *    and ancestor -> successor, the last edge on the path that was not tagged (the nodes from
 *    successor down to parent are all being removed).
 *  - insert: CAS the parent's edge from the leaf to a new internal node with the old leaf and a
 *    new leaf as children. If the edge is flagged or tagged, help (cleanup), retry.
 *  - delete: injection, a CAS that flags the edge to the leaf (the linearization point), then
 *    cleanup: tag the sibling's edge (freezing the parent), then one CAS at the ancestor's edge
 *    from successor to the sibling (keeping the sibling edge's flag). That CAS removes the
 *    whole segment successor..parent at once, with the flagged leaves hanging from it.
 *  - contains: a descent to a leaf, no writes.
 *
 * Reclamation (what the paper leaves to the memory manager): the thread whose cleanup CAS
 * succeeds retires the removed segment. The segment is frozen by then (every edge in it is
 * flagged or tagged, so no CAS changes it) and unreachable, so that thread walks it: from
 * successor down to parent, each node's tagged edge continues the path and its flagged edge
 * holds a leaf being deleted; at parent, the edge that is not the sibling's holds the leaf. It
 * retires every internal node of the segment and every such leaf, exactly once (only one CAS
 * can remove a given successor). A delete that finds its leaf gone returns; it retires nothing.
 *
 * Memory ordering:
 *  - Loads of an edge are acquire: the thread then reads the child's key and edges; pairs with
 *    the release of the CAS that stored the edge (an insert publishing its two new nodes, or a
 *    cleanup publishing the sibling it read with acquire: transitively, the sibling's
 *    initialisation).
 *  - Successful CASes are acq_rel (release: see above; acquire: the thread goes on reading
 *    through the old value, the leaf or successor); failed ones are acquire (the caller
 *    inspects the current edge and may follow it).
 *  - The tag is set with an atomic OR, acquire: its result gives the sibling's address and
 *    flag, which the cleanup CAS publishes. It publishes nothing itself (the edge still points
 *    to the same, already published node), so it needs no release.
 */
#ifndef SMR_DS_BST_H
#define SMR_DS_BST_H

#include "smr.h"

/*
 * 64 bytes, of which 16 are padding. At 48, glibc gives every node a 64-byte chunk, so all the
 * nodes a thread carves from its arena sit at one offset in their cache lines, the offset its
 * first allocations happened to leave; at some offsets a descent touches two lines per node.
 * One malloc() on the benchmark thread before its run, 72 bytes against 0, 40 or 56, moved an
 * EBR design on the BST of 2^16 keys at one thread from 2.5-2.6 to 3.65 Mops/s, and a
 * reclaimer that allocates on the thread's first use (grace's registry and caches) drew
 * another offset than one that does not: the one-thread BST column measured that draw. Padded, the chunks are 80 bytes and the nodes
 * cover the four 16-byte offsets alike, whatever came first (bench/smr/about.md, "The BST's
 * nodes").
 */
struct bst_node {
	struct smr_node h; /* key in h.key: a leaf's key, or an internal node's routing key */
	uintptr_t left;    /* child | BST_FLAG | BST_TAG; 0 in a leaf */
	uintptr_t right;
	uint64_t pad_[2];
};
_Static_assert(sizeof(struct bst_node) == 64, "a BST node is 64 bytes (see above)");

#define BST_FLAG ((uintptr_t)1)
#define BST_TAG ((uintptr_t)2)
#define BST_INF0 (UINT64_MAX - 2)
#define BST_INF1 (UINT64_MAX - 1)
#define BST_INF2 UINT64_MAX

struct bst {
	struct bst_node *R, *S;
};

SMR_INLINE struct bst_node *bst_ptr(uintptr_t e)
{
	return (struct bst_node *)(e & ~(BST_FLAG | BST_TAG));
}

/* Acquire: pairs with the release of the CAS that stored the edge (top of the file). */
SMR_INLINE uintptr_t bst_load(uintptr_t *edge)
{
	return __atomic_load_n(edge, __ATOMIC_ACQUIRE);
}

/* acq_rel on success, acquire on failure (top of the file); *old gets the current value. */
SMR_INLINE bool bst_cas(uintptr_t *edge, uintptr_t *old, uintptr_t new_)
{
	return __atomic_compare_exchange_n(edge, old, new_, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

SMR_INLINE uintptr_t *bst_edge(struct bst_node *n, uint64_t key)
{
	return key < n->h.key ? &n->left : &n->right;
}

static inline struct bst_node *bst_new(uint64_t key, struct bst_node *l, struct bst_node *r)
{
	struct bst_node *n = (struct bst_node *)smr_node_alloc(sizeof(*n), key);

	n->left = (uintptr_t)l;
	n->right = (uintptr_t)r;
	return n;
}

static inline struct bst *bst_create(void)
{
	struct bst *b = (struct bst *)calloc(1, sizeof(*b));

	if (!b)
		smr_fail("out of memory");
	b->S = bst_new(BST_INF1, bst_new(BST_INF0, NULL, NULL), bst_new(BST_INF1, NULL, NULL));
	b->R = bst_new(BST_INF2, b->S, bst_new(BST_INF2, NULL, NULL));
	return b;
}

struct bst_seek {
	struct bst_node *anc, *succ, *par, *leaf;
};

SMR_INLINE void bst_seek(struct bst *b, uint64_t key, struct bst_seek *s)
{
	uintptr_t pfield, cfield;
	struct bst_node *cur;

	s->anc = b->R;
	s->succ = b->S;
	s->par = b->S;
	pfield = bst_load(&b->S->left); /* the edge parent -> leaf */
	s->leaf = bst_ptr(pfield);
	smr_check_node(&s->leaf->h);
	cfield = bst_load(bst_edge(s->leaf, key));
	cur = bst_ptr(cfield);
	while (cur) {
		smr_check_node(&cur->h);
		/* An untagged edge into leaf: leaf's parent is not being removed, so the segment a
		 * cleanup would remove starts below it. */
		if (!(pfield & BST_TAG)) {
			s->anc = s->par;
			s->succ = s->leaf;
		}
		s->par = s->leaf;
		s->leaf = cur;
		pfield = cfield;
		cfield = bst_load(bst_edge(cur, key));
		cur = bst_ptr(cfield);
	}
}

/*
 * Retire the segment a successful cleanup removed: successor down to parent (tagged edges),
 * each node's flagged leaf, and at parent the leaf that is not the sibling. Frozen and
 * unreachable: plain reads through acquire loads, no race.
 */
static inline void bst_retire_segment(struct bst_node *succ, struct bst_node *par,
				      uintptr_t *sib_edge, struct smr_thread *t)
{
	struct bst_node *n = succ;

	while (n != par) {
		uintptr_t l = bst_load(&n->left), r = bst_load(&n->right), leaf, path;

		if (l & BST_FLAG) {
			leaf = l;
			path = r;
		} else {
			leaf = r;
			path = l;
		}
#if SMR_CHECK
		if (!(leaf & BST_FLAG) || (path & BST_FLAG) || !(path & BST_TAG) ||
		    bst_ptr(leaf)->left)
			smr_fail(
				"check: bst: a removed segment is not a chain of tagged edges with "
				"flagged leaves (edges %#lx %#lx)",
				(unsigned long)l, (unsigned long)r);
#endif
		smr_retire(t, &bst_ptr(leaf)->h);
		smr_retire(t, &n->h);
		n = bst_ptr(path);
	}
	uintptr_t victim = bst_load(sib_edge == &par->left ? &par->right : &par->left);
#if SMR_CHECK
	if (!(victim & BST_FLAG) || bst_ptr(victim)->left)
		smr_fail("check: bst: the removed parent's other edge is not a flagged leaf (%#lx)",
			 (unsigned long)victim);
#endif
	smr_retire(t, &bst_ptr(victim)->h);
	smr_retire(t, &par->h);
}

/* The paper's cleanup: true when this call's CAS removed the segment (and retired it). */
static inline bool bst_cleanup(uint64_t key, const struct bst_seek *s, struct smr_thread *t)
{
	struct bst_node *anc = s->anc, *succ = s->succ, *par = s->par;
	uintptr_t *succ_edge = bst_edge(anc, key);
	uintptr_t *child_edge, *sib_edge, sib, expected;

	if (key < par->h.key) {
		child_edge = &par->left;
		sib_edge = &par->right;
	} else {
		child_edge = &par->right;
		sib_edge = &par->left;
	}
	/* The leaf on key's side is not the one being deleted: this is a helper, and the
	 * flagged leaf is the other child; the edge to freeze is then key's side. */
	if (!(bst_load(child_edge) & BST_FLAG))
		sib_edge = child_edge;
	/* Freeze the sibling's edge (acquire: see the top of the file). Its old value gives
	 * the sibling and its flag: once tagged, the edge never changes again. */
	sib = __atomic_fetch_or(sib_edge, BST_TAG, __ATOMIC_ACQUIRE);
	expected = (uintptr_t)succ;
	if (!bst_cas(succ_edge, &expected, sib & ~BST_TAG))
		return false;
	bst_retire_segment(succ, par, sib_edge, t);
	return true;
}

static inline bool bst_insert(struct bst *b, uint64_t key, struct smr_thread *t)
{
	struct bst_node *nleaf = NULL, *nint = NULL;
	struct bst_seek s;

	for (;;) {
		bst_seek(b, key, &s);
		struct bst_node *leaf = s.leaf;
		uintptr_t *edge = bst_edge(s.par, key), expected = (uintptr_t)leaf;

		if (leaf->h.key == key) {
			if (nleaf) { /* never published */
				smr_node_discard(&nleaf->h);
				smr_node_discard(&nint->h);
			}
			return false;
		}
		if (!nleaf) {
			nleaf = bst_new(key, NULL, NULL);
			nint = bst_new(0, NULL, NULL);
		}
		/* Relaxed: nint is private until the CAS below publishes it (its release). */
		if (key < leaf->h.key) {
			nint->h.key = leaf->h.key;
			__atomic_store_n(&nint->left, (uintptr_t)nleaf, __ATOMIC_RELAXED);
			__atomic_store_n(&nint->right, (uintptr_t)leaf, __ATOMIC_RELAXED);
		} else {
			nint->h.key = key;
			__atomic_store_n(&nint->left, (uintptr_t)leaf, __ATOMIC_RELAXED);
			__atomic_store_n(&nint->right, (uintptr_t)nleaf, __ATOMIC_RELAXED);
		}
		if (bst_cas(edge, &expected, (uintptr_t)nint))
			return true;
		/* The edge still leads to our leaf but is flagged or tagged: help that delete. */
		if (bst_ptr(expected) == leaf && (expected & (BST_FLAG | BST_TAG)))
			bst_cleanup(key, &s, t);
	}
}

static inline bool bst_delete(struct bst *b, uint64_t key, struct smr_thread *t)
{
	struct bst_node *leaf = NULL;
	bool injecting = true;
	struct bst_seek s;

	for (;;) {
		bst_seek(b, key, &s);
		uintptr_t *edge = bst_edge(s.par, key);

		if (injecting) {
			uintptr_t expected;

			leaf = s.leaf;
			if (leaf->h.key != key)
				return false;
			expected = (uintptr_t)leaf;
			/* Injection: flag the edge to the leaf (the delete's linearization
			 * point). */
			if (bst_cas(edge, &expected, (uintptr_t)leaf | BST_FLAG)) {
				injecting = false;
				if (bst_cleanup(key, &s, t))
					return true;
			} else if (bst_ptr(expected) == leaf && (expected & (BST_FLAG | BST_TAG))) {
				bst_cleanup(key, &s, t); /* help, then retry */
			}
		} else {
			/* Our leaf is gone: another thread's cleanup removed (and retired) it.
			 * The comparison is safe: the leaf cannot be freed while this operation
			 * runs. */
			if (s.leaf != leaf)
				return true;
			if (bst_cleanup(key, &s, t))
				return true;
		}
	}
}

SMR_INLINE bool bst_contains(struct bst *b, uint64_t key)
{
	struct bst_node *cur = bst_ptr(bst_load(&b->S->left)), *next;

	for (;;) {
		smr_check_node(&cur->h);
		next = bst_ptr(bst_load(bst_edge(cur, key)));
		if (!next)
			break;
		cur = next;
	}
	if (cur->h.key != key)
		return false;
	smr_check_dwell(&cur->h);
	return true;
}

/* ---- single-threaded, after a run ------------------------------------------------------------ */

struct bst_frame {
	struct bst_node *n;
	uint64_t lo, hi; /* the keys this subtree may hold: [lo, hi) */
};

/* Every reachable node live, every edge clean (a delete returns only after its cleanup, so no
 * flag or tag is left), routing keys consistent (left < key <= right), sentinels in place;
 * real keys below range. Fills present[] and returns the count. */
static inline uint64_t bst_verify(struct bst *b, uint64_t range, uint8_t *present)
{
	size_t cap = 1024, sp = 0;
	struct bst_frame *st = (struct bst_frame *)malloc(cap * sizeof(*st));
	uint64_t n = 0, inf0 = 0;

	if (!st)
		smr_fail("out of memory");
	if (b->R->h.key != BST_INF2 || bst_ptr(b->R->left) != b->S || b->S->h.key != BST_INF1 ||
	    bst_ptr(b->R->right)->h.key != BST_INF2 || bst_ptr(b->S->right)->h.key != BST_INF1 ||
	    b->R->left != (uintptr_t)b->S || (b->S->right & (BST_FLAG | BST_TAG)))
		smr_fail("check: bst: the sentinels R and S are not in place");
	st[sp++] = (struct bst_frame){ bst_ptr(b->S->left), 0, BST_INF1 };
	if (b->S->left & (BST_FLAG | BST_TAG))
		smr_fail("check: bst: S's left edge is flagged or tagged after the run");
	while (sp) {
		struct bst_frame f = st[--sp];
		struct bst_node *x = f.n;

		if ((uintptr_t)x == SMR_POISON || x->h.magic != SMR_LIVE)
			smr_fail("check: bst: a node reachable after the run is %s",
				 (uintptr_t)x == SMR_POISON  ? "freed (poison link)"
				 : x->h.magic == SMR_RETIRED ? "retired"
				 : x->h.magic == SMR_DEAD    ? "freed"
							     : "corrupt");
		if (x->h.key < f.lo || x->h.key >= f.hi)
			smr_fail("check: bst: key %llu outside its subtree's range [%llu, %llu)",
				 (unsigned long long)x->h.key, (unsigned long long)f.lo,
				 (unsigned long long)f.hi);
		if (!x->left && !x->right) { /* a leaf */
			if (x->h.key == BST_INF0) {
				inf0++;
				continue;
			}
			if (x->h.key >= range)
				smr_fail("check: bst: key %llu out of range",
					 (unsigned long long)x->h.key);
			present[x->h.key] = 1;
			n++;
			continue;
		}
		if (!x->left || !x->right || ((x->left | x->right) & (BST_FLAG | BST_TAG)))
			smr_fail("check: bst: internal node %llu has a missing, flagged or tagged "
				 "edge after the run",
				 (unsigned long long)x->h.key);
		if (sp + 2 > cap) {
			cap *= 2;
			st = (struct bst_frame *)realloc(st, cap * sizeof(*st));
			if (!st)
				smr_fail("out of memory");
		}
		st[sp++] = (struct bst_frame){ bst_ptr(x->left), f.lo, x->h.key };
		st[sp++] = (struct bst_frame){ bst_ptr(x->right), x->h.key, f.hi };
	}
	free(st);
	if (inf0 != 1)
		smr_fail("check: bst: %llu leaves INF0 (want 1)", (unsigned long long)inf0);
	return n;
}

static inline void bst_destroy(struct bst *b)
{
	size_t cap = 1024, sp = 0;
	struct bst_node **st = (struct bst_node **)malloc(cap * sizeof(*st));

	if (!st)
		smr_fail("out of memory");
	st[sp++] = b->R;
	while (sp) {
		struct bst_node *x = st[--sp];

		if (x->left) {
			if (sp + 2 > cap) {
				cap *= 2;
				st = (struct bst_node **)realloc(st, cap * sizeof(*st));
				if (!st)
					smr_fail("out of memory");
			}
			st[sp++] = bst_ptr(x->left);
			st[sp++] = bst_ptr(x->right);
		}
		free(x);
	}
	free(st);
	free(b);
}

#endif /* SMR_DS_BST_H */
