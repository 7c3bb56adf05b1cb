/* SPDX-License-Identifier: MIT */
/*
 * Reader registry and the wait for readers, shared by the default and QSBR flavors.
 *
 * Registered threads are linked in a list under `lock`. A grace period scans the list; readers
 * that hold it are re-read until quiescent through the wait primitive (core/wait.h): bounded
 * spin, then `waiter` set in each such reader's own cache line and a sleep on the registry's
 * futex; the reader's outermost unlock (or quiescent state) sees the flag and wakes the
 * updater. The lock is taken per scan, never across a sleep, so registration never waits for
 * a grace period to end.
 */
#ifndef GRACE_SRC_REGISTRY_H
#define GRACE_SRC_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/internal/reader.h>

#include "core/lock.h"

struct grace__registry {
	struct grace__lock lock;
	struct grace__reader *head;
	uint32_t futex GRACE_ALIGNED_CACHE; /* core/wait.h: SLEEPING while the updater sleeps */
	/* Does a reader whose ctr reads `ctr` hold the grace period identified by `cur`? */
	bool (*holds)(uint64_t ctr, uint64_t cur);
	/* The calling thread's reader state (its TLS), for the fork child. */
	struct grace__reader *(*self)(void);
	const char *flavor;
	unsigned long nthreads;
};

void grace__registry_init(struct grace__registry *reg, bool (*holds)(uint64_t, uint64_t),
			  struct grace__reader *(*self)(void), const char *flavor);
void grace__registry_add(struct grace__registry *reg, struct grace__reader *r);
void grace__registry_del(struct grace__registry *reg, struct grace__reader *r);
/* Is no thread registered, or only the caller (self_alone: it is registered and quiescent)?
 * Lock-free; the caller provides a full fence before it (see memb.c). */
bool grace__registry_alone(struct grace__registry *reg, bool self_alone);
/* Wait until no registered reader holds `cur`. since_ns: when the grace period started (stall
 * reports); cookie names it in reports; expedited spins longer. */
void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  uint64_t since_ns, bool expedited);
/* Reader side: the thread saw its waiter flag; clear it and wake the sleeping updater. */
void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r);
/* fork(): prepare takes the lock, parent releases it, child keeps only the calling thread's
 * reader (if registered) and re-initialises the lock. */
void grace__registry_atfork_prepare(struct grace__registry *reg);
void grace__registry_atfork_parent(struct grace__registry *reg);
void grace__registry_atfork_child(struct grace__registry *reg);

#endif
