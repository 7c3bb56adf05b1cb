/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: included by every header whose functions live in grace-urcu's libraries (the
 * flavors, call_rcu, defer_rcu, the hash table; the queues, stacks and pointer functions unless
 * they are inline). It makes the translation unit refer to grace_urcu_link_grace_urcu_not_liburcu,
 * a symbol that only libgrace-urcu defines, so that a debugger or `nm` tells an object built
 * with grace-urcu's headers from one built with liburcu's, and an object linked with
 * libgrace-urcu records it. The reference is weak: as with liburcu, a translation unit that
 * includes a header and calls nothing needs no library (real programs do this: a shared
 * library linked with -z defs and without -lurcu, a test program that gets liburcu through
 * another library). What refuses a mix with liburcu's libraries is what an object calls: with
 * _LGPL_SOURCE grace's own symbols, without it liburcu's names bound to grace-urcu's symbol
 * version (GRACE_URCU__BIND in <urcu/grace/base.h>).
 * One pointer per translation unit (8 bytes of read-only data); no include guard on purpose:
 * the macro below is.
 *
 * Not a liburcu header: programs never include it directly.
 */
#if !defined(GRACE_URCU__LINKED) && !defined(GRACE_URCU__BUILD_LIB)
#define GRACE_URCU__LINKED 1
#pragma weak grace_urcu_link_grace_urcu_not_liburcu
static const int *const grace_urcu__link_check
	__attribute__((used)) = &grace_urcu_link_grace_urcu_not_liburcu;
#endif
