/* SPDX-License-Identifier: MIT */
/*
 * The torture program's calls into grace-urcu (flavors.c, "grace-urcu's defer_rcu()"): kept
 * apart so that only this file sees liburcu's names. A thread registers for defer_rcu() at its
 * first call and never unregisters: its queue is left to the callbacks when it exits.
 */
#include <stdlib.h>

#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>

void torture_urcu_defer(int qsbr, void *p);
void torture_urcu_defer_barrier(int qsbr);

static __thread int registered[2];

void torture_urcu_defer(int qsbr, void *p)
{
	if (!registered[qsbr]) {
		registered[qsbr] = 1;
		if (qsbr)
			urcu_qsbr_defer_register_thread();
		else
			urcu_memb_defer_register_thread();
	}
	if (qsbr)
		urcu_qsbr_defer_rcu(free, p);
	else
		urcu_memb_defer_rcu(free, p);
}

void torture_urcu_defer_barrier(int qsbr)
{
	if (qsbr)
		urcu_qsbr_defer_barrier();
	else
		urcu_memb_defer_barrier();
}
