/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/debug.h>: urcu_assert(), checked when DEBUG_RCU or CONFIG_RCU_DEBUG is set. */
#ifndef GRACE_URCU_DEBUG_H
#define GRACE_URCU_DEBUG_H

#include <urcu/assert.h>

#endif
