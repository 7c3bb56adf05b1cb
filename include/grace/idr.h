/* SPDX-License-Identifier: MIT */
/*
 * grace ID registry: small integer IDs mapped to pointers, looked up under RCU with no lock, no
 * atomic read-modify-write and no store (the FREENIX 2003 System V IPC design).
 *
 *  - The map is an array of slots. Readers load the array pointer with rcu_dereference(), index
 *    it and load the slot: a few dependent loads. Updaters (grace_idr_alloc/replace/remove)
 *    serialise on the registry's mutex.
 *  - The array grows while readers run, as the paper's grow_ary() does: the updater allocates a
 *    larger array, copies the slots, publishes it with rcu_assign_pointer() and retires the old
 *    one through the flavor's call_rcu (grace_flavor_ops.call), so a reader still indexing the old
 *    array finishes safely. The array never shrinks; its capacity is bounded by max_ids.
 *  - An ID carries a sequence number: id = seq << slot_bits | slot, where slot_bits is the
 *    number of bits needed to index max_ids slots (as System V IPC's seq * SEQ_MULTIPLIER +
 *    index, where SEQ_MULTIPLIER = IPCMNI). Every allocation into a slot advances that slot's
 *    sequence, so a stale ID (its object removed, the slot reused) finds nothing instead of the
 *    newer object. With 2^s sequence values (s = 31 - slot_bits; 16 bits for the default
 *    max_ids of 32768) a stale ID can only match again after 2^s reuses of its slot.
 *  - The registry does not own the objects: grace_idr_remove() unlinks and returns the pointer;
 *    the caller retires the object after a grace period (call_rcu() or synchronize_rcu()), as
 *    the paper's ipc_rmid() + ipc_rcu_free() do. A reader may find an object whose removal runs
 *    concurrently; objects that need to know (System V semaphore sets do) carry their own lock
 *    and `deleted` flag, checked after locking (FREENIX Fig. 11).
 *
 * Flavor: readers may use any flavor; the registry only needs its update-side operations to
 * retire old arrays, given as struct grace_flavor_ops (default: grace_flavor_rcu, the default
 * flavor; grace_flavor_qsbr for QSBR readers; fill one in for an srcu domain).
 *
 * Names map to Linux: grace_idr_alloc ~ idr_alloc, grace_idr_lookup ~ idr_find (the System V
 * code's ipc_lock() lookup), grace_idr_remove ~ idr_remove, grace_idr_replace ~ idr_replace,
 * grace_idr_for_each ~ idr_for_each_entry. See docs/ds.md.
 */
#ifndef GRACE_IDR_H
#define GRACE_IDR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

#include <grace/flavor.h>

/* Default and largest number of IDs a registry can hold (max_ids). */
#define GRACE_IDR_DEFAULT_MAX 32768u /* IPCMNI: slot_bits 15, 16 sequence bits */
#define GRACE_IDR_MAX_IDS (1u << 24) /* leaves at least 7 sequence bits */

/* grace_idr_params.flags */
#define GRACE_IDR_CYCLIC \
	1u /* allocate the slot after the last one allocated (wrapping) instead
			     * of the lowest free slot: slots are reused as late as possible,
			     * which stretches the stale-ID protection further */

/**
 * struct grace_idr_params - options for grace_idr_init(); zero-initialise, set what you need.
 * @max_ids:   how many IDs may be allocated at once (1..GRACE_IDR_MAX_IDS; 0: the default,
 *             GRACE_IDR_DEFAULT_MAX). grace_idr_alloc() fails with -ENOSPC beyond it.
 * @init_size: slots in the first array (0: min(64, max_ids)); doubled as needed.
 * @flags:     GRACE_IDR_* flags.
 * @ops:       update-side flavor operations (NULL: &grace_flavor_rcu).
 */
struct grace_idr_params {
	uint32_t max_ids;
	uint32_t init_size;
	uint32_t flags;
	const struct grace_flavor_ops *ops;
};

/* One slot. Internal: accessed only through the functions below. */
struct grace_idr_slot {
	void *ptr;    /* the object; NULL when the slot is free or reserved */
	uint32_t seq; /* sequence of the slot's current (or last) allocation */
	uint32_t pad_;
};

