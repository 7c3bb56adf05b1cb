/* SPDX-License-Identifier: MIT */
/*
 * Harris-Michael sorted linked list: Harris (DISC 2001), with the find of Michael (SPAA 2002,
 * "High performance dynamic lock-free hash tables and list-based sets"), which unlinks marked
 * nodes one at a time, so that exactly one thread unlinks (and retires) each node. Written from
 * the papers.
 *
 *  - A node is deleted logically by setting the mark bit (bit 0) of its own next field; from then
 *    on that field never changes. It is unlinked physically by a CAS on its predecessor's next
 *    field, from the node to its successor, which succeeds only while the predecessor is itself
 *    unmarked. The thread whose unlink CAS succeeds retires the node.
 *  - insert and delete use find(), which unlinks every marked node it meets on the way to the
 *    key and restarts from the head when its predecessor changed.
 *  - contains() only reads: it walks through marked nodes without helping (Harris's wait-free
 *    search), so a lookup never writes a shared line.
 *
 * The list is a head word (a next field with no node around it). The functions are instantiated
 * in each reclaimer's translation unit (design.h), which defines smr_retire() and rec_protect()
 * before including this file; every operation runs between the reclaimer's begin and end.
 *
 * Per-node protection (hazard pointers, REC_PROTECTS): find() calls rec_protect() on every node
 * before it reads the node, with the link it was loaded from, hand over hand in two slots (Michael,
 * IEEE TPDS 2004): the node that holds the link *prev stays protected in one slot while its
 * successor is protected in the other. The validation (the link still holds the node, unmarked)
 * is what makes the protection safe: an unmarked link belongs to a node that is not deleted, so
 * not unlinked, so the node it points to is reachable, not retired, at the moment of the reload,
 * when the hazard pointer is already published. A node reached only through a marked link can
 * be retired already, so such a reader restarts, and contains() goes through find() (which unlinks the marked nodes
 * it meets instead of walking through them). For every other reclaimer rec_protect() is a
 * constant true and this code is the one it always was.
 *
 * Memory ordering, the same for every link:
 *  - Loads of a next field (or the head) are acquire: the thread then reads the node the value
 *    points to (its key, its next field), and the acquire pairs with the release of the CAS that
 *    published that value (insert, unlink or mark), so the node's initialisation is visible.
 *    On x86 and Arm64 an acquire load costs what a plain load does (ldar on Arm64: close).
 *  - Every successful CAS is acq_rel: release, because the value it stores is followed by other
 *    threads (an inserted node's fields; for unlink and mark, the successor that this thread read
 *    with acquire, so the chain of happens-before reaches the successor's initialisation);
 *    acquire, because the thread then reads through the old value. A failed CAS is acquire: its
 *    result is the current value, which the caller may follow (on a retry it re-reads anyway).
 */
#ifndef SMR_DS_LIST_H
#define SMR_DS_LIST_H

#include "smr.h"

struct hml_node {
	struct smr_node h; /* key in h.key */
	uintptr_t next;    /* the successor, | HML_MARK once this node is logically deleted */
};

#define HML_MARK ((uintptr_t)1)

SMR_INLINE struct hml_node *hml_ptr(uintptr_t v)
{
	return (struct hml_node *)(v & ~HML_MARK);
}

/* Acquire: pairs with the release of the CAS that stored the value (see the top of the file). */
SMR_INLINE uintptr_t hml_load(uintptr_t *field)
{
	return __atomic_load_n(field, __ATOMIC_ACQUIRE);
}

