/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu signal flavor (liburcu up to 0.13, Debian bookworm's liburcu-dev; 0.14 removed
 * it), read side inlined from its static headers (_LGPL_SOURCE). Its readers never fence, on any
 * kernel: synchronize_rcu() signals every registered thread instead, so its grace periods are
 * the slowest of liburcu's flavors. The cheapest read side liburcu has had without QSBR.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-signal.h>

#include "readside.h"

static void us_init_thread(void)
{
	urcu_signal_register_thread();
}

static void us_fini_thread(void)
{
	urcu_signal_unregister_thread();
}

static long us_value = 42;
static long *us_ptr = &us_value;

RS_DEFINE_LOOP(rs_loop_urcu_signal, urcu_signal_read_lock(), urcu_signal_read_unlock())
RS_DEFINE_READER(rs_reader_urcu_signal, urcu_signal_read_lock(), urcu_signal_read_unlock(),
		 rcu_dereference, us_ptr, )

static void us_sync(void)
{
	urcu_signal_synchronize_rcu();
}

const struct rs_design rs_design_urcu_signal = {
	.name = "urcu-signal",
	.loop_symbol = "rs_loop_urcu_signal",
	.label = "liburcu signal, inline (_LGPL_SOURCE; liburcu <= 0.13)",
	.thread_init = us_init_thread,
	.thread_fini = us_fini_thread,
	.loop = rs_loop_urcu_signal,
	.loop8 = rs_loop_urcu_signal_x8,
	.synchronize = us_sync,
	.reader = rs_reader_urcu_signal,
};
