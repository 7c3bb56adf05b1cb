/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers: the records (src/hazptr/record.c), as the rest of the module (hazptr.c: the
 * retired objects, the scan, barriers, exit and fork) sees them. A record is free (in the pool),
 * cached (in a thread's TLS cache, include/grace/hazptr.h) or held (by the program); blocks of
 * records are never freed, and their list only grows at its head (see hazptr.c's top comment).
 */
#ifndef GRACE_SRC_HAZPTR_RECORD_H
#define GRACE_SRC_HAZPTR_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/hazptr.h>

#include "core/lock.h"

#define BLK_RECS 8

/* One record per cache line. The pool hands records out one at a time, so two records on a
 * line would soon belong to two threads, and every protect of one would take the line from the
 * other's CPU (false sharing: it made bench/hashtable's read-only lookups at 2 threads slow and
 * erratic). The scan reads one line per record instead of one per two, once per BATCH retires. */
struct hp_slot {
	struct grace_hazptr r;
} GRACE_ALIGNED_CACHE;

struct hp_block {
	struct hp_slot rec[BLK_RECS];
	struct hp_block *next; /* immutable once published */
} GRACE_ALIGNED_CACHE;

/* The head of the blocks: release store (a new block's records are initialised), acquire loads
 * (the scan, barriers, the exit check). */
extern struct hp_block *grace__hp_blocks;
extern uint64_t grace__hp_nrecords;           /* H (relaxed loads: stats, the snapshot's size) */
extern struct grace__lock grace__hp_rec_lock; /* the pool; taken in fork's prepare */

/* Back to the pool: h is unassociated (ptr NULL). Takes the pool's lock. */
void grace__hp_pool_put(struct grace_hazptr *h);
/* The same with the pool's lock held (fork child). */
void grace__hp_pool_put_locked(struct grace_hazptr *h);

/* From hazptr.c: the module's one-time set-up; the calling thread's exit hook (false when it
 * cannot have one); the calling thread's identity as the debug owner of a protection. */
void grace__hp_once(void);
bool grace__hp_thread_register(void);
void *grace__hp_self(void);

#endif
