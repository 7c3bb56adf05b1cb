/* SPDX-License-Identifier: MIT */
/*
 * Per-thread reader state shared by the default (memb) and QSBR flavors. Internal: the layout
 * is visible only because the inline read-side fast paths in rcu.h and qsbr.h touch it.
 */
#ifndef GRACE_INTERNAL_READER_H
#define GRACE_INTERNAL_READER_H

#include <stdint.h>
#include <grace/compiler.h>

/*
 * Default flavor: the word `ctr` holds the nesting depth and the grace-period snapshot.
 *   bits  0..15  nesting depth of rcu_read_lock() (0: not in a section)
 *   bit  16      SLOW: every lock/unlock must take the out-of-line path (thread not registered
 *                yet, or the fence fallback is in use because membarrier(2) is missing)
 *   bits 17..63  snapshot of the reader-visible grace-period counter taken by the outermost lock
 * QSBR: `ctr` is 0 while the thread is offline, else the grace-period counter it last observed.
 */
#define GRACE__R_NEST_MASK 0xffffull
#define GRACE__R_NEST_HIGH 0x8000ull /* nesting this deep is a misuse: the limit is 0x7fff */
#define GRACE__R_SLOW 0x10000ull
#define GRACE__R_LOW (GRACE__R_NEST_MASK | GRACE__R_SLOW)
#define GRACE__R_SNAP_SHIFT 17

/* waiter bits: set by an updater that sleeps on this reader, cleared by the reader's wake-up. */
#define GRACE__W_WAITING 1u
#define GRACE__W_FALLBACK \
	2u /* QSBR without membarrier: every quiescent state takes the slow path */

struct grace__reader {
	/* Hot line, owned by the reader; updaters read ctr and write waiter only while waiting. */
	uint64_t ctr;
	uint32_t waiter;
	uint32_t flags;     /* owner-only: GRACE__F_* */
	uint32_t dbg_nest;  /* QSBR debug builds: depth of qsbr_read_lock() */
	int32_t tid;        /* kernel thread id, for stall and misuse reports */
	uint64_t reg_idx;   /* index in the registry's array, under the registry lock */
	uint64_t stall_seq; /* grace period already reported as stalled by this reader */
	uint64_t pad_[3];
} GRACE_ALIGNED_CACHE;

/* A shared counter that readers load and updaters write once per grace period: alone on its
 * cache line so no other write invalidates the readers' copy. */
struct grace__shared_ctr {
	uint64_t v;
	uint64_t pad_[7];
} GRACE_ALIGNED_CACHE;

#define GRACE__F_REGISTERED 1u
#define GRACE__F_EXPLICIT 2u /* registered by rcu_register_thread(), not implicitly */
/* Default flavor: the thread's exit destructor has run; later sections (other pthread key
 * destructors of the exiting thread) register only for their own length (flavor/memb.c). */
#define GRACE__F_EXITING 4u

#endif /* GRACE_INTERNAL_READER_H */
