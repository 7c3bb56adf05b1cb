/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu-memb.h>: not a liburcu header (liburcu selects this flavor with <urcu.h>):
 * the memb flavor with the unprefixed names mapped to urcu_memb_*, for code that wants to name
 * its flavor in the include line.
 */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/urcu-memb.h>