/* acq_rel on success, acquire on failure (see the top of the file). */
SMR_INLINE bool hml_cas(uintptr_t *field, uintptr_t old, uintptr_t new_)
{
	return __atomic_compare_exchange_n(field, &old, new_, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* Where find() stopped: *prev held cur (unmarked) and cur->next held next (unmarked). */
struct hml_pos {
	uintptr_t *prev;
	struct hml_node *cur;
	uintptr_t next;
};

/*
 * Michael's find: the first node whose key is >= key, with its predecessor's link, unlinking
 * (and retiring) every marked node on the way. Returns whether cur holds key.
 */
SMR_INLINE bool hml_find(uintptr_t *head, uint64_t key, struct hml_pos *p, struct smr_thread *t)
{
	unsigned int slot = 0; /* the slot of cur; the other holds prev's node */

retry:
	p->prev = head;
	p->cur = hml_ptr(hml_load(head)); /* the head is never marked */
	for (;;) {
		if (!p->cur)
			return false;
		if (!rec_protect(t, slot, &p->cur->h, p->prev, (uintptr_t)p->cur))
			goto retry;
		smr_check_node(&p->cur->h);
		uintptr_t next = hml_load(&p->cur->next);
		uint64_t ckey = p->cur->h.key;
		/*
		 * Validate: the predecessor still points to cur, unmarked. Michael's check;
		 * without it a thread could decide on a node its predecessor no longer links
		 * (the predecessor was marked meanwhile, and a CAS through it would fail or,
		 * for an insert, link the new node after a deleted one). Ordered after the
		 * load of cur->next by that load's acquire.
		 */
		if (hml_load(p->prev) != (uintptr_t)p->cur)
			goto retry;
		if (!(next & HML_MARK)) {
			if (ckey >= key) {
				p->next = next;
				return ckey == key;
			}
			p->prev = &p->cur->next;
			slot ^= 1u; /* cur, now prev's node, keeps its slot */
		} else {
			/* cur is logically deleted: unlink it; the thread that succeeds
			 * retires it. */
			next &= ~HML_MARK;
			if (!hml_cas(p->prev, (uintptr_t)p->cur, next))
				goto retry;
			smr_retire(t, &p->cur->h);
			/* cur's slot is free again: next goes into it. */
		}
		p->cur = hml_ptr(next);
	}
}

SMR_INLINE bool hml_insert(uintptr_t *head, uint64_t key, struct smr_thread *t)
{
	struct hml_node *n = NULL;
	struct hml_pos p;

	for (;;) {
		if (hml_find(head, key, &p, t)) {
			if (n)
				smr_node_discard(&n->h); /* never published */
			return false;
		}
		if (!n)
			n = (struct hml_node *)smr_node_alloc(sizeof(*n), key);
		/* Relaxed: n is private until the CAS below publishes it (its release). */
		__atomic_store_n(&n->next, (uintptr_t)p.cur, __ATOMIC_RELAXED);
		if (hml_cas(p.prev, (uintptr_t)p.cur, (uintptr_t)n))
			return true;
	}
}

SMR_INLINE bool hml_delete(uintptr_t *head, uint64_t key, struct smr_thread *t)
{
	struct hml_pos p;

	for (;;) {
		if (!hml_find(head, key, &p, t))
			return false;
		/* Logical deletion: mark cur's next field. Fails if cur was marked by another
		 * delete or gained a new successor: find again. */
		if (!hml_cas(&p.cur->next, p.next, p.next | HML_MARK))
			continue;
		/* Physical: unlink it here, or let find() do it (it unlinks every marked node on
		 * the way to the key, whoever marked it), which also retires it. */
		if (hml_cas(p.prev, (uintptr_t)p.cur, p.next))
			smr_retire(t, &p.cur->h);
		else
			hml_find(head, key, &p, t);
		return true;
	}
}

SMR_INLINE bool hml_contains(uintptr_t *head, uint64_t key, struct smr_thread *t)
{
	if (REC_PROTECTS) {
		/* Per-node protection cannot walk through marked nodes (top of the file): find()
		 * unlinks them on the way. It returns whether an unmarked node holds key. */
		struct hml_pos p;

		return hml_find(head, key, &p, t);
	}
	(void)t;
	struct hml_node *cur = hml_ptr(hml_load(head));

	while (cur) {
		smr_check_node(&cur->h);
		if (cur->h.key >= key)
			break;
		cur = hml_ptr(hml_load(&cur->next));
	}
	if (!cur || cur->h.key != key)
		return false;
	smr_check_dwell(&cur->h);
	return !(hml_load(&cur->next) & HML_MARK);
}

/*
 * Single-threaded, after a run: keys strictly ascending, within [lo_key, range), every node
 * live and unmarked (a delete returns only once its node is unlinked, so none is left marked);
 * in a hash table's chain (in_hash), each key k with k & mask == b. Fills present[] and returns
 * the count.
 */
static inline uint64_t hml_verify(uintptr_t *head, uint64_t range, bool in_hash, uint64_t mask,
				  uint64_t b, uint8_t *present)
{
	uint64_t n = 0, prev_key = 0;

	if (*head & HML_MARK)
		smr_fail("check: a list head is marked");
	for (struct hml_node *cur = hml_ptr(*head); cur; cur = hml_ptr(cur->next)) {
		if ((uintptr_t)cur == SMR_POISON || cur->h.magic != SMR_LIVE)
			smr_fail("check: a node reachable after the run is %s (key %llu)",
				 (uintptr_t)cur == SMR_POISON  ? "freed (poison link)"
				 : cur->h.magic == SMR_RETIRED ? "retired"
				 : cur->h.magic == SMR_DEAD    ? "freed"
							       : "corrupt",
				 (uintptr_t)cur == SMR_POISON ? 0ull
							      : (unsigned long long)cur->h.key);
		if (cur->next & HML_MARK)
			smr_fail(
				"check: key %llu is still marked (logically deleted) after the run",
				(unsigned long long)cur->h.key);
		if (cur->h.key >= range)
			smr_fail("check: key %llu out of range", (unsigned long long)cur->h.key);
		if (n && cur->h.key <= prev_key)
			smr_fail("check: list not strictly ascending (%llu after %llu)",
				 (unsigned long long)cur->h.key, (unsigned long long)prev_key);
		if (in_hash && (cur->h.key & mask) != b)
			smr_fail("check: key %llu in bucket %llu", (unsigned long long)cur->h.key,
				 (unsigned long long)b);
		present[cur->h.key] = 1;
		prev_key = cur->h.key;
		n++;
	}
	return n;
}

static inline void hml_destroy(uintptr_t *head)
{
	struct hml_node *cur = hml_ptr(*head), *next;

	for (; cur; cur = next) {
		next = hml_ptr(cur->next);
		free(cur);
	}
	*head = 0;
}

#endif /* SMR_DS_LIST_H */
