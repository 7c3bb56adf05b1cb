/* SPDX-License-Identifier: MIT */
/*
 * The top floor: library start-up and the fork handlers, in one fixed order for every module.
 * The one file of src/ that names every module; its order below is the library's lock order
 * (docs/design.md, section 1). core/init.h declares grace__init() on the ground floor, so that
 * every module can make sure the library has started without reaching up here.
 *
 * fork(): prepare takes, in order, the callback engine's locks (all domains, then each
 * domain's start and queue locks), then the hash tables' locks (after the engine has paused its
 * workers, so a resize step running as a callback never waits for them: src/ds/hash.c, "Fork"),
 * then the QSBR and default-flavor registry locks; parent releases them in reverse order; child
 * resets them and keeps only the forking thread's state.
 * srcu domains install their own handlers (flavor/srcu.c).
 */
#include "core/init.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <grace/compiler.h>
#include <grace/qsbr.h>
#include <grace/rcu.h>
#include <grace/version.h>

#include "core/annotate.h"
#include "core/debug.h"
#include "core/options.h"
#include "core/sys.h"
#include "core/wait.h"
#include "ds/hash.h"
#include "engine/callback.h"
#include "engine/defer.h"
#include "engine/free.h"
#include "flavor/memb.h"
#include "flavor/update.h"
#include "flavor/qsbr.h"
#include "flavor/srcu.h"
#include "hazptr/hazptr.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/*
 * fork(): one set of handlers for the whole library, in a fixed order. The engine pauses its
 * workers between two callbacks first, with no lock of grace held: a callback may need any of
 * them (free_rcu's debug set, srcu's domain list), and a worker blocked on one would be given
 * up on and its callback counted as run unfinished in the child. Then the locks that threads
 * inside a call may need before they leave it (free_rcu's caches wait for their owners to
 * leave; srcu's list), then the engine's queues, the hash tables and the registries. Parent and
 * child release in the reverse order. The hazard pointers' caches (hazptr/) come before
 * free_rcu's: a retired object's function that frees with free_rcu() (a hazard-pointer
 * structure over RCU memory) finishes before free_rcu's caches are taken.
 */
/* Debug builds: the forking thread's span from the first prepare handler to the end of the
 * parent's or the child's (core/debug.h, grace__dbg_span_enter()), like a barrier's flush
 * (engine/free.c): a signal handler's retire on this thread there would wait for a cache or a
 * lock that the handlers hold, and is reported instead, naming the call (docs/api.md,
 * rcu_retire() and hazptr_retire(), "Signals"). A fork() made by a handler that interrupted
 * one of this thread's spans is reported the same way, naming fork. */
static inline void fork_mark(void)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_enter("fork", "the library's fork handlers");
#endif
}

static inline void fork_unmark(void)
{
#if GRACE__LIB_DEBUG
	grace__dbg_span_leave();
#endif
}

static void atfork_prepare(void)
{
	fork_mark();
	grace__cb_atfork_pause();
	grace__hazptr_atfork_prepare();
	grace__free_atfork_prepare();
	grace__defer_atfork_prepare();
	grace__srcu_atfork_prepare();
	grace__cb_atfork_prepare();
	grace__hash_atfork_prepare();
	grace__flavor_atfork_prepare(&grace__qsbr_flavor);
	grace__flavor_atfork_prepare(&grace__memb_flavor);
	/* Every lock of the library is this thread's now, until the parent's or the child's
	 * handler: a call that waits for one of them (a program's handler registered before
	 * grace's, a signal handler) is reported instead (core/lock.h, "Self-deadlock"). Relaxed,
	 * with a signal fence: only this thread reads it, its handlers included. */
	grace_store_relaxed(&grace__fork_holds, (unsigned char)1);
	/* Compiler-only fence: the flag is set after every lock above is taken, as a handler on
	 * this thread sees it; pairs with the fence before the clear in atfork_parent() and
	 * atfork_child(). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Tests stop a fork here (debug builds, GRACE_TEST_PAUSE=fork:US), every lock of the
	 * library taken, for a signal handler to interrupt it. */
	GRACE__TEST_PAUSE("fork");
}

