/* SPDX-License-Identifier: MIT */
/*
 * grace torture: shared declarations of the torture program (tests/torture/).
 *
 * The torture engine (torture.c) drives a flavor through a table of function pointers: the
 * torture program checks correctness, it is not a benchmark, so an indirect call per operation
 * is fine here. Each flavor (flavors.c, broken.c) fills one struct torture_ops; an operation a
 * flavor (or the library it is linked against) lacks is NULL and the engine does not use it.
 */
#ifndef GRACE_TORTURE_H
#define GRACE_TORTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/engine.h>
#include <grace/pointer.h>

#define TORTURE_MAX_DOMAINS 4

struct elem; /* a torture element (torture.c) */

struct torture_ops {
	const char *name;
	const char *desc;
	unsigned int ndomains; /* independent domains (srcu); 1 for the others */
	bool broken;           /* the deliberately broken flavor: the run must end in FAILURE */
	bool qsbr;             /* readers register, report quiescent states, go offline to sleep */

	/* Run set-up and tear-down (may be NULL). init may fail: return -errno, run is skipped. */
	int (*init)(void);
	void (*cleanup)(void);
	/* Per reader thread (may be NULL): register / unregister. `explicit_` asks for explicit
	 * registration where the flavor also registers implicitly (the default flavor). */
	void (*reader_start)(bool explicit_);
	void (*reader_stop)(bool explicit_);
	/* Read-side section of domain d; the value read_lock returns is handed to read_unlock. */
	int (*read_lock)(unsigned int d);
	void (*read_unlock)(unsigned int d, int idx);
	/* rcu_dereference() of *slot inside a section of domain d; NULL: rcu_dereference(). */
	struct elem *(*deref)(unsigned int d, struct elem **slot);
	/* Is the calling thread inside a read-side section of this flavor (may be NULL)? */
	bool (*read_ongoing)(void);
	/* QSBR only: quiescent state between sections; offline/online around sleeps. */
	void (*quiescent)(void);
	void (*offline)(void);
	void (*online)(void);
	/* Update side. Every non-NULL one is a retire path the writers choose at random. */
	void (*sync)(unsigned int d);
	void (*exp_sync)(unsigned int d);
	void (*call)(unsigned int d, struct rcu_head *head, rcu_callback_t func);
	void (*call_hurry)(unsigned int d, struct rcu_head *head, rcu_callback_t func);
	void (*barrier)(unsigned int d);
	unsigned long (*get_state)(unsigned int d);
	unsigned long (*start_poll)(unsigned int d);
	bool (*poll_state)(unsigned int d, unsigned long cookie);
	void (*cond_sync)(unsigned int d, unsigned long cookie);
	/* free_rcu() (head: the element's rcu_head), free_rcu_mightsleep() and
	 * free_rcu_barrier() of domain d (may be NULL). The writers retire heap-allocated
	 * elements with the first two, as two more retire paths ("free", "headless"). */
	void (*free)(unsigned int d, void *ptr, struct rcu_head *head);
	void (*free_headless)(unsigned int d, void *ptr);
	void (*free_barrier)(unsigned int d);
	/* rcu_retire() of domain d (qsbr_retire, srcu_retire; may be NULL): a third path for heap
	 * elements ("retire"), inline, legal inside a section; free_barrier waits for it. */
	void (*retire)(unsigned int d, void *ptr);
	/* The free hook of domain d (grace_rcu_set_free_hook() and its twins; may be NULL): set
	 * at init, it counts the heap elements the library frees, so that one lost (never freed)
	 * fails the run. Not where some path frees outside the library's blocks (defer_rcu). */
	int (*set_free_hook)(unsigned int d, void (*fn)(void *));
	/* Fake-writer thread start/stop (may be NULL): the QSBR flavor registers some of them
	 * so that synchronize is also called from online threads. */
	void (*updater_start)(unsigned int idx);
	void (*updater_stop)(unsigned int idx);
	/* Callback-engine counters of domain d (grace periods completed...), may be NULL. */
	void (*cb_stats)(unsigned int d, struct grace_cb_stats *st);
	/* Default flavor: threads parked and handed back so far (grace_rcu_reader_stats()). */
	void (*park_stats)(unsigned long *parks, unsigned long *unparks);
	/* One line describing the mode (membarrier or fence, policy...), may be NULL. */
	const char *(*mode)(void);
};

/* An element's age: grace periods since its removal (0 while published). */
uint32_t torture_elem_age(const struct elem *p);

/* Every flavor the program knows, NULL-terminated (flavors.c). */
extern const struct torture_ops *const torture_flavors[];
/* The deliberately broken flavor (broken.c). */
extern const struct torture_ops torture_broken_ops;
/* Hazard pointers, and their broken protect (flavor_hazptr.c): by name only, not in "all". */
extern const struct torture_ops torture_hazptr_ops;
extern const struct torture_ops torture_hazptr_broken_ops;

#endif /* GRACE_TORTURE_H */
