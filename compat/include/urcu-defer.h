/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu-defer.h>: liburcu's older name of <urcu/defer.h>. */
#include <urcu/defer.h>
