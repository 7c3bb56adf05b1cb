/* SPDX-License-Identifier: MIT */
/*
 * grace default flavor, used as a user would: include <grace/rcu.h>, link libgrace.so. No
 * explicit registration: the first rcu_read_lock() of each thread registers it, and thread exit
 * unregisters it.
 */
#include <grace/rcu.h>

#include "readside.h"

static void grace_init_thread(void)
{
	/* Implicit registration, outside the measured function. */
	rcu_read_lock();
	rcu_read_unlock();
}

static void grace_fini_thread(void) {}

static long grace_value = 42;
static long *grace_ptr = &grace_value;

RS_DEFINE_LOOP(rs_loop_grace, rcu_read_lock(), rcu_read_unlock())
RS_DEFINE_READER(rs_reader_grace, rcu_read_lock(), rcu_read_unlock(), rcu_dereference, grace_ptr, )

static void grace_sync(void)
{
	synchronize_rcu();
}

const struct rs_design rs_design_grace = {
	.name = "grace",
	.loop_symbol = "rs_loop_grace",
	.label = "grace default (rcu.h inline, libgrace.so)",
	.thread_init = grace_init_thread,
	.thread_fini = grace_fini_thread,
	.loop = rs_loop_grace,
	.loop8 = rs_loop_grace_x8,
	.synchronize = grace_sync,
	.reader = rs_reader_grace,
};
