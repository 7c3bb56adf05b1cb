/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu memb flavor through its shared library (no _LGPL_SOURCE): every
 * urcu_memb_read_lock()/unlock() is a call into liburcu-memb.so, which is what a non-LGPL program
 * gets.
 */
#include <urcu/urcu-memb.h>

#include "readside.h"

static void ums_init_thread(void)
{
	urcu_memb_register_thread();
}

static void ums_fini_thread(void)
{
	urcu_memb_unregister_thread();
}

static long ums_value = 42;
static long *ums_ptr = &ums_value;

RS_DEFINE_LOOP(rs_loop_urcu_memb_so, urcu_memb_read_lock(), urcu_memb_read_unlock())
RS_DEFINE_READER(rs_reader_urcu_memb_so, urcu_memb_read_lock(), urcu_memb_read_unlock(),
		 rcu_dereference, ums_ptr, )

static void ums_sync(void)
{
	urcu_memb_synchronize_rcu();
}

const struct rs_design rs_design_urcu_memb_so = {
	.name = "urcu-memb-so",
	.loop_symbol = "rs_loop_urcu_memb_so",
	.label = "liburcu memb, through liburcu-memb.so",
	.thread_init = ums_init_thread,
	.thread_fini = ums_fini_thread,
	.loop = rs_loop_urcu_memb_so,
	.loop8 = rs_loop_urcu_memb_so_x8,
	.synchronize = ums_sync,
	.reader = rs_reader_urcu_memb_so,
};