static void atfork_parent(void)
{
	/* Compiler-only fence: the flag is cleared before any lock is released below, as a
	 * handler on this thread sees it; pairs with the fence after the set in
	 * atfork_prepare(). Only this thread reads the flag. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	grace_store_relaxed(&grace__fork_holds, (unsigned char)0);
	grace__flavor_atfork_parent(&grace__memb_flavor);
	grace__flavor_atfork_parent(&grace__qsbr_flavor);
	grace__hash_atfork_parent();
	grace__srcu_atfork_parent();
	grace__defer_atfork_parent();
	grace__free_atfork_parent();
	grace__hazptr_atfork_parent();
	grace__cb_atfork_parent(); /* and resumes the workers */
	fork_unmark();
}

static void atfork_child(void)
{
	/* Compiler-only fence: the flag is cleared before any lock is released below, as a
	 * handler on this thread sees it; pairs with the fence after the set in
	 * atfork_prepare(). Only this thread reads the flag. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	grace_store_relaxed(&grace__fork_holds, (unsigned char)0);
	grace__flavor_atfork_child(&grace__memb_flavor);
	grace__flavor_atfork_child(&grace__qsbr_flavor);
	grace__hash_atfork_child();
	grace__cb_atfork_child();
	grace__srcu_atfork_child();
	grace__defer_atfork_child();
	grace__free_atfork_child();
	grace__hazptr_atfork_child();
	fork_unmark();
}

/*
 * grace is never unloaded. Its threads (callback workers), its thread-exit destructors (the
 * pthread keys that unregister readers), its exit handler and its TLS outlive whatever loaded
 * it: a dlclose() that unmapped its code would make them run unmapped code (a thread that had
 * read under RCU crashes when it exits). libgrace.so is linked with -z nodelete; this pins the
 * object grace's code lives in at run time as well, which also covers a plugin that has
 * libgrace.a inside it: that plugin then stays mapped after its last dlclose(). The main
 * program (l_name "") needs no pin.
 */
static void pin_loaded_object(void)
{
	Dl_info info;
	struct link_map *lm = NULL;

	if (!dladdr1((void *)&grace__init, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !lm->l_name || !lm->l_name[0])
		return;
	/* RTLD_NOLOAD: only find the object already loaded; RTLD_NODELETE: never unload it.
	 * The handle is kept for good (that is the point), never closed. */
	(void)dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

static void do_init(void)
{
	grace__ann_init(); /* race-detector annotations: before any state is handed out */
#ifdef GRACE_DEBUG
	grace__test_pause_init(); /* GRACE_TEST_PAUSE, before any section tests for it */
#endif
	/*
	 * membarrier(2) or the fence fallback, chosen once, before any reader can register.
	 * GRACE_NO_MEMBARRIER=1 forces the fallback (tests use it); TSan mode always uses it,
	 * since TSan cannot see the ordering membarrier provides.
	 */
	bool mb = !GRACE__TSAN_MODE && !grace__opt(GRACE__OPT_GRACE_NO_MEMBARRIER) &&
		  grace__sys_membarrier_init();
	grace__use_membarrier = mb;
	grace__ann_ignore(&grace__use_membarrier, sizeof(grace__use_membarrier)); /* Valgrind */
	pin_loaded_object();
	grace__memb_init();
	grace__qsbr_init();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	/* Release: every choice above before a thread that skips pthread_once sees the flag
	 * (pairs with the acquire in grace__init()). */
	grace_store_release(&grace__inited, true);
}

bool grace__inited;

void grace__init_slow(void)
{
	pthread_once(&init_once, do_init);
}

__attribute__((constructor)) static void grace_constructor(void)
{
	grace__init();
}

GRACE_API unsigned int grace_version_number(void)
{
	return GRACE_VERSION_NUMBER;
}

GRACE_API const char *grace_version_string(void)
{
	return GRACE_VERSION_STRING;
}

/* Which ordering mechanism is in use: "membarrier" or "fence". */
GRACE_API const char *grace_membarrier_mode(void)
{
	grace__init();
	return grace__use_membarrier ? "membarrier" : "fence";
}

/* Any flavor's section: the default flavor's nesting, QSBR's online state, srcu's debug-build
 * count (core/debug.h). Names every flavor, so it lives here. */
int grace_debug_in_read_section(void)
{
	return grace_rcu_read_ongoing() || grace_qsbr_thread_is_online() ||
	       grace__dbg_extra_sections != 0;
}
