/* SPDX-License-Identifier: MIT */
/* retire_cost's peer: liburcu's defer_rcu(free, p), inlined as a liburcu user builds it
 * (_LGPL_SOURCE). The thread registers for reading and for defer_rcu. */
#define _LGPL_SOURCE
#include <stdlib.h>
#include <urcu/urcu-memb.h>

#include "retire_cost.h"

static void u_free(void *p)
{
	free(p);
}

__attribute__((noinline)) void rc_urcu_defer(void *p)
{
	urcu_memb_defer_rcu(u_free, p);
}

void rc_urcu_start(void)
{
	urcu_memb_register_thread();
	if (urcu_memb_defer_register_thread() != 0)
		abort();
}

void rc_urcu_done(void)
{
	urcu_memb_defer_barrier();
	urcu_memb_defer_unregister_thread();
	urcu_memb_unregister_thread();
}
