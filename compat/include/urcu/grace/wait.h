/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: the short wait of the wait-free queue and stack (<urcu/wfcqueue.h>,
 * <urcu/wfstack.h>, <urcu/wfqueue.h>). An enqueuer publishes its node in two steps (exchange of
 * the tail, then the link from its predecessor); a dequeuer that sees the first and not yet the
 * second waits here for the link: it spins with a CPU relax hint for a while, then sleeps a
 * millisecond at a time (the enqueuer was preempted between its two stores).
 */
#ifndef GRACE_URCU_WAIT_H
#define GRACE_URCU_WAIT_H

#include <poll.h>
#include <grace/arch/atomic.h>

#define GRACE_URCU__WAIT_SPINS 1000

/* Wait until *pp is not NULL; returns it (acquire: the node's contents are visible). */
#define GRACE_URCU__WAIT_NONNULL(pp)                                                \
	__extension__({                                                             \
		__typeof__(*(pp)) grace_urcu__w;                                    \
		unsigned grace_urcu__spins = 0;                                     \
		/* Acquire: pairs with the enqueuer's release store of the link. */ \
		while ((grace_urcu__w = grace_load_acquire(pp)) == NULL) {          \
			if (++grace_urcu__spins < GRACE_URCU__WAIT_SPINS) {         \
				grace_cpu_relax();                                  \
			} else {                                                    \
				(void)poll(NULL, 0, 1);                             \
				grace_urcu__spins = 0;                              \
			}                                                           \
		}                                                                   \
		grace_urcu__w;                                                      \
	})

#endif
