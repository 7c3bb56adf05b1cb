/* SPDX-License-Identifier: MIT */
/*
 * grace hazard pointers: per-object protection beside RCU, for references held for a long time
 * or across blocking, and for updaters that cannot afford a grace period. Memory stays bounded
 * whatever a reader does: at most H*T + one batch per thread of retired objects wait (H hazard
 * pointers in use, T threads that retire; docs/design.md, section 13).
 *
 *   struct grace_hazptr *h = hazptr_alloc();       a hazard pointer (per-thread cache, pool)
 *   struct node *n = hazptr_protect(h, &head);     load, publish, validate: n stays allocated
 *   ... use n ...
 *   hazptr_reset(h);                               protection ended
 *   hazptr_free(h);
 *
 *   old = rcu_xchg_pointer(&head, new_node);       the updater unlinks ...
 *   hazptr_retire(NULL, old);                      ... and retires: freed once no hazard
 *                                                  pointer holds it, a few per later call
 *
 * hazptr_protect() pays a store, a compiler barrier and a reload (9 instructions with reset on
 * x86-64, no fence, no atomic read-modify-write); the thread that scans pays membarrier(2),
 * as grace's default flavor does (the fence fallback: both sides fence). Domains
 * (grace_hazptr_domain_create(); NULL is the default domain) group retired objects for
 * barriers and teardown; every hazard pointer protects in every domain.
 *
 * The kernel-style names (hazptr_protect, hazptr_retire, ...) are static inline aliases or
 * macros over the grace_hazptr_* functions. The algorithm and its correctness argument:
 * src/hazptr/hazptr.c and docs/design.md; the reference: docs/api.md, "Hazard pointers".
 */
#ifndef GRACE_HAZPTR_H
#define GRACE_HAZPTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/internal/retire.h>
#include <grace/srcu.h>

GRACE_BEGIN_DECLS

/*
 * One hazard pointer (a slot): written by the thread that owns it, read by every thread that
 * scans. Allocated by the library (hazptr_alloc()), never by the program; the layout is part
 * of the ABI (the inline protect reads `fence` and writes `ptr`).
 */
struct grace_hazptr {
	void *ptr;             /* the protected object or NULL (stored with release) */
	uint32_t fence;        /* fence fallback: publish with a full fence (fixed at creation) */
	uint32_t grace__state; /* library: free, cached or held */
	struct grace_hazptr *grace__next; /* library: the pool's free list */
	void *grace__owner; /* library, debug builds: the thread whose protection it holds */
};

/* A domain: a set of retired objects with its free function and its barrier. Opaque; NULL
 * names the default domain. */
struct grace_hazptr_domain;

/* Retired objects a thread queues between two scans of the hazard pointers: "one batch" of the
 * bound H*T + GRACE_HAZPTR_BATCH*T (objects; an object retired with a function or into a domain
 * other than the default one takes 3 or 4 of these slots). */
#define GRACE_HAZPTR_BATCH 1024

/* Library counters, summed over every thread (grace_hazptr_get_stats()). */
struct grace_hazptr_stats {
	uint64_t records;   /* hazard pointers that exist (H, held, cached or free) */
	uint64_t retired;   /* objects retired so far (every domain) */
	uint64_t reclaimed; /* objects freed (or their function run) so far */
	uint64_t scans;     /* scans of the hazard pointers */
	uint64_t batches;   /* T of the bound: threads with a retire cache, plus the orphan list */
};

/* ---- internal state the inline paths reach (exported only for them) ---- */

#define GRACE__HAZPTR_TCACHE 8 /* hazard pointers a thread keeps for its next hazptr_alloc() */
#define GRACE__HAZPTR_HELD 2u  /* grace__state of a hazard pointer given to the program */
#define GRACE__HAZPTR_CACHED 1u

struct grace__hazptr_tls {
	uint32_t n;   /* cached hazard pointers in rec[0..n) */
	uint32_t cap; /* 0 until the thread's exit hook is set (the first slow call) */
	struct grace_hazptr *rec[GRACE__HAZPTR_TCACHE];
};
GRACE_API extern __thread struct grace__hazptr_tls grace__hazptr_tls GRACE_TLS_IE;
/* The calling thread's retire cache (the inline retire's window, internal/retire.h). */
GRACE_API extern __thread struct grace__retire *grace__hazptr_retire_tls GRACE_TLS_IE;
GRACE_API struct grace_hazptr *grace__hazptr_alloc_slow(void);
GRACE_API void grace__hazptr_free_slow(struct grace_hazptr *h);
GRACE_API void grace__hazptr_fence(void);
GRACE_API void grace__hazptr_publish_slow(struct grace_hazptr *h, void *p, const char *call);
GRACE_API void grace__hazptr_retire_slow(struct grace_hazptr_domain *d, void (*fn)(void *),
					 void *ptr);

