/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu's defer_rcu() (compat/src/defer.c), exported entry points
 * (include/grace/internal/retire.h): the domain number the glue passes (0 the default
 * flavor's, 1 QSBR's) to its flavor descriptor, for the deferred caches of engine/defer.c.
 */
#include <grace/internal/retire.h>

#include "engine/defer.h"
#include "flavor/memb.h"
#include "flavor/qsbr.h"

static inline struct grace__flavor *dom_flavor(int dom)
{
	return dom ? &grace__qsbr_flavor : &grace__memb_flavor;
}

bool grace__defer_slow(int dom, void (*fn)(void *), void *p)
{
	return grace__dcache_slow(dom_flavor(dom), fn, p);
}

int grace__defer_register(int dom)
{
	return grace__dcache_register(dom_flavor(dom));
}

void grace__defer_unregister(int dom)
{
	grace__dcache_unregister(dom_flavor(dom));
}

void grace__defer_barrier(int dom, bool self)
{
	grace__dcache_barrier(dom_flavor(dom), self);
}
