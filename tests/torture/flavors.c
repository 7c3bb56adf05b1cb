/* SPDX-License-Identifier: MIT */
/*
 * The flavors the torture program drives: the default flavor (rcu.h) and QSBR (qsbr.h).
 * Each fills a struct torture_ops (torture.h); the deliberately broken flavor is in broken.c.
 *
 * The callback engine and polled API are declared in rcu.h/qsbr.h and linked from libgrace as
 * they land: until they do, the torture program references them weakly and leaves a flavor's
 * operation NULL when the library lacks it (the run prints which paths it covered).
 */
#include <stddef.h>
#include <grace/grace.h>

#include "torture.h"

/* Weak until the engine links everywhere: a missing symbol leaves the path out of the run. */
#pragma weak grace_rcu_synchronize_expedited
#pragma weak grace_rcu_call
#pragma weak grace_rcu_barrier
#pragma weak grace_rcu_get_state
#pragma weak grace_rcu_start_poll
#pragma weak grace_rcu_poll_state
#pragma weak grace_rcu_cond_synchronize
#pragma weak grace_qsbr_synchronize_expedited
#pragma weak grace_qsbr_call
#pragma weak grace_qsbr_barrier
#pragma weak grace_qsbr_get_state
#pragma weak grace_qsbr_start_poll
#pragma weak grace_qsbr_poll_state
#pragma weak grace_qsbr_cond_synchronize

#define HAVE(fn) ((void (*)(void))(fn) != NULL)

/* ---- default flavor ---- */

static void rcu_reader_start(bool explicit_)
{
	if (explicit_)
		rcu_register_thread(); /* else the first rcu_read_lock() registers implicitly */
}
static void rcu_reader_stop(bool explicit_)
{
	if (explicit_)
		rcu_unregister_thread(); /* else the thread-exit hook unregisters */
}
static int rcu_lock(unsigned int d)
{
	(void)d;
	rcu_read_lock();
	return 0;
}
static void rcu_unlock(unsigned int d, int idx)
{
	(void)d;
	(void)idx;
	rcu_read_unlock();
}
static bool rcu_ongoing(void)
{
	return rcu_read_ongoing();
}
static void rcu_sync(unsigned int d)
{
	(void)d;
	synchronize_rcu();
}
static void rcu_exp(unsigned int d)
{
	(void)d;
	synchronize_rcu_expedited();
}
static void rcu_call(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	(void)d;
	call_rcu(h, f);
}
static void rcu_bar(unsigned int d)
{
	(void)d;
	rcu_barrier();
}
static unsigned long rcu_gs(unsigned int d)
{
	(void)d;
	return get_state_synchronize_rcu();
}
static unsigned long rcu_sp(unsigned int d)
{
	(void)d;
	return start_poll_synchronize_rcu();
}
static bool rcu_ps(unsigned int d, unsigned long c)
{
	(void)d;
	return poll_state_synchronize_rcu(c);
}
static void rcu_cs(unsigned int d, unsigned long c)
{
	(void)d;
	cond_synchronize_rcu(c);
}
static const char *rcu_mode(void)
{
	return grace_membarrier_mode();
}

static struct torture_ops rcu_ops = {
	.name = "rcu",
	.desc = "default flavor (rcu.h): per-thread counters, membarrier or fence fallback",
	.ndomains = 1,
	.reader_start = rcu_reader_start,
	.reader_stop = rcu_reader_stop,
	.read_lock = rcu_lock,
	.read_unlock = rcu_unlock,
	.read_ongoing = rcu_ongoing,
	.sync = rcu_sync,
	.exp_sync = rcu_exp,
	.call = rcu_call,
	.barrier = rcu_bar,
	.get_state = rcu_gs,
	.start_poll = rcu_sp,
	.poll_state = rcu_ps,
	.cond_sync = rcu_cs,
	.mode = rcu_mode,
};

/* ---- QSBR ---- */

