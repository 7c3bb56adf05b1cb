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

#include "core/debug.h"
#include "core/diag.h"
#include "core/lock.h"
#include "core/ownsteal.h" /* grace__nest_set() */
#include "core/ptrset.h"
#include "engine/free.h"

#define POISON_BYTE 0x6b

void (*grace__free_fn)(void *ptr) = free;

/* ---- debug builds: the set of queued pointers, and poisoning ---- */

#if GRACE__LIB_DEBUG
static struct grace__ptrset queued = GRACE__PTRSET_INIT;

/* The set is checked before a call takes its cache, so the cache's own check (core/ownsteal.h,
 * grace__own_enter()) comes too late for a signal handler that interrupted this thread's work
 * on the set: its call would wait for the set's lock, which its own thread holds, forever. The
 * work on the set is a span (core/debug.h, grace__dbg_span_enter()): a debug library reports
 * that handler instead (docs/api.md, rcu_retire(), "Signals"). */
#define SPAN_WHAT "the per-thread cache"

void grace__fblk_dbg_add(void *ptr, const char *call)
{
	grace__dbg_span_enter(call, SPAN_WHAT);
	bool added = grace__ptrset_add(&queued, ptr);
	grace__dbg_span_leave();
	if (!added)
		grace__misuse_fatal(call,
				    "pointer %p queued twice: it already waits for a grace "
				    "period (it would be freed twice)",
				    ptr);
}

void grace__fblk_dbg_del(void *ptr)
{
	/* Named by the call that interrupts it, if any: a release runs inside a retire or free
	 * call of this thread, or on a worker. */
	grace__dbg_span_enter("free_rcu", SPAN_WHAT);
	grace__ptrset_del(&queued, ptr);
	grace__dbg_span_leave();
}

void grace__fblk_dbg_lock(void)
{
	grace__lock(&queued.lock);
}

void grace__fblk_dbg_unlock(void)
{
	grace__unlock(&queued.lock);
}
#endif

/* Free p with the flavor's free function: its hook, or free(). */
static inline void free_with(void (*hook)(void *), void *p)
{
	if (hook)
		hook(p);
	else
		grace__free_fn(p);
}

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
	free_with(hook, p);
}

uint32_t grace__fblk_release_from(struct fblk *b, uint32_t max, size_t *held, uint32_t *nest)
{
	uint32_t k = 0, h0 = b->head, h = h0, end = b->n; /* b is sealed: n is fixed */
	/* One load of the hook for the run, as grace__fblk_release_obj() reads it: it is fixed
	 * before the flavor's first queued object, so every entry here sees the same one. */
	void (*hook)(void *) = grace_load_relaxed(&b->f->free_fn);
#if GRACE__LIB_DEBUG
	while (k < max && h < end) {
		struct fent e;

		h = grace__fblk_ent_at(b, h, &e);
		k++;
		/* Only a function (the entry's, or the hook) may retire, which nests: *nest is set
		 * around it alone, as in release builds below. The caller holds no debug span (its
		 * busy word reports a handler): the entry's checks take the debug set's. */
		bool fn = e.p && (e.fn || hook);
		if (fn)
			grace__nest_set(nest, 1u);
		grace__fblk_release_ent(b->f, e); /* each object's checks and poison */
		if (fn)
			grace__nest_set(nest, 0u);
	}
#else
	while (k < max && h < end) {
		void *p = b->p[h];

		k++;
		if (GRACE_UNLIKELY(p == GRACE__RETIRE_FN_MARK)) {
			void (*fn)(void *) = (void (*)(void *))(uintptr_t)b->p[h + 1];

			p = b->p[h + 2];
			h += 3;
			if (p) { /* a function entry's NULL: nothing */
				grace__nest_set(nest, 1u);
				fn(p);
				grace__nest_set(nest, 0u);
			}
		} else {
			h++;
			if (GRACE_UNLIKELY(p == NULL)) /* rcu_retire(NULL) appends it */
				continue;
			if (GRACE_UNLIKELY(hook != NULL)) {
				grace__nest_set(nest, 1u);
				hook(p);
				grace__nest_set(nest, 0u);
			} else {
				grace__free_fn(p); /* free() retires nothing: no nest */
			}
		}
	}
#endif
	/* Off the cache once the run is done: what the entries' functions may do meanwhile (retire
	 * more: put_nested) appends to cur and seals behind this block, and reads neither b's
	 * head nor the count in held of what this run releases. A signal handler's retire here is
	 * reported (*nest is clear): nested, its append would race these two updates. */
	b->head = h;
	*held -= h - h0;
	return k;
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
