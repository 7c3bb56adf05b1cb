/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu-mb.h>: not a liburcu header (liburcu selects this flavor with <urcu.h> and
 * -DRCU_MB): the mb flavor with the unprefixed names mapped to urcu_mb_*, for code that wants
 * to name its flavor in the include line.
 */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/urcu-mb.h>
