/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers (Michael, IEEE TPDS 2004) beside RCU, with an asymmetric fence: the reader
 * publishes with a store and a compiler barrier, the thread that scans pays with membarrier(2),
 * as grace's default flavor does (folly and Linux use the same split). Public interface and
 * inline fast paths: include/grace/hazptr.h.
 *
 * Objects.
 *  - A hazard pointer is a record (struct grace_hazptr, one per cache line) in a block of
 *    BLK_RECS records. Blocks are never freed while the process lives; the list of blocks only
 *    grows, at its head, with a release store (pairs with the scanner's acquire load: a new
 *    block's records are initialised when seen). A record is free (in the pool), cached (in a
 *    thread's TLS cache, include/grace/hazptr.h) or held (by the program). H below is the
 *    number of records.
 *  - A retired object is an entry (pointer, function, domain). Each thread that retires has a
 *    cache (struct hp_cache): pend, the entries retired since its last scan (at most BATCH
 *    slots: the inline retire appends there, through the window of internal/retire.h); ready,
 *    entries its last scan found unprotected, freed a few per later call; kept, entries its last
 *    scan found protected. Entries of threads that exited, were flushed by a barrier or have no
 *    cache wait in one orphan list, which every scan that can take its lock rescans.
 *
 * Protect (reader R): p = load(src); publish: h->ptr = p (release), barrier P (compiler only;
 * a full fence in the fallback); q = load(src); again with q unless q == p.
 * Retire and scan (thread S): the program unlinked x (no src holds x any more, and none will:
 * a retired object is never made reachable again) before retire(x). A scan runs barrier M
 * (membarrier; a full fence in the fallback), then loads every record's ptr with acquire (the
 * snapshot); an entry whose pointer is not in the snapshot is unprotected, freed later.
 *
 * Claim 1 (no early free). If R's protect returned x through record h, x is not freed before
 * R's protection epoch ends (h reset, set to another pointer, or freed). The unlink U of x
 * happens before barrier M of every scan that judges x ("Whose entries a scan may judge",
 * below). Let m be the point where M puts a full barrier in R's instruction stream (the
 * kernel's IPI, or the context switch of an R that was not running).
 *  - R's publish store precedes m: the barrier at m drains it, so it is visible to every CPU
 *    when membarrier returns, and S's snapshot load of h, after M, reads x or a later value
 *    (coherence). A later value is a release store of R that ended this epoch (reset, another
 *    protect, hazptr_free), so R's accesses to x happen before S's acquire load and the free
 *    (R). Reading x: x is kept.
 *  - R's publish follows m: so does R's validating load, which barrier P keeps after the store
 *    in program order and which the CPU cannot perform before m, a full barrier earlier in R's
 *    stream. U was visible to every CPU before M began (membarrier orders the caller's earlier
 *    accesses before the IPIs), so the load reads src's new value or a later one, never x: R
 *    retries and does not return x.
 *  In the fallback both sides fence: R: store; smp_mb; load. S: U ... smp_mb; loads. The
 *  store-buffering pattern with full fences: R's load sees U, or S's load sees R's store.
 *  The fallback is chosen once, before any record exists (grace__init()), and fixed in each
 *  record's `fence` word, which the inline publish tests: no reader runs the wrong protocol.
 *
 * Whose entries a scan may judge. M must follow the unlink of every entry the scan judges:
 *  - its own thread's entries: the unlink precedes the retire call in program order;
 *  - orphans: a scan that judges them takes the orphan lock before M, and every orphan was
 *    appended under that lock after its unlink (in the appender's program order, or after
 *    taking the owner's cache: the Dekker pair below ends in an acquire);
 *  - a barrier flushes every cache into the orphan list first, then runs M.
 *
 * Claim 2 (the bound). Let H be the number of records and T the number of batches (threads
 * that hold retired objects, plus the orphan list). At any time at most H*T + BATCH*T retired
 * objects are not freed, whatever readers do (a reader that never lets go included).
 *  - A scan keeps an entry only if its pointer is in the snapshot, which holds at most H
 *    values: after a scan, kept <= H. Retired objects are distinct while they wait (retiring
 *    one twice is misuse), so each value keeps one entry.
 *  - A scan runs when pend cannot take the next entry within the thread's threshold thr
 *    (thr_next(), latched at each scan: at most BATCH slots, so at most BATCH objects); before
 *    it, the call frees whatever is still ready. Its input is pend + kept <= thr + H <= BATCH
 *    + H, and so is what the thread holds right after it (ready + kept).
 *  - Between two scans the rate rule (burst()) frees ready entries so that none is left when
 *    pend fills again: after j of the R0 = thr / (RUN + 1) rounds of calls (one out-of-line
 *    call and the RUN inline appends its window allows, up to thr), pend <= j (RUN + 1) and
 *    ready <= r0 (R0 - j) / R0, so pend + ready <= max(r0, thr) and pend + ready + kept
 *    <= BATCH + H (r0 + kept = the scan's input, at most the last thr + H). Entries of 3 or 4 slots fill pend sooner: the scan's call
 *    frees what is still ready first, which only lowers the count.
 *  - An exiting thread scans once more and frees what is unprotected; its kept entries (<= H)
 *    join the orphan list, which every scan that takes its lock rescans: after such a scan at
 *    most H orphans remain.
 *  tests/hazptr/test_bound.c checks it with a reader stuck for the whole test.
 *
 * Who touches a cache. Its owner at every retire; another thread rarely: a barrier, fork, process
 * exit. The owner pays no atomic: the asymmetric Dekker pair of core/ownsteal.h (shared with
 * engine/free.c), on the same words (struct grace__retire: busy, steal), so that the inline retire
 * of internal/retire.h serves both:
 *   owner: busy = 1; barrier O (compiler; pairs with S); if steal == 0: the call, lock-free;
 *          busy = 0 (release). Else busy = 0 and take the cache's lock.
 *   other: steal += 1; barrier S (membarrier); wait until busy == 0 (acquire); take the lock;
 *          ...; steal -= 1 (release); drop the lock.
 * Barrier S puts a full barrier between the owner's store of busy and its load of steal if the
 * owner runs (a context switch if not): either the stealer sees busy and waits for the owner's
 * release, or the owner sees steal and takes the lock the stealer holds. Without membarrier both
 * sides fence (seq_cst exchange and RMW) and the inline window stays closed.
 *
 * Exit, fork, barriers, process exit: the hand-over protocol of engine/free.c, over these
 * caches. A thread that exits takes its own cache under all_lock (no stealer can find it after),
 * scans once (freeing what is unprotected) and moves the rest to the orphan list. A barrier of a
 * domain takes every cache (one mark each, one membarrier for all), moves the domain's entries
 * to the orphan list, tags the call, then scans the orphan list until none of the domain's
 * entries tagged before it is left. fork() takes every cache and lock in prepare; the child
 * moves the entries of the threads that do not exist there to the orphan list and gives their
 * cached records back to the pool. Nothing is held on a thread's stack across a wait: entries
 * live in a cache or in the orphan list until they are freed, and they are freed while the
 * structure that held them is still held, so a barrier that takes it next finds them freed.
 * Entries leave the orphan list only under its lock, in the pass that frees them.
 *
 * Why not engine/free.c's blocks. free.c seals a block with a grace-period cookie and frees it
 * whole once the cookie completes: readiness is a property of the block, decided by one
 * acquire load. Here readiness is per object and changes at each scan (one object of a block
 * may stay protected for an hour while its neighbours go), and it needs no grace period. What
 * fits is shared: the inline append and its window (internal/retire.h, the same code), the
 * owner/stealer pair and the hand-over at exit, fork and barriers (the same protocol), the
 * rate rule that spreads frees over later calls (the same principle: frees follow retires one
 * for one, into the allocator's thread cache), and the free hook (the same shape and rules).
 */
#include "hazptr/hazptr.h"
#include "hazptr/record.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/arch/atomic.h>
#include <grace/hazptr.h>
#include <grace/internal/retire.h>
#include <grace/list.h>

#include "core/debug.h"
#include "core/diag.h"
#include "core/init.h"
#include "core/lock.h"
#include "core/ptrset.h"
#include "core/sys.h"
#include "core/ownsteal.h"
#include "core/wait.h" /* grace__use_membarrier, grace__heavy_barrier */

#define BATCH GRACE_HAZPTR_BATCH /* pend's slots */
/* Inline appends between two out-of-line calls (the window; engine/free.c uses the same). */
#define RUN 6u
/* The scan threshold (thr_next()): a thread's scans come at least SCAN_GAP barrier M's apart,
 * and judge at least THR_LEAST and twice the records (so that they free at
 * least half of what it judges, whatever is protected). */
#define SCAN_GAP 64u
#define THR_LEAST 32u
#define DOM_MAGIC 0x68617a64u /* "hazd" */
#define POISON_BYTE 0x6b
#define BACKOFF_MAX_NS 1000000ull

/* Marks of pend's multi-slot entries (internal/retire.h's FN mark is 1; no object lies below
 * 4096): MARK_FN fn p; MARK_DOM d p; MARK_DOMFN d fn p. */
#define MARK_FN GRACE__RETIRE_FN_MARK
#define MARK_DOM ((void *)2)
#define MARK_DOMFN ((void *)3)

GRACE_API __thread struct grace__retire *grace__hazptr_retire_tls GRACE_TLS_IE;

/* ---- domains ---- */

struct grace_hazptr_domain {
	uint32_t magic;          /* DOM_MAGIC while it lives */
	uint32_t free_used;      /* an object was retired into it: the hook is fixed */
	void (*free_fn)(void *); /* NULL: free() */
};

static struct grace_hazptr_domain default_dom = { DOM_MAGIC, 0, NULL };
static struct grace__lock dom_lock = GRACE__LOCK_INIT;

static inline struct grace_hazptr_domain *dom_of(struct grace_hazptr_domain *d)
{
	return d ? d : &default_dom;
}

/* ---- entries and caches ---- */

struct hp_ent {
	void *p;
	void (*fn)(void *); /* NULL: the domain's free function */
	struct grace_hazptr_domain *d;
};

struct hp_cache {
	/* First on its line: the inline retire's words (internal/retire.h); the TLS pointer
	 * grace__hazptr_retire_tls is &c->rt. */
	struct grace__retire rt GRACE_ALIGNED_CACHE;
	uint32_t lock;      /* 0 free, 1 held: stealers, and the owner's slow path */
	uint32_t np;        /* pend's slots in use (rt.n runs ahead while the window is open) */
	uint32_t releasing; /* the owner runs an entry's function or the free hook: a retire
			     * from there nests (put_nested; release_ent(), grace__nest_set()) */
	uint32_t ghost;     /* fork child: the owner does not exist here */
	uint32_t thr;       /* pend's slots that start a scan (thr_next() at the last scan) */
	uint64_t scan_t;    /* when the last scan ended (ns; 0: none yet) */
	void *pend[BATCH];
	struct hp_ent *ent; /* ready: [rhead, rend); kept: [rend, n) */
	uint32_t cap, rhead, rend, n;
	uintptr_t *snap; /* the snapshot's hash set */
	size_t snap_cap;
	uint64_t retired, reclaimed, scans; /* owner's counters (relaxed: stats) */
	struct grace_list_head link;        /* all_caches, under all_lock */
};

static struct grace__lock all_lock = GRACE__LOCK_INIT; /* before any cache's lock */
static GRACE_LIST_HEAD(all_caches);
/* struct hp_cache is cache-line aligned: no pointer to one is formed from the list's head (see
 * engine/free.c's CACHES_FOR_EACH). */
#define CACHES_FOR_EACH(c)                                                                  \
	for (struct grace_list_head *it_ = all_caches.next;                                 \
	     it_ != &all_caches && ((c) = grace_list_entry(it_, struct hp_cache, link), 1); \
	     it_ = it_->next)
#define CACHES_FOR_EACH_SAFE(c)                                                             \
	for (struct grace_list_head *it_ = all_caches.next, *nx_ = it_->next;               \
	     it_ != &all_caches && ((c) = grace_list_entry(it_, struct hp_cache, link), 1); \
	     it_ = nx_, nx_ = it_->next)

/* The orphan list: entries waiting for a scan that no thread's cache holds. */
struct hp_orphan {
	struct hp_ent e;
	uint64_t tag; /* orph_gen when appended (barriers wait for the tags before theirs) */
};
static struct grace__lock orphan_lock = GRACE__LOCK_INIT;
static struct hp_orphan *orph; /* under orphan_lock */
static size_t norph, orph_cap;
static uint64_t orph_gen;

/* Counters of threads that exited and of orphan passes (relaxed atomics). */
static uint64_t gone_retired, gone_reclaimed, gone_scans;

/* Barrier M's cost, timed at every scan (grace__heavy_barrier_timed()). */
static struct grace__barrier_cost scan_cost;

/* Per thread. */
struct hp_thread {
	struct hp_cache *cache;
	int registered;      /* its exit hook is set; on `threads` */
	int exiting;         /* its exit began: no cache, every retire to the orphan list */
	int holding_orphans; /* it runs orphans' entries under orphan_lock */
	int in_release;      /* it runs retired entries (a barrier from there would deadlock) */
	struct grace__hazptr_tls *pub; /* its hazard-pointer cache (fork child: given back) */
	struct grace_list_head link;   /* threads, under thr_lock */
};
static __thread struct hp_thread ts GRACE_TLS_IE;
static struct grace__lock thr_lock = GRACE__LOCK_INIT;
static GRACE_LIST_HEAD(threads);
static pthread_key_t thr_key;
static pthread_once_t hp_once = PTHREAD_ONCE_INIT;
static bool hp_ready;      /* the key exists */
static uint32_t g_exiting; /* process exit began */

static void hp_thread_exit(void *arg);
static void hp_at_exit(void);

static void hp_init(void)
{
	grace__init(); /* membarrier or the fallback: decided before the first record */
	if (pthread_key_create(&thr_key, hp_thread_exit) != 0)
		return;
	atexit(hp_at_exit);
	hp_ready = true;
}

void grace__hp_once(void)
{
	pthread_once(&hp_once, hp_init);
}

void *grace__hp_self(void)
{
	return &ts;
}

/* The calling thread gets its exit hook (and is listed for fork): true when it has one. */
bool grace__hp_thread_register(void)
{
	if (GRACE_LIKELY(ts.registered))
		return true;
	pthread_once(&hp_once, hp_init);
	if (!hp_ready || ts.exiting)
		return false;
	ts.pub = &grace__hazptr_tls;
	grace__lock(&thr_lock);
	grace_list_add(&ts.link, &threads);
	grace__unlock(&thr_lock);
	ts.registered = 1;
	grace__hazptr_tls.cap = GRACE__HAZPTR_TCACHE;
	(void)pthread_setspecific(thr_key, &ts); /* non-NULL: hp_thread_exit runs at exit */
	return true;
}

/* Debug builds: a span of this thread's call that a signal handler's retire must not interrupt
 * (core/debug.h, grace__dbg_span_enter()); nothing in release builds. */
static inline void dbg_span_enter(const char *call)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_enter(call, "the retire cache");
#else
	(void)call;
#endif
}

static inline void dbg_span_leave(void)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_leave();
#endif
}

/* ---- debug builds: the set of retired pointers, and poisoning ---- */

#if GRACE__LIB_DEBUG
static struct grace__ptrset retired_set = GRACE__PTRSET_INIT;
/* Destroyed domains are kept (poisoned), so that a retire into one is reported, not a use
 * after free. */
static struct grace_hazptr_domain *dbg_dead_doms;

/* The work on the set is a span (core/debug.h): it comes before the call takes its cache, whose
 * own check (grace__own_enter()) would come too late for a signal handler that interrupted it,
 * and the handler's call would wait for the set's lock its own thread holds. A debug library
 * reports that handler instead (docs/api.md, hazptr_retire(), "Signals"). */
#define SPAN_WHAT "the retire cache"

static void dbg_add(void *ptr, const char *call)
{
	grace__dbg_span_enter(call, SPAN_WHAT);
	bool added = grace__ptrset_add(&retired_set, ptr);
	grace__dbg_span_leave();
	if (!added)
		grace__misuse_fatal(call,
				    "object %p retired twice: it already waits for the hazard "
				    "pointers to let go (it would be freed twice)",
				    ptr);
}

static void dbg_del(void *ptr)
{
	/* Named by the call that interrupts it, if any: a release runs inside a retire or a
	 * barrier of this thread, or in a scan. */
	grace__dbg_span_enter("hazptr_retire", SPAN_WHAT);
	grace__ptrset_del(&retired_set, ptr);
	grace__dbg_span_leave();
}
#endif

/* ---- the scan's snapshot ---- */

static inline size_t snap_hash(uintptr_t p, size_t cap)
{
	return (size_t)(((uint64_t)(p >> 3) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/*
 * Barrier M, then every record's pointer into c's hash set. false: no memory for the set (the
 * lookups then read the records directly, after the same barrier). Acquire loads: pair with the
 * release stores of the protections that ended (R) and with the block list's release.
 */
static bool snapshot(struct hp_cache *c)
{
	size_t want = 16;
	uint64_t h = grace_load_relaxed(&grace__hp_nrecords);

	while (want < 2 * h)
		want *= 2;
	if (c->snap_cap < want) {
		uintptr_t *n = (uintptr_t *)malloc(want * sizeof(*n));
		if (n) {
			free(c->snap);
			c->snap = n;
			c->snap_cap = want;
		}
	}
	/* M: pairs with each reader's barrier P. Timed: the scan threshold (thr_next()). */
	grace__heavy_barrier_timed(&scan_cost);
	if (c->snap_cap < want)
		return false;
	memset(c->snap, 0, c->snap_cap * sizeof(uintptr_t));
	for (struct hp_block *b = grace_load_acquire(&grace__hp_blocks); b; b = b->next) {
		for (int i = 0; i < BLK_RECS; i++) {
			uintptr_t v = (uintptr_t)grace_load_acquire(&b->rec[i].r.ptr);
			if (!v)
				continue;
			size_t j = snap_hash(v, c->snap_cap);
			while (c->snap[j] && c->snap[j] != v)
				j = (j + 1) & (c->snap_cap - 1);
			c->snap[j] = v;
		}
	}
	return true;
}

/* Was p in the snapshot? (have: the set exists; else read the records, after barrier M.) */
static bool protected_in(struct hp_cache *c, bool have, void *p)
{
	uintptr_t v = (uintptr_t)p;

	if (have) {
		for (size_t j = snap_hash(v, c->snap_cap); c->snap[j];
		     j = (j + 1) & (c->snap_cap - 1))
			if (c->snap[j] == v)
				return true;
		return false;
	}
	for (struct hp_block *b = grace_load_acquire(&grace__hp_blocks); b; b = b->next)
		for (int i = 0; i < BLK_RECS; i++)
			if (grace_load_acquire(&b->rec[i].r.ptr) == p)
				return true;
	return false;
}

/* ---- freeing an entry ---- */

static void release_ent(uint32_t *nest, struct hp_ent e)
{
	void (*hook)(void *);

	if (GRACE_UNLIKELY(e.p == NULL))
		return;
#if GRACE__LIB_DEBUG
	dbg_del(e.p); /* before the free: the address may be retired again once reused */
#endif
	ts.in_release++;
	if (e.fn) {
		grace__nest_set(nest, 1u);
		e.fn(e.p);
		grace__nest_set(nest, 0u);
	} else {
		/* Relaxed: the hook is set before the domain's first retire, which happens before
		 * this release as the entry's own queueing does. */
		hook = grace_load_relaxed(&e.d->free_fn);
		if (hook) {
			grace__nest_set(nest, 1u);
			hook(e.p);
			grace__nest_set(nest, 0u);
		} else {
#if GRACE__LIB_DEBUG
			/* Poison: a reader that still uses the object reads 0x6b bytes. */
			memset(e.p, POISON_BYTE, malloc_usable_size(e.p));
#endif
			free(e.p);
		}
	}
	ts.in_release--;
}

/* ---- the orphan list ---- */

/* Append e. orphan_lock held. false: no memory (the object is leaked, said once). */
static bool orphan_put_locked(struct hp_ent e)
{
	if (norph == orph_cap) {
		size_t ncap = orph_cap ? orph_cap * 2 : 256;
		struct hp_orphan *n = (struct hp_orphan *)realloc(orph, ncap * sizeof(*n));
		if (!n) {
			static uint32_t warned;
			if (!grace_xchg(&warned, 1u, __ATOMIC_RELAXED))
				grace__warn("hazptr_retire: out of memory: the object %p is never "
					    "freed; later losses are not reported",
					    e.p);
			return false;
		}
		orph = n;
		orph_cap = ncap;
	}
	orph[norph].e = e;
	orph[norph].tag = orph_gen;
	norph++;
	return true;
}

/* Append e, taking the lock unless this thread holds it (a retire from an orphan's function). */
static void orphan_put(struct hp_ent e)
{
	if (ts.holding_orphans) {
		(void)orphan_put_locked(e);
		return;
	}
	grace__lock(&orphan_lock);
	(void)orphan_put_locked(e);
	grace__unlock(&orphan_lock);
}

/*
 * Free every orphan the snapshot (taken after orphan_lock: "Whose entries a scan may judge")
 * does not protect. orphan_lock held. The functions run under it: a retire they make goes to
 * this thread's cache, or (no cache) straight back to the list (holding_orphans).
 */
static void orphans_judge(struct hp_cache *c, bool have)
{
	size_t i = 0, kept = 0;

	ts.holding_orphans = 1;
	while (i < norph) {
		struct hp_orphan o = orph[i];
		if (protected_in(c, have, o.e.p)) {
			orph[kept++] = orph[i++];
			continue;
		}
		/* Out of the list before its function runs (which may append: orph may move). */
		orph[i++].e.p = NULL;
		release_ent(&c->releasing, o.e);
		grace_fetch_add(&gone_reclaimed, 1u, __ATOMIC_RELAXED);
	}
	/* Entries appended by the functions above sit after the old end: keep them too. */
	for (; i < norph; i++)
		orph[kept++] = orph[i];
	norph = kept;
	ts.holding_orphans = 0;
}

/* ---- who touches a cache (top of the file) ---- */

/* The owner/stealer pair and the spin lock of core/ownsteal.h, on the cache's rt and lock. */
static inline void c_lock(struct hp_cache *c)
{
	grace__spin_lock(&c->lock);
}

static inline void c_unlock(struct hp_cache *c)
{
	grace__spin_unlock(&c->lock);
}

static inline bool own_enter(struct hp_cache *c, const char *call)
{
	return grace__own_enter(&c->rt, &c->lock, call, "the retire cache");
}

static inline void own_exit(struct hp_cache *c, bool fast)
{
	grace__own_exit(&c->rt, &c->lock, fast);
}

static inline void steal_mark(struct hp_cache *c)
{
	grace__steal_mark(&c->rt);
}

static void steal_take(struct hp_cache *c)
{
	grace__steal_take(&c->rt, &c->lock);
}

static inline void steal_release(struct hp_cache *c)
{
	grace__steal_release(&c->rt, &c->lock);
}

/* A pass over every cache (the barrier, fork's prepare handler) takes the calling thread's own
 * with busy held (core/ownsteal.h, grace__steal_take_own()): its signal handlers' retires are
 * reported rather than wait for it. */
static void steal_take_as(struct hp_cache *c, const char *call)
{
	if (c == ts.cache)
		grace__steal_take_own(&c->rt, &c->lock, call, "the retire cache");
	else
		steal_take(c);
}

static inline void steal_release_as(struct hp_cache *c)
{
	if (c == ts.cache)
		grace__steal_release_own(&c->rt, &c->lock);
	else
		steal_release(c);
}

/* ---- pend ---- */

/* The entry at slot i of pend; returns the slot after it. */
static inline uint32_t pend_at(void *const *pend, uint32_t i, struct hp_ent *e)
{
	void *m = pend[i];

	if (GRACE_LIKELY((uintptr_t)m > (uintptr_t)MARK_DOMFN)) {
		*e = (struct hp_ent){ m, NULL, &default_dom };
		return i + 1;
	}
	if (m == MARK_FN) {
		*e = (struct hp_ent){ pend[i + 2], (void (*)(void *))(uintptr_t)pend[i + 1],
				      &default_dom };
		return i + 3;
	}
	if (m == MARK_DOM) {
		*e = (struct hp_ent){ pend[i + 2], NULL,
				      (struct grace_hazptr_domain *)pend[i + 1] };
		return i + 3;
	}
	if (m == MARK_DOMFN) {
		*e = (struct hp_ent){ pend[i + 3], (void (*)(void *))(uintptr_t)pend[i + 2],
				      (struct grace_hazptr_domain *)pend[i + 1] };
		return i + 4;
	}
	*e = (struct hp_ent){ NULL, NULL, &default_dom }; /* hazptr_retire(NULL, NULL) inline */
	return i + 1;
}

static inline uint32_t ent_slots(const struct hp_ent *e)
{
	return e->d == &default_dom ? (e->fn ? 3u : 1u) : (e->fn ? 4u : 3u);
}

static inline uint32_t pend_put(void **pend, uint32_t i, const struct hp_ent *e)
{
	if (e->d == &default_dom) {
		if (!e->fn) {
			pend[i] = e->p;
			return i + 1;
		}
		pend[i] = MARK_FN;
		pend[i + 1] = (void *)(uintptr_t)e->fn;
		pend[i + 2] = e->p;
		return i + 3;
	}
	if (!e->fn) {
		pend[i] = MARK_DOM;
		pend[i + 1] = (void *)e->d;
		pend[i + 2] = e->p;
		return i + 3;
	}
	pend[i] = MARK_DOMFN;
	pend[i + 1] = (void *)e->d;
	pend[i + 2] = (void *)(uintptr_t)e->fn;
	pend[i + 3] = e->p;
	return i + 4;
}

/*
 * Fold the inline appends (rt.n ran ahead of np) into the count, counting the objects. Only
 * while the window is open (lim != 0): the library's own calls close it first.
 */
static inline void cur_sync(struct hp_cache *c)
{
	if (c->rt.lim && c->rt.n != c->np) {
		uint32_t i = c->np, end = c->rt.n;
		uint64_t k = 0;
		struct hp_ent e;
		while (i < end) {
			i = pend_at(c->pend, i, &e);
			k++;
		}
		c->np = end;
		grace_store_relaxed(&c->retired, c->retired + k);
	}
}

/* Will the inline window be open after this call (cur_open())? */
static inline bool window_on(void)
{
	return GRACE_LIKELY(grace__use_membarrier) && !GRACE__LIB_DEBUG && !GRACE__TSAN_MODE &&
	       !ts.exiting;
}

/* At the end of the owner's call: let the inline retire append up to RUN slots (none without
 * membarrier, in debug and TSan builds of the library, or once the thread exits). */
static inline void cur_open(struct hp_cache *c)
{
	if (window_on()) {
		uint32_t lim = c->np + RUN;
		c->rt.slot = c->pend;
		grace_store_relaxed(&c->rt.n, c->np);
		c->rt.lim = lim < c->thr ? lim : c->thr;
	} else {
		c->rt.lim = 0;
		grace_store_relaxed(&c->rt.n, 0u);
		c->rt.slot = NULL;
	}
}

/* Room for k more entries in ent. false: no memory. */
static bool ent_reserve(struct hp_cache *c, uint32_t k)
{
	if (c->n + k <= c->cap)
		return true;
	uint32_t ncap = c->cap ? c->cap : 256;
	while (ncap < c->n + k)
		ncap *= 2;
	struct hp_ent *n = (struct hp_ent *)realloc(c->ent, (size_t)ncap * sizeof(*n));
	if (!n)
		return false;
	c->ent = n;
	c->cap = ncap;
	return true;
}

/* Free the ready entry at rhead. The owner (or a thread that holds the cache). */
static inline void ready_pop_release(struct hp_cache *c)
{
	struct hp_ent e = c->ent[c->rhead++];

	release_ent(&c->releasing, e); /* a retire from e's function nests (put_nested) */
	grace_store_relaxed(&c->reclaimed, c->reclaimed + 1);
}

/*
 * pend's slots that start the next scan: as many as the thread appended, at the rate it did
 * since its last scan (in slots, judged now), in SCAN_GAP times barrier M's weight (scan_cost),
 * at least THR_LEAST and twice the records, at most BATCH. So a thread's scans cost at most
 * about 1/SCAN_GAP of its time, and within that its garbage stays as small as it can: the
 * garbage is the working set its allocator hands back to its next allocations. One thread
 * alone pays a membarrier that interrupts no other CPU (about 0.4 us): a thread that retires
 * every few microseconds scans every THR_LEAST objects, as warm as an epoch scheme's garbage.
 * Where barrier M interrupts busy CPUs (5 to 15 us) the threshold is BATCH. Latched per scan
 * (c->thr, c->scan_t: written by the holder of c, as np is): the rate rule and Claim 2 hold
 * between two scans with c->thr <= BATCH in place of BATCH.
 */
static uint32_t thr_next(struct hp_cache *c, uint32_t in)
{
	uint64_t now = grace__now_ns();
	/* The first scan: no rate yet, the least. */
	uint64_t n = c->scan_t ? grace__barrier_pace(&scan_cost, in, now - c->scan_t, SCAN_GAP) : 0;
	/* Relaxed: a hint, the record count only grows. */
	uint64_t h2 = 2 * grace_load_relaxed(&grace__hp_nrecords);

	c->scan_t = now;
	if (n < h2)
		n = h2;
	if (n < THR_LEAST)
		n = THR_LEAST;
	return n < BATCH ? (uint32_t)n : (uint32_t)BATCH;
}

/*
 * The scan (top of the file, Claims 1 and 2). pend and kept are judged; every ready entry was
 * freed before (the caller's rate rule, or here). The orphan list is judged too when its lock
 * is free (taken before barrier M).
 */
static void scan(struct hp_cache *c)
{
	struct hp_ent e;
	uint32_t i, w, k;
	bool orphans, have;

	while (c->rhead < c->rend)
		ready_pop_release(c);
	/* kept to the front, then pend after it. */
	k = c->n - c->rend;
	if (k && c->rend)
		memmove(c->ent, c->ent + c->rend, (size_t)k * sizeof(*c->ent));
	c->n = k;
	c->rhead = c->rend = 0;
	uint32_t in = c->np; /* the slots appended since the last scan: the pace (thr_next()) */
	if (!ent_reserve(c, c->np)) {
		/* No memory for the entries: judge pend in place, keep the protected ones in it. */
		have = snapshot(c);
		for (i = 0, w = 0; i < c->np;) {
			uint32_t nx = pend_at(c->pend, i, &e);
			if (protected_in(c, have, e.p)) {
				w = pend_put(c->pend, w, &e);
			} else {
				release_ent(&c->releasing, e);
				grace_store_relaxed(&c->reclaimed, c->reclaimed + 1);
			}
			i = nx;
		}
		c->np = w;
		grace_store_relaxed(&c->scans, c->scans + 1);
		c->thr = thr_next(c, in);
		return;
	}
	for (i = 0; i < c->np;)
		i = pend_at(c->pend, i, &c->ent[c->n++]);
	c->np = 0;
	orphans = grace__trylock(&orphan_lock);
	have = snapshot(c);
	/* Partition: unprotected first (ready), protected after (kept). */
	for (i = 0, w = 0; i < c->n; i++) {
		if (c->ent[i].p && protected_in(c, have, c->ent[i].p))
			continue;
		struct hp_ent t = c->ent[w];
		c->ent[w++] = c->ent[i];
		c->ent[i] = t;
	}
	c->rend = w;
	grace_store_relaxed(&c->scans, c->scans + 1);
	c->thr = thr_next(c, in);
	if (orphans) {
		if (norph) {
			orphans_judge(c, have);
		}
		grace__unlock(&orphan_lock);
	}
}

/*
 * How many ready entries this call frees: enough that none is left when pend fills (the rate
 * rule, top of the file): the ready entries spread over the out-of-line calls left before the
 * next scan, each of which the window lets RUN inline appends follow (one slot per call
 * without the window). At the least rate (a scan that found BATCH objects unprotected) that is
 * RUN + 1 = 7 frees per out-of-line call: what glibc's tcache holds of one size.
 */
static inline uint32_t burst(struct hp_cache *c)
{
	uint32_t r = c->rend - c->rhead;
	uint32_t per = window_on() ? RUN + 1 : 1;
	uint32_t room = c->np < c->thr ? c->thr - c->np : 0;
	uint32_t left = (room + per - 1) / per;

	if (!r)
		return 0;
	if (!left)
		left = 1;
	return (r + left - 1) / left;
}

/* A retire made by a function this thread's call runs: the outer call holds the cache; only
 * append (to pend, or as an unjudged entry after kept when pend is full). */
static GRACE_NOINLINE void put_nested(struct hp_cache *c, const struct hp_ent *e)
{
	cur_sync(c);
	c->rt.lim = 0;
	if (c->np + ent_slots(e) <= BATCH) {
		c->np = pend_put(c->pend, c->np, e);
	} else if (ent_reserve(c, 1)) {
		c->ent[c->n++] = *e; /* judged at the next scan with kept */
	} else {
		orphan_put(*e);
	}
	grace_store_relaxed(&c->retired, c->retired + 1);
}

/* The owner's out-of-line retire (e.p may be NULL: only frees and scans). */
static void cache_put(struct hp_cache *c, const struct hp_ent *e)
{
	bool fast;

	if (GRACE_UNLIKELY(c->releasing)) {
		if (e->p)
			put_nested(c, e);
		return;
	}
	fast = own_enter(c, "hazptr_retire");
	cur_sync(c);
	c->rt.lim = 0; /* closed for the call: a retire from a function it runs nests */
	if (e->p) {
		if (c->np + ent_slots(e) > c->thr)
			scan(c);
		if (GRACE_LIKELY(c->np + ent_slots(e) <= BATCH))
			c->np = pend_put(c->pend, c->np, e);
		else
			orphan_put(*e); /* no memory to move pend out, and all of it protected */
		grace_store_relaxed(&c->retired, c->retired + 1);
	}
	for (uint32_t n = burst(c); n; n--)
		ready_pop_release(c);
	if (c->np >= c->thr)
		scan(c); /* full: judge it now rather than at the next call */
	cur_open(c);
	own_exit(c, fast);
}

static void cache_free(struct hp_cache *c)
{
	free(c->ent);
	free(c->snap);
	free(c);
}

static GRACE_COLD struct hp_cache *cache_new(void)
{
	struct hp_cache *c = NULL;

	if (!grace__hp_thread_register() || grace_load_relaxed(&g_exiting))
		return NULL;
	if (posix_memalign((void **)&c, GRACE_CACHE_LINE, sizeof(*c)) != 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->thr = thr_next(c, 0);
	grace__lock(&all_lock);
	grace_list_add(&c->link, &all_caches);
	grace__unlock(&all_lock);
	/* The inline retire appends to the default domain: its hook is fixed from now on. */
	grace_store_relaxed(&default_dom.free_used, 1u);
	ts.cache = c;
	grace__hazptr_retire_tls = &c->rt;
	return c;
}

GRACE_API void grace__hazptr_retire_slow(struct grace_hazptr_domain *d, void (*fn)(void *),
					 void *ptr)
{
	struct hp_ent e = { ptr, fn, dom_of(d) };
	struct hp_cache *c = ts.cache;

	if (!ptr && !c)
		return;
#if GRACE__LIB_DEBUG
	if (grace_load_relaxed(&e.d->magic) != DOM_MAGIC)
		grace__misuse_fatal("hazptr_retire", "domain %p was destroyed (or never created)",
				    (void *)d);
	if (ptr)
		dbg_add(ptr, "hazptr_retire");
#endif
	if (ptr && GRACE_UNLIKELY(!grace_load_relaxed(&e.d->free_used)))
		grace_store_relaxed(&e.d->free_used, 1u);
	if (GRACE_UNLIKELY(!c) && !ts.exiting && !grace_load_relaxed(&g_exiting))
		c = cache_new();
	if (GRACE_LIKELY(c != NULL)) {
		cache_put(c, &e);
		return;
	}
	if (ptr) {
		/* No cache (the thread exits, the process exits, no memory): the orphan list,
		 * judged by the next scan that takes its lock. */
		orphan_put(e);
		grace_fetch_add(&gone_retired, 1u, __ATOMIC_RELAXED);
	}
}

/* ---- barriers, domains ---- */

/* Move d's entries (every entry if d is NULL) from c to the orphan list. c held (stolen or the
 * exiting owner's), orphan_lock held. */
static void cache_to_orphans(struct hp_cache *c, const struct grace_hazptr_domain *d)
{
	struct hp_ent e;
	uint32_t i, w;

	cur_sync(c);
	c->rt.lim = 0;
	for (i = 0, w = 0; i < c->np;) {
		i = pend_at(c->pend, i, &e);
		if (!e.p)
			continue;
		if (!d || e.d == d)
			(void)orphan_put_locked(e);
		else
			w = pend_put(c->pend, w, &e);
	}
	c->np = w;
	/* ready and kept: keep the others' order (ready stays a prefix). */
	uint32_t nr = 0, n = 0;
	for (i = c->rhead; i < c->n; i++) {
		bool was_ready = i < c->rend;
		if (!d || c->ent[i].d == d) {
			(void)orphan_put_locked(c->ent[i]);
			continue;
		}
		c->ent[n++] = c->ent[i];
		nr += was_ready;
	}
	c->rhead = 0;
	c->rend = nr;
	c->n = n;
}

/* Does a record held by the calling thread protect one of d's orphans tagged before tag? (Debug
 * builds: a barrier that would wait for its own caller.) orphan_lock held. */
static void *own_protection_of(struct grace_hazptr_domain *d, uint64_t tag)
{
#if GRACE__LIB_DEBUG
	for (struct hp_block *b = grace_load_acquire(&grace__hp_blocks); b; b = b->next)
		for (int i = 0; i < BLK_RECS; i++) {
			void *p = grace_load_acquire(&b->rec[i].r.ptr);
			if (!p || grace_load_relaxed(&b->rec[i].r.grace__owner) != (void *)&ts)
				continue;
			for (size_t j = 0; j < norph; j++)
				if (orph[j].e.p == p && orph[j].e.d == d && orph[j].tag < tag)
					return p;
		}
#else
	(void)d;
	(void)tag;
#endif
	return NULL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&t, &t) != 0 && errno == EINTR) {
	}
}

static void barrier(struct grace_hazptr_domain *d, const char *call)
{
	struct hp_cache *c, *sc, scratch;
	uint64_t tag, t0, backoff = 1000, cap;
	bool warned = false;

	if (ts.in_release || ts.holding_orphans)
		grace__misuse_fatal(call, "called from a retired object's function (it would wait "
					  "for itself)");
	pthread_once(&hp_once, hp_init);
	d = dom_of(d);
#if GRACE__LIB_DEBUG
	if (grace_load_relaxed(&d->magic) != DOM_MAGIC)
		grace__misuse_fatal(call, "domain %p was destroyed (or never created)", (void *)d);
#endif
	/* Every cache's entries of d to the orphan list (one mark each, one barrier S). A debug
	 * library marks the span (core/debug.h): a signal handler's retire on this thread would
	 * wait there for this thread's own cache, or for the orphan list's lock, and is reported
	 * instead (docs/api.md, hazptr_retire(), "Signals"). */
	dbg_span_enter(call);
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	steal_mark(c);
	grace__heavy_barrier(); /* S: pairs with each owner's barrier O */
	grace__lock(&orphan_lock);
	CACHES_FOR_EACH(c)
	{
		steal_take_as(c, call); /* the thread's own with busy held */
		/* Tests stop a barrier here (debug builds, GRACE_TEST_PAUSE=hazptr_barrier:US),
		 * holding a cache, for a signal handler to interrupt it. */
		GRACE__TEST_PAUSE("hazptr_barrier");
		cache_to_orphans(c, d);
		steal_release_as(c);
	}
	tag = ++orph_gen; /* every entry of d that is older than the call has a smaller tag */
	grace__unlock(&orphan_lock);
	grace__unlock(&all_lock);
	dbg_span_leave();

	/* The scratch cache only lends its snapshot set: this thread's own cache is not taken
	 * (a retire made by a function the pass runs goes to it, lock-free). */
	memset(&scratch, 0, sizeof(scratch));
	sc = &scratch;
	t0 = grace__now_ns();
	cap = grace__stall_timeout_ns();
	for (;;) {
		size_t left = 0;
		void *own = NULL;

		grace__lock(&orphan_lock);
		bool have = snapshot(
			sc); /* M after the lock: every orphan was appended before it */
		orphans_judge(sc, have);
		for (size_t j = 0; j < norph; j++)
			left += orph[j].e.d == d && orph[j].tag < tag;
		if (left)
			own = own_protection_of(d, tag);
		grace__unlock(&orphan_lock);
		if (!left)
			break;
		if (own)
			grace__misuse_fatal(call,
					    "the calling thread protects %p, retired into this "
					    "domain: the barrier would wait for itself",
					    own);
		if (!warned && cap && grace__now_ns() - t0 > cap) {
			warned = true;
			grace__warn("%s: has waited %.1f s for %zu object(s) that hazard pointers "
				    "still protect (a reader holds on, or never lets go); going on "
				    "waiting",
				    call, (double)(grace__now_ns() - t0) / 1e9, left);
		}
		sleep_ns(backoff);
		if (backoff < BACKOFF_MAX_NS)
			backoff *= 2;
	}
	free(sc->snap);
}

GRACE_API void grace_hazptr_barrier(struct grace_hazptr_domain *d)
{
	barrier(d, "hazptr_barrier");
}

GRACE_API struct grace_hazptr_domain *grace_hazptr_domain_create(void)
{
	struct grace_hazptr_domain *d =
		(struct grace_hazptr_domain *)calloc(1, sizeof(struct grace_hazptr_domain));

	pthread_once(&hp_once, hp_init);
	if (d)
		d->magic = DOM_MAGIC;
	return d;
}

GRACE_API void grace_hazptr_domain_destroy(struct grace_hazptr_domain *d)
{
	if (!d)
		return;
	if (d == &default_dom)
		grace__misuse_fatal("grace_hazptr_domain_destroy", "the default domain is not "
								   "destroyed");
	barrier(d, "grace_hazptr_domain_destroy");
	grace_store_relaxed(&d->magic, 0u);
#if GRACE__LIB_DEBUG
	/* Kept, poisoned: a later retire into it is reported, not a use after free. */
	grace__lock(&dom_lock);
	d->free_fn = (void (*)(void *))(void *)dbg_dead_doms;
	dbg_dead_doms = d;
	grace__unlock(&dom_lock);
#else
	free(d);
#endif
}

GRACE_API int grace_hazptr_set_free_hook(struct grace_hazptr_domain *d, void (*fn)(void *))
{
	int err = 0;

	d = dom_of(d);
	grace__lock(&dom_lock);
	if (grace_load_relaxed(&d->free_used) && grace_load_relaxed(&d->free_fn) != fn)
		err = -EBUSY;
	else
		grace_store_relaxed(&d->free_fn, fn);
	grace__unlock(&dom_lock);
	return err;
}

GRACE_API void grace_hazptr_get_stats(struct grace_hazptr_stats *st)
{
	struct hp_cache *c;

	memset(st, 0, sizeof(*st));
	st->records = grace_load_relaxed(&grace__hp_nrecords);
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	{
		/* Relaxed: counters the owner writes; a sum taken over a moment. The inline
		 * appends not folded yet (at most RUN per thread) are not counted. */
		st->retired += grace_load_relaxed(&c->retired);
		st->reclaimed += grace_load_relaxed(&c->reclaimed);
		st->scans += grace_load_relaxed(&c->scans);
		st->batches++;
	}
	st->batches++; /* the orphan list */
	grace__unlock(&all_lock);
	st->retired += grace_load_relaxed(&gone_retired);
	st->reclaimed += grace_load_relaxed(&gone_reclaimed);
	st->scans += grace_load_relaxed(&gone_scans);
}

/* ---- thread exit, process exit, fork ---- */

/* The exiting owner's last scan: free what is unprotected, the rest to the orphan list. c taken
 * by its owner under all_lock. */
static void cache_retire(struct hp_cache *c)
{
	cur_sync(c);
	c->rt.lim = 0;
	/* Until nothing is pending: the functions of freed entries may retire more (nested). */
	do {
		scan(c);
		while (c->rhead < c->rend)
			ready_pop_release(c);
	} while (c->np);
	grace__lock(&orphan_lock);
	for (uint32_t i = c->rend; i < c->n; i++)
		(void)orphan_put_locked(c->ent[i]);
	c->n = c->rend = c->rhead = 0;
	grace__unlock(&orphan_lock);
	grace_fetch_add(&gone_retired, c->retired, __ATOMIC_RELAXED);
	grace_fetch_add(&gone_reclaimed, c->reclaimed, __ATOMIC_RELAXED);
	grace_fetch_add(&gone_scans, c->scans, __ATOMIC_RELAXED);
}

/* Debug builds: a protection the exiting thread set and never ended. */
static void check_held_at_exit(void)
{
#if GRACE__LIB_DEBUG
	for (struct hp_block *b = grace_load_acquire(&grace__hp_blocks); b; b = b->next)
		for (int i = 0; i < BLK_RECS; i++) {
			struct grace_hazptr *h = &b->rec[i].r;
			void *p = grace_load_relaxed(&h->ptr);
			if (p && grace_load_relaxed(&h->grace__owner) == (void *)&ts &&
			    grace_load_relaxed(&h->grace__state) == GRACE__HAZPTR_HELD)
				grace__misuse("hazptr_protect",
					      "thread exits holding a protection of %p (hazard "
					      "pointer %p never reset nor freed): the object stays "
					      "unreclaimed until someone resets it",
					      p, (void *)h);
		}
#endif
}

static void hp_thread_exit(void *arg)
{
	struct grace__hazptr_tls *t = &grace__hazptr_tls;
	struct hp_cache *c = ts.cache;

	(void)arg;
	ts.exiting = 1;
	t->cap = 0;
	check_held_at_exit();
	while (t->n)
		grace__hp_pool_put(t->rec[--t->n]);
	if (c) {
		grace__lock(&all_lock);
		c_lock(c); /* a stealer that took it before us is done */
		grace_list_del(&c->link);
		grace__hazptr_retire_tls = NULL;
		ts.cache = NULL;
		cache_retire(c);
		c_unlock(c);
		grace__unlock(&all_lock);
		cache_free(c);
	}
	grace__lock(&thr_lock);
	grace_list_del(&ts.link);
	grace__unlock(&thr_lock);
	ts.registered = 0;
}

/* Process exit: every cache to the orphan list, then one pass: what no hazard pointer protects
 * is freed (what a thread still running protects stays). */
static void hp_at_exit(void)
{
	struct hp_cache *c, scratch;

	grace_store_relaxed(&g_exiting, 1u);
	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	steal_mark(c);
	grace__heavy_barrier(); /* S */
	grace__lock(&orphan_lock);
	CACHES_FOR_EACH(c)
	{
		steal_take(c);
		cache_to_orphans(c, NULL);
		steal_release(c);
	}
	grace__unlock(&orphan_lock);
	grace__unlock(&all_lock);
	memset(&scratch, 0, sizeof(scratch));
	grace__lock(&orphan_lock);
	bool have = snapshot(&scratch);
	orphans_judge(&scratch, have);
	grace__unlock(&orphan_lock);
	free(scratch.snap);
}

void grace__hazptr_atfork_prepare(void)
{
	struct hp_cache *c;

	grace__lock(&all_lock);
	CACHES_FOR_EACH(c)
	steal_mark(c);
	if (!grace_list_empty(&all_caches))
		grace__heavy_barrier(); /* S */
	CACHES_FOR_EACH(c)
	steal_take_as(c, "fork"); /* the forking thread's own with busy held */
	grace__lock(&orphan_lock);
	grace__lock(&dom_lock);
	grace__lock(&thr_lock);
	grace__lock(&grace__hp_rec_lock);
#if GRACE__LIB_DEBUG
	grace__lock(&retired_set.lock);
#endif
}

void grace__hazptr_atfork_parent(void)
{
	struct hp_cache *c;

#if GRACE__LIB_DEBUG
	grace__unlock(&retired_set.lock);
#endif
	grace__unlock(&grace__hp_rec_lock);
	grace__unlock(&thr_lock);
	grace__unlock(&dom_lock);
	grace__unlock(&orphan_lock);
	CACHES_FOR_EACH(c)
	steal_release_as(c);
	grace__unlock(&all_lock);
}

/*
 * The child, single-threaded, every lock of the module held (prepare): the caches of the
 * threads that do not exist here go to the orphan list (their entries are judged by the next
 * scan, whose barrier M follows this handler); the hazard pointers those threads kept in their
 * TLS caches go back to the pool. The ones they held stay held: each keeps at most one object
 * from being freed (they count in H).
 */
void grace__hazptr_atfork_child(void)
{
	struct hp_cache *c;

	CACHES_FOR_EACH_SAFE(c)
	{
		if (c == ts.cache)
			continue;
		cache_to_orphans(c, NULL);
		grace_list_del(&c->link);
		gone_retired += c->retired;
		gone_reclaimed += c->reclaimed;
		gone_scans += c->scans;
		cache_free(c);
	}
	for (struct grace_list_head *it = threads.next, *nx = it->next; it != &threads;
	     it = nx, nx = it->next) {
		struct hp_thread *t = grace_list_entry(it, struct hp_thread, link);
		if (t == &ts)
			continue;
		while (t->pub->n) {
			grace__hp_pool_put_locked(t->pub->rec[--t->pub->n]);
		}
		grace_list_del(&t->link);
	}
	/* The locks of prepare, in the parent's order; the forking thread's cache is the only
	 * one left (the others were freed above). */
#if GRACE__LIB_DEBUG
	grace__unlock(&retired_set.lock);
#endif
	grace__unlock(&grace__hp_rec_lock);
	grace__unlock(&thr_lock);
	grace__unlock(&dom_lock);
	grace__unlock(&orphan_lock);
	if (ts.cache)
		steal_release_as(ts.cache);
	grace__unlock(&all_lock);
}