/* A pointer-sized word read through any pointer type (the program's `struct node *head`). */
typedef void *__attribute__((may_alias)) grace__hazptr_word;

/*
 * Publish p in h: the first half of protect. Release: the accesses of the protection epoch
 * that this store ends happen before a scan that reads the new value (pairs with the scan's
 * acquire load, src/hazptr/hazptr.c, (R)). Then the asymmetric fence: a compiler barrier only,
 * paired with the scanning thread's membarrier (P); in the fallback (h->fence), a full fence
 * paired with the scan's fence. Debug and TSan builds go out of line.
 */
GRACE_INLINE void grace__hazptr_publish(struct grace_hazptr *h, void *p, const char *call)
{
#if GRACE__DEBUG || GRACE__TSAN_MODE
	grace__hazptr_publish_slow(h, p, call);
#else
	(void)call;
	grace_store_release(&h->ptr, p);
	if (GRACE_UNLIKELY(h->fence))
		grace__hazptr_fence();
	else
		grace_barrier(); /* P: pairs with the scanner's membarrier */
#endif
}

/* The validating reload of *src: relaxed, as rcu_dereference() (the object's fields are read
 * through the returned pointer: address dependency); acquire in TSan mode. */
GRACE_INLINE void *grace__hazptr_load(const void *src)
{
#if GRACE__TSAN_MODE
	return __atomic_load_n((grace__hazptr_word const *)src, __ATOMIC_SEQ_CST);
#else
	return __atomic_load_n((grace__hazptr_word const *)src, __ATOMIC_RELAXED);
#endif
}

/* ---- hazard pointers ---- */

/**
 * grace_hazptr_alloc() / hazptr_alloc() - a hazard pointer, unassociated (ptr NULL), owned by
 * the caller until grace_hazptr_free(). From the calling thread's cache (8 of them) on the fast
 * path, else from the process's pool, else newly allocated: a thread may hold any number.
 * Returns NULL only when no memory is left. Not async-signal-safe.
 * Cost: 9 instructions on the fast path, 17 with hazptr_free() (x86-64; the test
 * hazptr_alloc_instructions), no atomic.
 */
GRACE_INLINE struct grace_hazptr *grace_hazptr_alloc(void)
{
#if !GRACE__DEBUG
	struct grace__hazptr_tls *t = &grace__hazptr_tls;

	if (GRACE_LIKELY(t->n != 0)) {
		struct grace_hazptr *h = t->rec[--t->n];
		h->grace__state = GRACE__HAZPTR_HELD;
		return h;
	}
#endif
	return grace__hazptr_alloc_slow();
}

/**
 * grace_hazptr_free() / hazptr_free(h) - end h's protection and give h back (to the calling
 * thread's cache, or the pool). NULL does nothing. Any thread may free a hazard pointer another
 * allocated. Not async-signal-safe.
 */
GRACE_INLINE void grace_hazptr_free(struct grace_hazptr *h)
{
#if !GRACE__DEBUG
	struct grace__hazptr_tls *t = &grace__hazptr_tls;

	if (GRACE_LIKELY(h != NULL && t->n < t->cap)) {
		/* Release: the protection's accesses precede a scan that reads NULL (R). */
		grace_store_release(&h->ptr, (void *)0);
		h->grace__state = GRACE__HAZPTR_CACHED;
		t->rec[t->n++] = h;
		return;
	}
#endif
	grace__hazptr_free_slow(h);
}

/**
 * grace_hazptr_protect() / hazptr_protect(h, &src) - load the pointer stored at src, publish it
 * in h and validate that src still holds it, until it does; return it. From then on the object
 * is not freed (by any domain) until h is reset, set to another pointer, or freed. src is the
 * address of a pointer variable of any type (the macro hazptr_protect() returns that type);
 * a NULL pointer is returned as NULL, protecting nothing.
 * Context: any thread, any time, also inside read-side sections of any flavor and in signal
 * handlers (it touches h and src only). h must be held by the caller (debug builds check).
 * Cost: with hazptr_reset(), 9 instructions on x86-64, no fence, no atomic read-modify-write
 * (tests/hazptr/check_instructions.sh); the fence fallback adds a full fence.
 */
