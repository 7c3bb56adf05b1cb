/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/urcu-poll.h>: the polled grace-period API's cookie type (liburcu 0.14+).
 * start_poll_synchronize_rcu() returns one; poll_state_synchronize_rcu() says whether that grace
 * period has completed. The value is one of grace's 64-bit grace-period cookies.
 */
#ifndef GRACE_URCU_POLL_H
#define GRACE_URCU_POLL_H

struct urcu_gp_poll_state {
	unsigned long grace_period_id;
};

#endif
