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
 *  No step needs membarrier: quiescent states cost no fence at all (liburcu's QSBR pays two
 *  full fences per quiescent state), and only the rarer online transition pays one.
 *
 * Sleeping updaters: as in the default flavor (core/registry.c), the updater sets `waiter` in
 * the holder's line, executes membarrier (fence in the fallback), re-reads; the quiescent state
 * or offline transition that sees the flag wakes it. In the fallback a permanent FALLBACK bit in
 * `waiter` sends every quiescent state through qsbr_qs_slow, which fences before reading it.
 *
 * An online thread that never reports blocks grace periods: that is QSBR's contract. The wait
 * names it on stderr after the stall timeout (core/registry.c, report_stalls).
 */
#include <pthread.h>
#include <grace/qsbr.h>

#include "core/diag.h"
#include "core/gp.h"
#include "core/init.h"
#include "core/registry.h"
#include "core/sys.h"

GRACE_API __thread struct grace__reader grace__qsbr_reader GRACE_TLS_IE;
GRACE_API struct grace__shared_ctr grace__qsbr_gp_ctr = { .v = 1 };

static bool qsbr_holds(uint64_t ctr, uint64_t cur)
{
	return ctr != 0 && ctr != cur;
}

static struct grace__registry qsbr_registry;
static void qsbr_wait_readers(struct grace__gp *gp, unsigned int flags);
struct grace__gp grace__qsbr_gp = GRACE__GP_INIT(qsbr_wait_readers, &qsbr_registry, "qsbr");
static pthread_key_t qsbr_key;

static void qsbr_wait_readers(struct grace__gp *gp, unsigned int flags)
{
	uint64_t cur = grace_load_relaxed(&grace__qsbr_gp_ctr.v) + 1;
	/* Step G. Release: the removal (and everything before, see core/gp.c) is visible to a
	 * reader whose quiescent state loads cur with acquire. */
	grace_store_release(&grace__qsbr_gp_ctr.v, cur);
	grace__registry_wait(&qsbr_registry, cur, (unsigned long)(grace_load_relaxed(&gp->seq) + 3),
			     flags & GRACE__GP_EXPEDITED);
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
	/* Full fence: the ctr store before any read of protected data; pairs with the fence
	 * between the removal and the scan on the update side (core/gp.c, seq_start). */
	grace_smp_mb();
}

static void qsbr_offline(struct grace__reader *r)
{
	/* Release: the thread's accesses complete before an updater can read 0 (pairs with the
	 * acquire loads in the scan). */
	grace_store_release(&r->ctr, 0);
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

void grace__qsbr_check_wait(const char *call, bool *was_online)
{
	struct grace__reader *r = &grace__qsbr_reader;
	*was_online = false;
	if (r->dbg_nest)
		grace__misuse_fatal(call, "called inside qsbr_read_lock() (would deadlock)");
	if ((r->flags & GRACE__F_REGISTERED) && grace_load_relaxed(&r->ctr) != 0) {
		/* An online caller would wait for itself: it is quiescent for the wait. */
		qsbr_offline(r);
		*was_online = true;
	}
}

void grace__qsbr_end_wait(bool was_online)
{
	if (was_online)
		qsbr_online(&grace__qsbr_reader);
}

void grace_qsbr_synchronize(void)
{
	bool online;
	grace__init();
	grace__qsbr_check_wait("synchronize_qsbr", &online);
	grace__gp_wait(&grace__qsbr_gp, grace__gp_snap(&grace__qsbr_gp), 0);
	grace__qsbr_end_wait(online);
}

void grace__qsbr_init(void)
{
	grace__registry_init(&qsbr_registry, qsbr_holds, "qsbr");
	if (pthread_key_create(&qsbr_key, qsbr_thread_exit) != 0)
		grace__fatal("grace init", "pthread_key_create failed");
}

void grace__qsbr_atfork_prepare(void)
{
	pthread_mutex_lock(&qsbr_registry.lock);
}
void grace__qsbr_atfork_parent(void)
{
	pthread_mutex_unlock(&qsbr_registry.lock);
}
void grace__qsbr_atfork_child(void)
{
	struct grace__reader *r = &grace__qsbr_reader;
	pthread_mutex_unlock(&qsbr_registry.lock); /* taken by this thread in prepare */
	grace__registry_after_fork(&qsbr_registry, (r->flags & GRACE__F_REGISTERED) ? r : NULL);
	grace__gp_reset_after_fork(&grace__qsbr_gp);
}
