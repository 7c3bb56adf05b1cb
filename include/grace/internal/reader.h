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
 * Default flavor: the word `ctr` holds the nesting depth and the thread's section number.
 *   bits  0..15  nesting depth of rcu_read_lock() (0: not in a section)
 *   bit  16      SLOW: every outermost lock takes the out-of-line path (thread not registered
 *                yet, the fence fallback because membarrier(2) is missing, or an exiting
 *                thread); unlocks go out of line on a waiter bit instead (GRACE__W_FALLBACK,
 *                GRACE__W_EXITING). Nesting 0x8000 and above (GRACE__R_NEST_HIGH) is never a
 *                legal value: an unlock without a lock leaves it there (0 - 1 borrows into it)
 *   bits 17..63  section number: each outermost lock adds one (GRACE__R_SEQ_UNIT), so a grace
 *                period that found the thread in a section knows when that section is over
 *                (nesting 0, or another number) without any counter shared between threads
 *                (47 bits, modulo 2^47: a wrap is harmless, docs/design.md section 3)
 * QSBR: `ctr` is 0 while the thread is offline, else the grace-period counter it last observed.
 */
#define GRACE__R_NEST_MASK 0xffffull
#define GRACE__R_NEST_HIGH 0x8000ull /* nesting this deep is a misuse: the limit is 0x7fff */
#define GRACE__R_SLOW 0x10000ull
#define GRACE__R_LOW (GRACE__R_NEST_MASK | GRACE__R_SLOW)
#define GRACE__R_SEQ_SHIFT 17
#define GRACE__R_SEQ_UNIT (1ull << GRACE__R_SEQ_SHIFT)

/*
 * waiter bits. Any bit set sends the default flavor's outermost lock (after its store) and every
 * unlock (after its store) to the out-of-line path, and every QSBR quiescent state to its slow
 * path; each bit is set and cleared with atomic read-modify-writes, since updaters and the
 * reader both change the word.
 *   WAITING   set by an updater that sleeps on this reader, cleared by the reader's wake-up;
 *   FALLBACK  no membarrier: the reader fences (set by the reader at registration);
 *   PARK      default flavor: the updater stopped scanning this idle thread (core/registry.c,
 *             "Parking"); its next lock clears the bit and hands the thread back;
 *   EXITING   default flavor: a section after the thread's exit destructor, which its outermost
 *             unlock unregisters again (set by the reader, flavor/memb.c);
 *   ASK       default flavor: a stepped grace period asks the thread for a full barrier outside
 *             any section (flavor/memb.c, "Asking"); its next outermost lock or unlock runs one
 *             and clears the bit, which answers.
 */
#define GRACE__W_WAITING 1u
#define GRACE__W_FALLBACK 2u
#define GRACE__W_PARK 4u
#define GRACE__W_EXITING 8u
#define GRACE__W_ASK 16u

struct grace__reader {
	/* Hot line, owned by the reader; updaters read ctr and write waiter (atomically). */
	uint64_t ctr;
	uint32_t waiter;
	uint32_t flags;     /* owner-only: GRACE__F_* */
	uint32_t dbg_nest;  /* QSBR debug builds: depth of qsbr_read_lock() */
	int32_t tid;        /* kernel thread id, for stall and misuse reports */
	uint64_t reg_idx;   /* index in the registry's array, under the registry lock */
	uint64_t stall_seq; /* grace period already reported as stalled by this reader */
	/* Parking (default flavor, core/registry.c): the link of the registry's stack of threads
	 * that handed themselves back (written by this thread before its push, read by the
	 * updater after taking the stack), and where the registry keeps the thread (under the
	 * registry lock). */
	struct grace__reader *park_next;
	uint32_t park_state;
	uint32_t pad0_;
	uint64_t pad_[1];
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
/* Default flavor: the thread's exit destructor is set (its pthread key holds the reader; kept
 * from the first registration to thread exit, flavor/memb.c). */
#define GRACE__F_KEYED 8u

#endif /* GRACE_INTERNAL_READER_H */
