/* SPDX-License-Identifier: MIT */
/*
 * Read-side benchmark: one design per translation unit. This header includes no RCU header, so
 * grace's and liburcu's (which both define rcu_read_lock) never meet in one translation unit.
 *
 * Each design exports a struct rs_design. The driver (main.c) calls its functions through
 * pointers, but only around measured loops: the loop itself (rs_loop_<design>) calls the
 * design's lock and unlock directly, once per iteration, so nothing indirect is measured.
 */
#ifndef GRACE_BENCH_READSIDE_H
#define GRACE_BENCH_READSIDE_H

#include <stdint.h>

#include "bench.h"

struct rs_design {
	const char *name;          /* command-line name, e.g. "grace" */
	const char *loop_symbol;   /* the measured function, for valgrind --toggle-collect */
	const char *label;         /* one line for the report */
	void (*thread_init)(void); /* register the calling thread (and warm its state) */
	void (*thread_fini)(void);
	uint64_t (*loop)(uint64_t n); /* n lock+unlock pairs with an empty body; returns n */
	uint64_t (*loop8)(
		uint64_t n); /* the same, eight pairs per iteration; returns the pairs run */
	/* Update side, NULL for designs without one (empty loop, rwlock). */
	void (*synchronize)(void);
	/* A busy reader: back-to-back short sections (one rcu_dereference and a load each) until
	 * *stop becomes non-zero; returns the number of sections. */
	uint64_t (*reader)(const int *stop);
};

/*
 * The measured loops of one design. sym: n iterations of LOCK; <empty body>; UNLOCK. The empty
 * body is a compiler barrier, so the compiler can neither merge nor drop iterations; it emits
 * no instruction. The empty-loop design (LOCK and UNLOCK empty) measures the loop itself.
 * sym##_x8: the same pairs, eight per iteration (n rounded down to a multiple of 8): straight-line
 * code, closer to read-side sections inlined in real code, and free of the next caveat.
 * Layout: a loop this small runs at a speed that depends on where it sits relative to 32- and
 * 64-byte boundaries (a rebuild moved liburcu's loop from 0.71 to 1.10 ns per pair; a loop that
 * fits in one 64-byte block runs faster than one that does not), so every measured function
 * starts on a 64-byte boundary and CMakeLists.txt aligns loop heads to 64 bytes: each design
 * gets the same, repeatable layout.
 */
#define RS_PAIR(LOCK, UNLOCK)    \
	do {                     \
		LOCK;            \
		BENCH_CLOBBER(); \
		UNLOCK;          \
	} while (0)
#define RS_DEFINE_LOOP(sym, LOCK, UNLOCK)                                         \
	uint64_t sym(uint64_t n);                                                 \
	uint64_t sym##_x8(uint64_t n);                                            \
	BENCH_NOINLINE __attribute__((aligned(64))) uint64_t sym(uint64_t n)      \
	{                                                                         \
		for (uint64_t i = 0; i < n; i++)                                  \
			RS_PAIR(LOCK, UNLOCK);                                    \
		return n;                                                         \
	}                                                                         \
	BENCH_NOINLINE __attribute__((aligned(64))) uint64_t sym##_x8(uint64_t n) \
	{                                                                         \
		for (uint64_t i = 0; i < n / 8; i++) {                            \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
			RS_PAIR(LOCK, UNLOCK);                                    \
		}                                                                 \
		return n / 8 * 8;                                                 \
	}

/* The busy reader of one design: back-to-back sections that dereference *pp and load a word.
 * QS is a statement run between sections (a QSBR quiescent state), or nothing. */
#define RS_DEFINE_READER(sym, LOCK, UNLOCK, DEREF, pp, QS) \
	BENCH_DEFINE_READER(sym, LOCK, UNLOCK, DEREF, pp, QS)

extern const struct rs_design rs_design_empty;
extern const struct rs_design rs_design_grace;
extern const struct rs_design rs_design_grace_qsbr;
extern const struct rs_design rs_design_grace_qsbr_qs;
extern const struct rs_design rs_design_rwlock;
#ifdef RS_HAVE_URCU
extern const struct rs_design rs_design_urcu_memb;
extern const struct rs_design rs_design_urcu_memb_so;
extern const struct rs_design rs_design_urcu_qsbr;
extern const struct rs_design rs_design_urcu_qsbr_qs;
#endif
#ifdef RS_HAVE_URCU_SIGNAL
extern const struct rs_design rs_design_urcu_signal;
#endif

#endif /* GRACE_BENCH_READSIDE_H */
