/* SPDX-License-Identifier: MIT */
/*
 * Reader registry and the wait for readers, shared by the default and QSBR flavors.
 *
 * Registered threads are kept in a dense array of pointers to their reader state, under `lock`.
 * A grace period scans the array; readers that hold it are re-read until quiescent through the
 * wait primitive (core/wait.h): bounded spin, then `waiter` set in each such reader's own cache
 * line and a sleep on the registry's futex; the reader's outermost unlock (or quiescent state)
 * sees the flag and wakes the updater. The lock is taken per scan, never across a sleep, so
 * registration never waits for a grace period to end.
 *
 * Why an array: the scan's cost is what a grace period pays per registered thread, idle or
 * not. Walking a list linked through the readers' own lines chains one cache miss (or L2 hit)
 * behind the other; loading `ctr` through an array of pointers issues independent loads that
 * the CPU overlaps, and the test is branch-free (two masks, no indirect call).
 */
#ifndef GRACE_SRC_REGISTRY_H
#define GRACE_SRC_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/internal/reader.h>

#include "core/lock.h"
#include "core/wait.h"

struct grace__registry {
	struct grace__lock lock;
	struct grace__reader **slot; /* the registered readers, dense: [0, n); lock held */
	/* cpu[i]: the cpu_id word of slot[i]'s rseq area (glibc's or grace's, in that thread's
	 * TLS; the kernel rewrites it whenever the thread resumes on another CPU), or NULL
	 * without rseq. Where a holder last ran: see reg_blocked() in registry.c. */
	const uint32_t **cpu;
	unsigned long n, cap;
	struct grace__waitq wq GRACE_ALIGNED_CACHE; /* core/wait.h: futex word, spin budget */
	/* A reader whose ctr reads c holds the grace period identified by cur iff
	 * (c & active_mask) != 0 && ((c ^ cur) & cmp_mask) != 0: active (in a section, or online)
	 * and not yet seen with cur's value. */
	uint64_t active_mask, cmp_mask;
	/* The calling thread's reader state (its TLS), for the fork child. */
	struct grace__reader *(*self)(void);
	const char *flavor;
	unsigned long nthreads; /* n, published for grace__registry_alone() */
	/* Readers end with release stores of ctr (QSBR), so the scan alone proves them done:
	 * the wait may sleep light (core/wait.c). */
	bool done_is_ordered;
};

/* done_is_ordered: see the field. */
void grace__registry_init(struct grace__registry *reg, uint64_t active_mask, uint64_t cmp_mask,
			  bool done_is_ordered, struct grace__reader *(*self)(void),
			  const char *flavor);
void grace__registry_add(struct grace__registry *reg, struct grace__reader *r);
void grace__registry_del(struct grace__registry *reg, struct grace__reader *r);
/* Is no thread registered, or only the caller (self_alone: it is registered and quiescent)?
 * Lock-free; the caller provides a full fence before it (see memb.c). */
bool grace__registry_alone(struct grace__registry *reg, bool self_alone);
/* Wait until no registered reader holds `cur`. cookie names the grace period in stall reports;
 * expedited spins longer. */
void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited);
/* Reader side: the thread saw its waiter flag; clear it and wake the sleeping updater. */
void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r);
/* fork(): prepare takes the lock, parent releases it, child keeps only the calling thread's
 * reader (if registered) and re-initialises the lock. */
void grace__registry_atfork_prepare(struct grace__registry *reg);
void grace__registry_atfork_parent(struct grace__registry *reg);
void grace__registry_atfork_child(struct grace__registry *reg);

#endif
