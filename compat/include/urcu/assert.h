/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/assert.h>: urcu_assert() is assert() when DEBUG_RCU or CONFIG_RCU_DEBUG is
 * defined and evaluates nothing otherwise; urcu_posix_assert() is always assert().
 */
#ifndef GRACE_URCU_ASSERT_H
#define GRACE_URCU_ASSERT_H

#include <assert.h>

#define _urcu_use_expression(expr) ((void)sizeof((expr) ? 1 : 0))
#if defined(DEBUG_RCU) || defined(CONFIG_RCU_DEBUG)
#define urcu_assert(cond) assert(cond)
#else
#define urcu_assert(cond) _urcu_use_expression(cond)
#endif
#define urcu_posix_assert(cond) assert(cond)

#endif
