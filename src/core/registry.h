/* SPDX-License-Identifier: MIT */
/*
 * Reader registry and the wait for readers, shared by the default and QSBR flavors.
 *
 * Registered threads are linked in a list under `lock`. A grace period scans the list; readers
 * that hold it are re-read until quiescent: spin for a bounded time, then set `waiter` in each
 * such reader's own cache line and sleep on the registry's futex; the reader's outermost unlock
 * (or quiescent state) sees the flag and wakes the updater. The lock is dropped while sleeping,
 * so registration never waits for a grace period to end.
 */
#ifndef GRACE_SRC_REGISTRY_H
#define GRACE_SRC_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <grace/internal/reader.h>

struct grace__registry {
	pthread_mutex_t lock;
	struct grace__reader *head;
	uint32_t futex GRACE_ALIGNED_CACHE; /* GRACE__REG_SLEEPING while the updater sleeps */
	/* Does a reader whose ctr reads `ctr` hold the grace period identified by `cur`? */
	bool (*holds)(uint64_t ctr, uint64_t cur);
	const char *flavor;
	unsigned long nthreads;
};
#define GRACE__REG_SLEEPING 1u

void grace__registry_init(struct grace__registry *reg, bool (*holds)(uint64_t, uint64_t),
			  const char *flavor);
void grace__registry_add(struct grace__registry *reg, struct grace__reader *r);
void grace__registry_del(struct grace__registry *reg, struct grace__reader *r);
/* Is no thread registered, or only the caller (self_alone: it is registered and quiescent)?
 * Lock-free; the caller provides a full fence before it (see memb.c). */
bool grace__registry_alone(struct grace__registry *reg, bool self_alone);
/* Wait until no registered reader holds `cur`. cookie/expedited only shape spinning and reports. */
void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited);
/* Reader side: the thread saw its waiter flag; clear it and wake the sleeping updater. */
void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r);
/* fork child: keep only `self` (may be NULL), re-initialise the lock. */
void grace__registry_after_fork(struct grace__registry *reg, struct grace__reader *self);

/* Set once at start-up: membarrier(2) usable? (else the fence fallback). */
extern bool grace__use_membarrier;
/* Full barrier on all threads (membarrier), or a local fence in the fallback. */
void grace__heavy_barrier(void);

#endif
