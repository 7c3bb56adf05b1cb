/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu-pointer.h>: liburcu's older name of <urcu/pointer.h>. */
#include <urcu/pointer.h>
