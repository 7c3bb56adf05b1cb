/* SPDX-License-Identifier: MIT */
/*
 * The ID array of the global-lock baseline (internal): Linux 2.5.42's ipc_ids, slot -> object,
 * every access under the namespace's one global lock (seed 000, Fig. 8). The RCU implementation
 * uses grace's ID registry (include/grace/idr.h) instead, which grows the array while lock-free
 * readers run (Fig. 13).
 *
 * Both follow the same policy: ID = seq << slot_bits | slot, slot_bits the bits needed to index
 * semmni slots, the lowest free slot first, a per-slot sequence advanced by each allocation (a
 * removed ID stays invalid until its slot has been reused 2^(31 - slot_bits) times), an array
 * that starts at IPC_IDS_INIT slots, doubles when full and never shrinks.
 */
#ifndef GRACE_IPC_IDS_H
#define GRACE_IPC_IDS_H

#include <stdint.h>

#define IPC_IDS_INIT 16u /* slots in the first array (also passed to grace_idr_init) */

struct ipc_ids {
	void **slot;   /* size entries; NULL when free */
	uint32_t *seq; /* sequence of each slot's current (or last) allocation */
	uint32_t size;
	uint32_t limit; /* slots at most (semmni) */
	uint32_t in_use;
	uint32_t hint; /* no free slot below it */
	uint32_t slot_bits, slot_mask, seq_mask;
	unsigned long grows;
};

/* Bits needed to index limit slots (as grace_idr computes it). */
uint32_t ipc_slot_bits(uint32_t limit);

int ipc_ids_init(struct ipc_ids *ids, uint32_t limit);
void ipc_ids_fini(struct ipc_ids *ids);
/* Allocate an ID for p (which may be NULL: reserved until ipc_ids_set). ID, -ENOSPC, -ENOMEM. */
int ipc_ids_alloc(struct ipc_ids *ids, void *p);
void ipc_ids_set(struct ipc_ids *ids, int id, void *p);
/* The object of id (NULL: free, reserved or stale). */
void *ipc_ids_find(struct ipc_ids *ids, int id);
void ipc_ids_remove(struct ipc_ids *ids, int id);

#endif /* GRACE_IPC_IDS_H */
