/* SPDX-License-Identifier: MIT */
/*
 * The update side of every flavor, written once over struct grace__flavor (core/flavor.h), and
 * the generic operations of struct grace_flavor_ops (flavor/update.h).
 *
 * Ordering. Every wait goes through the grace-period sequence (core/gp.c, arguments (1) and
 * (2)): a cookie is taken after a full fence (grace__gp_snap), and a completed cookie is seen
 * with an acquire load (grace__gp_done). poll_state and cond_synchronize add a full fence on
 * success, as Linux does, so that the caller's later accesses (the free) are ordered after the
 * grace period even where the caller goes on to plain stores.
 */
#include "flavor/update.h"

#include <string.h>

#include "core/diag.h"
#include "core/init.h"
#include "core/registry.h"
#include "engine/free.h"

void grace__flavor_synchronize(struct grace__flavor *f, unsigned int gpflags)
{
	const char *call =
		f->calls[gpflags & GRACE__GP_EXPEDITED ? GRACE__CALL_SYNC_EXP : GRACE__CALL_SYNC];
	grace__init();
	grace__engine_check_not_driving(f, call);
	int tok = f->hooks->enter_wait(f, call);
	grace__gp_synchronize(f->gp, gpflags);
	f->hooks->leave_wait(f, tok);
}

unsigned long grace__flavor_get_state(struct grace__flavor *f)
{
	grace__init();
	return (unsigned long)grace__gp_snap(f->gp);
}

unsigned long grace__flavor_start_poll(struct grace__flavor *f)
{
	return grace__engine_start_poll(f, f->calls[GRACE__CALL_START_POLL]);
}

/*
 * A cookie can name no grace period later than the second after the one under way: it was
 * taken by grace__gp_snap() from a seq value no later than the current one, plus at most 7
 * (two steps of 4, less the state bit), and seq never moves backwards (a fork child rolls an
 * unfinished grace period back by the state bit only, core/gp.c). A cookie further ahead was
 * not returned by this flavor or domain (another flavor's, another domain's, a srcu_struct's
 * from before its cleanup, garbage): no wait for it would ever end (cond_synchronize would
 * drive grace periods for ever) and polling it would never succeed. Off the fast paths only.
 */
static void check_cookie(struct grace__flavor *f, unsigned long cookie, enum grace__call call,
			 bool fatal)
{
	int64_t ahead = (int64_t)((uint64_t)cookie - grace_load_relaxed(&f->gp->seq));

	if (GRACE_LIKELY(ahead <= 2 * (int64_t)(GRACE__SEQ_STATE_MASK + 1)))
		return;
	if (fatal)
		grace__misuse_fatal(f->calls[call],
				    "cookie %lu was not returned by this %s flavor or domain: "
				    "it is %lld grace periods ahead of the current one "
				    "(would wait for ever)",
				    cookie, f->name, (long long)(ahead >> 2));
	grace__misuse(f->calls[call],
		      "cookie %lu was not returned by this %s flavor or domain: it is %lld grace "
		      "periods ahead of the current one (it would never complete)",
		      cookie, f->name, (long long)(ahead >> 2));
}

bool grace__flavor_poll_state(struct grace__flavor *f, unsigned long cookie)
{
	if (!grace__gp_done(f->gp, cookie)) {
		check_cookie(f, cookie, GRACE__CALL_POLL_STATE, false);
		/* Off the fast path: a requested grace period must have a worker (fork child). */
		struct grace__cbdom *d = grace__flavor_cb_peek(f);
		if (d)
			grace__cbdom_poll_missed(d, cookie);
		return false;
	}
	/* Full fence on success (see the top of this file). */
	grace_smp_mb();
	return true;
}

void grace__flavor_cond_synchronize(struct grace__flavor *f, unsigned long cookie)
{
	if (grace__gp_done(f->gp, cookie)) {
		grace_smp_mb(); /* as poll_state: later accesses after the grace period */
		return;
	}
	check_cookie(f, cookie, GRACE__CALL_COND_SYNC, true);
	grace__engine_check_not_driving(f, f->calls[GRACE__CALL_COND_SYNC]);
	int tok = f->hooks->enter_wait(f, f->calls[GRACE__CALL_COND_SYNC]);
	grace__gp_wait(f->gp, cookie, 0);
	f->hooks->leave_wait(f, tok);
}

/* rcu_barrier(): the callbacks, and the function entries and objects that threads' caches
 * hold (rcu_retire_fn() of a deleter is an evaluation scheduled as much as call_rcu()): the
 * caches' pass first (engine/free.c), once the context is known legal. */
