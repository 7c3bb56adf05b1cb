/* SPDX-License-Identifier: MIT */
/* Thin wrappers over the Linux system calls grace uses: membarrier, rseq, futex, gettid. Every
 * raw system call of the library is made here. */
#ifndef GRACE_SRC_SYS_H
#define GRACE_SRC_SYS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is usable (registered at init)? */
bool grace__sys_membarrier_init(void);
/* Full memory barrier on every running thread of this process. Only after init said yes. */
void grace__sys_membarrier(void);
/* membarrier(cmd, flags): the system call's result (>= 0; a mask for MEMBARRIER_CMD_QUERY), or
 * -errno (-ENOSYS where the kernel headers or the kernel lack it). */
int grace__sys_membarrier_cmd(int cmd, unsigned int flags);
/* rseq(area, len, flags, sig): 0, or -errno (-ENOSYS: no rseq; -EBUSY: the thread has an area
 * registered already; -EINVAL, -EPERM: see rseq(2)). */
struct grace__rseq_abi;
int grace__sys_rseq(struct grace__rseq_abi *area, uint32_t len, int flags, uint32_t sig);
/* futex: wait while *addr == val, at most timeout_ns (<0: forever). Returns 0, or -errno
 * (-EAGAIN: value changed, -ETIMEDOUT, -EINTR). Private futexes. */
int grace__futex_wait(uint32_t *addr, uint32_t val, int64_t timeout_ns);
int grace__futex_wake(uint32_t *addr, int nr);
int grace__gettid(void);
uint64_t grace__now_ns(void);        /* CLOCK_MONOTONIC */
uint64_t grace__thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time */

#endif
