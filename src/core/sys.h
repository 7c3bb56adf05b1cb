/* SPDX-License-Identifier: MIT */
/* Thin wrappers over the Linux system calls grace uses: membarrier, futex, gettid. */
#ifndef GRACE_SRC_SYS_H
#define GRACE_SRC_SYS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is usable (registered at init)? */
bool grace__sys_membarrier_init(void);
/* Full memory barrier on every running thread of this process. Only after init said yes. */
void grace__sys_membarrier(void);
/* futex: wait while *addr == val, at most timeout_ns (<0: forever). Returns 0, or -errno
 * (-EAGAIN: value changed, -ETIMEDOUT, -EINTR). Private futexes. */
int grace__futex_wait(uint32_t *addr, uint32_t val, int64_t timeout_ns);
int grace__futex_wake(uint32_t *addr, int nr);
int grace__gettid(void);
uint64_t grace__now_ns(void);        /* CLOCK_MONOTONIC */
uint64_t grace__thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time */
/* Read an integer from the environment; def when unset or malformed. */
long long grace__env_ll(const char *name, long long def);

#endif
