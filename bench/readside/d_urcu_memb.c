/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu memb flavor (Debian's liburcu-dev), read side inlined from its static headers
 * (_LGPL_SOURCE). liburcu requires every reading thread to register.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "readside.h"

static void um_init_thread(void)
{
	urcu_memb_register_thread();
}

static void um_fini_thread(void)
{
	urcu_memb_unregister_thread();
}

static long um_value = 42;
static long *um_ptr = &um_value;

RS_DEFINE_LOOP(rs_loop_urcu_memb, urcu_memb_read_lock(), urcu_memb_read_unlock())
RS_DEFINE_READER(rs_reader_urcu_memb, urcu_memb_read_lock(), urcu_memb_read_unlock(),
		 rcu_dereference, um_ptr, )

static void um_sync(void)
{
	urcu_memb_synchronize_rcu();
}

const struct rs_design rs_design_urcu_memb = {
	.name = "urcu-memb",
	.loop_symbol = "rs_loop_urcu_memb",
	.label = "liburcu memb, inline (_LGPL_SOURCE)",
	.thread_init = um_init_thread,
	.thread_fini = um_fini_thread,
	.loop = rs_loop_urcu_memb,
	.loop8 = rs_loop_urcu_memb_x8,
	.synchronize = um_sync,
	.reader = rs_reader_urcu_memb,
};