/* The RCU-protected slot array: this header, then `size` slots. Internal. */
struct grace_idr_array {
	uint32_t size;
	uint32_t pad_;
	struct rcu_head rcu; /* retires the array once a larger one replaced it */
	uint64_t pad2_[5];   /* header fills one cache line; slots start on the next */
};

/**
 * struct grace_idr - an ID registry. Embed it or allocate it; initialise with grace_idr_init().
 * Every field is internal. The fields readers load come first; the update-side state starts at
 * least one cache line further, so updaters never write a line that lookups read.
 */
struct grace_idr {
	/* Read-mostly: loaded by grace_idr_lookup(). */
	struct grace_idr_array *ary; /* RCU-protected */
	uint32_t slot_mask;          /* (1 << slot_bits) - 1; constant after init */
	uint32_t seq_shift;          /* slot_bits; constant after init */
	uint32_t max_ids;            /* constant after init */
	uint32_t flags;              /* constant after init */
	const struct grace_flavor_ops *ops;
	uint64_t magic_; /* set by init, cleared by destroy (misuse checks) */
	char pad_[GRACE_CACHE_LINE];
	/* Update side: under lock. */
	pthread_mutex_t lock;
	uint64_t *used;    /* bitmap of allocated (or reserved) slots, one bit per slot of ary */
	uint32_t count;    /* allocated slots */
	uint32_t cursor;   /* GRACE_IDR_CYCLIC: where the next search starts */
	int32_t max_index; /* highest allocated slot, -1 if none */
	uint32_t hint;     /* lowest slot that may be free */
};

/**
 * grace_idr_init() - initialise an ID registry.
 * @idr:    the registry (not yet initialised, or destroyed).
 * @params: options, or NULL for the defaults.
 * Returns 0, -EINVAL (idr NULL, max_ids above GRACE_IDR_MAX_IDS, init_size above max_ids, ops
 * without call or barrier), or -ENOMEM.
 * Context: may block (allocates).
 */
GRACE_API int grace_idr_init(struct grace_idr *idr, const struct grace_idr_params *params);

/**
 * grace_idr_destroy() - free the registry's arrays. The registry does not own the objects:
 * remove (or iterate and free) them first; entries still present are forgotten, not freed.
 * Readers that are still inside a read-side section that found the registry may finish safely
 * (the arrays are retired through the flavor, then the flavor's barrier is awaited). No update
 * may run concurrently, and none may follow without a new grace_idr_init().
 * Context: blocks (flavor barrier); not inside a read-side section, not from a callback.
 */
GRACE_API void grace_idr_destroy(struct grace_idr *idr);

/**
 * grace_idr_alloc() - allocate an ID for @ptr and publish it.
 * @ptr: the object, fully initialised: lookups may return it as soon as this call has stored
 *       it (the store is a release, paired with the acquire load in grace_idr_lookup()). NULL
 *       reserves an ID: lookups return NULL for it until grace_idr_replace() publishes the object
 *       (for objects that must know their own ID before they are visible).
 * Returns the ID (>= 0), or -ENOSPC (max_ids IDs allocated), -ENOMEM, -EINVAL (idr NULL or not
 * initialised).
 * Allocation: the lowest free slot (System V), or the next one cyclically (GRACE_IDR_CYCLIC).
 * Thread-safety: any thread; updates serialise on the registry's mutex.
 * Context: may block on the mutex and allocate (growing the array); never waits for a grace
 *   period, so it may be called inside a read-side section.
 * Cost: O(1) amortised (bitmap scan from a hint); growth copies the array.
 */
GRACE_API int grace_idr_alloc(struct grace_idr *idr, void *ptr);

/**
 * grace_idr_replace() - publish @ptr under a live ID (allocated or reserved).
 * @old: if not NULL, receives the previous pointer (which the caller retires after a grace
 *       period, if it is not NULL).
 * Returns 0, or -ENOENT (id not allocated, or stale), -EINVAL (idr NULL or not initialised).
 * Readers see the old or the new pointer, never a mix. Context: as grace_idr_alloc().
 */
GRACE_API int grace_idr_replace(struct grace_idr *idr, int id, void *ptr, void **old);

/**
 * grace_idr_remove() - free @id and return the pointer it mapped to.
 * Returns the pointer (NULL for a reserved ID), or NULL when @id is not allocated or stale. The
 * slot may be reused at once, with the next sequence number. Readers that looked the ID up
 * before the removal may still hold the object: retire it after a grace period (call_rcu()).
 * Context: as grace_idr_alloc() (never blocks for a grace period).
 */
