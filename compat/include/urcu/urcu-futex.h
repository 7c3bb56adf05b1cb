/* SPDX-License-Identifier: MIT */
/* grace-urcu: liburcu's older name of <urcu/futex.h>. */
#include <urcu/futex.h>
