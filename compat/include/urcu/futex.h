/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/futex.h>: the futex(2) wrappers liburcu exports. futex_async() may be
 * called from signal handlers; futex_noasync() is the same system call here (Linux has futexes:
 * liburcu's emulation for systems without them is not needed). Both return 0 or -1 with errno.
 */
#ifndef GRACE_URCU_FUTEX_H
#define GRACE_URCU_FUTEX_H

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <urcu/config.h>
/* As liburcu's: <urcu/compiler.h> and <urcu/arch.h> come with it. */
#include <urcu/compiler.h>
#include <urcu/arch.h>

#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0
#endif
#ifndef FUTEX_WAKE
#define FUTEX_WAKE 1
#endif

static inline int futex(int32_t *uaddr, int op, int32_t val, const struct timespec *timeout,
			int32_t *uaddr2, int32_t val3)
{
	return (int)syscall(__NR_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static inline int futex_noasync(int32_t *uaddr, int op, int32_t val, const struct timespec *timeout,
				int32_t *uaddr2, int32_t val3)
{
	return futex(uaddr, op, val, timeout, uaddr2, val3);
}

static inline int futex_async(int32_t *uaddr, int op, int32_t val, const struct timespec *timeout,
			      int32_t *uaddr2, int32_t val3)
{
	return futex(uaddr, op, val, timeout, uaddr2, val3);
}

#endif
