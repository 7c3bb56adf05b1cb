/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu.h>: liburcu's main header on grace. Maps the unprefixed names
 * (rcu_read_lock(), synchronize_rcu(), call_rcu(), ...) to the flavor chosen at compile time
 * (urcu-memb by default; -DRCU_MB, -DRCU_SIGNAL), as liburcu does. Build with
 * `pkg-config --cflags --libs liburcu` against grace-urcu's pkg-config files (docs/compat.md).
 */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/urcu.h>
