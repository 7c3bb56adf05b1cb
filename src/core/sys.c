/* SPDX-License-Identifier: MIT */
#include "core/sys.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/diag.h"
#include <grace/arch/atomic.h>
#include <grace/diag.h>

/* Expedited membarrier(2) calls made (grace_membarrier_calls()): a statistic, relaxed. */
static uint64_t membarrier_calls;

uint64_t grace_membarrier_calls(void)
{
	return grace_load_relaxed(&membarrier_calls);
}

int grace__sys_membarrier_cmd(int cmd, unsigned int flags)
{
#ifdef __NR_membarrier
	/* Relaxed: a count for benchmarks; the system call itself is the barrier it counts. One
	 * atomic add beside a system call of microseconds. */
	if (cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED || cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)
		grace_fetch_add(&membarrier_calls, 1, __ATOMIC_RELAXED);
	long r = syscall(__NR_membarrier, cmd, flags, 0);

	return r < 0 ? -errno : (int)r;
#else
	(void)cmd, (void)flags;
	return -ENOSYS;
#endif
}

int grace__sys_rseq(struct grace__rseq_abi *area, uint32_t len, int flags, uint32_t sig)
{
#ifdef __NR_rseq
	return syscall(__NR_rseq, area, len, flags, sig) == 0 ? 0 : -errno;
#else
	(void)area, (void)len, (void)flags, (void)sig;
	return -ENOSYS;
#endif
}

bool grace__sys_membarrier_init(void)
{
	int mask = grace__sys_membarrier_cmd(MEMBARRIER_CMD_QUERY, 0);

	if (mask < 0 || !(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return false;
	/* Registration is per process and idempotent; after it, PRIVATE_EXPEDITED is legal. */
	if (grace__sys_membarrier_cmd(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) != 0)
		return false;
	return true;
}

void grace__sys_membarrier(void)
{
	/*
	 * Every thread of this process that is running on a CPU executes a full memory barrier
	 * before this returns; threads that are not running pass through the scheduler, which
	 * orders their accesses the same way. It also acts as a full barrier for the caller.
	 */
	int r = grace__sys_membarrier_cmd(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);

	if (r != 0)
		grace__fatal(
			"membarrier",
			"MEMBARRIER_CMD_PRIVATE_EXPEDITED failed after registration (errno %d)",
			-r);
}

int grace__futex_wait(uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		tsp = &ts;
	}
	if (syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0) == 0)
		return 0;
	return -errno;
}

int grace__futex_wake(uint32_t *addr, int nr)
{
	long r = syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
	return r < 0 ? -errno : (int)r;
}

int grace__gettid(void)
{
	return (int)syscall(SYS_gettid);
}

uint64_t grace__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t grace__thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
