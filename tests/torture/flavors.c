/* SPDX-License-Identifier: MIT */
/*
 * The flavors the torture program drives (torture.h):
 *   rcu          default flavor (rcu.h), callback engine in its default policy (adaptive)
 *   rcu-poll     the same with GRACE_POLICY_POLL (rcu-poll: a grace period at once)
 *   rcu-batch    the same with GRACE_POLICY_BATCH (rcu-ltimer: one grace period per period)
 *   rcu-limits   poll policy with tiny callback limits: the engine expedites, makes queuing
 *                threads help and blocks them at the hard bound all the time
 *   rcu-pace-min adaptive policy capped at its shortest pacing (50 us): naps and grace periods
 *                back to back at the highest rate the policy allows
 *   rcu-lazy     GRACE_POLICY_LAZY with a 100 ms period (the default, 1 s, would give a 3 s
 *                run three lazy waits): naps of a period, hurries, barriers and the floods'
 *                pending callbacks ending lazy waits
 *   qsbr         QSBR (qsbr.h), adaptive policy; qsbr-batch: batch policy
 *   srcu         srcu (srcu.h) with three independent domains (one DEFINE_SRCU, two
 *                init_srcu_struct), readers nesting sections of random domains; adaptive
 *   urcu-defer, urcu-qsbr-defer  the default flavor and QSBR with the headless retire path
 *                going through grace-urcu's defer_rcu() (built with grace-urcu)
 * Every writer chooses among the retire paths each flavor has: synchronize, expedited, call,
 * call_hurry, cond_synchronize, the polled API, and free_rcu() with and without an rcu_head
 * and rcu_retire() (free, headless, retire) on heap elements.
 * Every adapter is derived from the library's own table of the flavor, struct grace_flavor_ops
 * (grace_flavor_rcu, grace_flavor_qsbr, grace_flavor_ops_srcu()): one set of generic adapters
 * below serves every flavor; a flavor here only names its tables and its policy set-up.
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
#define PACE_MIN_CAP_US 50    /* the adaptive policy's least pace (GRACE__POLICY_PACE_MIN_NS) */
#define LAZY_PERIOD_US 100000 /* rcu-lazy */
#define TIGHT_SOFT 32
#define TIGHT_HARD 256
#define DEFAULT_SOFT 10000 /* include/grace/engine.h */
#define DEFAULT_HARD 100000

static char mode_buf[160];

/* The tables of the flavor under test, one per domain (filled by the flavor's init). */
static struct grace_flavor_ops fo[TORTURE_MAX_DOMAINS];
static unsigned int nfo;
#define F(d) (&fo[d])

/* ---- generic adapters over struct grace_flavor_ops ---- */

static void g_reader_start(bool explicit_)
{
	/* QSBR readers must register; the default flavor registers implicitly unless asked. */
	if (F(0)->register_thread && (explicit_ || F(0)->quiescent_state))
		F(0)->register_thread();
}
static void g_reader_stop(bool explicit_)
{
	if (F(0)->unregister_thread && explicit_)
		F(0)->unregister_thread(); /* else the thread-exit hook unregisters */
}
static int g_lock(unsigned int d)
{
	return F(d)->read_lock(F(d)->ctx);
}
static void g_unlock(unsigned int d, int idx)
{
	F(d)->read_unlock(F(d)->ctx, idx);
}
static bool g_ongoing(void)
{
	for (unsigned int d = 0; d < nfo; d++)
		if (F(d)->read_ongoing(F(d)->ctx))
			return true;
	return false;
}
static void g_qs(void)
{
	F(0)->quiescent_state();
}
static void g_off(void)
{
	F(0)->thread_offline();
}
static void g_on(void)
{
	F(0)->thread_online();
}
static void g_sync(unsigned int d)
{
	F(d)->synchronize(F(d)->ctx);
}
static void g_exp(unsigned int d)
{
	F(d)->synchronize_expedited(F(d)->ctx);
}
static void g_call(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	F(d)->call(F(d)->ctx, h, f);
}
static void g_call_hurry(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	F(d)->call_hurry(F(d)->ctx, h, f);
}
static void g_bar(unsigned int d)
{
	F(d)->barrier(F(d)->ctx);
}
static unsigned long g_gs(unsigned int d)
{
	return F(d)->get_state(F(d)->ctx);
}
static unsigned long g_sp(unsigned int d)
{
	return F(d)->start_poll(F(d)->ctx);
}
static bool g_ps(unsigned int d, unsigned long c)
{
	return F(d)->poll_state(F(d)->ctx, c);
}
static void g_cs(unsigned int d, unsigned long c)
{
	F(d)->cond_synchronize(F(d)->ctx, c);
}
static void g_free(unsigned int d, void *p, struct rcu_head *h)
{
	F(d)->free(F(d)->ctx, p, h);
}
static void g_free_hl(unsigned int d, void *p)
{
	F(d)->free_headless(F(d)->ctx, p);
}
static void g_free_bar(unsigned int d)
{
	F(d)->free_barrier(F(d)->ctx);
}
/* The retires are inline functions, not in struct grace_flavor_ops: one adapter per flavor. */
static void rcu_retire_t(unsigned int d, void *p)
{
	(void)d;
	rcu_retire(p);
}
static void qsbr_retire_t(unsigned int d, void *p)
{
	(void)d;
	qsbr_retire(p);
}
static int rcu_hook_t(unsigned int d, void (*fn)(void *))
{
	(void)d;
	return grace_rcu_set_free_hook(fn);
}
static int qsbr_hook_t(unsigned int d, void (*fn)(void *))
{
	(void)d;
	return grace_qsbr_set_free_hook(fn);
}
static void g_stats(unsigned int d, struct grace_cb_stats *st)
{
	F(d)->callback_stats(F(d)->ctx, st);
}
/* Odd-numbered fake writers are registered online QSBR threads: synchronize_qsbr() must put
 * them offline for the wait (else it would wait for itself) and back online after. */
