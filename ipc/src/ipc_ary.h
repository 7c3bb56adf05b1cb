/* SPDX-License-Identifier: MIT */
/*
 * The ID array of the global-lock baseline (internal): Linux 2.5.42's ipc_ids, slot -> object,
 * every access under that type's one global lock (seed 000, Fig. 8). The RCU implementation
 * uses grace's ID registry (include/grace/idr.h) instead, which grows the array while lock-free
 * readers run (Fig. 13).
 *
 * Both follow the same policy: ID = seq << slot_bits | slot, slot_bits the bits needed to index
 * the array's limit (IPCMNI: 15), the lowest free slot first, a per-slot sequence advanced by each allocation (a
 * removed ID stays invalid until its slot has been reused 2^(31 - slot_bits) times), an array
 * that starts at IPC_ARY_INIT slots, doubles when full and never shrinks.
 */
#ifndef GRACE_IPC_ARY_H
#define GRACE_IPC_ARY_H

#include <stdint.h>

#define IPC_ARY_INIT 16u /* slots in the first array (also passed to grace_idr_init) */

struct ipc_ary {
	void **slot;   /* size entries; NULL when free */
	uint32_t *seq; /* sequence of each slot's current (or last) allocation */
	uint32_t size;
	uint32_t limit; /* slots at most (IPCMNI) */
	uint32_t in_use;
	uint32_t hint; /* no free slot below it */
	uint32_t slot_bits, slot_mask, seq_mask;
	unsigned long grows;
};

/* Bits needed to index limit slots (as grace_idr computes it). */
uint32_t ipc_slot_bits(uint32_t limit);

int ipc_ary_init(struct ipc_ary *ids, uint32_t limit);
void ipc_ary_fini(struct ipc_ary *ids);
/* Allocate an ID for p (which may be NULL: reserved until ipc_ary_set). ID, -ENOSPC, -ENOMEM. */
int ipc_ary_alloc(struct ipc_ary *ids, void *p);
void ipc_ary_set(struct ipc_ary *ids, int id, void *p);
/* The object of id (NULL: free, reserved or stale). */
void *ipc_ary_find(struct ipc_ary *ids, int id);
void ipc_ary_remove(struct ipc_ary *ids, int id);
/* The object in slot idx (any sequence) and its ID in *id, or NULL (SEM_STAT and friends). */
void *ipc_ary_at(struct ipc_ary *ids, uint32_t idx, int *id);
/* The highest slot in use, -1 if none. */
int ipc_ary_max_index(const struct ipc_ary *ids);

#endif /* GRACE_IPC_ARY_H */
