/* SPDX-License-Identifier: MIT */
/*
 * Happens-before annotations for race detectors: the inline side. Internal: the names are
 * visible only because the inline fast paths in rcu.h, qsbr.h, srcu.h and pointer.h use them.
 *
 * A race detector cannot see the ordering RCU relies on: membarrier(2) on the update side,
 * address dependencies on the read side, per-CPU counters read by a scan. grace therefore
 * states the two edges of the RCU contract explicitly, as liburcu 0.15's urcu/annotate.h does:
 *   1. the end of a read-side section happens before the end of every grace period that waited
 *      for it (reader: "release" at the outermost unlock, quiescent state or offline transition;
 *      updater: "acquire" of every reader it waited for, when the grace period ends);
 *   2. the end of a grace period happens before whatever waited for it: the return of
 *      synchronize_*(), a successful poll_state_synchronize_*() or cond_synchronize_*(), and
 *      the start of each callback it made ready (plus: call_*() happens before its callback,
 *      the callbacks before the return of *_barrier()).
 * Use after a grace period is then ordered (no report); a free without one is not (reported).
 *
 * ThreadSanitizer. Nothing to do: code compiled with -fsanitize=thread gets TSan mode in these
 * headers (acquire rcu_dereference(), and the read side's release stores are seen as such), and
 * the library, even the regular release build, reaches the TSan runtime through weak symbols
 * to annotate its side (src/core/annotate.c). A process without TSan pays one predictable
 * branch at each grace-period edge in the library, nothing on the read side.
 *
 * Valgrind (helgrind, drd). These tools see every access but no atomic ordering at all, so the
 * read side in your code must say it too: compile with -DGRACE_VALGRIND=1. Then the outermost
 * unlock, the quiescent state and srcu_read_unlock() announce their edge, and the pointer
 * primitives announce publication (rcu_assign_pointer() before its store, rcu_dereference()
 * after its load) and mark the pointer word itself as intentionally shared. Each costs a call
 * into the library, which issues helgrind's and drd's client requests when the process runs
 * under Valgrind (and the TSan calls under TSan). Without GRACE_VALGRIND nothing is emitted.
 */
#ifndef GRACE_INTERNAL_ANNOTATE_H
#define GRACE_INTERNAL_ANNOTATE_H

#include <stddef.h>
#include <grace/compiler.h>

GRACE_BEGIN_DECLS

/* Library entry points (src/core/annotate.c); each returns at once outside TSan and Valgrind.
 * before(a): what the calling thread did so far happens before a later after(a) elsewhere.
 * after(a): the calling thread is ordered after every earlier before(a).
 * shared(a, n): the n bytes at a are accessed concurrently on purpose (Valgrind: never report
 * them; TSan: nothing, it sees atomics). */
GRACE_API void grace__ann_before(const volatile void *addr);
GRACE_API void grace__ann_after(const volatile void *addr);
GRACE_API void grace__ann_shared(const volatile void *addr, size_t len);

GRACE_END_DECLS

/* -DGRACE_VALGRIND or -DGRACE_VALGRIND=1 asks for the Valgrind annotations in the inline paths;
 * =0 or undefined does not. (The second test is true for an empty definition: 0 - - 1.) */
#if defined(GRACE_VALGRIND) && (GRACE_VALGRIND + 0 != 0 || (0 - GRACE_VALGRIND - 1) == 1)
#define GRACE__ANN_INLINE 1
#else
#define GRACE__ANN_INLINE 0
#endif

#if GRACE__ANN_INLINE
#define GRACE__ANN_RELEASE(addr) grace__ann_before(addr)
#define GRACE__ANN_ACQUIRE(addr) grace__ann_after(addr)
#define GRACE__ANN_SHARED(addr, len) grace__ann_shared((addr), (len))
#else
#define GRACE__ANN_RELEASE(addr) ((void)0)
#define GRACE__ANN_ACQUIRE(addr) ((void)0)
#define GRACE__ANN_SHARED(addr, len) ((void)0)
#endif

#endif /* GRACE_INTERNAL_ANNOTATE_H */