static void g_updater_start(unsigned int idx)
{
	if (idx & 1)
		F(0)->register_thread();
}
static void g_updater_stop(unsigned int idx)
{
	if (idx & 1)
		F(0)->unregister_thread();
}

#define GENERIC_OPS_BASE                                                                       \
	.reader_start = g_reader_start, .reader_stop = g_reader_stop, .read_lock = g_lock,     \
	.read_unlock = g_unlock, .read_ongoing = g_ongoing, .sync = g_sync, .exp_sync = g_exp, \
	.call = g_call, .call_hurry = g_call_hurry, .barrier = g_bar, .get_state = g_gs,       \
	.start_poll = g_sp, .poll_state = g_ps, .cond_sync = g_cs, .cb_stats = g_stats,        \
	.free = g_free
#define GENERIC_OPS GENERIC_OPS_BASE, .free_headless = g_free_hl, .free_barrier = g_free_bar

/* Use the table t for every domain; policy as given (period 0: poll), tight limits or not. */
static int use(const struct grace_flavor_ops *t, enum grace_gp_policy pol, bool tight)
{
	int e;

	fo[0] = *t;
	nfo = 1;
	e = t->set_policy(t->ctx, pol, pol == GRACE_POLICY_BATCH ? BATCH_PERIOD_US : 0);
	if (!e)
		e = t->set_callback_limits(t->ctx, tight ? TIGHT_SOFT : DEFAULT_SOFT,
					   tight ? TIGHT_HARD : DEFAULT_HARD);
	return e;
}
static void restore(void)
{
	/* The next run in this process starts from the defaults. */
	fo[0].set_policy(fo[0].ctx, GRACE_POLICY_ADAPTIVE, 0);
	fo[0].set_callback_limits(fo[0].ctx, DEFAULT_SOFT, DEFAULT_HARD);
}

/* ---- default flavor ---- */

static int rcu_adaptive_init(void)
{
	return use(&grace_flavor_rcu, GRACE_POLICY_ADAPTIVE, false);
}
static int rcu_poll_init(void)
{
	return use(&grace_flavor_rcu, GRACE_POLICY_POLL, false);
}
static int rcu_batch_init(void)
{
	return use(&grace_flavor_rcu, GRACE_POLICY_BATCH, false);
}
static int rcu_limits_init(void)
{
	return use(&grace_flavor_rcu, GRACE_POLICY_POLL, true);
}
static int rcu_pace_min_init(void)
{
	int e = use(&grace_flavor_rcu, GRACE_POLICY_ADAPTIVE, false);

	return e ? e : fo[0].set_policy(fo[0].ctx, GRACE_POLICY_ADAPTIVE, PACE_MIN_CAP_US);
}
static int rcu_lazy_init(void)
{
	int e = use(&grace_flavor_rcu, GRACE_POLICY_ADAPTIVE, false);

	return e ? e : fo[0].set_policy(fo[0].ctx, GRACE_POLICY_LAZY, LAZY_PERIOD_US);
}
static const char *rcu_lazy_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf), "%s, lazy policy %u us", grace_membarrier_mode(),
		 LAZY_PERIOD_US);
	return mode_buf;
}
static const char *rcu_mode(void)
{
	return grace_membarrier_mode();
}
static const char *rcu_batch_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf), "%s, batch policy %u us", grace_membarrier_mode(),
		 BATCH_PERIOD_US);
	return mode_buf;
}
static const char *rcu_limits_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf),
		 "%s, poll policy, callback limits soft %u hard %u per CPU",
		 grace_membarrier_mode(), TIGHT_SOFT, TIGHT_HARD);
	return mode_buf;
}

