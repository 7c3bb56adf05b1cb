/* SPDX-License-Identifier: MIT */
/*
 * grace's designs, used as a user would (include the headers, link libgrace.so): the default
 * flavor registers a thread on its first rcu_read_lock() and unregisters it at thread exit; the
 * QSBR flavor registers explicitly, and a thread that sleeps goes offline first.
 */
#include <grace/qsbr.h>
#include <grace/rcu.h>

#include "scaling.h"

static long value = 42;
static long *ptr = &value;

static void grace_enter(void)
{
	long v;

	rcu_read_lock(); /* the first section registers the thread */
	v = *rcu_dereference(ptr);
	rcu_read_unlock();
	BENCH_USE(v);
}

static void grace_exit(void) {} /* thread exit unregisters */

static void grace_sync(void)
{
	synchronize_rcu();
}

const struct sc_design sc_design_grace = {
	.name = "grace",
	.label = "grace default flavor (registers on first rcu_read_lock)",
	.tls_lib = "libgrace",
	.reader_enter = grace_enter,
	.reader_exit = grace_exit,
	.synchronize = grace_sync,
};

/* The same with parking off: what grace periods cost when every registered thread is scanned
 * (the library reads GRACE_NO_PARK at start-up, so run.sh sets it for this design; main.c
 * refuses the design without it). */
const struct sc_design sc_design_grace_nopark = {
	.name = "grace-nopark",
	.label = "grace default flavor, parking off (GRACE_NO_PARK=1)",
	.tls_lib = "libgrace",
	.reader_enter = grace_enter,
	.reader_exit = grace_exit,
	.synchronize = grace_sync,
};

static void qsbr_enter(void)
{
	long v;

	qsbr_register_thread();
	qsbr_read_lock();
	v = *rcu_dereference(ptr);
	qsbr_read_unlock();
	BENCH_USE(v);
	qsbr_quiescent_state();
	qsbr_thread_offline(); /* about to sleep: delay no grace period */
}

static void qsbr_exit(void)
{
	qsbr_unregister_thread();
}

static void qsbr_sync(void)
{
	synchronize_qsbr();
}

const struct sc_design sc_design_grace_qsbr = {
	.name = "grace-qsbr",
	.label = "grace QSBR (register, one section, offline while asleep)",
	.tls_lib = "libgrace",
	.reader_enter = qsbr_enter,
	.reader_exit = qsbr_exit,
	.synchronize = qsbr_sync,
};

static void none(void) {}

const struct sc_design sc_design_none = {
	.name = "none",
	.label = "no RCU library: the thread alone (the baseline)",
	.tls_lib = NULL,
	.reader_enter = none,
	.reader_exit = none,
	.synchronize = NULL,
};