GRACE_INLINE void *grace_hazptr_protect(struct grace_hazptr *h, const void *src)
{
	void *p = grace__hazptr_load(src);

	for (;;) {
		grace__hazptr_publish(h, p, "hazptr_protect");
		void *q = grace__hazptr_load(src);
		if (GRACE_LIKELY(q == p))
			return p;
		p = q;
	}
}

/**
 * grace_hazptr_try_protect() / hazptr_try_protect(h, &ptr, &src) - one step of protect, as
 * C++26's try_protect: publish *ptr in h, reload src into *ptr; true if it still held the same
 * pointer (now protected), else h is reset and false (*ptr holds the new value).
 */
GRACE_INLINE bool grace_hazptr_try_protect(struct grace_hazptr *h, void **ptr, const void *src)
{
	void *old = *ptr;

	grace__hazptr_publish(h, old, "hazptr_try_protect");
	*ptr = grace__hazptr_load(src);
	if (GRACE_LIKELY(*ptr == old))
		return true;
	grace_store_release(&h->ptr, (void *)0); /* (R): as hazptr_reset() */
	return false;
}

/**
 * grace_hazptr_set() / hazptr_set(h, p) - associate h with p without validating (C++26's
 * reset_protection with a pointer): p must be kept from reclamation by other means at this point: another
 * hazard pointer, or a read-side section of an RCU flavor whose grace period its retire waits
 * for (grace_hazptr_hold_srcu()). NULL: as hazptr_reset().
 */
GRACE_INLINE void grace_hazptr_set(struct grace_hazptr *h, void *p)
{
	grace__hazptr_publish(h, p, "hazptr_set");
}

/**
 * grace_hazptr_reset() / hazptr_reset(h) - end h's protection (h stays the caller's). Release:
 * the caller's accesses to the object happen before a scan that sees h empty. 1 instruction.
 */
GRACE_INLINE void grace_hazptr_reset(struct grace_hazptr *h)
{
#if GRACE__DEBUG
	grace__hazptr_publish_slow(h, (void *)0, "hazptr_reset");
#else
	grace_store_release(&h->ptr, (void *)0);
#endif
}

/* ---- retiring ---- */

/**
 * grace_hazptr_retire() / hazptr_retire(d, ptr) - free(ptr) (or d's free hook) once no hazard
 * pointer protects it: ptr was unlinked, no new hazptr_protect() can validate it. d: a domain, NULL
 * for the default one. NULL ptr: nothing. The object goes into the calling thread's batch
 * (inline: plain stores, no atomic); every few calls the call goes out of line and frees a few
 * objects found unprotected by the last scan, into the allocator's cache of this thread; every
 * GRACE_HAZPTR_BATCH objects it scans the hazard pointers (membarrier, then one load each).
 * Context: any thread, also inside read-side sections and with locks held; never blocks. Not
 * async-signal-safe. Retiring an object the caller itself protects is fine (it waits).
 * Misuse: an object retired twice while it waits: debug builds report it (naming
 * hazptr_retire) and abort.
 */
GRACE_INLINE void grace_hazptr_retire(struct grace_hazptr_domain *d, void *ptr)
{
	if (d == (struct grace_hazptr_domain *)0 &&
	    GRACE_LIKELY(grace__retire_fast(grace__hazptr_retire_tls, (void (*)(void *))0, ptr)))
		return;
	grace__hazptr_retire_slow(d, (void (*)(void *))0, ptr);
}

/**
 * grace_hazptr_retire_fn() / hazptr_retire_fn(d, fn, ptr) - fn(ptr) once no hazard pointer
 * protects ptr (fn NULL: the domain's free function). fn runs on the retiring thread, inside a
 * later retire (or at its exit, or in a barrier): it must not wait for a barrier; it may retire
 * more (those calls only queue).
 */
GRACE_INLINE void grace_hazptr_retire_fn(struct grace_hazptr_domain *d, void (*fn)(void *),
					 void *ptr)
{
	if (d == (struct grace_hazptr_domain *)0 &&
	    GRACE_LIKELY(grace__retire_fast(grace__hazptr_retire_tls, fn, ptr)))
		return;
	grace__hazptr_retire_slow(d, fn, ptr);
}

/**
 * grace_hazptr_barrier() / hazptr_barrier(d) - wait until every object retired into d (NULL:
 * the default domain), by any thread, before the call has been freed: scans every thread's
 * batch and waits for the hazard pointers that still protect one of them to let go (a stall
 * warning after the stall timeout). Blocks: not while the caller itself protects an object of
 * d (debug builds report it and abort), not from a retire function.
 */