static void qsbr_reader_start(bool explicit_)
{
	(void)explicit_;
	qsbr_register_thread();
}
static void qsbr_reader_stop(bool explicit_)
{
	if (explicit_)
		qsbr_unregister_thread(); /* else the thread-exit hook unregisters */
}
static int qsbr_lock(unsigned int d)
{
	(void)d;
	qsbr_read_lock();
	return 0;
}
static void qsbr_unlock(unsigned int d, int idx)
{
	(void)d;
	(void)idx;
	qsbr_read_unlock();
}
static void qsbr_qs(void)
{
	qsbr_quiescent_state();
}
static void qsbr_off(void)
{
	qsbr_thread_offline();
}
static void qsbr_on(void)
{
	qsbr_thread_online();
}
static void qsbr_sync(unsigned int d)
{
	(void)d;
	synchronize_qsbr();
}
static void qsbr_exp(unsigned int d)
{
	(void)d;
	synchronize_qsbr_expedited();
}
static void qsbr_callf(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	(void)d;
	call_qsbr(h, f);
}
static void qsbr_bar(unsigned int d)
{
	(void)d;
	qsbr_barrier();
}
static unsigned long qsbr_gs(unsigned int d)
{
	(void)d;
	return get_state_synchronize_qsbr();
}
static unsigned long qsbr_sp(unsigned int d)
{
	(void)d;
	return start_poll_synchronize_qsbr();
}
static bool qsbr_ps(unsigned int d, unsigned long c)
{
	(void)d;
	return poll_state_synchronize_qsbr(c);
}
static void qsbr_cs(unsigned int d, unsigned long c)
{
	(void)d;
	cond_synchronize_qsbr(c);
}
/* Odd-numbered fake writers are registered online QSBR threads: synchronize_qsbr() must put
 * them offline for the wait (else it would wait for itself) and back online after. */
static void qsbr_updater_start(unsigned int idx)
{
	if (idx & 1)
		qsbr_register_thread();
}
static void qsbr_updater_stop(unsigned int idx)
{
	if (idx & 1)
		qsbr_unregister_thread();
}

static struct torture_ops qsbr_ops = {
	.name = "qsbr",
	.desc = "QSBR (qsbr.h): readers register, report quiescent states, go offline to sleep",
	.ndomains = 1,
	.qsbr = true,
	.reader_start = qsbr_reader_start,
	.reader_stop = qsbr_reader_stop,
	.read_lock = qsbr_lock,
	.read_unlock = qsbr_unlock,
	.quiescent = qsbr_qs,
	.offline = qsbr_off,
	.online = qsbr_on,
	.sync = qsbr_sync,
	.exp_sync = qsbr_exp,
	.call = qsbr_callf,
	.barrier = qsbr_bar,
	.get_state = qsbr_gs,
	.start_poll = qsbr_sp,
	.poll_state = qsbr_ps,
	.cond_sync = qsbr_cs,
	.updater_start = qsbr_updater_start,
	.updater_stop = qsbr_updater_stop,
	.mode = rcu_mode,
};

const struct torture_ops *const torture_flavors[] = {
	&rcu_ops,
	&qsbr_ops,
	NULL,
};

void torture_flavors_init(void)
{
	if (!HAVE(grace_rcu_synchronize_expedited))
		rcu_ops.exp_sync = NULL;
	if (!HAVE(grace_rcu_call) || !HAVE(grace_rcu_barrier))
		rcu_ops.call = NULL, rcu_ops.barrier = NULL;
	if (!HAVE(grace_rcu_get_state) || !HAVE(grace_rcu_poll_state) ||
	    !HAVE(grace_rcu_start_poll) || !HAVE(grace_rcu_cond_synchronize))
		rcu_ops.get_state = NULL, rcu_ops.start_poll = NULL, rcu_ops.poll_state = NULL,
		rcu_ops.cond_sync = NULL;
	if (!HAVE(grace_qsbr_synchronize_expedited))
		qsbr_ops.exp_sync = NULL;
	if (!HAVE(grace_qsbr_call) || !HAVE(grace_qsbr_barrier))
		qsbr_ops.call = NULL, qsbr_ops.barrier = NULL;
	if (!HAVE(grace_qsbr_get_state) || !HAVE(grace_qsbr_poll_state) ||
	    !HAVE(grace_qsbr_start_poll) || !HAVE(grace_qsbr_cond_synchronize))
		qsbr_ops.get_state = NULL, qsbr_ops.start_poll = NULL, qsbr_ops.poll_state = NULL,
		qsbr_ops.cond_sync = NULL;
}
