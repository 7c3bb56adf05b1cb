/* SPDX-License-Identifier: MIT */
/*
 * QSBR flavor: quiescent-state-based reclamation with one phase and 64-bit counters.
 *
 * State. grace__qsbr_gp_ctr (starts at 1, +1 per grace period, never wraps) and per thread
 * `ctr`: 0 while offline or unregistered, else the value of gp_ctr the thread observed at its
 * last quiescent state (or when it came online).
 *
 * Grace period (qsbr_wait_readers): G. store-release gp_ctr' = gp_ctr + 1 (after the full fence
 * of core/gp.c); S. wait until every registered reader has ctr == 0 or ctr == gp_ctr'.
 *
 * Claim: when S ends, every thread that could hold a pointer removed before the grace period
 * has passed a quiescent state (or been offline) since, and its accesses happen before the
 * updater's next step.
 *  - Quiescent state: load-acquire gp_ctr, then store-release ctr. A thread seen with
 *    ctr == gp_ctr' read gp_ctr' first: its release store makes everything it did before the
 *    quiescent state happen before the updater's acquire load (no old pointer survives a
 *    quiescent state by contract), and its acquire load of gp_ctr' makes everything after it
 *    see the removal (which preceded G's release).
 *  - Offline: store-release ctr = 0, so the thread's earlier accesses happen before an updater
 *    that reads 0.
 *  - Online (and registration): store ctr = gp_ctr, then a full fence, before the thread reads
 *    any protected data. The update side has a full fence between the removal and S's loads
 *    of ctr (core/gp.c). By the store-buffering pattern either S sees the new ctr (and waits
 *    for a later quiescent state if the value is old) or the thread's reads see the removal.
 *  No step needs membarrier: quiescent states cost no fence at all, and only the rarer online
 *  and offline transitions pay an atomic read-modify-write each. (liburcu 0.13's quiescent state
 *  is also one load and a compare when no grace period is pending, but reports one with three
 *  full fences around its store.)
 *
 * Online count (the idle fast path). `qsbr_online_count` counts online threads. Online stores
 * ctr, then increments the count with a seq_cst read-modify-write followed by
 * grace_smp_mb_after_rmw() (the full barrier of the previous paragraph); offline stores ctr = 0 with release, then decrements with release. A
 * grace period that reads the count as 0 (acquire, after the full fence that follows seq_start)
 * skips the scan: no thread can hold it. A thread coming online concurrently either has its
 * increment seen (and its ctr, stored before it, is seen by the scan: the acquire load
 * synchronizes with the increment) or, by store-buffering with that fence, reads data that
 * already shows the removal. A thread that went offline decremented with release after its
 * release store of 0, so its accesses happen before the driver goes on. The cost of a grace
 * period with every registered thread offline is then that of no thread at all.
 *
 * Sleeping updaters: as in the default flavor (core/registry.c), the updater sets `waiter` in
 * the holder's line, executes membarrier (fence in the fallback), re-reads; the quiescent state
 * or offline transition that sees the flag wakes it. In the fallback a permanent FALLBACK bit in
 * `waiter` sends every quiescent state through qsbr_qs_slow, which fences before reading it.
 * Since the claim above needs no membarrier, that one serves only the wake-up: when every
 * holder is preempted on the updater's own CPU (more threads than CPUs), the updater sleeps
 * "light", with a local fence and a bounded sleep instead (core/wait.c).
 *
 * An online thread that never reports blocks grace periods: that is QSBR's contract. The wait
 * names it on stderr after the stall timeout (core/registry.c, report_stalls).
 */
#include "flavor/qsbr.h"

#include <pthread.h>
#include <grace/flavor.h>
#include <grace/qsbr.h>

#include "core/annotate.h"
#include "core/diag.h"
#include "engine/free.h"
#include "flavor/update.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/options.h"
#include "core/registry.h"
#include "core/wait.h"
#include "core/sys.h"

GRACE_API __thread struct grace__reader grace__qsbr_reader GRACE_TLS_IE;
GRACE_API struct grace__shared_ctr grace__qsbr_gp_ctr = { .v = 1 };

static struct grace__registry qsbr_registry;
/* Online threads (see "Online count" above); alone on its line: written by online/offline. */
static struct grace__shared_ctr qsbr_online_count;
static void qsbr_wait_readers(struct grace__gp *gp, unsigned int flags);
static struct grace__gp qsbr_gp = GRACE__GP_INIT(qsbr_wait_readers, &qsbr_registry, "qsbr");
static pthread_key_t qsbr_key;

