/* SPDX-License-Identifier: MIT */
/*
 * grace's designs: free_rcu() (the object's rcu_head), free_rcu_mightsleep() (no head),
 * rcu_retire() (no head, inline) and call_rcu() with a free() callback, all of the default
 * flavor. No registration: grace needs
 * none.
 */
#include <grace/rcu.h>

#include "ff.h"

_Static_assert(sizeof(struct rcu_head) <= FF_HEAD_BYTES, "grace's rcu_head fits struct ff_obj");

static void g_free_cb(struct rcu_head *h)
{
	free(h);
}

#define G_FREE(o) grace_rcu_free((o), (struct rcu_head *)(void *)(o))
#define G_FREE_HL(o) free_rcu_mightsleep(o)
#define G_CALL(o) call_rcu((struct rcu_head *)(void *)(o), g_free_cb)
#define G_RETIRE(o) rcu_retire(o)

FF_DEFINE_FLOOD(g_flood_free, G_FREE)
FF_DEFINE_FLOOD(g_flood_free_hl, G_FREE_HL)
FF_DEFINE_FLOOD(g_flood_call, G_CALL)
FF_DEFINE_FLOOD(g_flood_retire, G_RETIRE)

static void g_nothing(void) {}
static void g_lock(void)
{
	rcu_read_lock();
}
static void g_unlock(void)
{
	rcu_read_unlock();
}
static void g_barrier(void)
{
	free_rcu_barrier(); /* the objects still in threads' caches, then rcu_barrier() */
}
static uint64_t g_waits(void)
{
	struct grace_cb_stats st;
	grace_rcu_callback_stats(&st);
	return st.waits;
}

#define G_DESIGN(nm, lbl, fn)                                                         \
	{                                                                             \
		.name = nm, .label = lbl, .peer = false, .thread_start = g_nothing,   \
		.thread_stop = g_nothing, .flood = fn, .read_lock = g_lock,           \
		.read_unlock = g_unlock, .barrier = g_barrier, .bound_waits = g_waits \
	}

const struct ff_design ff_grace_free =
	G_DESIGN("grace-free", "grace free_rcu (caller frees, as it allocates)", g_flood_free);
const struct ff_design ff_grace_free_hl =
	G_DESIGN("grace-free-headless", "grace free_rcu_mightsleep (no rcu_head)", g_flood_free_hl);
const struct ff_design ff_grace_call = G_DESIGN("grace-call", "grace call_rcu, free() callback",
						g_flood_call);
const struct ff_design ff_grace_retire =
	G_DESIGN("grace-retire", "grace rcu_retire (inline, no rcu_head)", g_flood_retire);
