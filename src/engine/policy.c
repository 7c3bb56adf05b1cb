/* SPDX-License-Identifier: MIT */
/* The callback engine's grace-period policy (see policy.h). */
#include "engine/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/gp.h"
#include "core/options.h"
#include "core/sys.h"

/* The option table's defaults and ranges are this module's (core/options.def). */
#define GRACE_OPTION(name, kind, def, lo, hi, unit, doc) \
	enum { opt_def_##name = (def), opt_lo_##name = (lo), opt_hi_##name = (hi) };
#include "core/options.def"
#undef GRACE_OPTION
_Static_assert(opt_def_GRACE_BATCH_PERIOD_US == GRACE__POLICY_DEFAULT_PERIOD_US &&
		       opt_hi_GRACE_BATCH_PERIOD_US == GRACE__POLICY_MAX_PERIOD_US &&
		       opt_lo_GRACE_BATCH_PERIOD_US == 1,
	       "GRACE_BATCH_PERIOD_US: options.def and policy.h disagree");
_Static_assert(opt_def_GRACE_PACE_CAP_US == 0 &&
		       opt_hi_GRACE_PACE_CAP_US == GRACE__POLICY_MAX_PERIOD_US,
	       "GRACE_PACE_CAP_US: options.def and policy.h disagree");
_Static_assert(opt_def_GRACE_POLL_MIN_GAP_US == GRACE__POLICY_DEFAULT_MIN_GAP_US &&
		       opt_hi_GRACE_POLL_MIN_GAP_US == GRACE__POLICY_MAX_PERIOD_US,
	       "GRACE_POLL_MIN_GAP_US: options.def and policy.h disagree");

static uint64_t pace_cap_ns(const struct grace__policy *p)
{
	uint32_t cap = grace_load_relaxed(&p->period_us);
	return (uint64_t)(cap ? cap : GRACE__POLICY_DEFAULT_PACE_CAP_US) * 1000;
}

void grace__policy_init(struct grace__policy *p)
{
	/* The option table's ranges are grace__policy_set()'s (core/options.def). */
	static const enum grace_gp_policy kinds[] = { GRACE_POLICY_ADAPTIVE, GRACE_POLICY_POLL,
						      GRACE_POLICY_BATCH };

	p->kind = kinds[grace__opt(GRACE__OPT_GRACE_POLICY)];
	if (grace__opt(GRACE__OPT_GRACE_POLICY_BATCH) && !grace__opt_given(GRACE__OPT_GRACE_POLICY))
		p->kind = GRACE_POLICY_BATCH;
	/* BATCH: the period; ADAPTIVE: the cap of the pacing (0: GRACE__POLICY_DEFAULT_PACE_CAP_US),
	 * in the ranges grace__policy_set() takes them. */
	if (p->kind == GRACE_POLICY_BATCH)
		p->period_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_BATCH_PERIOD_US);
	else
		p->period_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_PACE_CAP_US);
	/* Range-checked like the periods: the gap also spaces hurried grace periods and barriers
	 * in every policy, and a negative value cast to 32 bits would make it 71 minutes. */
	p->min_gap_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_POLL_MIN_GAP_US);
	p->pace_ns = GRACE__POLICY_PACE_MIN_NS;
	p->last_end = 0;
}

int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us)
{
	switch (kind) {
	case GRACE_POLICY_POLL:
		break;
	case GRACE_POLICY_BATCH:
		if (period_us == 0 || period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us, period_us);
		break;
	case GRACE_POLICY_ADAPTIVE:
		if (period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us, period_us);
		break;
	default:
		return -EINVAL;
	}
	grace_store_relaxed(&p->kind, (uint32_t)kind);
	return 0;
}

struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v)
{
	struct grace__policy_decision d = { 0, 0 };
	uint64_t start;

	if (v->urgent) {
		d.gpflags = GRACE__GP_EXPEDITED;
		return d;
	}
	if (v->stopping || v->flush)
		return d;
	if (v->hurry) {
		/* No pacing and no batch period, but the back-to-back rule of POLL: a flood of
		 * hurried callbacks would otherwise run grace periods with no gap, each for a
		 * handful of callbacks, and starve the callbacks of the CPU it spends. */
		uint64_t gap = (uint64_t)grace_load_relaxed(&p->min_gap_us) * 1000;
		start = gap && v->last_gp_end ? v->last_gp_end + gap : 0;
		goto out;
	}
	switch (grace_load_relaxed(&p->kind)) {
	case GRACE_POLICY_BATCH:
		start = v->oldest_ns + (uint64_t)grace_load_relaxed(&p->period_us) * 1000;
		break;
	case GRACE_POLICY_POLL: {
		/* When grace periods run back to back (a steady stream of callbacks), leave a short
		 * gap so each serves a larger batch; a lone callback (no grace period just ended)
		 * never waits for it. */
		uint64_t gap = (uint64_t)grace_load_relaxed(&p->min_gap_us) * 1000;
		start = gap && v->last_gp_end ? v->last_gp_end + gap : 0;
		break;
	}
	default: { /* ADAPTIVE: at once, or pace after the domain's last grace period */
		uint64_t last = grace_load_relaxed(&p->last_end);
		start = last ? last + grace_load_relaxed(&p->pace_ns) : 0;
		break;
	}
	}
out:
	if (v->now < start)
		d.sleep_ns = (int64_t)(start - v->now);
	return d;
}

void grace__policy_gp_done(struct grace__policy *p, uint64_t now, uint64_t cost_ns)
{
	grace_store_relaxed(&p->last_end, now);
	if (cost_ns) {
		uint64_t pace = cost_ns * GRACE__POLICY_COST_FACTOR, cap = pace_cap_ns(p);
		if (pace < GRACE__POLICY_PACE_MIN_NS)
			pace = GRACE__POLICY_PACE_MIN_NS;
		if (pace > cap)
			pace = cap;
		grace_store_relaxed(&p->pace_ns, pace);
	}
}

int64_t grace__policy_linger_ns(const struct grace__policy *p, uint64_t now, uint64_t arrival_ns)
{
	if (grace_load_relaxed(&p->kind) != GRACE_POLICY_ADAPTIVE)
		return 0;
	uint64_t pace = grace_load_relaxed(&p->pace_ns), last = grace_load_relaxed(&p->last_end);
	/* Busy: a grace period ended within the last two paces and callbacks arrive at least
	 * once per two paces. Two, not one: a napping worker finds callbacks at most once per
	 * nap, so the gaps it measures are never shorter than pace (plus the grace period),
	 * and a steady 1/pace callbacks per second would read as "not busy" and pay, per
	 * callback, a heavy barrier, a wake-up call and two wake-ups instead of one timer
	 * (measured on the 2-CPU VM at 1000 callbacks/s: 21-29 us of engine CPU per callback
	 * with one pace, 14-15 us with two). A domain that goes quiet costs at most two naps
	 * before the worker sleeps until woken. */
	if (last && now - last < 2 * pace && arrival_ns && arrival_ns <= 2 * pace)
		return (int64_t)pace;
	return 0;
}
