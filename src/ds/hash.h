/* SPDX-License-Identifier: MIT */
/*
 * The hash table's internal interface (src/ds/hash.c): its fork handlers, called by the
 * library's own handlers (src/init.c) in its fixed order: prepare after the callback engine has
 * paused its workers and before the flavors' registry locks; parent and child in the reverse
 * order. Prepare takes every table's resize and stripe locks (hash.c, "Fork").
 */
#ifndef GRACE_SRC_DS_HASH_H
#define GRACE_SRC_DS_HASH_H

void grace__hash_atfork_prepare(void);
void grace__hash_atfork_parent(void);
void grace__hash_atfork_child(void);

#endif
