/* SPDX-License-Identifier: MIT */
/*
 * scalebench: the parts of the scaling family no other family measures (bench/scaling/run.sh
 * runs it, and runs the other families' binaries for the rest). One design per translation
 * unit: grace's and liburcu's headers both define rcu_read_lock, so they never meet in one.
 *
 * A design is what a thread of a thread-per-connection server does with an RCU library: become
 * a registered reader (its first read-side section; QSBR: register, report, go offline), sleep,
 * leave (unregister where the library wants it), and what an updater does: synchronize.
 */
#ifndef GRACE_BENCH_SCALING_H
#define GRACE_BENCH_SCALING_H

#include "bench.h"

struct sc_design {
	const char *name;  /* command-line name: grace, urcu-memb, grace-qsbr, urcu-qsbr, none */
	const char *label; /* one line for the report */
	/* Substring of the shared objects that hold the library's per-thread state (their TLS
	 * block is in every thread, registered or not); NULL for none. */
	const char *tls_lib;
	/* In a new thread: one read-side section, which registers the thread (explicitly where
	 * the library wants it); QSBR designs then report a quiescent state and go offline, so
	 * the sleeping thread delays no grace period. */
	void (*reader_enter)(void);
	/* Before the thread exits: unregister where the library wants it. */
	void (*reader_exit)(void);
	/* The update side: one full grace period (NULL for none). */
	void (*synchronize)(void);
};

extern const struct sc_design sc_design_none;
extern const struct sc_design sc_design_grace;
extern const struct sc_design sc_design_grace_nopark;
extern const struct sc_design sc_design_grace_qsbr;
#ifdef SC_HAVE_URCU
extern const struct sc_design sc_design_urcu_memb;
extern const struct sc_design sc_design_urcu_qsbr;
#endif

#endif /* GRACE_BENCH_SCALING_H */
