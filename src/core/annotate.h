/* SPDX-License-Identifier: MIT */
/*
 * Happens-before annotations, library side (the inline side and the contract:
 * include/grace/internal/annotate.h).
 *
 * Every hook below is one call at an edge in the flavor, grace-period and callback code. Each
 * tests grace__ann_on, set once at start-up (grace__ann_init(): the TSan runtime is in the
 * process, or the process runs under Valgrind), and does nothing else when it is 0: a normal
 * process pays a load and a predictable branch at a grace-period edge, nothing on a read side.
 *
 * Edges (see annotate.c for the argument):
 *   reader:   grace__ann_release(&r->ctr) before the store that ends a section out of line
 *             (fence-fallback unlock, offline, exit inside a section); srcu: grace__ann_release
 *             (ssp) before the unlock increment. Inline read sides release by their own
 *             store-release (TSan) or GRACE__ANN_RELEASE (Valgrind, GRACE_VALGRIND).
 *   updater:  grace__ann_readers(reg) when a grace period of the default flavor or QSBR ends
 *             (acquire of every registered reader), grace__ann_acquire(ssp) for srcu; then
 *             grace__ann_release(&gp->seq) before seq_end, and grace__ann_done(&gp->seq, done)
 *             wherever the sequence is found past a cookie (acquire).
 *   callbacks: grace__ann_release(head) in call_*(), grace__ann_acquire(head) before the
 *             callback runs (after the engine saw its grace period done); barrier markers
 *             release, *_barrier() acquires.
 *   Valgrind only: grace__ann_shared(obj, size) on the library's own shared words, which it
 *             accesses with atomics the tools cannot see (they would report them as races).
 */
#ifndef GRACE_SRC_ANNOTATE_H
#define GRACE_SRC_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/internal/annotate.h>
#include <grace/pointer.h>

struct grace__registry;

/* Non-zero when annotations have an effect (TSan runtime present, or running on Valgrind).
 * Written once by grace__ann_init() before any other thread of the library exists. */
extern int grace__ann_on;
void grace__ann_init(void);
void grace__ann_readers_slow(struct grace__registry *reg);
void grace__ann_consume_slow(const volatile void *addr);

static inline void grace__ann_release(const volatile void *addr)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_before(addr);
}
static inline void grace__ann_acquire(const volatile void *addr)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_after(addr);
}
/* Returns done; when done, acquire the grace period's end published at addr. */
static inline bool grace__ann_done(const volatile void *addr, bool done)
{
	if (done && GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_after(addr);
	return done;
}
/* call_*(): everything before it happens before the callback; the rcu_head itself belongs to
 * the engine until then (Valgrind: its words are written by the push after the release). */
static inline void grace__ann_queue(struct rcu_head *head)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on))) {
		grace__ann_shared(head, sizeof(*head));
		grace__ann_before(head);
	}
}
/* Acquire the edge at addr for the last time (a callback about to run on its rcu_head). */
static inline void grace__ann_consume(const volatile void *addr)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_consume_slow(addr);
}
static inline void grace__ann_ignore(const volatile void *addr, size_t len)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_shared(addr, len);
}
/* A grace period of a registry's flavor ended: acquire every registered reader's section ends
 * (and, through the registry lock, those of threads that unregistered since). */
static inline void grace__ann_readers(struct grace__registry *reg)
{
	if (GRACE_UNLIKELY(grace_load_relaxed(&grace__ann_on)))
		grace__ann_readers_slow(reg);
}

#endif