static void qsbr_wait_readers(struct grace__gp *gp, unsigned int flags)
{
	uint64_t cur = grace_load_relaxed(&grace__qsbr_gp_ctr.v) + 1;
	/* Step G. Release: the removal (and everything before, see core/gp.c) is visible to a
	 * reader whose quiescent state loads cur with acquire. */
	grace_store_release(&grace__qsbr_gp_ctr.v, cur);
	/* No thread online: nothing to wait for (the argument at the top). Acquire: pairs with
	 * the release decrement of a thread going offline. */
	if (grace_load_acquire(&qsbr_online_count.v) == 0) {
		grace__ann_readers(&qsbr_registry); /* race detectors: offline threads' releases */
		return;
	}
	grace__registry_wait(&qsbr_registry, cur, (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
			     flags & GRACE__GP_EXPEDITED);
	grace__ann_readers(&qsbr_registry); /* race detectors: the readers' quiescent states */
}

/*
 * Stepped grace periods (core/gp.c, "Stepped grace periods"): a thread retiring objects
 * (engine/free.c), usually between two of its own quiescent states, advances the grace period
 * without blocking. The step that starts one runs step G and the first scan of
 * qsbr_wait_readers(); later steps rescan against the counter G stored (it moves only at G,
 * which only the driver runs), and the one that finds no holder ends it. The registry's lock is
 * only tried, before the grace period is started or adopted: a step never waits. A stepper
 * that is online holds the grace period until its own next quiescent state, as any reader.
 */
static bool qsbr_step(struct grace__gp *gp, uint64_t s, bool may_begin)
{
	uint64_t base, cur;
	bool held;

	if (!grace__registry_trylock(&qsbr_registry))
		return grace__gp_done(gp, s);
	if (grace__gp_step_adopt(gp, &base)) {
		cur = grace_load_relaxed(
			&grace__qsbr_gp_ctr.v); /* the adopter's: only G stores it */
		held = grace__registry_holds(&qsbr_registry, cur);
	} else if (may_begin && !grace__gp_done(gp, s) && grace__gp_step_start(gp, &base)) {
		cur = grace_load_relaxed(&grace__qsbr_gp_ctr.v) + 1;
		/* Step G, as in qsbr_wait_readers(): release, the removal before cur. */
		grace_store_release(&grace__qsbr_gp_ctr.v, cur);
		/* Acquire: pairs with the release decrement of a thread going offline. */
		held = grace_load_acquire(&qsbr_online_count.v) != 0 &&
		       grace__registry_holds(&qsbr_registry, cur);
	} else {
		grace__registry_unlock(&qsbr_registry);
		return grace__gp_done(gp, s);
	}
	grace__registry_unlock(&qsbr_registry);
	if (held) {
		grace__gp_step_park(gp, base);
		return false;
	}
	grace__ann_readers(&qsbr_registry); /* race detectors: the readers' quiescent states */
	grace__gp_step_end(gp, base);
	return grace__gp_done(gp, s);
}

/* The rest of a stepped grace period, for a driver that adopted it (it may block). */
static void qsbr_resume_readers(struct grace__gp *gp, unsigned int flags)
{
	grace__registry_wait_resume(&qsbr_registry, grace_load_relaxed(&grace__qsbr_gp_ctr.v),
				    (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
				    flags & GRACE__GP_EXPEDITED);
	grace__ann_readers(&qsbr_registry);
}

void grace__qsbr_misuse(const char *call, const char *what)
{
	grace__misuse_fatal(call, "%s", what);
}

static void qsbr_wake_if_waiting(struct grace__reader *r)
{
	uint32_t w = grace_load_relaxed(&r->waiter);
	if (w & GRACE__W_FALLBACK) {
		/* Fallback: fence between the ctr store and the waiter load (pairs with barrier
		 * W, a fence in the fallback). */
		grace_smp_mb();
		w = grace_load_relaxed(&r->waiter);
	}
	if (w & GRACE__W_WAITING)
		grace__registry_wake(&qsbr_registry, r);
}

void grace__qsbr_qs_slow(void)
{
	qsbr_wake_if_waiting(&grace__qsbr_reader);
}

static void qsbr_online(struct grace__reader *r)
{
	grace_store_relaxed(&r->ctr, grace_load_acquire(&grace__qsbr_gp_ctr.v));
	/* The count after the ctr store (the release half of the read-modify-write), then a full
	 * barrier: the ctr store and the count before any read of protected data; pairs with the
	 * fence between the removal and the reads of the count and of ctr on the update side
	 * (core/gp.c, after seq_start). The seq_cst read-modify-write alone is not that barrier:
	 * the thread's later reads are plain loads, which C11 does not order after it, nor does
	 * arm64 without LSE (ldaxr/stlxr: a later load may be satisfied before the stlxr's store is
	 * visible), so the store-buffering argument needs grace_smp_mb_after_rmw() (a dmb there,
	 * nothing on x86, as after seq_start in core/gp.c). */
	grace_fetch_add(&qsbr_online_count.v, 1, __ATOMIC_SEQ_CST);
	grace_smp_mb_after_rmw();
}

static void qsbr_offline(struct grace__reader *r)
{
	/* Release: the thread's accesses complete before an updater can read 0 (pairs with the
	 * acquire loads in the scan). */
	grace__ann_release(&r->ctr); /* race detectors: as a quiescent state */
	grace_store_release(&r->ctr, 0);
	/* Release: after the store above, so a driver that reads the lower count with acquire
	 * sees ctr == 0 and the thread's accesses (pairs with the acquire in
	 * qsbr_wait_readers()). */
	grace_fetch_sub(&qsbr_online_count.v, 1, __ATOMIC_RELEASE);
	grace_barrier();
	qsbr_wake_if_waiting(r);
}

static void qsbr_thread_exit(void *arg)
{
	struct grace__reader *r = (struct grace__reader *)arg;
	if (!(r->flags & GRACE__F_REGISTERED))
		return;
	if (r->dbg_nest)
		grace__misuse("thread exit", "thread exited inside qsbr_read_lock() (depth %u)",
			      r->dbg_nest);
	r->dbg_nest = 0;
	if (grace_load_relaxed(&r->ctr))
		qsbr_offline(r);
	grace__registry_del(&qsbr_registry, r);
	r->flags = 0;
	r->waiter = 0;
}

void grace_qsbr_register_thread(void)
{
	struct grace__reader *r = &grace__qsbr_reader;

	grace__init();
	if (r->flags & GRACE__F_REGISTERED) {
		grace__misuse("qsbr_register_thread", "thread already registered");
		return;
	}
	r->tid = grace__gettid();
	r->stall_seq = 0;
	r->dbg_nest = 0;
	r->waiter = grace__use_membarrier ? 0 : GRACE__W_FALLBACK;
	r->flags = GRACE__F_REGISTERED | GRACE__F_EXPLICIT;
	grace__ann_ignore(r, sizeof(*r)); /* Valgrind: ctr and waiter are shared atomics */
	grace_store_relaxed(&r->ctr, 0);
	grace__registry_add(&qsbr_registry, r);
	pthread_setspecific(qsbr_key, r);
	qsbr_online(r);
}

void grace_qsbr_unregister_thread(void)
{
	struct grace__reader *r = &grace__qsbr_reader;
	if (!(r->flags & GRACE__F_REGISTERED))
		return;
	if (r->dbg_nest)
		grace__misuse_fatal("qsbr_unregister_thread", "called inside qsbr_read_lock()");
	qsbr_thread_exit(r);
	pthread_setspecific(qsbr_key, NULL);
}

void grace_qsbr_thread_offline(void)
{
	struct grace__reader *r = &grace__qsbr_reader;
	if (!(r->flags & GRACE__F_REGISTERED)) {
		grace__misuse("qsbr_thread_offline", "thread not registered");
		return;
	}
	if (r->dbg_nest)
		grace__misuse_fatal("qsbr_thread_offline", "called inside qsbr_read_lock()");
	if (grace_load_relaxed(&r->ctr) == 0)
		return; /* already offline */
	qsbr_offline(r);
}

void grace_qsbr_thread_online(void)
{
	struct grace__reader *r = &grace__qsbr_reader;
	if (!(r->flags & GRACE__F_REGISTERED)) {
		grace__misuse("qsbr_thread_online",
			      "thread not registered (call qsbr_register_thread first)");
		return;
	}
	if (grace_load_relaxed(&r->ctr) != 0)
		return; /* already online */
	qsbr_online(r);
}

/* ---- the flavor descriptor (core/flavor.h) ---- */

static bool qsbr_is_reader(struct grace__flavor *f)
{
	(void)f;
	return grace_qsbr_thread_is_online();
}

/* Every QSBR wait: inside qsbr_read_lock() it would deadlock; an online caller would wait for
 * itself, so it is quiescent (offline) for the wait. The token says to come back online. */
static int qsbr_enter_wait(struct grace__flavor *f, const char *call)
{
	struct grace__reader *r = &grace__qsbr_reader;

	(void)f;
	if (r->dbg_nest)
		grace__misuse_fatal(call, "called inside qsbr_read_lock() (would deadlock)");
	if ((r->flags & GRACE__F_REGISTERED) && grace_load_relaxed(&r->ctr) != 0) {
		qsbr_offline(r);
		return 1;
	}
	return 0;
}

static void qsbr_leave_wait(struct grace__flavor *f, int token)
{
	(void)f;
	if (token)
		qsbr_online(&grace__qsbr_reader);
}

static int qsbr_read_lock_op(struct grace__flavor *f)
{
	(void)f;
	grace_qsbr_read_lock();
	return 0;
}

static void qsbr_read_unlock_op(struct grace__flavor *f, int token)
{
	(void)f;
	(void)token;
	grace_qsbr_read_unlock();
}

/* The inline quiescent state, out of line for struct grace_flavor_ops. */
static void qsbr_quiescent_state_op(void)
{
	grace_qsbr_quiescent_state();
}

/* fork() child: this thread is the only one, online or not. */
static void qsbr_atfork_child(struct grace__flavor *f)
{
	(void)f;
	qsbr_online_count.v = grace_load_relaxed(&grace__qsbr_reader.ctr) != 0;
}

static const struct grace__flavor_hooks qsbr_hooks = {
	.is_reader = qsbr_is_reader,
	.enter_wait = qsbr_enter_wait,
	.leave_wait = qsbr_leave_wait,
	.read_lock = qsbr_read_lock_op,
	.read_unlock = qsbr_read_unlock_op,
	.atfork_child = qsbr_atfork_child,
};

static const char *const qsbr_calls[GRACE__CALL_N] = {
	[GRACE__CALL_SYNC] = "synchronize_qsbr",
	[GRACE__CALL_SYNC_EXP] = "synchronize_qsbr_expedited",
	[GRACE__CALL_CALL] = "call_qsbr",
	[GRACE__CALL_CALL_HURRY] = "call_qsbr_hurry",
	[GRACE__CALL_BARRIER] = "qsbr_barrier",
	[GRACE__CALL_COND_SYNC] = "cond_synchronize_qsbr",
	[GRACE__CALL_POLL_STATE] = "poll_state_synchronize_qsbr",
	[GRACE__CALL_START_POLL] = "start_poll_synchronize_qsbr",
	[GRACE__CALL_SET_POLICY] = "grace_qsbr_set_policy",
	[GRACE__CALL_SET_LIMITS] = "grace_qsbr_set_callback_limits",
	[GRACE__CALL_FREE] = "free_qsbr",
	[GRACE__CALL_FREE_PTR] = "free_qsbr_mightsleep",
	[GRACE__CALL_FREE_BARRIER] = "free_qsbr_barrier",
	[GRACE__CALL_RETIRE] = "qsbr_retire",
	[GRACE__CALL_SET_FREE_HOOK] = "grace_qsbr_set_free_hook",
};

struct grace__flavor grace__qsbr_flavor = {
	.name = "qsbr",
	.calls = qsbr_calls,
	.gp = &qsbr_gp,
	.hooks = &qsbr_hooks,
	.reg = &qsbr_registry,
	.cb_workers = 0,
	.call_may_wait = true,
	.cb = NULL,
	.cb_lock = GRACE__LOCK_INIT,
	.owner = NULL,
	.free_slot = 1,
	.exit_in_reader = "exit() was called by an online QSBR thread (go offline first)",
};

GRACE_API const struct grace_flavor_ops grace_flavor_qsbr =
	GRACE__FLAVOR_OPS_INIT(&grace__qsbr_flavor, "qsbr", grace_qsbr_register_thread,
			       grace_qsbr_unregister_thread, qsbr_quiescent_state_op,
			       grace_qsbr_thread_offline, grace_qsbr_thread_online);

/* ---- the update side: the generic functions of flavor/update.c ---- */

void grace_qsbr_synchronize(void)
{
	grace__flavor_synchronize(&grace__qsbr_flavor, 0);
}

void grace_qsbr_synchronize_expedited(void)
{
	grace__flavor_synchronize(&grace__qsbr_flavor, GRACE__GP_EXPEDITED);
}

void grace_qsbr_call(struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call(&grace__qsbr_flavor, head, func);
}

void grace_qsbr_call_hurry(struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call_hurry(&grace__qsbr_flavor, head, func);
}

void grace_qsbr_barrier(void)
{
	grace__flavor_barrier(&grace__qsbr_flavor);
}

unsigned long grace_qsbr_get_state(void)
{
	return grace__flavor_get_state(&grace__qsbr_flavor);
}

unsigned long grace_qsbr_start_poll(void)
{
	return grace__flavor_start_poll(&grace__qsbr_flavor);
}

bool grace_qsbr_poll_state(unsigned long cookie)
{
	return grace__flavor_poll_state(&grace__qsbr_flavor, cookie);
}

void grace_qsbr_cond_synchronize(unsigned long cookie)
{
	grace__flavor_cond_synchronize(&grace__qsbr_flavor, cookie);
}

int grace_qsbr_set_policy(enum grace_gp_policy policy, unsigned int period_us)
{
	return grace__flavor_set_policy(&grace__qsbr_flavor, policy, period_us);
}

int grace_qsbr_set_callback_limits(size_t soft, size_t hard)
{
	return grace__flavor_set_limits(&grace__qsbr_flavor, soft, hard);
}

/* free_qsbr() and its twins: engine/free.c, over this descriptor. */
void grace_qsbr_free(void *ptr, struct rcu_head *head)
{
	grace__free(&grace__qsbr_flavor, ptr, head);
}

void grace_qsbr_free_ptr(void *ptr)
{
	grace__free_ptr(&grace__qsbr_flavor, ptr);
}

void grace_qsbr_free_barrier(void)
{
	grace__free_barrier(&grace__qsbr_flavor);
}

/* qsbr_retire() past its inline fast path (grace/internal/retire.h). */
void grace__qsbr_retire_slow(void (*fn)(void *), void *ptr)
{
	grace__retire(&grace__qsbr_flavor, fn, ptr);
}

int grace_qsbr_set_free_hook(void (*fn)(void *))
{
	return grace__free_hook(&grace__qsbr_flavor, fn);
}

void grace_qsbr_callback_stats(struct grace_cb_stats *stats)
{
	grace__flavor_stats(&grace__qsbr_flavor, stats);
}

/* ---- start-up ---- */

static struct grace__reader *qsbr_self(void)
{
	return &grace__qsbr_reader;
}

void grace__qsbr_init(void)
{
	/* A reader holds the grace period while online (ctr != 0) and not yet seen at the current
	 * counter (ctr != cur). */
	/* Done is ordered: the claim at the top needs no barrier W (the light sleep may skip it). */
	grace__registry_init(&qsbr_registry, ~0ull, ~0ull, GRACE__REG_ORDERED, qsbr_self, "qsbr");
	grace__ann_ignore(&qsbr_online_count, sizeof(qsbr_online_count)); /* Valgrind: atomic */
	/* Valgrind: the flavor's words that threads share through atomics. */
	grace__ann_ignore(&grace__qsbr_gp_ctr, sizeof(grace__qsbr_gp_ctr));
	grace__ann_ignore(&grace__qsbr_flavor, sizeof(grace__qsbr_flavor));
	grace__ann_ignore(grace__qsbr_flavor.gp, sizeof(*grace__qsbr_flavor.gp));
	/* Retiring threads step grace periods themselves (engine/free.c; GRACE_NO_STEP=1: not). */
	if (!grace__opt(GRACE__OPT_GRACE_NO_STEP)) {
		qsbr_gp.resume = qsbr_resume_readers;
		qsbr_gp.step = qsbr_step;
		/* A step's barrier A is a fence here, which no timing weighs (engine/free.c,
		 * step_pace()), so the pace fell to the engine's least, 16 slots; yet each grace
		 * period costs the other online threads (the counter their next quiescent state
		 * reads, their own word, which the stepper's scan reads) and the allocator, which
		 * took more of the time the sooner the garbage came back (perf, bench/smr's hash
		 * table: malloc and free 18.7% of the samples at 64 slots, 14.3% at 256). Measured
		 * on bench/smr (bench/smr/ab_lib.sh --design grace-qsbr-retire): 64 ran at
		 * 1.01-1.05x of 16 on the hash table and the list; 256 at up to 1.04x of 64;
		 * 1024 lost 2-5% on the BST and the list. The garbage stays a third of the default
		 * flavor's. */
		qsbr_gp.step_least = 256u;
	}
	if (pthread_key_create(&qsbr_key, qsbr_thread_exit) != 0)
		grace__fatal("grace init", "pthread_key_create failed");
}