static const char *rcu_pace_min_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf), "%s, adaptive policy capped at %u us",
		 grace_membarrier_mode(), PACE_MIN_CAP_US);
	return mode_buf;
}

static const char *rcu_poll_mode(void)
{
	snprintf(mode_buf, sizeof(mode_buf), "%s, poll policy", grace_membarrier_mode());
	return mode_buf;
}

static void rcu_park_stats(unsigned long *parks, unsigned long *unparks)
{
	grace_rcu_reader_stats(NULL, NULL, parks, unparks);
}
#define RCU_OPS                                                            \
	GENERIC_OPS, .park_stats = rcu_park_stats, .retire = rcu_retire_t, \
		     .set_free_hook = rcu_hook_t

static const struct torture_ops rcu_ops = {
	.name = "rcu",
	.desc = "default flavor (rcu.h), callback engine adaptive policy (the default)",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_adaptive_init,
	.cleanup = restore,
	.mode = rcu_mode,
};
static const struct torture_ops rcu_poll_ops = {
	.name = "rcu-poll",
	.desc = "default flavor (rcu.h), callback engine poll policy",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_poll_init,
	.cleanup = restore,
	.mode = rcu_poll_mode,
};
static const struct torture_ops rcu_batch_ops = {
	.name = "rcu-batch",
	.desc = "default flavor (rcu.h), callback engine batch policy",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_batch_init,
	.cleanup = restore,
	.mode = rcu_batch_mode,
};
static const struct torture_ops rcu_limits_ops = {
	.name = "rcu-limits",
	.desc = "default flavor (rcu.h), tiny callback limits: expedite, help, block at the bound",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_limits_init,
	.cleanup = restore,
	.mode = rcu_limits_mode,
};
static const struct torture_ops rcu_pace_min_ops = {
	.name = "rcu-pace-min",
	.desc = "default flavor (rcu.h), adaptive policy at its shortest pacing (50 us)",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_pace_min_init,
	.cleanup = restore,
	.mode = rcu_pace_min_mode,
};

static const struct torture_ops rcu_lazy_ops = {
	.name = "rcu-lazy",
	.desc = "default flavor (rcu.h), callback engine lazy policy (100 ms)",
	.ndomains = 1,
	RCU_OPS,
	.init = rcu_lazy_init,
	.cleanup = restore,
	.mode = rcu_lazy_mode,
};

/* ---- QSBR ---- */

static int qsbr_adaptive_init(void)
{
	return use(&grace_flavor_qsbr, GRACE_POLICY_ADAPTIVE, false);
}
static int qsbr_batch_init(void)
{
	return use(&grace_flavor_qsbr, GRACE_POLICY_BATCH, false);
}

#define QSBR_OPS                                                                          \
	.ndomains = 1, .qsbr = true, GENERIC_OPS, .quiescent = g_qs, .offline = g_off,    \
	.online = g_on, .updater_start = g_updater_start, .updater_stop = g_updater_stop, \
	.cleanup = restore, .retire = qsbr_retire_t, .set_free_hook = qsbr_hook_t

static const struct torture_ops qsbr_ops = {
	.name = "qsbr",
	.desc = "QSBR (qsbr.h): readers register, report quiescent states, go offline to sleep",
	QSBR_OPS,
	.init = qsbr_adaptive_init,
	.mode = rcu_mode,
};
static const struct torture_ops qsbr_batch_ops = {
	.name = "qsbr-batch",
	.desc = "QSBR (qsbr.h), callback engine batch policy",
	QSBR_OPS,
	.init = qsbr_batch_init,
	.mode = rcu_batch_mode,
};

