/* SPDX-License-Identifier: MIT */
/* The callback engine's grace-period policy (see policy.h). */
#include "engine/policy.h"

#include <errno.h>
#include <grace/arch/atomic.h>

#include "core/gp.h"
#include "core/sys.h"

void grace__policy_init(struct grace__policy *p)
{
	p->kind = grace__env_ll("GRACE_POLICY_BATCH", 0) ? GRACE_POLICY_BATCH : GRACE_POLICY_POLL;
	p->period_us = (uint32_t)grace__env_ll("GRACE_BATCH_PERIOD_US",
					       GRACE__POLICY_DEFAULT_PERIOD_US);
	p->min_gap_us = (uint32_t)grace__env_ll("GRACE_POLL_MIN_GAP_US",
						GRACE__POLICY_DEFAULT_MIN_GAP_US);
}

int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us)
{
	if (kind != GRACE_POLICY_POLL && kind != GRACE_POLICY_BATCH)
		return -EINVAL;
	if (kind == GRACE_POLICY_BATCH) {
		if (period_us == 0 || period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us, period_us);
	}
	grace_store_relaxed(&p->kind, (uint32_t)kind);
	return 0;
}

struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v)
{
	struct grace__policy_decision d = { 0, 0 };

	if (v->urgent) {
		d.gpflags = GRACE__GP_EXPEDITED;
		return d;
	}
	if (v->stopping)
		return d;
	if (grace_load_relaxed(&p->kind) == GRACE_POLICY_BATCH) {
		uint64_t deadline = v->oldest_ns +
				    (uint64_t)grace_load_relaxed(&p->period_us) * 1000;
		if (v->now < deadline)
			d.sleep_ns = (int64_t)(deadline - v->now);
		return d;
	}
	/* POLL: when grace periods run back to back (a steady stream of callbacks), leave a short
	 * gap so each serves a larger batch; a lone callback (no grace period just ended) never
	 * waits for it. */
	uint64_t gap = (uint64_t)grace_load_relaxed(&p->min_gap_us) * 1000;
	if (gap && v->last_gp_end && v->now < v->last_gp_end + gap)
		d.sleep_ns = (int64_t)(v->last_gp_end + gap - v->now);
	return d;
}
