/* SPDX-License-Identifier: MIT */
/*
 * The deferred caches of grace-urcu's defer_rcu() (engine/defer.c), internal interface. The
 * exported entry points (grace__defer_*, include/grace/internal/retire.h) are in
 * flavor/defer.c, which maps a domain number to its flavor: the engine knows flavors only by
 * their descriptors. f is the default flavor or QSBR (free_slot 0 or 1).
 */
#ifndef GRACE_ENGINE_DEFER_H
#define GRACE_ENGINE_DEFER_H

#include <stdbool.h>

struct grace__flavor;

/* defer_rcu() past its inline fast path: false, no memory (nothing queued). */
bool grace__dcache_slow(struct grace__flavor *f, void (*fn)(void *), void *p);
/* The calling thread's deferred cache of f: 0, or -ENOMEM. */
int grace__dcache_register(struct grace__flavor *f);
/* Run the calling thread's deferrals (on the caller) and give its cache up. */
void grace__dcache_unregister(struct grace__flavor *f);
/* Every deferral of f (self: of the calling thread) made before the call has run. */
void grace__dcache_barrier(struct grace__flavor *f, bool self);
/* rcu_barrier() on f (engine/callback.c) first waits for the passes on their lazy domain (point
 * D8 of engine/defer.c) queued before the call; any flavor (none for those without caches). */
void grace__defer_engine_barrier(struct grace__flavor *f, const char *call);
/* fork(): called right after (prepare) and before (parent, child) free_rcu's handlers. */
void grace__defer_atfork_prepare(void);
void grace__defer_atfork_parent(void);
void grace__defer_atfork_child(void);
/* The calling thread exits (engine/free.c's thread-exit hook). */
void grace__defer_thread_exit(void);

#endif
