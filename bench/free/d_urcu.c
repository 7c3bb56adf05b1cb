/* SPDX-License-Identifier: MIT */
/*
 * The peer: liburcu's memb flavor (Debian's liburcu-dev). call_rcu() with a free() callback
 * (one call_rcu worker for the process, as liburcu comes), and defer_rcu(free, p), liburcu's
 * headless deferred free (per-thread queues, flushed by a defer thread; may block). Every
 * thread that reads, calls call_rcu() or defer_rcu() registers.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "ff.h"

_Static_assert(sizeof(struct rcu_head) <= FF_HEAD_BYTES, "liburcu's rcu_head fits struct ff_obj");

static void u_free_cb(struct rcu_head *h)
{
	free(h);
}

static void u_free(void *p)
{
	free(p);
}

#define U_CALL(o) urcu_memb_call_rcu((struct rcu_head *)(void *)(o), u_free_cb)
#define U_DEFER(o) urcu_memb_defer_rcu(u_free, (o))

FF_DEFINE_FLOOD(u_flood_call, U_CALL)
FF_DEFINE_FLOOD(u_flood_defer, U_DEFER)

static void u_start(void)
{
	urcu_memb_register_thread();
}
static void u_stop(void)
{
	urcu_memb_unregister_thread();
}
static void u_start_defer(void)
{
	urcu_memb_register_thread();
	if (urcu_memb_defer_register_thread() != 0)
		bench_fatal("rcu_defer_register_thread failed");
}
static void u_stop_defer(void)
{
	urcu_memb_defer_unregister_thread(); /* flushes this thread's queue */
	urcu_memb_unregister_thread();
}
static void u_lock(void)
{
	urcu_memb_read_lock();
}
static void u_unlock(void)
{
	urcu_memb_read_unlock();
}
static void u_barrier(void)
{
	urcu_memb_barrier();
}

const struct ff_design ff_urcu_call = {
	.name = "urcu-call",
	.label = "liburcu memb call_rcu, free() callback",
	.peer = true,
	.thread_start = u_start,
	.thread_stop = u_stop,
	.flood = u_flood_call,
	.read_lock = u_lock,
	.read_unlock = u_unlock,
	.barrier = u_barrier,
	.bound_waits = NULL,
};

const struct ff_design ff_urcu_defer = {
	.name = "urcu-defer",
	.label = "liburcu memb defer_rcu(free, p)",
	.peer = true,
	.thread_start = u_start_defer,
	.thread_stop = u_stop_defer,
	.flood = u_flood_defer,
	.read_lock = u_lock,
	.read_unlock = u_unlock,
	.barrier = u_barrier,
	.bound_waits = NULL,
};