#ifdef GRACE_TORTURE_URCU
/*
 * ---- grace-urcu's defer_rcu() (compat/src/defer.c) as the headless retire path ----
 * The heap elements retired "headless" go to defer_rcu(free, p) of the matching liburcu flavor
 * (urcu-memb on the default flavor's domain, urcu-qsbr on QSBR's): per-thread queues run by
 * one callback per queue. Writers register for it at their first call and never unregister, so
 * every run also exercises the queues of threads that exit registered. free_barrier waits for
 * free_rcu()'s and defer_rcu()'s. flavors_urcu.c holds the calls (liburcu's names).
 */
void torture_urcu_defer(int qsbr, void *p);
void torture_urcu_defer_barrier(int qsbr);

static void u_defer(unsigned int d, void *p)
{
	(void)d;
	torture_urcu_defer(0, p);
}
static void u_defer_bar(unsigned int d)
{
	g_free_bar(d);
	torture_urcu_defer_barrier(0);
}
static void uq_defer(unsigned int d, void *p)
{
	(void)d;
	torture_urcu_defer(1, p);
}
static void uq_defer_bar(unsigned int d)
{
	g_free_bar(d);
	torture_urcu_defer_barrier(1);
}

static const struct torture_ops urcu_defer_ops = {
	.name = "urcu-defer",
	.desc = "default flavor; headless retires through grace-urcu's defer_rcu() (urcu-memb)",
	.ndomains = 1,
	GENERIC_OPS_BASE,
	.free_headless = u_defer,
	.free_barrier = u_defer_bar,
	.init = rcu_adaptive_init,
	.cleanup = restore,
	.mode = rcu_mode,
};
static const struct torture_ops urcu_qsbr_defer_ops = {
	.name = "urcu-qsbr-defer",
	.desc = "QSBR; headless retires through grace-urcu's defer_rcu() (urcu-qsbr)",
	.ndomains = 1,
	.qsbr = true,
	GENERIC_OPS_BASE,
	.free_headless = uq_defer,
	.free_barrier = uq_defer_bar,
	.quiescent = g_qs,
	.offline = g_off,
	.online = g_on,
	.updater_start = g_updater_start,
	.updater_stop = g_updater_stop,
	.cleanup = restore,
	.init = qsbr_adaptive_init,
	.mode = rcu_mode,
};
#endif

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
	for (unsigned int d = 0; d < SRCU_DOMAINS; d++)
		grace_flavor_ops_srcu(&fo[d], srcu_dom[d]);
	nfo = SRCU_DOMAINS;
	return 0;
}
static void srcu_t_cleanup(void)
{
	/* Every callback was invoked (the run's drain ends with srcu_barrier on each domain). */
	for (int i = 0; i < SRCU_DOMAINS; i++)
		cleanup_srcu_struct(srcu_dom[i]);
	nfo = 0;
}
/* srcu_dereference() names its domain (debug builds check that a section of it is open). */
static struct elem *srcu_deref(unsigned int d, struct elem **slot)
{
	return srcu_dereference(*slot, srcu_dom[d]);
}
static const char *srcu_mode(void)
{
	return grace_srcu_mode();
}
static void srcu_retire_t(unsigned int d, void *p)
{
	srcu_retire(srcu_dom[d], p);
}
static int srcu_hook_t(unsigned int d, void (*fn)(void *))
{
	return grace_srcu_set_free_hook(srcu_dom[d], fn);
}

static const struct torture_ops srcu_ops = {
	.name = "srcu",
	.desc = "srcu (srcu.h): three independent domains, nested sections of random domains",
	.ndomains = SRCU_DOMAINS,
	GENERIC_OPS,
	.retire = srcu_retire_t,
	.set_free_hook = srcu_hook_t,
	.init = srcu_t_init,
	.cleanup = srcu_t_cleanup,
	.deref = srcu_deref,
	.mode = srcu_mode,
};

const struct torture_ops *const torture_flavors[] = {
	&rcu_ops,
	&rcu_poll_ops,
	&rcu_batch_ops,
	&rcu_limits_ops,
	&rcu_pace_min_ops,
	&rcu_lazy_ops,
	&qsbr_ops,
	&qsbr_batch_ops,
	&srcu_ops,
#ifdef GRACE_TORTURE_URCU
	&urcu_defer_ops,
	&urcu_qsbr_defer_ops,
#endif
	NULL,
};
