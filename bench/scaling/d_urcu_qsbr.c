/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu's QSBR flavor, inline (_LGPL_SOURCE): register, one section, a quiescent state,
 * offline while asleep; unregister before exit.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-qsbr.h>

#include "scaling.h"

static long value = 42;
static long *ptr = &value;

static void uq_enter(void)
{
	long v;

	urcu_qsbr_register_thread();
	urcu_qsbr_read_lock();
	v = *rcu_dereference(ptr);
	urcu_qsbr_read_unlock();
	BENCH_USE(v);
	urcu_qsbr_quiescent_state();
	urcu_qsbr_thread_offline();
}

static void uq_exit(void)
{
	urcu_qsbr_unregister_thread();
}

static void uq_sync(void)
{
	urcu_qsbr_synchronize_rcu();
}

const struct sc_design sc_design_urcu_qsbr = {
	.name = "urcu-qsbr",
	.label = "liburcu QSBR (register, one section, offline while asleep)",
	.tls_lib = "liburcu-qsbr",
	.reader_enter = uq_enter,
	.reader_exit = uq_exit,
	.synchronize = uq_sync,
};
