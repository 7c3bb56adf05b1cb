/* SPDX-License-Identifier: MIT */
/*
 * The srcu flavor's fork handlers (src/flavor/srcu.c), called by the library's own handlers
 * (src/init.c): prepare after the callback engine has paused its workers (a callback that
 * initialises or cleans up a domain takes srcu_all_lock), parent and child in the reverse order.
 */
#ifndef GRACE_SRC_FLAVOR_SRCU_H
#define GRACE_SRC_FLAVOR_SRCU_H

void grace__srcu_atfork_prepare(void);
void grace__srcu_atfork_parent(void);
void grace__srcu_atfork_child(void);

#endif
