/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu-call-rcu.h>: liburcu's older name of <urcu/call-rcu.h>. */
#include <urcu/call-rcu.h>
