/* SPDX-License-Identifier: MIT */
/* grace-urcu: the configuration macros liburcu's <urcu/config.h> provides. */
#ifndef GRACE_URCU_CONFIG_H
#define GRACE_URCU_CONFIG_H

#define CONFIG_RCU_SMP 1
#define CONFIG_RCU_TLS 1
#define CONFIG_RCU_HAVE_FUTEX 1
#define CONFIG_RCU_HAVE_MULTIFLAVOR 1
#if defined(__x86_64__) || defined(__i386__)
#define CONFIG_RCU_HAVE_FENCE 1
#endif
/* grace-urcu: every liburcu flavor is served by grace (see docs/compat.md). */
#define GRACE_URCU_CONFIG 1

#endif
