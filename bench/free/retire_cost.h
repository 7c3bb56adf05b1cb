/* SPDX-License-Identifier: MIT */
/* retire_cost: the peer's measured function, in a file of its own (liburcu's names clash with
 * grace's in one translation unit). */
#ifndef RETIRE_COST_H
#define RETIRE_COST_H
void rc_urcu_defer(void *p);
void rc_urcu_start(void);
void rc_urcu_done(void);
#endif
