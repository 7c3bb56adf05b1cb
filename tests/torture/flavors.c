/* SPDX-License-Identifier: MIT */
/*
 * The flavors the torture program drives, one struct torture_ops each (torture.h):
 *   rcu          default flavor (rcu.h), callback engine in its default policy (poll)
 *   rcu-batch    the same with GRACE_POLICY_BATCH (rcu-ltimer: one grace period per period)
 *   rcu-limits   poll policy with tiny callback limits: the engine expedites, makes queuing
 *                threads help and blocks them at the hard bound all the time
 *   qsbr         QSBR (qsbr.h), poll policy; qsbr-batch: batch policy
 *   srcu         srcu (srcu.h) with three independent domains (one DEFINE_SRCU, two
 *                init_srcu_struct), readers nesting sections of random domains
 * The fence fallbacks (GRACE_NO_MEMBARRIER=1) and srcu without rseq (GRACE_NO_RSEQ=1) are
 * chosen at start-up: tests/torture/torture.cmake runs the same flavors with those set.
 * The deliberately broken flavor is in broken.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <grace/grace.h>
#include <grace/srcu.h>

#include "torture.h"

#define BATCH_PERIOD_US 10000 /* the engine's default: one 100 Hz tick, as rcu-ltimer */
#define TIGHT_SOFT 32
#define TIGHT_HARD 256
#define DEFAULT_SOFT 10000 /* include/grace/engine.h */
#define DEFAULT_HARD 100000

static char mode_buf[160];

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
static void rcu_stats(unsigned int d, struct grace_cb_stats *st)
{
	(void)d;
	grace_rcu_callback_stats(st);
}
static const char *rcu_mode(void)
{
	return grace_membarrier_mode();
}
static int rcu_poll_init(void)
{
	return grace_rcu_set_policy(GRACE_POLICY_POLL, 0);
}
static int rcu_batch_init(void)
{
	return grace_rcu_set_policy(GRACE_POLICY_BATCH, BATCH_PERIOD_US);
}
static void rcu_batch_cleanup(void)
{
	grace_rcu_set_policy(GRACE_POLICY_POLL, 0);
}
static const char *rcu_batch_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf), "%s, batch policy %u us", grace_membarrier_mode(),
		 BATCH_PERIOD_US);
	return mode_buf;
}
static int rcu_limits_init(void)
{
	int e = grace_rcu_set_policy(GRACE_POLICY_POLL, 0);
	return e ? e : grace_rcu_set_callback_limits(TIGHT_SOFT, TIGHT_HARD);
}
static void rcu_limits_cleanup(void)
{
	grace_rcu_set_callback_limits(DEFAULT_SOFT, DEFAULT_HARD);
}
static const char *rcu_limits_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf),
		 "%s, poll policy, callback limits soft %u hard %u "
		 "per CPU",
		 grace_membarrier_mode(), TIGHT_SOFT, TIGHT_HARD);
	return mode_buf;
}

#define RCU_OPS_COMMON                                                                        \
	.ndomains = 1, .reader_start = rcu_reader_start, .reader_stop = rcu_reader_stop,      \
	.read_lock = rcu_lock, .read_unlock = rcu_unlock, .read_ongoing = rcu_ongoing,        \
	.sync = rcu_sync, .exp_sync = rcu_exp, .call = rcu_call, .barrier = rcu_bar,          \
	.get_state = rcu_gs, .start_poll = rcu_sp, .poll_state = rcu_ps, .cond_sync = rcu_cs, \
	.cb_stats = rcu_stats

