/* SPDX-License-Identifier: MIT */
/*
 * Happens-before annotations, library side (contract: include/grace/internal/annotate.h; the
 * hooks: core/annotate.h).
 *
 * Why the edges are right. An annotation may only state an order the algorithm guarantees:
 *  - Reader release, updater acquire at the end of a grace period. A grace period ends only
 *    after every reader that could hold a removed object was seen quiescent by an acquire load
 *    of the word its section-ending store wrote (core/registry.c, flavor/srcu.c). The reader
 *    releases on that word's address (or its domain's) before the store; the updater acquires
 *    it after the scan. The acquire also collects later releases of readers whose newer
 *    sections did not hold this grace period: those releases happened earlier in real time,
 *    so the extra order exists in the execution; it only makes the tools a little less
 *    sensitive, never reports a false race.
 *  - Grace-period end to waiters. The driver releases on &gp->seq after the flavor's part and
 *    before seq_end; every path that finds seq past its cookie (grace__gp_done: synchronize,
 *    cond_synchronize, poll_state, the callback engine) acquires it.
 *  - call_*() to the callback: release on the rcu_head by the caller, acquire by the worker
 *    just before the callback, which the engine invokes only after grace__gp_done() said its
 *    grace period ended (so the worker also holds the grace period's edge).
 *  - Callbacks to *_barrier(): each queue's barrier marker runs after every callback ahead of
 *    it, on the same worker, and releases; the barrier acquires once every marker ran.
 * A free with no grace period in between has no such edge: the tools still report it.
 *
 * TSan. The library is normally built without -fsanitize=thread; it reaches the runtime of a
 * sanitized program through weak references (resolved by the dynamic linker when libtsan, or
 * a statically linked TSan runtime exporting them, is in the process; NULL otherwise).
 * Valgrind. helgrind's and drd's client requests live in annotate_hg.c and annotate_drd.c (their
 * headers define the same ANNOTATE_* names); they are no-ops when not running on Valgrind, and
 * each tool ignores the other's requests. Annotations are on only under helgrind or drd, so a
 * memcheck or callgrind run measures what a normal process runs.
 */
#include "core/annotate.h"

#include <pthread.h>

#include "core/gp.h"
#include "core/registry.h"
#include "core/wait.h"

/* The ThreadSanitizer runtime's annotation interface (sanitizer/tsan_interface.h). */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

/* annotate_hg.c / annotate_drd.c */
int grace__ann_vg_running(void);
int grace__ann_hg_tool(void);
int grace__ann_drd_tool(void);
void grace__ann_hg_before(const volatile void *addr);
void grace__ann_hg_after(const volatile void *addr);
void grace__ann_hg_forget(const volatile void *addr);
void grace__ann_hg_shared(const volatile void *addr, size_t len);
void grace__ann_drd_before(const volatile void *addr);
void grace__ann_drd_after(const volatile void *addr);
void grace__ann_drd_shared(const volatile void *addr, size_t len);

int grace__ann_on;
static int ann_tsan, ann_vg;

void grace__ann_init(void)
{
	void (*acq)(void *) = __tsan_acquire, (*rel)(void *) = __tsan_release;

	ann_tsan = acq != NULL && rel != NULL;
	/* Only the race detectors among Valgrind's tools: memcheck and callgrind runs keep the
	 * paths (and the instruction counts) of a normal process. */
	ann_vg = grace__ann_vg_running() && (grace__ann_hg_tool() || grace__ann_drd_tool());
	/* Written before the library starts any thread and before it hands out any state. The
	 * modules register their own shared words (grace__ann_ignore()) at their start-up. */
	grace__ann_on = ann_tsan || ann_vg;
}

GRACE_API void grace__ann_before(const volatile void *addr)
{
	if (ann_tsan)
		__tsan_release((void *)(uintptr_t)addr);
	if (ann_vg) {
		grace__ann_hg_before(addr);
		grace__ann_drd_before(addr);
	}
}

GRACE_API void grace__ann_after(const volatile void *addr)
{
	if (ann_tsan)
		__tsan_acquire((void *)(uintptr_t)addr);
	if (ann_vg) {
		grace__ann_hg_after(addr);
		grace__ann_drd_after(addr);
	}
}

GRACE_API void grace__ann_shared(const volatile void *addr, size_t len)
{
	if (ann_vg) {
		grace__ann_hg_shared(addr, len);
		grace__ann_drd_shared(addr, len);
	}
}

void grace__ann_consume_slow(const volatile void *addr)
{
	grace__ann_after(addr);
	/* helgrind keeps an edge per address until told: the callback usually frees the object,
	 * and a later object at the same address must not inherit this edge. */
	if (ann_vg)
		grace__ann_hg_forget(addr);
}

void grace__ann_readers_slow(struct grace__registry *reg)
{
	/* The registry lock orders this after every registration and unregistration (threads
	 * that left since carry their last section in that order); then each registered
	 * reader's release. */
	grace__lock(&reg->lock);
	for (unsigned long i = 0; i < reg->n; i++)
		grace__ann_after(&reg->slot[i]->ctr);
	grace__unlock(&reg->lock);
}
