/* SPDX-License-Identifier: MIT */
/*
 * The blocks of free_rcu() and rcu_retire() (engine/free.c): their layout and entries, and how
 * an entry is released once its grace period has ended (the flavor's free function or the
 * entry's own function), with debug builds' set of queued pointers and poisoning. free.c
 * holds the per-thread caches that fill them and decide when; this unit only releases.
 */
#ifndef GRACE_SRC_ENGINE_FREEBLK_H
#define GRACE_SRC_ENGINE_FREEBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/internal/retire.h>
#include <grace/pointer.h>

#include "core/flavor.h"

/*
 * 1000 bytes, not 1024: glibc serves a request of up to 1000 bytes from its small bins (a
 * 1008-byte chunk), and a larger one first consolidates every fast-bin chunk of the arena.
 * A block is allocated by the retiring thread, often inside its read-side section; after the
 * program freed millions of small objects, that consolidation took 60 ms there (5M frees of
 * 24-byte nodes, tests/contract/test_step.c), and held every grace period as long.
 */
#define FBLK_BYTES 1000
#define FBLK_HDR 56
#define FBLK_N ((FBLK_BYTES - FBLK_HDR) / sizeof(void *))

/* One entry of a block: an object to free with the flavor's free function (fn NULL), or a
 * function to call on its argument (rcu_retire_fn()). */
struct fent {
	void (*fn)(void *);
	void *p;
};

/*
 * A block: the entries of one cache, in the order they were queued. An object takes one slot;
 * a function entry three: GRACE__RETIRE_FN_MARK, the function, its argument (no object lies at
 * address 1). n counts slots, as does the cache's `held`. While a block is its cache's cur, the
 * inline retire appends to it too, and the count is the cache's rt.n (cur_sync()).
 */
struct fblk {
	struct rcu_head rh;      /* handed to the engine: blk_cb */
	struct fblk *next;       /* sealed list, or a detached list */
	uint64_t cookie;         /* sealed or detached: completes after every append */
	struct grace__flavor *f; /* whose free function its objects go to */
	uint32_t n;              /* slots used */
	uint32_t head;           /* slots before it are freed already */
	uint32_t done;           /* the cookie is known complete */
	uint32_t pad_;
	void *p[FBLK_N];
};
_Static_assert(offsetof(struct fblk, p) <= FBLK_HDR && sizeof(struct fblk) <= FBLK_BYTES,
	       "a block is FBLK_BYTES");

/* The entry at slot i of b; returns the slot after it. */
static inline uint32_t grace__fblk_ent_at(const struct fblk *b, uint32_t i, struct fent *e)
{
	if (GRACE_UNLIKELY(b->p[i] == GRACE__RETIRE_FN_MARK)) {
		e->fn = (void (*)(void *))(uintptr_t)b->p[i + 1];
		e->p = b->p[i + 2];
		return i + 3;
	}
	e->fn = NULL;
	e->p = b->p[i];
	return i + 1;
}

/* The object's grace period has ended: free it with f's free function. NULL: nothing. */
void grace__fblk_release_obj(struct grace__flavor *f, void *p);
/* Release up to max entries of b from its head on, in order, straight from the block, then move
 * b's head past them and take their slots off *held. Returns how many were released. The caller
 * holds b's cache and keeps b alive until this returns. *nest (the cache's `releasing`) is set
 * while an entry's function or the free hook runs, and only then: a retire made there nests. */
uint32_t grace__fblk_release_from(struct fblk *b, uint32_t max, size_t *held, uint32_t *nest);

#if GRACE__LIB_DEBUG
/* Debug builds: the set of queued pointers (a pointer queued twice is reported, naming call,
 * and aborts), and its lock, which fork's prepare handler takes (engine/free.c). */
void grace__fblk_dbg_add(void *ptr, const char *call);
void grace__fblk_dbg_del(void *ptr);
void grace__fblk_dbg_lock(void);
void grace__fblk_dbg_unlock(void);
#endif

static inline void grace__fblk_release_ent(struct grace__flavor *f, struct fent e)
{
	if (!e.fn) {
		grace__fblk_release_obj(f, e.p);
	} else if (e.p) {
#if GRACE__LIB_DEBUG
		grace__fblk_dbg_del(e.p);
#endif
		e.fn(e.p);
	}
}

/* A block's entries from its head on, then the block. */
void grace__fblk_release(struct fblk *b);
/* The same for a block handed to the engine (its rh): its grace period has ended. */
void grace__fblk_cb(struct rcu_head *h);
/* Every block of a list linked by next, in order. */
void grace__fblk_release_list(struct fblk *l);

/* ---- an entry with no rcu_head on the engine path: a carrier each ---- */

struct carrier {
	struct rcu_head rh;
	struct grace__flavor *f;
	struct fent e;
};

void grace__fblk_carrier_cb(struct rcu_head *h);

#endif