static const struct torture_ops rcu_ops = {
	.name = "rcu",
	.desc = "default flavor (rcu.h), callback engine poll policy",
	RCU_OPS_COMMON,
	.init = rcu_poll_init,
	.mode = rcu_mode,
};
static const struct torture_ops rcu_batch_ops = {
	.name = "rcu-batch",
	.desc = "default flavor (rcu.h), callback engine batch policy",
	RCU_OPS_COMMON,
	.init = rcu_batch_init,
	.cleanup = rcu_batch_cleanup,
	.mode = rcu_batch_mode,
};
static const struct torture_ops rcu_limits_ops = {
	.name = "rcu-limits",
	.desc = "default flavor (rcu.h), tiny callback limits: expedite, help, block at the bound",
	RCU_OPS_COMMON,
	.init = rcu_limits_init,
	.cleanup = rcu_limits_cleanup,
	.mode = rcu_limits_mode,
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
static void qsbr_stats(unsigned int d, struct grace_cb_stats *st)
{
	(void)d;
	grace_qsbr_callback_stats(st);
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
static int qsbr_poll_init(void)
{
	return grace_qsbr_set_policy(GRACE_POLICY_POLL, 0);
}
static int qsbr_batch_init(void)
{
	return grace_qsbr_set_policy(GRACE_POLICY_BATCH, BATCH_PERIOD_US);
}
static void qsbr_batch_cleanup(void)
{
	grace_qsbr_set_policy(GRACE_POLICY_POLL, 0);
}

#define QSBR_OPS_COMMON                                                                      \
	.ndomains = 1, .qsbr = true, .reader_start = qsbr_reader_start,                      \
	.reader_stop = qsbr_reader_stop, .read_lock = qsbr_lock, .read_unlock = qsbr_unlock, \
	.quiescent = qsbr_qs, .offline = qsbr_off, .online = qsbr_on, .sync = qsbr_sync,     \
	.exp_sync = qsbr_exp, .call = qsbr_callf, .barrier = qsbr_bar, .get_state = qsbr_gs, \
	.start_poll = qsbr_sp, .poll_state = qsbr_ps, .cond_sync = qsbr_cs,                  \
	.updater_start = qsbr_updater_start, .updater_stop = qsbr_updater_stop,              \
	.cb_stats = qsbr_stats

static const struct torture_ops qsbr_ops = {
	.name = "qsbr",
	.desc = "QSBR (qsbr.h): readers register, report quiescent states, go offline to sleep",
	QSBR_OPS_COMMON,
	.init = qsbr_poll_init,
	.mode = rcu_mode,
};
static const struct torture_ops qsbr_batch_ops = {
	.name = "qsbr-batch",
	.desc = "QSBR (qsbr.h), callback engine batch policy",
	QSBR_OPS_COMMON,
	.init = qsbr_batch_init,
	.cleanup = qsbr_batch_cleanup,
	.mode = rcu_batch_mode,
};

/* ---- srcu: three independent domains ---- */

#define SRCU_DOMAINS 3
DEFINE_STATIC_SRCU(srcu_static);
static struct srcu_struct srcu_dyn[SRCU_DOMAINS - 1];
static struct srcu_struct *const srcu_dom[SRCU_DOMAINS] = { &srcu_static, &srcu_dyn[0],
							    &srcu_dyn[1] };

static int srcu_t_init(void)
{
	for (int i = 0; i < SRCU_DOMAINS - 1; i++) {
		int e = init_srcu_struct(&srcu_dyn[i]);
		if (e)
			return e;
	}
	return 0;
}
static void srcu_t_cleanup(void)
{
	/* Every callback was invoked (the run's drain ends with srcu_barrier on each domain). */
	for (int i = 0; i < SRCU_DOMAINS; i++)
		cleanup_srcu_struct(srcu_dom[i]);
}
static int srcu_lock(unsigned int d)
{
	return srcu_read_lock(srcu_dom[d]);
}
static void srcu_unlock(unsigned int d, int idx)
{
	srcu_read_unlock(srcu_dom[d], idx);
}
static struct elem *srcu_deref(unsigned int d, struct elem **slot)
{
	return srcu_dereference(*slot, srcu_dom[d]);
}
static void srcu_sync(unsigned int d)
{
	synchronize_srcu(srcu_dom[d]);
}
static void srcu_exp(unsigned int d)
{
	synchronize_srcu_expedited(srcu_dom[d]);
}
static void srcu_callf(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	call_srcu(srcu_dom[d], h, f);
}
static void srcu_bar(unsigned int d)
{
	srcu_barrier(srcu_dom[d]);
}
static unsigned long srcu_gs(unsigned int d)
{
	return get_state_synchronize_srcu(srcu_dom[d]);
}
static unsigned long srcu_sp(unsigned int d)
{
	return start_poll_synchronize_srcu(srcu_dom[d]);
}
static bool srcu_ps(unsigned int d, unsigned long c)
{
	return poll_state_synchronize_srcu(srcu_dom[d], c);
}
static void srcu_cs(unsigned int d, unsigned long c)
{
	cond_synchronize_srcu(srcu_dom[d], c);
}
static void srcu_stats(unsigned int d, struct grace_cb_stats *st)
{
	grace_srcu_callback_stats(srcu_dom[d], st);
}
static const char *srcu_mode(void)
{
	return grace_srcu_mode();
}

static const struct torture_ops srcu_ops = {
	.name = "srcu",
	.desc = "srcu (srcu.h): three independent domains, nested sections of random domains",
	.ndomains = SRCU_DOMAINS,
	.init = srcu_t_init,
	.cleanup = srcu_t_cleanup,
	.read_lock = srcu_lock,
	.read_unlock = srcu_unlock,
	.deref = srcu_deref,
	.sync = srcu_sync,
	.exp_sync = srcu_exp,
	.call = srcu_callf,
	.barrier = srcu_bar,
	.get_state = srcu_gs,
	.start_poll = srcu_sp,
	.poll_state = srcu_ps,
	.cond_sync = srcu_cs,
	.cb_stats = srcu_stats,
	.mode = srcu_mode,
};

const struct torture_ops *const torture_flavors[] = {
	&rcu_ops, &rcu_batch_ops, &rcu_limits_ops, &qsbr_ops, &qsbr_batch_ops, &srcu_ops, NULL,
};
