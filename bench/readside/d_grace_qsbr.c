/* SPDX-License-Identifier: MIT */
/*
 * grace QSBR flavor. "grace-qsbr": qsbr_read_lock/unlock, which compile to nothing in release
 * builds. "grace-qsbr-qs": one qsbr_quiescent_state() per iteration, the cost a QSBR reader
 * actually pays (how often is up to the application).
 */
#include <grace/qsbr.h>

#include "readside.h"

static void qsbr_init_thread(void)
{
	qsbr_register_thread();
}

static void qsbr_fini_thread(void)
{
	qsbr_unregister_thread();
}

static long qsbr_value = 42;
static long *qsbr_ptr = &qsbr_value;

RS_DEFINE_LOOP(rs_loop_grace_qsbr, qsbr_read_lock(), qsbr_read_unlock())
RS_DEFINE_LOOP(rs_loop_grace_qsbr_qs, qsbr_quiescent_state(), )
RS_DEFINE_READER(rs_reader_grace_qsbr, qsbr_read_lock(), qsbr_read_unlock(), rcu_dereference,
		 qsbr_ptr, qsbr_quiescent_state())

static void qsbr_sync(void)
{
	synchronize_qsbr();
}

const struct rs_design rs_design_grace_qsbr = {
	.name = "grace-qsbr",
	.loop_symbol = "rs_loop_grace_qsbr",
	.label = "grace qsbr read_lock/unlock",
	.thread_init = qsbr_init_thread,
	.thread_fini = qsbr_fini_thread,
	.loop = rs_loop_grace_qsbr,
	.loop8 = rs_loop_grace_qsbr_x8,
	.synchronize = qsbr_sync,
	.reader = rs_reader_grace_qsbr,
};

const struct rs_design rs_design_grace_qsbr_qs = {
	.name = "grace-qsbr-qs",
	.loop_symbol = "rs_loop_grace_qsbr_qs",
	.label = "grace qsbr_quiescent_state()",
	.thread_init = qsbr_init_thread,
	.thread_fini = qsbr_fini_thread,
	.loop = rs_loop_grace_qsbr_qs,
	.loop8 = rs_loop_grace_qsbr_qs_x8,
};
