/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu-bp.h>: the bp flavor with liburcu's unprefixed names (rcu_read_lock(),
 * synchronize_rcu(), call_rcu(), ...) mapped to urcu_bp_*, as liburcu's header does.
 */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/urcu-bp.h>
