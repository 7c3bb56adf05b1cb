/* SPDX-License-Identifier: MIT */
/*
 * The callback engine and polled grace periods bound to the default and QSBR flavors: the
 * exported grace_rcu_* and grace_qsbr_* functions declared in rcu.h and qsbr.h.
 */
#include <errno.h>
#include <pthread.h>
#include <grace/engine.h>
#include <grace/qsbr.h>
#include <grace/rcu.h>

#include "core/diag.h"
#include "core/gp.h"
#include "core/init.h"
#include "engine/callback.h"

extern struct grace__gp grace__memb_gp;
extern struct grace__gp grace__qsbr_gp;
void grace__memb_check_not_reader(const char *call);
void grace__qsbr_check_wait(const char *call, bool *was_online);
void grace__qsbr_end_wait(bool was_online);

/* ---- default flavor ---- */

static int memb_enter_wait(const char *call)
{
	grace__memb_check_not_reader(call);
	return 0;
}
static void memb_leave_wait(int tok)
{
	(void)tok;
}
static bool memb_is_reader(void)
{
	return grace_rcu_read_ongoing();
}
static const struct grace__cbdom_ops memb_ops = { memb_enter_wait, memb_leave_wait,
						  memb_is_reader };

/* ---- QSBR ---- */

static int qsbr_enter_wait(const char *call)
{
	bool online;
	grace__qsbr_check_wait(call, &online);
	return online;
}
static void qsbr_leave_wait(int tok)
{
	grace__qsbr_end_wait(tok != 0);
}
static bool qsbr_is_reader(void)
{
	return grace_qsbr_thread_is_online();
}
static const struct grace__cbdom_ops qsbr_ops = { qsbr_enter_wait, qsbr_leave_wait,
						  qsbr_is_reader };

static struct grace__cbdom *memb_cb, *qsbr_cb;
static pthread_once_t memb_once = PTHREAD_ONCE_INIT, qsbr_once = PTHREAD_ONCE_INIT;

static void memb_cb_init(void)
{
	grace__init();
	struct grace__cbdom *d = grace__cbdom_create(&grace__memb_gp, &memb_ops, "rcu", 0);
	/* Release: the domain is complete before a thread that skips pthread_once sees it. */
	__atomic_store_n(&memb_cb, d, __ATOMIC_RELEASE);
	if (!memb_cb)
		grace__fatal("call_rcu", "out of memory creating the callback queues");
}
static void qsbr_cb_init(void)
{
	grace__init();
	struct grace__cbdom *d = grace__cbdom_create(&grace__qsbr_gp, &qsbr_ops, "qsbr", 0);
	__atomic_store_n(&qsbr_cb, d, __ATOMIC_RELEASE); /* as in memb_cb_init */
	if (!qsbr_cb)
		grace__fatal("call_qsbr", "out of memory creating the callback queues");
}
/* The domain, created on first use. Acquire: pairs with the release in pthread_once's
 * completion (the pointer is published only once the domain is fully built). */
static inline struct grace__cbdom *memb_dom(void)
{
	struct grace__cbdom *d = __atomic_load_n(&memb_cb, __ATOMIC_ACQUIRE);
	if (GRACE_UNLIKELY(!d)) {
		pthread_once(&memb_once, memb_cb_init);
		d = memb_cb;
	}
	return d;
}
static inline struct grace__cbdom *qsbr_dom(void)
{
	struct grace__cbdom *d = __atomic_load_n(&qsbr_cb, __ATOMIC_ACQUIRE);
	if (GRACE_UNLIKELY(!d)) {
		pthread_once(&qsbr_once, qsbr_cb_init);
		d = qsbr_cb;
	}
	return d;
}

void grace_rcu_call(struct rcu_head *head, rcu_callback_t func)
{
	grace__cbdom_call(memb_dom(), head, func, "call_rcu");
}

void grace_rcu_barrier(void)
{
	grace__cbdom_barrier(memb_dom(), "rcu_barrier");
}

