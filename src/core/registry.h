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
 *
 * Parking (the default flavor with membarrier; registry.c, "Parking"): a thread seen idle, with
 * the same ctr, over several grace periods is parked: moved to the tail of the array, past
 * n_active, where scans do not reach. Its next rcu_read_lock() finds GRACE__W_PARK in its
 * waiter word after its lock store and pushes the thread onto `unpark`, a stack the driver
 * takes at the start of each grace period to put those threads back. So a grace period costs
 * what the threads that read cost, not what the registered threads cost.
 */
#ifndef GRACE_SRC_REGISTRY_H
#define GRACE_SRC_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/internal/reader.h>

#include "core/lock.h"
#include "core/wait.h"

/* What the scan remembers of a thread between grace periods (parking, registry.c). */
struct grace__park {
	uint64_t last;      /* ctr at the last pass */
	uint32_t streak;    /* passes in a row that found it idle with that same ctr */
	uint32_t k;         /* streak at which it is parked: adapts to how soon it comes back */
	uint64_t parked_at; /* pass at which it was parked */
	/* GRACE__REG_SEEN: ctr as the current grace period's first scan read it if the thread was
	 * in a section then, else 0 (it holds nothing). Kept here so it moves with the slot. */
	uint64_t seen;
};

/* struct grace__reader's park_state (under the registry lock). */
#define GRACE__PARK_ACTIVE 0u  /* scanned */
#define GRACE__PARK_PENDING 1u /* scanned; GRACE__W_PARK set, confirmed at the next pass */
#define GRACE__PARK_UNPARKING \
	2u                    /* scanned; it cleared GRACE__W_PARK itself and is (being)
				  * pushed onto the unpark stack: not parked again until drained */
#define GRACE__PARK_PARKED 3u /* in the parked tail of the array: not scanned */

struct grace__registry {
	struct grace__lock lock;
	/* The registered readers, dense: [0, n_active) are scanned, [n_active, n) are parked;
	 * lock held. */
	struct grace__reader **slot;
	/* cpu[i]: the cpu_id word of slot[i]'s rseq area (glibc's or grace's, in that thread's
	 * TLS; the kernel rewrites it whenever the thread resumes on another CPU), or NULL
	 * without rseq. Where a holder last ran: see reg_blocked() in registry.c. */
	const uint32_t **cpu;
	struct grace__park *pk; /* pk[i]: slot[i]'s, moved with it */
	uint64_t *cbuf;         /* the pass's loads of ctr, [0, n_active) */
	unsigned long n, cap, n_active;
	/* n_active, published (relaxed) each time it changes under the lock: a hint that lets
	 * grace__registry_quiet() answer "no" without the lock when two or more threads are
	 * scanned (a stale value only costs a grace period its barrier A). */
	unsigned long nactive_hint;
	uint64_t pass;        /* parking passes run (one per scanning grace period) */
	bool park;            /* parking enabled: the default flavor with membarrier */
	unsigned int park_k;  /* 0: adaptive; else park after this many idle passes, always */
	uint64_t misuse_mask; /* ctr bits no legal reader state has (memb: GRACE__R_NEST_HIGH) */
	/* Statistics (under the lock; grace__registry_stats()): threads parked, and handed back. */
	unsigned long nparks, nunparks;
	struct grace__waitq wq GRACE_ALIGNED_CACHE; /* core/wait.h: futex word, spin budget */
	/* A reader whose ctr reads c holds the grace period identified by cur iff
	 * (c & active_mask) != 0 && ((c ^ cur) & cmp_mask) != 0: active (in a section, or online)
	 * and not yet seen with cur's value. With GRACE__REG_SEEN (the default flavor) cur plays
	 * no part: the first scan of each grace period records each active thread's ctr (pk[].seen)
	 * and a thread holds the grace period iff (c & active_mask) != 0 &&
	 * ((c ^ seen) & cmp_mask) == 0: still in the section that scan found it in. */
	uint64_t active_mask, cmp_mask;
	bool seen_mode; /* GRACE__REG_SEEN */
	/* The calling thread's reader state (its TLS), for the fork child. */
	struct grace__reader *(*self)(void);
	const char *flavor;
	unsigned long nthreads; /* n, published for grace__registry_alone() */
	/* Readers end with release stores of ctr (QSBR), so the scan alone proves them done:
	 * the wait may sleep light (core/wait.c). */
	bool done_is_ordered;
	/* Parked threads that read again push themselves here (lock-free: from any context,
	 * signal handlers included); the driver takes the whole stack. A line of its own: it is
	 * the one word of the registry that readers write. */
	struct grace__reader *unpark GRACE_ALIGNED_CACHE;
};

/* grace__registry_init() flags. ORDERED: done_is_ordered (see the field). SEEN: a holder is a
 * thread still in the section the grace period's first scan found it in (see active_mask). */
