/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/urcu.h>: the flavor <urcu.h> selects, as liburcu does: -DRCU_MB gives
 * urcu-mb, -DRCU_SIGNAL urcu-signal, otherwise (RCU_MEMBARRIER, RCU_MEMB, nothing) urcu-memb.
 * All three are grace's default flavor.
 */
#ifndef GRACE_URCU_URCU_H
#define GRACE_URCU_URCU_H

#if defined(RCU_MB)
#include <urcu/urcu-mb.h>
#elif defined(RCU_SIGNAL)
#include <urcu/urcu-signal.h>
#else
#ifndef RCU_MEMBARRIER
#define RCU_MEMBARRIER
#endif
#include <urcu/urcu-memb.h>
#endif

#endif
