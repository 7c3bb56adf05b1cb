/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers, internal interface (src/hazptr/hazptr.c): what the top floor (src/init.c)
 * calls. The public interface is include/grace/hazptr.h; the algorithm and its correctness
 * argument open hazptr.c.
 */
#ifndef GRACE_SRC_HAZPTR_H
#define GRACE_SRC_HAZPTR_H

/* fork(): every lock of the module, taken in prepare (after the engine paused its workers, as
 * engine/free.c's), released in the parent; the child keeps only the forking thread's state. */
void grace__hazptr_atfork_prepare(void);
void grace__hazptr_atfork_parent(void);
void grace__hazptr_atfork_child(void);

#endif
