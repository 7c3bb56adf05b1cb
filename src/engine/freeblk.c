/* SPDX-License-Identifier: MIT */
/*
 * Releasing the entries of free_rcu()'s and rcu_retire()'s blocks (see engine/freeblk.h):
 * the flavor's free function or hook, an entry's own function, the debug set of queued
 * pointers and the poisoning of freed objects.
 */
#include "engine/freeblk.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/lock.h"
#include "engine/free.h"

#define POISON_BYTE 0x6b

void (*grace__free_fn)(void *ptr) = free;

/* ---- debug builds: the set of queued pointers, and poisoning ---- */

#if GRACE__LIB_DEBUG
#define DBG_TOMB ((uintptr_t)1)
static struct grace__lock dbg_lock = GRACE__LOCK_INIT;
static uintptr_t *dbg_tab; /* open addressing: 0 empty, DBG_TOMB deleted, else a pointer */
static size_t dbg_cap, dbg_used, dbg_live;

static size_t dbg_hash(uintptr_t p, size_t cap)
{
	return (size_t)(((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* Rehash into a table with room (twice the size unless tombstones filled it). dbg_lock held. */
static bool dbg_grow(void)
{
	size_t ncap = dbg_cap == 0 ? 1024 : dbg_live * 4 < dbg_cap ? dbg_cap : dbg_cap * 2;
	uintptr_t *n = (uintptr_t *)calloc(ncap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < dbg_cap; i++) {
		uintptr_t v = dbg_tab[i];
		if (v <= DBG_TOMB)
			continue;
		size_t j = dbg_hash(v, ncap);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = v;
	}
	free(dbg_tab);
	dbg_tab = n;
	dbg_cap = ncap;
	dbg_used = dbg_live;
	return true;
}

void grace__fblk_dbg_add(void *ptr, const char *call)
{
	uintptr_t p = (uintptr_t)ptr;
	size_t tomb = SIZE_MAX, i;

	grace__lock(&dbg_lock);
	if ((dbg_used + 1) * 2 > dbg_cap && !dbg_grow()) {
		grace__unlock(&dbg_lock); /* no memory for the check: skip it */
		return;
	}
	for (i = dbg_hash(p, dbg_cap);; i = (i + 1) & (dbg_cap - 1)) {
		uintptr_t v = dbg_tab[i];
		if (v == p) {
			grace__unlock(&dbg_lock);
			grace__misuse_fatal(call,
					    "pointer %p queued twice: it already waits for a grace "
					    "period (it would be freed twice)",
					    ptr);
		}
		if (v == DBG_TOMB) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if (v == 0)
			break;
	}
	if (tomb != SIZE_MAX) {
		dbg_tab[tomb] = p;
	} else {
		dbg_tab[i] = p;
		dbg_used++;
	}
	dbg_live++;
	grace__unlock(&dbg_lock);
}

void grace__fblk_dbg_del(void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;

	grace__lock(&dbg_lock);
	for (size_t i = dbg_cap ? dbg_hash(p, dbg_cap) : 0; dbg_cap; i = (i + 1) & (dbg_cap - 1)) {
		uintptr_t v = dbg_tab[i];
		if (v == p) {
			dbg_tab[i] = DBG_TOMB;
			dbg_live--;
			break;
		}
		if (v == 0)
			break;
	}
	grace__unlock(&dbg_lock);
}
#endif

#if GRACE__LIB_DEBUG
void grace__fblk_dbg_lock(void)
{
	grace__lock(&dbg_lock);
}

void grace__fblk_dbg_unlock(void)
{
	grace__unlock(&dbg_lock);
}
#endif

/* The object's grace period has ended: free it, with f's free function (its hook, or free()).
 * A NULL pointer (rcu_retire(NULL) appends it on the fast path) frees nothing. */
void grace__fblk_release_obj(struct grace__flavor *f, void *p)
{
	/* Relaxed: the hook is set before the flavor's first queued object (grace__free_hook),
	 * which happens before this release (the queueing is ordered before it as any entry). */
	void (*hook)(void *) = grace_load_relaxed(&f->free_fn);

	if (GRACE_UNLIKELY(p == NULL))
		return;
#if GRACE__LIB_DEBUG
	grace__fblk_dbg_del(
		p); /* before the free: the address may be queued again once it is reused */
	/* Poison: a reader that still holds the object (a pointer kept past its section, or a
	 * grace-period bug) reads 0x6b bytes, not a plausible object. Only for free()'s objects:
	 * a hook's pool may not be the heap. */
	if (!hook)
		memset(p, POISON_BYTE, malloc_usable_size(p));
#endif
	if (hook)
		hook(p);
	else
		grace__free_fn(p);
}

void grace__free_head(struct grace__flavor *f, struct rcu_head *head)
{
	/* func holds the head's offset in the object plus one (free.h). */
	grace__fblk_release_obj(f, (char *)head - ((uintptr_t)head->func - 1));
}

/* ---- blocks ---- */

void grace__fblk_release(struct fblk *b)
{
	struct fent e;

	for (uint32_t i = b->head; i < b->n;) {
		i = grace__fblk_ent_at(b, i, &e);
		grace__fblk_release_ent(b->f, e);
	}
	free(b);
}

/* A block handed to the engine: its grace period has ended. */
void grace__fblk_cb(struct rcu_head *h)
{
	grace__fblk_release(grace_container_of(h, struct fblk, rh));
}

void grace__fblk_release_list(struct fblk *l)
{
	while (l) {
		struct fblk *nx = l->next;
		grace__fblk_release(l);
		l = nx;
	}
}

/* ---- the carrier of an entry on the engine path ---- */

void grace__fblk_carrier_cb(struct rcu_head *h)
{
	struct carrier *k = grace_container_of(h, struct carrier, rh);
	grace__fblk_release_ent(k->f, k->e);
	free(k);
}
