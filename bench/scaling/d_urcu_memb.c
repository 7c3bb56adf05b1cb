/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu's memb flavor (Debian's liburcu-dev), read side inlined (_LGPL_SOURCE). liburcu
 * wants every reading thread registered before its first section and unregistered before it
 * exits.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "scaling.h"

static long value = 42;
static long *ptr = &value;

static void um_enter(void)
{
	long v;

	urcu_memb_register_thread();
	urcu_memb_read_lock();
	v = *rcu_dereference(ptr);
	urcu_memb_read_unlock();
	BENCH_USE(v);
}

static void um_exit(void)
{
	urcu_memb_unregister_thread();
}

static void um_sync(void)
{
	urcu_memb_synchronize_rcu();
}

const struct sc_design sc_design_urcu_memb = {
	.name = "urcu-memb",
	.label = "liburcu memb (register, one section)",
	.tls_lib = "liburcu-memb",
	.reader_enter = um_enter,
	.reader_exit = um_exit,
	.synchronize = um_sync,
};
