/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu qsbr flavor, inline (_LGPL_SOURCE). "urcu-qsbr": read_lock/unlock (empty in
 * release builds); "urcu-qsbr-qs": one urcu_qsbr_quiescent_state() per iteration.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-qsbr.h>

#include "readside.h"

static void uq_init_thread(void)
{
	urcu_qsbr_register_thread();
}

static void uq_fini_thread(void)
{
	urcu_qsbr_unregister_thread();
}

static long uq_value = 42;
static long *uq_ptr = &uq_value;

RS_DEFINE_LOOP(rs_loop_urcu_qsbr, urcu_qsbr_read_lock(), urcu_qsbr_read_unlock())
RS_DEFINE_LOOP(rs_loop_urcu_qsbr_qs, urcu_qsbr_quiescent_state(), )
RS_DEFINE_READER(rs_reader_urcu_qsbr, urcu_qsbr_read_lock(), urcu_qsbr_read_unlock(),
		 rcu_dereference, uq_ptr, urcu_qsbr_quiescent_state())

static void uq_sync(void)
{
	urcu_qsbr_synchronize_rcu();
}

const struct rs_design rs_design_urcu_qsbr = {
	.name = "urcu-qsbr",
	.loop_symbol = "rs_loop_urcu_qsbr",
	.label = "liburcu qsbr read_lock/unlock, inline",
	.thread_init = uq_init_thread,
	.thread_fini = uq_fini_thread,
	.loop = rs_loop_urcu_qsbr,
	.loop8 = rs_loop_urcu_qsbr_x8,
	.synchronize = uq_sync,
	.reader = rs_reader_urcu_qsbr,
};

const struct rs_design rs_design_urcu_qsbr_qs = {
	.name = "urcu-qsbr-qs",
	.loop_symbol = "rs_loop_urcu_qsbr_qs",
	.label = "liburcu urcu_qsbr_quiescent_state(), inline",
	.thread_init = uq_init_thread,
	.thread_fini = uq_fini_thread,
	.loop = rs_loop_urcu_qsbr_qs,
	.loop8 = rs_loop_urcu_qsbr_qs_x8,
};
