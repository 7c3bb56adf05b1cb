/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: stall warnings and their hook.
 *
 * A reader that holds a grace period for longer than the stall timeout (a default-flavor thread
 * inside one read-side section, an online QSBR thread that reports no quiescent state, an srcu
 * reader) is reported once per stall, like Linux's RCU CPU stall warnings: by default a line on
 * stderr naming the flavor, the thread id (srcu: the srcu_struct, whose readers are anonymous)
 * and the duration; with a handler set, the handler receives the report instead.
 */
#ifndef GRACE_DIAG_H
#define GRACE_DIAG_H

#include <stdint.h>
#include <grace/compiler.h>

GRACE_BEGIN_DECLS

struct grace_stall_info {
	const char *flavor;      /* "rcu", "qsbr", "srcu" */
	int tid;                 /* kernel thread id of the reader, or -1 when unknown (srcu) */
	uint64_t duration_ns;    /* how long the grace period has waited for it so far */
	unsigned long gp_cookie; /* the grace period being waited for */
	const void *domain;      /* srcu: the struct srcu_struct; NULL for rcu and qsbr */
};
typedef void (*grace_stall_handler_t)(const struct grace_stall_info *info, void *arg);

/**
 * grace_set_stall_timeout_ms() - report readers that hold a grace period longer than ms
 * milliseconds (default 10000; the environment variable GRACE_STALL_TIMEOUT_MS sets the
 * initial value; 0 disables reports). Thread-safety: any thread, any time.
 */
GRACE_API void grace_set_stall_timeout_ms(unsigned int ms);
GRACE_API unsigned int grace_get_stall_timeout_ms(void);
/**
 * grace_set_stall_handler() - take stall reports instead of stderr (NULL restores stderr).
 * The handler runs in the thread that waits for the grace period, with thread cancellation
 * disabled (restored after it: a pending cancel acts after the library's call returns); it must
 * not wait for a grace period of the same flavor itself.
 */
GRACE_API void grace_set_stall_handler(grace_stall_handler_t fn, void *arg);

/** Which ordering mechanism the library chose at start-up: "membarrier" or "fence". */
GRACE_API const char *grace_membarrier_mode(void);
/**
 * How many expedited membarrier(2) calls (PRIVATE_EXPEDITED and PRIVATE_EXPEDITED_RSEQ) the
 * library has made in this process so far: what its grace periods, srcu scans and workers
 * cost the other CPUs in interrupts (0 in "fence" mode). For benchmarks; any thread, any time.
 */
GRACE_API uint64_t grace_membarrier_calls(void);
/**
 * Which restartable-sequences area the process uses: "glibc" (glibc registered one), "grace"
 * (the library registered its own) or, when there is none, why ("disabled by GRACE_NO_RSEQ",
 * "kernel without rseq", "architecture not supported", ...). Without one, srcu readers and the
 * callback engine use atomic counters.
 */
GRACE_API const char *grace_rseq_mode(void);

GRACE_END_DECLS

#endif /* GRACE_DIAG_H */
