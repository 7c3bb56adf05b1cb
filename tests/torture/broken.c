/* SPDX-License-Identifier: MIT */
/*
 * The deliberately broken flavor, built only into the torture program: proof that the checker
 * can fail. Its readers use the real default-flavor read-side section (so debug-build checks
 * such as rcu_dereference() outside a section stay quiet), but its update side does not wait:
 *  - synchronize and expedited synchronize return at once;
 *  - call invokes the callback at once, in the caller;
 *  - barrier returns at once (trivially "correct", since every callback already ran);
 *  - every cookie is reported complete at once, cond_synchronize never waits.
 * A correct checker must report FAILURE for it within seconds (tests/torture/torture.cmake,
 * torture_broken, requires it within 10 s).
 */
#include <grace/rcu.h>

#include "torture.h"

static unsigned long broken_cookie;

static int broken_lock(unsigned int d)
{
	(void)d;
	rcu_read_lock();
	return 0;
}
static void broken_unlock(unsigned int d, int idx)
{
	(void)d;
	(void)idx;
	rcu_read_unlock();
}
static bool broken_ongoing(void)
{
	return rcu_read_ongoing();
}
static void broken_sync(unsigned int d)
{
	(void)d; /* the bug: no wait for pre-existing readers */
}
static void broken_call(unsigned int d, struct rcu_head *h, rcu_callback_t f)
{
	(void)d;
	f(h); /* the bug: no grace period before the callback */
}
static void broken_barrier(unsigned int d)
{
	(void)d;
}
static unsigned long broken_get_state(unsigned int d)
{
	(void)d;
	return __atomic_add_fetch(&broken_cookie, 1, __ATOMIC_RELAXED);
}
static bool broken_poll_state(unsigned int d, unsigned long c)
{
	(void)d;
	(void)c;
	return true; /* the bug: every grace period "has completed" */
}
static void broken_cond_sync(unsigned int d, unsigned long c)
{
	(void)d;
	(void)c;
}
static const char *broken_mode(void)
{
	return "synchronize does not wait, callbacks run at once";
}

const struct torture_ops torture_broken_ops = {
	.name = "broken",
	.desc = "deliberately broken flavor: the run must report FAILURE",
	.ndomains = 1,
	.broken = true,
	.read_lock = broken_lock,
	.read_unlock = broken_unlock,
	.read_ongoing = broken_ongoing,
	.sync = broken_sync,
	.exp_sync = broken_sync,
	.call = broken_call,
	.barrier = broken_barrier,
	.get_state = broken_get_state,
	.start_poll = broken_get_state,
	.poll_state = broken_poll_state,
	.cond_sync = broken_cond_sync,
	.mode = broken_mode,
};