GRACE_API void grace_hazptr_barrier(struct grace_hazptr_domain *d);

/**
 * grace_hazptr_set_free_hook(d, fn) - the function that frees d's objects retired without a
 * function of their own (fn NULL: free()). Returns 0, or -EBUSY once an object of d was retired
 * while another function was in force. As grace_rcu_set_free_hook().
 */
GRACE_API int grace_hazptr_set_free_hook(struct grace_hazptr_domain *d, void (*fn)(void *));

/**
 * grace_hazptr_domain_create() - a new domain, NULL when out of memory.
 * grace_hazptr_domain_destroy(d) - grace_hazptr_barrier(d), then free d: every object retired
 * into d is freed first (waiting for the hazard pointers that protect them). Retiring into d
 * during or after the call is misuse (debug builds: reported, abort). NULL: nothing.
 */
GRACE_API struct grace_hazptr_domain *grace_hazptr_domain_create(void);
GRACE_API void grace_hazptr_domain_destroy(struct grace_hazptr_domain *d);

/** grace_hazptr_get_stats(st) - the library's counters (struct grace_hazptr_stats). */
GRACE_API void grace_hazptr_get_stats(struct grace_hazptr_stats *st);

/* ---- srcu readers that hold on: bounded memory (docs/guide.md, "Choosing RCU, srcu, QSBR or hazard pointers") ---- */

/**
 * grace_hazptr_hold_srcu(h, p, ssp, idx) - turn the srcu read-side section idx of ssp into a
 * hazard pointer on p: publish p in h, then srcu_read_unlock(ssp, idx). The reader keeps p as
 * long as it wants (sleeping, blocking) without holding ssp's grace periods back. p must have
 * been read inside that section, from a structure whose objects are retired with
 * grace_hazptr_retire_srcu(). Returns p.
 */
GRACE_INLINE void *grace_hazptr_hold_srcu(struct grace_hazptr *h, void *p, struct srcu_struct *ssp,
					  int idx)
{
	grace__hazptr_publish(h, p, "grace_hazptr_hold_srcu");
	/* The unlock's release increment orders the publication before the end of the section,
	 * which the grace period of the object's retire waits for (src/hazptr/hazptr.c, (S)). */
	grace_srcu_read_unlock(ssp, idx);
	return p;
}

/**
 * grace_hazptr_retire_srcu(d, ssp, ptr) - retire ptr for both kinds of readers: after a grace
 * period of ssp (every srcu section that could hold it has ended), grace_hazptr_retire(d, ptr)
 * on ssp's callback worker (the hazard pointers of grace_hazptr_hold_srcu() keep it). As
 * srcu_retire(): never waits; the object counts against ssp's callback limits until then.
 */
GRACE_API void grace_hazptr_retire_srcu(struct grace_hazptr_domain *d, struct srcu_struct *ssp,
					void *ptr);

/* ---- kernel-style names ---- */

#define hazptr_protect(h, pp) ((__typeof__(*(pp)))grace_hazptr_protect((h), (const void *)(pp)))
#define hazptr_try_protect(h, ptrp, pp)                                           \
	__extension__({                                                           \
		void *grace__hp_v = (void *)*(ptrp);                              \
		bool grace__hp_ok = grace_hazptr_try_protect((h), &grace__hp_v,   \
							     (const void *)(pp)); \
		*(ptrp) = (__typeof__(*(ptrp)))grace__hp_v;                       \
		grace__hp_ok;                                                     \
	})

GRACE_INLINE struct grace_hazptr *hazptr_alloc(void)
{
	return grace_hazptr_alloc();
}
GRACE_INLINE void hazptr_free(struct grace_hazptr *h)
{
	grace_hazptr_free(h);
}
GRACE_INLINE void hazptr_set(struct grace_hazptr *h, void *p)
{
	grace_hazptr_set(h, p);
}
GRACE_INLINE void hazptr_reset(struct grace_hazptr *h)
{
	grace_hazptr_reset(h);
}
GRACE_INLINE void hazptr_retire(struct grace_hazptr_domain *d, void *ptr)
{
	grace_hazptr_retire(d, ptr);
}
GRACE_INLINE void hazptr_retire_fn(struct grace_hazptr_domain *d, void (*fn)(void *), void *ptr)
{
	grace_hazptr_retire_fn(d, fn, ptr);
}
GRACE_INLINE void hazptr_barrier(struct grace_hazptr_domain *d)
{
	grace_hazptr_barrier(d);
}

GRACE_END_DECLS

#endif /* GRACE_HAZPTR_H */
