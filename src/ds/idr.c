/* SPDX-License-Identifier: MIT */
/*
 * ID registry (include/grace/idr.h): the FREENIX 2003 System V IPC ID array, in user space.
 *
 * Correctness argument.
 *
 * Readers (grace_idr_lookup, grace_idr_get_next) run with no lock: they load the array pointer
 * (rcu_dereference), the array's size (immutable once published), then a slot's ptr
 * (load-acquire) and seq. Updaters serialise on idr->lock and write only the current array.
 * The lock is a public struct's pthread_mutex_t: it is taken with grace__mutex_lock(), and
 * the functions documented "Lock held" check it with grace__mutex_assert_held() (core/lock.h).
 *
 * 1. Array growth (grow_ary). The new array is filled (slots copied, the rest zero) before
 *    rcu_assign_pointer() publishes it, so a reader that sees the new pointer sees initialised
 *    slots (release/dependency pairing). The old array is retired through ops->call: a reader
 *    still indexing it began its read-side section before the retirement, so the grace period
 *    the callback waits for covers it (the paper's ipc_rcu_free(old)). The old array holds the
 *    values of the moment of the copy; updates after the copy go to the new array only. A reader
 *    on the old array may therefore miss an object allocated after the growth, or find one
 *    removed after it: both updates ran concurrently with that reader, which is the usual RCU
 *    guarantee ("Note that no deleted flag is needed here, since the old version of the array is
 *    kept valid throughout the grace period", FREENIX 4.5). An object removed after the growth
 *    and then retired by its owner is freed only after a grace period that began after the
 *    removal, hence after every reader that could see it in either array.
 *    The size is part of the array (not a separate field as in grow_ary(), which needed two
 *    smp_wmb()s to order entries against size), so a reader can never pair a new size with an
 *    old array.
 *
 * 2. Stale IDs. Updaters change a slot in two ways: alloc leaves seq unchanged and stores ptr
 *    with a store-release; remove stores ptr = NULL, then seq + 1 with a store-release. A lookup
 *    of an ID with sequence S loads seq (acquire), ptr (acquire), seq (relaxed) and returns ptr
 *    only if both seq loads return S. Suppose it returned a pointer P stored by the alloc of
 *    generation G != S.
 *    - G < S: the remove of generation G stored ptr = NULL before its seq store G + 1, and the
 *      first seq load returned S >= G + 1 with acquire, synchronising with the remove that
 *      stored S, which the remove of G happens-before (updaters are serialised). So the ptr
 *      load happens after the NULL store of the remove of G and cannot return P from
 *      generation G (coherence), unless P was stored again by a later alloc, which is then
 *      generation >= S.
 *    - G > S: the alloc of G ran after seq became G (a remove's store, before the alloc's
 *      store-release of P), and the ptr load that returned P is an acquire, so the second seq load
 *      returns G or later, not S.
 *    So a stale ID never returns a newer object, even when the ID reached the reader without
 *    synchronisation. A reader that returns the object of its own generation while a remove
 *    runs returns an object being removed concurrently, still allocated until the grace period
 *    its remover waits for. Sequence numbers wrap after 2^(31 - slot_bits) reuses of one slot.
 *
 * 3. Iteration (grace_idr_get_next) scans slots in increasing index order and each call reloads
 *    the array pointer; indices keep their meaning across growth, so an object present during
 *    the whole iteration is returned exactly once.
 *
 * Locks and the flavor. ops->call is never called with idr->lock held (the rule hash.c follows
 * for its stripe locks): past its hard limit call_rcu() waits for callbacks to run, and one of
 * them may need this lock (a callback that removes an ID). Growth hands the old array back to
 * grace_idr_alloc(), which retires it after unlocking; until then only the lock holder can
 * reach it, and readers that found it began before the publication of the new array, so the
 * grace period the later retirement waits for still covers them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <grace/idr.h>

#include "core/diag.h"
#include "core/lock.h"

#define IDR_MAGIC 0x6772616365696472ull /* "graceidr" */

/* Lookups of a destroyed registry find this empty array instead of freed memory. */
static struct grace_idr_array idr_empty_array;

static bool idr_ok(const struct grace_idr *idr)
{
	return idr && idr->magic_ == IDR_MAGIC;
}

static struct grace_idr_array *ary_alloc(uint32_t size)
{
	size_t bytes = sizeof(struct grace_idr_array) +
		       (size_t)size * sizeof(struct grace_idr_slot);
	struct grace_idr_array *a;

