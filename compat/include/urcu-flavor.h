/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu-flavor.h>: liburcu's older name of <urcu/flavor.h>. */
#include <urcu/flavor.h>
