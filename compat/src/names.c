/* SPDX-License-Identifier: MIT */
/*
 * liburcu's functions under liburcu's names, exported by libgrace-urcu on purpose (the one
 * exception to the grace_ prefix of exported names): a program built without _LGPL_SOURCE calls
 * them, as it calls liburcu's; a program may define one of its own instead (multipath-tools
 * defines rcu_register_thread_memb()), interpose one, probe for one at configure time
 * (AC_CHECK_LIB(urcu, rcu_set_pointer_sym)) or find one with dlsym(). Each flavor's set comes
 * from names-flavor.h; the flavor-independent pointer functions are here. The libraries under
 * liburcu's names (<libdir>/grace-urcu/liburcu*.so) all resolve to this one library, so a
 * process has one copy of every table whichever of them it links.
 */
#define URCU_NO_COMPAT_IDENTIFIERS 1

#include <urcu/pointer.h>
#include <urcu/urcu-memb.h>
#include <urcu/urcu-mb.h>
#include <urcu/urcu-signal.h>
#include <urcu/urcu-bp.h>
#include <urcu/urcu-qsbr.h>

#include "compat.h"

/* ---- pointer functions (<urcu/pointer.h>) ---- */

/* The caller loaded p with the relaxed atomic load of rcu_dereference(); returning it through a
 * call keeps the compiler from replacing it by a value it guessed. */
void *rcu_dereference_sym(void *p)
{
	return p;
}

void *rcu_set_pointer_sym(void **p, void *v)
{
	/* Publish: store-release, pairs with rcu_dereference() (its dependency-ordered load). */
	grace_store_release(p, v);
	return v;
}

void *rcu_xchg_pointer_sym(void **p, void *v)
{
	/* Full barrier, as rcu_xchg_pointer() inline. */
	return uatomic_xchg(p, v);
}

void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *new_)
{
	/* Full barrier, as rcu_cmpxchg_pointer() inline. */
	return uatomic_cmpxchg(p, old, new_);
}

/* ---- the flavors ---- */

#define F_PREFIX urcu_memb
#define F_SUFFIX memb
#define F_ID GRACE_URCU_MEMB
#define F_QSBR 0
#define F_BP 0
#define F_SIGNAL 0
#include "names-flavor.h"
#undef F_PREFIX
#undef F_SUFFIX
#undef F_ID

#define F_PREFIX urcu_mb
#define F_SUFFIX mb
#define F_ID GRACE_URCU_MB
#include "names-flavor.h"
#undef F_PREFIX
#undef F_SUFFIX
#undef F_ID
#undef F_SIGNAL

#define F_PREFIX urcu_signal
#define F_SUFFIX sig
#define F_ID GRACE_URCU_SIGNAL
#define F_SIGNAL 1
#include "names-flavor.h"
#undef F_PREFIX
#undef F_SUFFIX
#undef F_ID
#undef F_SIGNAL
#undef F_BP

#define F_PREFIX urcu_bp
#define F_SUFFIX bp
#define F_ID GRACE_URCU_BP
#define F_SIGNAL 0
#define F_BP 1
#include "names-flavor.h"
#undef F_PREFIX
#undef F_SUFFIX
#undef F_ID
#undef F_BP
#undef F_QSBR

#define F_PREFIX urcu_qsbr
#define F_SUFFIX qsbr
#define F_ID GRACE_URCU_QSBR
#define F_BP 0
#define F_QSBR 1
#include "names-flavor.h"

/* ---- the link check of <urcu/grace/link.h> ---- */

GRACE_API const int grace_urcu_link_grace_urcu_not_liburcu = 1;