	bytes = (bytes + GRACE_CACHE_LINE - 1) & ~(size_t)(GRACE_CACHE_LINE - 1);
	a = (struct grace_idr_array *)aligned_alloc(GRACE_CACHE_LINE, bytes);
	if (!a)
		return NULL;
	memset(a, 0, bytes);
	a->size = size;
	return a;
}

static void ary_free_cb(struct rcu_head *head)
{
	free(grace_container_of(head, struct grace_idr_array, rcu));
}

static uint32_t bitmap_words(uint32_t size)
{
	return (size + 63) / 64;
}

static bool bit_test(const uint64_t *bm, uint32_t i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

/* First clear bit in [from, to), or UINT32_MAX. */
static uint32_t find_clear(const uint64_t *bm, uint32_t from, uint32_t to)
{
	uint32_t i = from;

	while (i < to) {
		uint64_t w = ~bm[i / 64] & (~0ull << (i % 64));

		if (w) {
			uint32_t b = (i & ~63u) + (uint32_t)__builtin_ctzll(w);
			return b < to ? b : UINT32_MAX;
		}
		i = (i & ~63u) + 64;
	}
	return UINT32_MAX;
}

/* Highest set bit below `below`, or -1. */
static int32_t find_last_set(const uint64_t *bm, uint32_t below)
{
	while (below > 0) {
		uint32_t wi = (below - 1) / 64;
		uint32_t nbits = below - wi * 64; /* bits of word wi that are < below: 1..64 */
		uint64_t w = bm[wi];

		if (nbits < 64)
			w &= (1ull << nbits) - 1;
		if (w)
			return (int32_t)(wi * 64 + 63 - (uint32_t)__builtin_clzll(w));
		below = wi * 64;
	}
	return -1;
}

int grace_idr_init(struct grace_idr *idr, const struct grace_idr_params *params)
{
	struct grace_idr_params p = { 0, 0, 0, NULL };
	uint32_t bits = 0;
	struct grace_idr_array *a;

	if (!idr)
		return -EINVAL;
	if (params)
		p = *params;
	if (p.max_ids == 0)
		p.max_ids = GRACE_IDR_DEFAULT_MAX;
	if (p.max_ids > GRACE_IDR_MAX_IDS || p.init_size > p.max_ids ||
	    (p.flags & ~GRACE_IDR_CYCLIC))
		return -EINVAL;
	if (p.init_size == 0)
		p.init_size = p.max_ids < 64 ? p.max_ids : 64;
	if (!p.ops)
		p.ops = &grace_flavor_rcu;
	if (!p.ops->call || !p.ops->barrier)
		return -EINVAL;
	while ((1u << bits) < p.max_ids)
		bits++;

	memset(idr, 0, sizeof(*idr));
	a = ary_alloc(p.init_size);
	if (!a)
		return -ENOMEM;
	idr->used = (uint64_t *)calloc(bitmap_words(p.init_size), sizeof(uint64_t));
	if (!idr->used) {
		free(a);
		return -ENOMEM;
	}
	if (pthread_mutex_init(&idr->lock, NULL) != 0) {
		free(idr->used);
		free(a);
		return -ENOMEM;
	}
	idr->slot_mask = (1u << bits) - 1;
	idr->seq_shift = bits;
	idr->max_ids = p.max_ids;
	idr->flags = p.flags;
	idr->ops = p.ops;
	idr->max_index = -1;
	/* No reader can know the registry yet: the caller publishes it (release) after init. */
	RCU_INIT_POINTER(idr->ary, a);
	idr->magic_ = IDR_MAGIC;
	return 0;
}

void grace_idr_destroy(struct grace_idr *idr)
{
	struct grace_idr_array *a;

	if (!idr_ok(idr)) {
		grace__misuse("grace_idr_destroy",
			      "registry %p is not initialised (or destroyed twice)", (void *)idr);
		return;
	}
	a = rcu_dereference_protected(idr->ary, 1);
	/* Later lookups (a misuse, but survivable) find an empty array, not freed memory. */
	rcu_assign_pointer(idr->ary, &idr_empty_array);
	idr->magic_ = 0;
	/* Readers still inside a section may index `a`: free it after a grace period, then wait,
	 * so that nothing this registry retired is still pending when destroy returns. */
	idr->ops->call(idr->ops->ctx, &a->rcu, ary_free_cb);
	idr->ops->barrier(idr->ops->ctx);
	free(idr->used);
	idr->used = NULL;
	pthread_mutex_destroy(&idr->lock);
}

/* Grow the array to at least `need` slots (grow_ary). Called with the lock held; *retire gets
 * the old array, which the caller retires through ops->call once it has unlocked. */
static int idr_grow(struct grace_idr *idr, uint32_t need, struct grace_idr_array **retire)
{
	struct grace_idr_array *old = rcu_dereference_protected(idr->ary, 1);
	struct grace_idr_array *a;
	struct grace_idr_slot *os, *ns;
	uint32_t size = old->size ? old->size : 1;
	uint64_t *used;

	grace__mutex_assert_held(&idr->lock);
	while (size < need)
		size = size > idr->max_ids / 2 ? idr->max_ids : size * 2;
	if (size > idr->max_ids)
		size = idr->max_ids;
	if (size == 0 || size < need)
		return -ENOSPC; /* max_ids reached */
	a = ary_alloc(size);
	if (!a)
		return -ENOMEM;
	used = (uint64_t *)realloc(idr->used, bitmap_words(size) * sizeof(uint64_t));
	if (!used) {
		free(a);
		return -ENOMEM;
	}
	memset(used + bitmap_words(old->size), 0,
	       (bitmap_words(size) - bitmap_words(old->size)) * sizeof(uint64_t));
	idr->used = used;

	os = grace__idr_slots(old);
	ns = grace__idr_slots(a);
	for (uint32_t i = 0; i < old->size; i++) {
		/* Only updaters (serialised by the lock) write slots: relaxed loads see the latest
		 * values. The new array is private until published below. */
		ns[i].ptr = grace_load_relaxed(&os[i].ptr);
		ns[i].seq = grace_load_relaxed(&os[i].seq);
	}
	/* Publish: store-release, so a reader that sees the new array sees its slots and size.
	 * Pairs with the rcu_dereference() of idr->ary in grace_idr_lookup(). */
	rcu_assign_pointer(idr->ary, a);
	/* Readers may still index the old array: the caller frees it after a grace period. */
	*retire = old;
	return 0;
}

/* A free slot, growing the array if needed (*retire: the old array, see idr_grow());
 * UINT32_MAX with *err set on failure. Lock held. */
static uint32_t idr_find_slot(struct grace_idr *idr, int *err, struct grace_idr_array **retire)
{
	struct grace_idr_array *a = rcu_dereference_protected(idr->ary, 1);
	uint32_t size = a->size;
	uint32_t s;

	grace__mutex_assert_held(&idr->lock);
	if (idr->count >= idr->max_ids) {
		*err = -ENOSPC;
		return UINT32_MAX;
	}
	if (idr->flags & GRACE_IDR_CYCLIC) {
		uint32_t from = idr->cursor < size ? idr->cursor : size;

		s = find_clear(idr->used, from, size);
		if (s != UINT32_MAX)
			return s;
		if (size < idr->max_ids) {
			s = size;
		} else {
			s = find_clear(idr->used, 0, from);
			if (s != UINT32_MAX)
				return s;
			*err = -ENOSPC; /* unreachable while count < max_ids */
			return UINT32_MAX;
		}
	} else {
		s = find_clear(idr->used, idr->hint < size ? idr->hint : size, size);
		if (s != UINT32_MAX)
			return s;
		s = size; /* the array is full: the first new slot */
	}
	if (s >= idr->max_ids) {
		*err = -ENOSPC;
		return UINT32_MAX;
	}
	*err = idr_grow(idr, s + 1, retire);
	return *err ? UINT32_MAX : s;
}

int grace_idr_alloc(struct grace_idr *idr, void *ptr)
{
	struct grace_idr_slot *slot;
	struct grace_idr_array *retire = NULL;
	uint32_t s;
	int err = 0, id;

	if (!idr_ok(idr))
		return -EINVAL;
	grace__mutex_lock(&idr->lock);
	s = idr_find_slot(idr, &err, &retire);
	if (s == UINT32_MAX) {
		grace__mutex_unlock(&idr->lock);
		return err;
	}
	idr->used[s / 64] |= 1ull << (s % 64);
	grace_store_relaxed(&idr->count, idr->count + 1);
	if ((int32_t)s > idr->max_index)
		grace_store_relaxed(&idr->max_index, (int32_t)s);
	if (idr->flags & GRACE_IDR_CYCLIC)
		idr->cursor = s + 1 < idr->max_ids ? s + 1 : 0;
	else
		idr->hint = s + 1;
	slot = grace__idr_slots(rcu_dereference_protected(idr->ary, 1)) + s;
	id = (int)((grace_load_relaxed(&slot->seq) << idr->seq_shift) | s);
	/* Publish: store-release, so a reader that loads ptr sees the object initialised and the
	 * slot's seq advanced by the last remove. Pairs with the load-acquire in lookup. */
	grace_store_release(&slot->ptr, ptr);
	grace__mutex_unlock(&idr->lock);
	if (retire)
		idr->ops->call(idr->ops->ctx, &retire->rcu,
			       ary_free_cb); /* unlocked: see the top */
	return id;
}

/* The live slot of `id`, or NULL (free, stale, out of range). Lock held. */
static struct grace_idr_slot *idr_live_slot(struct grace_idr *idr, int id, uint32_t *sp)
{
	struct grace_idr_array *a = rcu_dereference_protected(idr->ary, 1);
	struct grace_idr_slot *slot;
	uint32_t s;

	grace__mutex_assert_held(&idr->lock);
	if (id < 0)
		return NULL;
	s = (uint32_t)id & idr->slot_mask;
	if (s >= a->size || !bit_test(idr->used, s))
		return NULL;
	slot = grace__idr_slots(a) + s;
	if (grace_load_relaxed(&slot->seq) != (uint32_t)id >> idr->seq_shift)
		return NULL;
	*sp = s;
	return slot;
}

int grace_idr_replace(struct grace_idr *idr, int id, void *ptr, void **old)
{
	struct grace_idr_slot *slot;
	uint32_t s;

	if (!idr_ok(idr))
		return -EINVAL;
	grace__mutex_lock(&idr->lock);
	slot = idr_live_slot(idr, id, &s);
	if (!slot) {
		grace__mutex_unlock(&idr->lock);
		return -ENOENT;
	}
	if (old)
		*old = grace_load_relaxed(&slot->ptr);
	/* Store-release: the new object is initialised before a reader can load it (pairs with
	 * the load-acquire in lookup). Readers see the old or the new pointer. */
	grace_store_release(&slot->ptr, ptr);
	grace__mutex_unlock(&idr->lock);
	return 0;
}

void *grace_idr_remove(struct grace_idr *idr, int id)
{
	struct grace_idr_slot *slot;
	uint32_t s, seq_mask;
	void *p;

	if (!idr_ok(idr))
		return NULL;
	grace__mutex_lock(&idr->lock);
	slot = idr_live_slot(idr, id, &s);
	if (!slot) {
		grace__mutex_unlock(&idr->lock);
		return NULL;
	}
	p = grace_load_relaxed(&slot->ptr);
	/*
	 * ptr = NULL, then the new seq with a store-release: a reader whose first (acquire) seq
	 * load sees the new seq cannot load the old pointer after it. Pairs with the first
	 * load-acquire of seq in grace_idr_lookup() (argument 2 at the top).
	 */
	grace_store_relaxed(&slot->ptr, (void *)NULL);
	seq_mask = (1u << (31 - idr->seq_shift)) - 1;
	grace_store_release(&slot->seq, (grace_load_relaxed(&slot->seq) + 1) & seq_mask);
	idr->used[s / 64] &= ~(1ull << (s % 64));
	grace_store_relaxed(&idr->count, idr->count - 1);
	if (s < idr->hint)
		idr->hint = s;
	if ((int32_t)s == idr->max_index)
		grace_store_relaxed(&idr->max_index, find_last_set(idr->used, s));
	grace__mutex_unlock(&idr->lock);
	return p;
}

uint32_t grace_idr_count(struct grace_idr *idr)
{
	return idr_ok(idr) ? grace_load_relaxed(&idr->count) : 0;
}

int grace_idr_max_index(struct grace_idr *idr)
{
	return idr_ok(idr) ? grace_load_relaxed(&idr->max_index) : -1;
}

void *grace_idr_get_next(const struct grace_idr *idr, uint32_t *slot, int *id)
{
	struct grace_idr_array *a;
	struct grace_idr_slot *sl;

	if (!idr || !slot)
		return NULL;
	/* Raw: iteration is legal inside a read-side section of any flavor, or with updates
	 * excluded by the caller; the caller's context is documented, not checked. */
	a = rcu_dereference_raw(idr->ary);
	sl = grace__idr_slots(a);
	for (uint32_t i = *slot; i < a->size; i++) {
		/* The lookup's protocol (argument 2): seq (acquire), ptr (acquire), seq again; a
		 * pointer is reported only with the ID it was published under. */
		uint32_t seq = grace_load_acquire(&sl[i].seq);
		void *p = grace_load_acquire(&sl[i].ptr);

		if (!p)
			continue;
		if (grace_load_relaxed(&sl[i].seq) != seq) {
			i--; /* the slot changed under us: read it again */
			continue;
		}
		*slot = i;
		if (id)
			*id = (int)((seq << idr->seq_shift) | i);
		return p;
	}
	*slot = a->size;
	return NULL;
}