GRACE_API void *grace_idr_remove(struct grace_idr *idr, int id);

/** Number of allocated (or reserved) IDs. Thread-safety: any thread; a snapshot. */
GRACE_API uint32_t grace_idr_count(struct grace_idr *idr);

/**
 * grace_idr_max_index() - the highest slot index in use, or -1 when the registry is empty
 * (System V's ipc_ids.max_id: iterate slots 0..max_index). A snapshot.
 */
GRACE_API int grace_idr_max_index(struct grace_idr *idr);

/** grace_idr_id_slot() - the slot index of an ID (its low slot_bits bits); -1 if id < 0. */
GRACE_INLINE int grace_idr_id_slot(const struct grace_idr *idr, int id)
{
	return id < 0 ? -1 : (int)((uint32_t)id & idr->slot_mask);
}

GRACE_INLINE struct grace_idr_slot *grace__idr_slots(struct grace_idr_array *a)
{
	return (struct grace_idr_slot *)(void *)(a + 1);
}

/**
 * grace_idr_lookup() - the object mapped to @id, or NULL (free, reserved, stale or bad ID).
 * The caller is inside a read-side section of the registry's readers' flavor; the object stays
 * allocated until that section ends (if its remover retires it after a grace period).
 * Memory ordering: the array pointer is an rcu_dereference() (dependency-ordered, pairs with the
 * rcu_assign_pointer() that published the array). The slot is read seq (load-acquire), ptr
 * (load-acquire), seq again: the first acquire pairs with the store-release of seq in
 * grace_idr_remove() (a pointer older than that seq cannot be loaded after it), the second with
 * the store-release of ptr in grace_idr_alloc()/grace_idr_replace() (the object's contents are
 * visible, and a seq newer than the pointer is seen by the second load). Both seq loads equal to
 * the ID's sequence prove that the pointer belongs to that ID, even if the ID reached this thread
 * without synchronisation.
 * Thread-safety: any thread. Context: never blocks, never writes shared memory.
 * Cost: five loads (three on the slot's line), no store; no fence on x86 (acquire is a plain
 * load): 18 instructions (callgrind, docs/ds.md).
 */
GRACE_INLINE void *grace_idr_lookup(const struct grace_idr *idr, int id)
{
	struct grace_idr_array *a;
	struct grace_idr_slot *s;
	uint32_t slot, seq;
	void *p;

	if (GRACE_UNLIKELY(id < 0))
		return NULL;
	slot = (uint32_t)id & idr->slot_mask;
	seq = (uint32_t)id >> idr->seq_shift;
	a = rcu_dereference(idr->ary);
	if (GRACE_UNLIKELY(slot >= a->size))
		return NULL;
	s = grace__idr_slots(a) + slot;
	/* Acquire: orders the ptr load after it; pairs with the store-release of seq in remove. */
	if (grace_load_acquire(&s->seq) != seq)
		return NULL;
	/* Acquire: the object's fields and the second seq load are ordered after it; pairs with
	 * the store-release of ptr in grace_idr_alloc()/grace_idr_replace(). */
	p = grace_load_acquire(&s->ptr);
	if (GRACE_LIKELY(grace_load_relaxed(&s->seq) == seq))
		return p;
	return NULL;
}

/**
 * grace_idr_get_next() - the next live object at a slot >= *slot, for iteration under a
 * read-side section (or with updates excluded by the caller).
 * @slot: in: first slot to look at; out: the slot of the object returned.
 * @id:   out (if not NULL): the object's ID.
 * Returns the object, or NULL when no slot >= *slot holds one. Objects added or removed during
 * the iteration may or may not be seen; an object present throughout is seen exactly once.
 */
GRACE_API void *grace_idr_get_next(const struct grace_idr *idr, uint32_t *slot, int *id);

/* Iterate over live objects: grace_idr_for_each(idr, slot, id, ptr) { ... } (read-side). */
#define grace_idr_for_each(idr, slot, id, ptr) \
	for ((slot) = 0; ((ptr) = grace_idr_get_next((idr), &(slot), &(id))) != NULL; (slot)++)

GRACE_END_DECLS

#endif /* GRACE_IDR_H */