#define GRACE__REG_ORDERED 1u
#define GRACE__REG_SEEN 2u
void grace__registry_init(struct grace__registry *reg, uint64_t active_mask, uint64_t cmp_mask,
			  unsigned int flags, struct grace__reader *(*self)(void),
			  const char *flavor);
void grace__registry_add(struct grace__registry *reg, struct grace__reader *r);
void grace__registry_del(struct grace__registry *reg, struct grace__reader *r);
/* Is no thread registered, or only the caller (self_alone: it is registered and quiescent)?
 * Lock-free; the caller provides a full fence before it (see memb.c). */
bool grace__registry_alone(struct grace__registry *reg, bool self_alone);
/* Wait until no registered reader holds `cur` (GRACE__REG_SEEN: until no thread the first scan,
 * which this call runs, found in a section is still in that section; cur is unused). The caller
 * has run barrier A. cookie names the grace period in stall reports; expedited spins longer. */
void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited);
/*
 * The same wait in pieces, for stepped grace periods (core/gp.c; GRACE__REG_SEEN only). A
 * stepper only tries the lock (it may be a signal handler that interrupted a holder); under it,
 * first_scan is the wait's first scan (true: some thread was found in a section) and holds
 * tells whether a thread it recorded is still in that section. wait_resume is the rest of the
 * wait, blocking, for a thread that adopted a stepped grace period.
 */
bool grace__registry_trylock(struct grace__registry *reg);
void grace__registry_unlock(struct grace__registry *reg);
bool grace__registry_first_scan(struct grace__registry *reg, uint64_t cur);
bool grace__registry_holds(struct grace__registry *reg, uint64_t cur);
void grace__registry_wait_resume(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
				 bool expedited);
/*
 * Asking (default flavor with membarrier, flavor/memb.c, "Asking"), lock held. ask: take the
 * unpark stack, then set GRACE__W_ASK in every scanned thread's waiter word; the caller has run
 * a full barrier since the updater's removal. answered: no scanned thread still shows the bit
 * (acquire: each answer, a reader's seq_cst clear, happens before what the caller does next).
 * lock: the blocking lock, for a driver that adopted the grace period.
 */
void grace__registry_ask(struct grace__registry *reg);
bool grace__registry_answered(struct grace__registry *reg);
/*
 * A blocking driver's sleep for the answers (flavor/memb.c, "Sleeping for the answers"), lock
 * held. ask_state: how the threads that have not answered stand, from relaxed loads (a hint):
 * GRACE__ASK_HERE, one of them last ran on the caller's CPU (rseq cpu_id), so it waits in that
 * CPU's run queue and answers once the caller gives the CPU up; GRACE__ASK_SECTIONS, every one
 * is inside a section, whose end answers; GRACE__ASK_HERE_OUT, one on the caller's CPU is
 * outside any section (it cannot answer before it runs, nor end anything). 0: all answered. ask_arm: set GRACE__W_WAITING in
 * every thread that has not answered, after the caller stored SLEEPING into wq.futex: its answer
 * then wakes the caller.
 */
#define GRACE__ASK_HERE 1u
#define GRACE__ASK_SECTIONS 2u
#define GRACE__ASK_HERE_OUT 4u
unsigned int grace__registry_ask_state(struct grace__registry *reg);
void grace__registry_ask_arm(struct grace__registry *reg);
void grace__registry_lock(struct grace__registry *reg);
/* Reader side: the thread saw its waiter flag; clear it and wake the sleeping updater. */
void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r);
/* Parking. enable: once at start-up, before any thread registers (misuse_mask with it).
 * unpark: reader side, the thread saw GRACE__W_PARK after its lock store (memb.c); lock-free.
 * quiet: driver side, after its full fence: true when no thread but, at most, self (idle) is
 * scanned, so the grace period needs neither membarrier nor scan (memb.c). */
void grace__registry_enable_parking(struct grace__registry *reg, uint64_t misuse_mask,
				    unsigned int fixed_k);
/* Counts for grace_rcu_reader_stats() (any pointer may be NULL). */
void grace__registry_stats(struct grace__registry *reg, unsigned long *registered,
			   unsigned long *scanned, unsigned long *parks, unsigned long *unparks);
void grace__registry_unpark(struct grace__registry *reg, struct grace__reader *r);
bool grace__registry_quiet(struct grace__registry *reg, const struct grace__reader *self,
			   bool self_idle);
/* fork(): prepare takes the lock, parent releases it, child keeps only the calling thread's
 * reader (if registered) and re-initialises the lock. */
void grace__registry_atfork_prepare(struct grace__registry *reg);
void grace__registry_atfork_parent(struct grace__registry *reg);
void grace__registry_atfork_child(struct grace__registry *reg);

#endif
