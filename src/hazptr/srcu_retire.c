/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers beside srcu: the retire of an object that both srcu readers and hazard
 * pointers may hold (grace_hazptr_retire_srcu(); docs/design.md section 13). Written over the
 * two public interfaces: an srcu grace period first, then the hazard-pointer retire.
 */
#include <stdlib.h>
#include <grace/arch/atomic.h>
#include <grace/hazptr.h>
#include <grace/srcu.h>

#include "core/diag.h"

struct srcu_carrier {
	struct grace_hazptr_domain *d;
	void *p;
};

static void srcu_then_default(void *p)
{
	grace_hazptr_retire((struct grace_hazptr_domain *)0, p);
}

static void srcu_then_domain(void *arg)
{
	struct srcu_carrier k = *(struct srcu_carrier *)arg;

	free(arg);
	grace_hazptr_retire(k.d, k.p);
}

/*
 * (S) An object both srcu readers and hazard pointers may hold: a grace period of ssp first
 * (every section that read it has ended, and with it every grace_hazptr_hold_srcu() publication
 * made inside one: the unlock's release, the grace period's acquire, the callback's), then the
 * hazard-pointer retire on the callback worker, whose scan reads those publications or later
 * values (coherence, happens-before).
 */
GRACE_API void grace_hazptr_retire_srcu(struct grace_hazptr_domain *d, struct srcu_struct *ssp,
					void *ptr)
{
	struct srcu_carrier *k;

	if (!ptr)
		return;
	if (!d) {
		grace_srcu_retire_fn(ssp, srcu_then_default, ptr);
		return;
	}
	k = (struct srcu_carrier *)malloc(sizeof(*k));
	if (!k) {
		static uint32_t warned;
		if (!grace_xchg(&warned, 1u, __ATOMIC_RELAXED))
			grace__warn("grace_hazptr_retire_srcu: out of memory: the object %p is "
				    "never freed; later losses are not reported",
				    ptr);
		return;
	}
	k->d = d;
	k->p = ptr;
	grace_srcu_retire_fn(ssp, srcu_then_domain, k);
}
