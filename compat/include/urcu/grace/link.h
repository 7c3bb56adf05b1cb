/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: included by every header whose functions live in grace-urcu's libraries (the
 * flavors, call_rcu, defer_rcu, the hash table; the queues, stacks and pointer functions unless
 * they are inline). It makes the translation unit refer to a symbol that only libgrace-urcu
 * defines, so that an object compiled with grace-urcu's headers and linked against liburcu's
 * libraries instead (a build that writes -lurcu and finds Debian's liburcu.so first) fails to
 * link with
 *     undefined reference to `grace_urcu_link_grace_urcu_not_liburcu'
 * rather than run with liburcu's functions on grace-urcu's structure layouts. One reference per
 * translation unit (8 bytes of read-only data); no include guard on purpose: the macro below is.
 *
 * Not a liburcu header: programs never include it directly.
 */
#if !defined(GRACE_URCU__LINKED) && !defined(GRACE_URCU__BUILD_LIB)
#define GRACE_URCU__LINKED 1
static const int *const grace_urcu__link_check
	__attribute__((used)) = &grace_urcu_link_grace_urcu_not_liburcu;
#endif
