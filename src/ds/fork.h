/* SPDX-License-Identifier: MIT */
/*
 * Fork handlers of the data structures (src/ds), called by the library's own handlers
 * (src/init.c) in its fixed order: prepare after the callback engine has paused its workers
 * and before the flavors' registry locks; parent and child in the reverse order.
 */
#ifndef GRACE_SRC_DS_FORK_H
#define GRACE_SRC_DS_FORK_H

/* The hash tables (src/ds/hash.c): every table's resize and stripe locks. */
void grace__hash_atfork_prepare(void);
void grace__hash_atfork_parent(void);
void grace__hash_atfork_child(void);

#endif