void grace__flavor_barrier(struct grace__flavor *f)
{
	const char *call = f->calls[GRACE__CALL_BARRIER];

	grace__engine_check_not_driving(f, call);
	int tok = f->hooks->enter_wait(f, call);
	grace__free_flush(f, call);
	f->hooks->leave_wait(f, tok);
	grace__engine_barrier(f, call);
}

int grace__flavor_set_policy(struct grace__flavor *f, enum grace_gp_policy policy,
			     unsigned int period_us)
{
	return grace__cbdom_set_policy(grace__engine_of(f, f->calls[GRACE__CALL_SET_POLICY]),
				       policy, period_us);
}

int grace__flavor_set_limits(struct grace__flavor *f, size_t soft, size_t hard)
{
	return grace__cbdom_set_limits(grace__engine_of(f, f->calls[GRACE__CALL_SET_LIMITS]), soft,
				       hard);
}

void grace__flavor_stats(struct grace__flavor *f, struct grace_cb_stats *st)
{
	struct grace__cbdom *d = grace__flavor_cb_peek(f);

	if (d) {
		grace__cbdom_stats(d, st);
		return;
	}
	memset(st, 0, sizeof(*st));
	st->grace_periods = grace_load_relaxed(&f->gp->seq) >> 2;
}

/* ---- fork ---- */

void grace__flavor_atfork_prepare(struct grace__flavor *f)
{
	if (f->reg)
		grace__registry_atfork_prepare(f->reg);
}

void grace__flavor_atfork_parent(struct grace__flavor *f)
{
	if (f->reg)
		grace__registry_atfork_parent(f->reg);
}

void grace__flavor_atfork_child(struct grace__flavor *f)
{
	if (f->reg)
		grace__registry_atfork_child(f->reg);
	grace__gp_reset_after_fork(f->gp);
	grace__lock_reinit(&f->cb_lock);
	if (f->hooks->atfork_child)
		f->hooks->atfork_child(f);
}

/* ---- struct grace_flavor_ops ---- */

#define FLV(ctx) ((struct grace__flavor *)(ctx))

void grace__op_call(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call(FLV(ctx), head, func);
}
void grace__op_call_hurry(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	grace__flavor_call_hurry(FLV(ctx), head, func);
}
void grace__op_synchronize(void *ctx)
{
	grace__flavor_synchronize(FLV(ctx), 0);
}
void grace__op_barrier(void *ctx)
{
	grace__flavor_barrier(FLV(ctx));
}
void grace__op_synchronize_expedited(void *ctx)
{
	grace__flavor_synchronize(FLV(ctx), GRACE__GP_EXPEDITED);
}
unsigned long grace__op_get_state(void *ctx)
{
	return grace__flavor_get_state(FLV(ctx));
}
unsigned long grace__op_start_poll(void *ctx)
{
	return grace__flavor_start_poll(FLV(ctx));
}
bool grace__op_poll_state(void *ctx, unsigned long cookie)
{
	return grace__flavor_poll_state(FLV(ctx), cookie);
}
void grace__op_cond_synchronize(void *ctx, unsigned long cookie)
{
	grace__flavor_cond_synchronize(FLV(ctx), cookie);
}
int grace__op_read_lock(void *ctx)
{
	return FLV(ctx)->hooks->read_lock(FLV(ctx));
}
void grace__op_read_unlock(void *ctx, int token)
{
	FLV(ctx)->hooks->read_unlock(FLV(ctx), token);
}
bool grace__op_read_ongoing(void *ctx)
{
	return FLV(ctx)->hooks->is_reader(FLV(ctx));
}
int grace__op_set_policy(void *ctx, enum grace_gp_policy policy, unsigned int period_us)
{
	return grace__flavor_set_policy(FLV(ctx), policy, period_us);
}
int grace__op_set_callback_limits(void *ctx, size_t soft, size_t hard)
{
	return grace__flavor_set_limits(FLV(ctx), soft, hard);
}
void grace__op_callback_stats(void *ctx, struct grace_cb_stats *stats)
{
	grace__flavor_stats(FLV(ctx), stats);
}
void grace__op_free(void *ctx, void *ptr, struct rcu_head *head)
{
	grace__free(FLV(ctx), ptr, head);
}
void grace__op_free_ptr(void *ctx, void *ptr)
{
	grace__free_ptr(FLV(ctx), ptr);
}
void grace__op_free_barrier(void *ctx)
{
	grace__free_barrier(FLV(ctx));
}