void grace_rcu_synchronize_expedited(void)
{
	grace__init();
	grace__memb_check_not_reader("synchronize_rcu_expedited");
	grace__gp_wait(&grace__memb_gp, grace__gp_snap(&grace__memb_gp), GRACE__GP_EXPEDITED);
}

unsigned long grace_rcu_get_state(void)
{
	grace__init();
	return (unsigned long)grace__gp_snap(&grace__memb_gp);
}

unsigned long grace_rcu_start_poll(void)
{
	uint64_t c = grace_rcu_get_state();
	grace__cbdom_request_gp(memb_dom(), c);
	return (unsigned long)c;
}

bool grace_rcu_poll_state(unsigned long cookie)
{
	if (!grace__gp_done(&grace__memb_gp, cookie))
		return false;
	/* Full barrier on success, as Linux: the caller's later accesses (the free) are ordered
	 * after the grace period. */
	grace_smp_mb();
	return true;
}

void grace_rcu_cond_synchronize(unsigned long cookie)
{
	if (grace__gp_done(&grace__memb_gp, cookie)) {
		grace_smp_mb(); /* as in poll_state */
		return;
	}
	grace__memb_check_not_reader("cond_synchronize_rcu");
	grace__gp_wait(&grace__memb_gp, cookie, 0);
}

GRACE_API int grace_rcu_set_policy(enum grace_gp_policy p, unsigned int period_us)
{
	return grace__cbdom_set_policy(memb_dom(), p, period_us);
}

GRACE_API int grace_rcu_set_callback_limits(size_t soft, size_t hard)
{
	return grace__cbdom_set_limits(memb_dom(), soft, hard);
}

GRACE_API void grace_rcu_callback_stats(struct grace_cb_stats *st)
{
	grace__cbdom_stats(memb_dom(), st);
}

/* ---- QSBR ---- */

void grace_qsbr_call(struct rcu_head *head, rcu_callback_t func)
{
	grace__cbdom_call(qsbr_dom(), head, func, "call_qsbr");
}

void grace_qsbr_barrier(void)
{
	grace__cbdom_barrier(qsbr_dom(), "qsbr_barrier");
}

void grace_qsbr_synchronize_expedited(void)
{
	bool online;
	grace__init();
	grace__qsbr_check_wait("synchronize_qsbr_expedited", &online);
	grace__gp_wait(&grace__qsbr_gp, grace__gp_snap(&grace__qsbr_gp), GRACE__GP_EXPEDITED);
	grace__qsbr_end_wait(online);
}

unsigned long grace_qsbr_get_state(void)
{
	grace__init();
	return (unsigned long)grace__gp_snap(&grace__qsbr_gp);
}

unsigned long grace_qsbr_start_poll(void)
{
	uint64_t c = grace_qsbr_get_state();
	grace__cbdom_request_gp(qsbr_dom(), c);
	return (unsigned long)c;
}

bool grace_qsbr_poll_state(unsigned long cookie)
{
	if (!grace__gp_done(&grace__qsbr_gp, cookie))
		return false;
	grace_smp_mb(); /* as grace_rcu_poll_state */
	return true;
}

void grace_qsbr_cond_synchronize(unsigned long cookie)
{
	bool online;
	if (grace__gp_done(&grace__qsbr_gp, cookie)) {
		grace_smp_mb(); /* as grace_qsbr_poll_state: later accesses after the grace period */
		return;
	}
	grace__qsbr_check_wait("cond_synchronize_qsbr", &online);
	grace__gp_wait(&grace__qsbr_gp, cookie, 0);
	grace__qsbr_end_wait(online);
}

GRACE_API int grace_qsbr_set_policy(enum grace_gp_policy p, unsigned int period_us)
{
	return grace__cbdom_set_policy(qsbr_dom(), p, period_us);
}

GRACE_API int grace_qsbr_set_callback_limits(size_t soft, size_t hard)
{
	return grace__cbdom_set_limits(qsbr_dom(), soft, hard);
}

GRACE_API void grace_qsbr_callback_stats(struct grace_cb_stats *st)
{
	grace__cbdom_stats(qsbr_dom(), st);
}
