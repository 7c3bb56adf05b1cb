/* SPDX-License-Identifier: MIT */
/* grace-urcu: liburcu's older name of <urcu/ref.h>. */
#include <urcu/ref.h>
