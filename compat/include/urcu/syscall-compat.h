/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/syscall-compat.h>: the system-call numbers header, <syscall.h> on Linux as
 * liburcu's has it (SYS_gettid, ...), and <unistd.h> for syscall(). liburcu's <urcu/arch.h>
 * includes it, so nearly every liburcu header brings both; programs rely on that. */
#ifndef GRACE_URCU_SYSCALL_COMPAT_H
#define GRACE_URCU_SYSCALL_COMPAT_H

#if defined(__linux__)
#include <syscall.h>
#else
#include <sys/syscall.h>
#endif
#include <unistd.h>

#endif
