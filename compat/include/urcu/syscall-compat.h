/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/syscall-compat.h>: the system-call numbers header (Linux). */
#ifndef GRACE_URCU_SYSCALL_COMPAT_H
#define GRACE_URCU_SYSCALL_COMPAT_H

#include <sys/syscall.h>
#include <unistd.h>

#endif
