/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu-qsbr.h>: the qsbr flavor with liburcu's unprefixed names (rcu_read_lock(),
 * synchronize_rcu(), call_rcu(), ...) mapped to urcu_qsbr_*, as liburcu's header does.
 */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/urcu-qsbr.h>
