/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: the base every compatibility header includes first. It pulls in the grace headers
 * the layer is built on, before any liburcu name is mapped to a flavor (urcu.h maps
 * rcu_read_lock and friends with macros; grace's own headers must be parsed before that), and
 * declares the few exported helpers of libgrace-urcu.
 *
 * Not a liburcu header: programs never include it directly.
 */
#ifndef GRACE_URCU_BASE_H
#define GRACE_URCU_BASE_H

#include <urcu/grace/guard.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* grace/pointer.h defines container_of unless the program has; liburcu does not, and programs
 * written for it often define their own: take it back out afterwards. */
#ifndef container_of
#define GRACE_URCU__DROP_CONTAINER_OF
#endif
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>
#include <grace/engine.h>
#include <grace/flavor.h>
#include <grace/rcu.h>
#include <grace/qsbr.h>
#include <grace/hash.h>
#ifdef GRACE_URCU__DROP_CONTAINER_OF
#undef container_of
#undef GRACE_URCU__DROP_CONTAINER_OF
#endif

/* This is grace-urcu, not liburcu: programs may test for it. */
#define GRACE_URCU 1

/*
 * The two ways of using liburcu's API, as liburcu has them: a program that defines _LGPL_SOURCE
 * gets the fast paths inline (read side, pointer operations, queues and stacks; with grace-urcu
 * also the hash table's lookups); one that does not calls functions of the library for all of
 * them, so that it may define, interpose or look up (dlsym) any liburcu function by its name.
 * libgrace-urcu itself is built with GRACE_URCU__BUILD_LIB: it defines those functions.
 */
#if defined(_LGPL_SOURCE)
#define GRACE_URCU__LGPL 1
#else
#define GRACE_URCU__LGPL 0
#endif

/*
 * GRACE_URCU__BIND(name): bind the translation unit's references to the function or object
 * `name`, a liburcu name that libgrace-urcu exports, to grace-urcu's symbol version
 * GRACE_URCU_0 (compat/src/grace-urcu.map). An object built with grace-urcu's headers that
 * calls liburcu's functions (urcu_memb_synchronize_rcu(), rcu_read_lock_memb(), ... without
 * _LGPL_SOURCE) refers to `urcu_memb_synchronize_rcu@GRACE_URCU_0`: libgrace-urcu defines it,
 * liburcu's own libraries (which version nothing) do not, so a build that links it with them
 * fails with
 *     undefined reference to `urcu_memb_synchronize_rcu@GRACE_URCU_0'
 * instead of running liburcu's functions on grace-urcu's structures. With "@@@" the directive
 * emits nothing for a name the translation unit neither uses nor defines (including a header
 * needs no library), and a definition of the program's own (multipath-tools defines
 * rcu_register_thread_memb()) becomes the default version `name@@GRACE_URCU_0`: dlsym() and
 * the libraries' calls find it by its plain name, as with liburcu. libgrace-urcu is built with
 * the same directives, so its static archive defines the versioned names too. Programs that
 * must not have it (a shared library without a version script that defines one of these
 * functions itself: "version node not found") define GRACE_URCU_NO_SYMBOL_VERSIONS.
 */
#if defined(__ELF__) && !defined(GRACE_URCU_NO_SYMBOL_VERSIONS)
#define GRACE_URCU__BIND2(name) __asm__(".symver " #name "," #name "@@@GRACE_URCU_0")
#else
#define GRACE_URCU__BIND2(name)
#endif
/* Two levels: `name` may be a macro such as GRACE_URCU__F(synchronize_rcu). */
#define GRACE_URCU__BIND(name) GRACE_URCU__BIND2(name)

GRACE_BEGIN_DECLS

/* Defined by libgrace-urcu only: see <urcu/grace/link.h>. */
GRACE_API extern const int grace_urcu_link_grace_urcu_not_liburcu;

/* The liburcu flavors. memb, mb, signal and bp are all served by grace's default flavor (one
 * set of readers and grace periods); qsbr by grace's QSBR flavor. */
enum grace_urcu_flavor_id {
	GRACE_URCU_MEMB = 0,
	GRACE_URCU_MB = 1,
	GRACE_URCU_SIGNAL = 2,
	GRACE_URCU_BP = 3,
	GRACE_URCU_QSBR = 4,
	GRACE_URCU_NR_FLAVORS = 5,
};

/* Misuse report of the compatibility layer, in grace's format ("grace: misuse: CALL: ..."),
 * then abort. */
GRACE_API GRACE_NORETURN void grace_urcu__misuse(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Debug-build bookkeeping of QSBR threads (compiled into the inline paths only with
 * GRACE_DEBUG): registered with urcu_qsbr_register_thread(), and the rcu_read_lock() depth.
 */
GRACE_API extern __thread unsigned int grace_urcu__qsbr_registered GRACE_TLS_IE;
GRACE_API extern __thread unsigned int grace_urcu__qsbr_nest GRACE_TLS_IE;
GRACE_API void grace_urcu__qsbr_register(void);
/* memb, mb, signal: explicit registration per liburcu flavor (liburcu keeps a registry per
 * flavor, so a thread may register with two of them); grace's default flavor is registered
 * while at least one is. call: the name the program used, for the report of a second
 * registration with the same flavor. */
GRACE_API void grace_urcu__register(int flavor, const char *call);
GRACE_API void grace_urcu__unregister(int flavor);
GRACE_API void grace_urcu__qsbr_unregister(void);
/* Debug builds: report reading from a QSBR thread that is not registered or is offline. */
GRACE_API GRACE_NORETURN void grace_urcu__qsbr_bad_reader(const char *call);

GRACE_END_DECLS

#endif /* GRACE_URCU_BASE_H */
