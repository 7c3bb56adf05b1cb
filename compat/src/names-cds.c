/* SPDX-License-Identifier: MIT */
/*
 * The functions of liburcu-common and liburcu-cds (the wait-free and lock-free queues and
 * stacks, cds_lfht's API) under liburcu's names, exported by libgrace-urcu on purpose, as
 * compat/src/names.c does for the flavors: a configure probe (AC_CHECK_LIB(urcu-cds,
 * cds_lfht_add)), dlsym(), or another library of the process built against liburcu finds them.
 * A program calls the inline functions of the headers, with or without _LGPL_SOURCE (they
 * need no state of the library); these symbols are the same code, out of line.
 *
 * How: each name is renamed to grace_urcu__x_<name> while the headers are read, so that their
 * inline definitions take that name here; each exported name is then an alias of that
 * definition (GCC emits it out of line for the alias). No body is written twice.
 * Not here: liburcu's workqueue functions (urcu_workqueue_*: liburcu-cds's internals, declared in
 * no installed header, so no program calls them) and its futex
 * fallbacks (compat_futex_*); docs/compat.md says so. The memory back-ends' objects
 * (cds_lfht_mm_order, ...) are aliases in compat/src/lfht.c.
 */
/* The deprecated headers (wfqueue.h, rculfstack.h) warn at each use; these definitions are
 * their exports, not uses. */
#define CDS_WFQ_DEPRECATED
#define CDS_LFS_RCU_DEPRECATED

#define cds_wfcq_dequeue_blocking grace_urcu__x_cds_wfcq_dequeue_blocking
#define cds_wfcq_dequeue_lock grace_urcu__x_cds_wfcq_dequeue_lock
#define cds_wfcq_dequeue_unlock grace_urcu__x_cds_wfcq_dequeue_unlock
#define cds_wfcq_dequeue_with_state_blocking grace_urcu__x_cds_wfcq_dequeue_with_state_blocking
#define cds_wfcq_destroy grace_urcu__x_cds_wfcq_destroy
#define cds_wfcq_empty grace_urcu__x_cds_wfcq_empty
#define cds_wfcq_enqueue grace_urcu__x_cds_wfcq_enqueue
#define cds_wfcq_init grace_urcu__x_cds_wfcq_init
#define cds_wfcq_node_init grace_urcu__x_cds_wfcq_node_init
#define cds_wfcq_splice_blocking grace_urcu__x_cds_wfcq_splice_blocking
#define cds_wfq_dequeue_blocking grace_urcu__x_cds_wfq_dequeue_blocking
#define cds_wfq_destroy grace_urcu__x_cds_wfq_destroy
#define cds_wfq_enqueue grace_urcu__x_cds_wfq_enqueue
#define cds_wfq_init grace_urcu__x_cds_wfq_init
#define cds_wfq_node_init grace_urcu__x_cds_wfq_node_init
#define cds_wfs_destroy grace_urcu__x_cds_wfs_destroy
#define cds_wfs_empty grace_urcu__x_cds_wfs_empty
#define cds_wfs_first grace_urcu__x_cds_wfs_first
#define cds_wfs_init grace_urcu__x_cds_wfs_init
#define cds_wfs_next_blocking grace_urcu__x_cds_wfs_next_blocking
#define cds_wfs_next_nonblocking grace_urcu__x_cds_wfs_next_nonblocking
#define cds_wfs_node_init grace_urcu__x_cds_wfs_node_init
#define cds_wfs_pop_all_blocking grace_urcu__x_cds_wfs_pop_all_blocking
#define cds_wfs_pop_blocking grace_urcu__x_cds_wfs_pop_blocking
#define cds_wfs_pop_lock grace_urcu__x_cds_wfs_pop_lock
#define cds_wfs_pop_unlock grace_urcu__x_cds_wfs_pop_unlock
#define cds_wfs_pop_with_state_blocking grace_urcu__x_cds_wfs_pop_with_state_blocking
#define cds_wfs_push grace_urcu__x_cds_wfs_push
#define cds_lfht_add grace_urcu__x_cds_lfht_add
#define cds_lfht_add_replace grace_urcu__x_cds_lfht_add_replace
#define cds_lfht_add_unique grace_urcu__x_cds_lfht_add_unique
#define cds_lfht_count_nodes grace_urcu__x_cds_lfht_count_nodes
#define cds_lfht_del grace_urcu__x_cds_lfht_del
#define cds_lfht_destroy grace_urcu__x_cds_lfht_destroy
#define cds_lfht_first grace_urcu__x_cds_lfht_first
#define cds_lfht_is_node_deleted grace_urcu__x_cds_lfht_is_node_deleted
#define cds_lfht_lookup grace_urcu__x_cds_lfht_lookup
#define cds_lfht_next grace_urcu__x_cds_lfht_next
#define cds_lfht_next_duplicate grace_urcu__x_cds_lfht_next_duplicate
#define cds_lfht_replace grace_urcu__x_cds_lfht_replace
#define cds_lfht_resize grace_urcu__x_cds_lfht_resize
#define cds_lfq_dequeue_rcu grace_urcu__x_cds_lfq_dequeue_rcu
#define cds_lfq_destroy_rcu grace_urcu__x_cds_lfq_destroy_rcu
#define cds_lfq_enqueue_rcu grace_urcu__x_cds_lfq_enqueue_rcu
#define cds_lfq_init_rcu grace_urcu__x_cds_lfq_init_rcu
#define cds_lfq_node_init_rcu grace_urcu__x_cds_lfq_node_init_rcu
#define cds_lfs_destroy grace_urcu__x_cds_lfs_destroy
#define cds_lfs_empty grace_urcu__x_cds_lfs_empty
#define cds_lfs_init grace_urcu__x_cds_lfs_init
#define cds_lfs_node_init grace_urcu__x_cds_lfs_node_init
#define cds_lfs_pop_all_blocking grace_urcu__x_cds_lfs_pop_all_blocking
#define cds_lfs_pop_blocking grace_urcu__x_cds_lfs_pop_blocking
#define cds_lfs_pop_lock grace_urcu__x_cds_lfs_pop_lock
#define cds_lfs_pop_unlock grace_urcu__x_cds_lfs_pop_unlock
#define cds_lfs_push grace_urcu__x_cds_lfs_push
#define cds_lfs_init_rcu grace_urcu__x_cds_lfs_init_rcu
#define cds_lfs_node_init_rcu grace_urcu__x_cds_lfs_node_init_rcu
#define cds_lfs_pop_rcu grace_urcu__x_cds_lfs_pop_rcu
#define cds_lfs_push_rcu grace_urcu__x_cds_lfs_push_rcu

#include <urcu/lfstack.h>
#include <urcu/rculfhash.h>
#include <urcu/rculfqueue.h>
#include <urcu/rculfstack.h>
#include <urcu/wfcqueue.h>
#include <urcu/wfqueue.h>
#include <urcu/wfstack.h>

#undef cds_wfcq_dequeue_blocking
#undef cds_wfcq_dequeue_lock
#undef cds_wfcq_dequeue_unlock
#undef cds_wfcq_dequeue_with_state_blocking
#undef cds_wfcq_destroy
#undef cds_wfcq_empty
#undef cds_wfcq_enqueue
#undef cds_wfcq_init
#undef cds_wfcq_node_init
#undef cds_wfcq_splice_blocking
#undef cds_wfq_dequeue_blocking
#undef cds_wfq_destroy
#undef cds_wfq_enqueue
#undef cds_wfq_init
#undef cds_wfq_node_init
#undef cds_wfs_destroy
#undef cds_wfs_empty
#undef cds_wfs_first
#undef cds_wfs_init
#undef cds_wfs_next_blocking
#undef cds_wfs_next_nonblocking
#undef cds_wfs_node_init
#undef cds_wfs_pop_all_blocking
#undef cds_wfs_pop_blocking
#undef cds_wfs_pop_lock
#undef cds_wfs_pop_unlock
#undef cds_wfs_pop_with_state_blocking
#undef cds_wfs_push
#undef cds_lfht_add
#undef cds_lfht_add_replace
#undef cds_lfht_add_unique
#undef cds_lfht_count_nodes
#undef cds_lfht_del
#undef cds_lfht_destroy
#undef cds_lfht_first
#undef cds_lfht_is_node_deleted
#undef cds_lfht_lookup
#undef cds_lfht_next
#undef cds_lfht_next_duplicate
#undef cds_lfht_replace
#undef cds_lfht_resize
#undef cds_lfq_dequeue_rcu
#undef cds_lfq_destroy_rcu
#undef cds_lfq_enqueue_rcu
#undef cds_lfq_init_rcu
#undef cds_lfq_node_init_rcu
#undef cds_lfs_destroy
#undef cds_lfs_empty
#undef cds_lfs_init
#undef cds_lfs_node_init
#undef cds_lfs_pop_all_blocking
#undef cds_lfs_pop_blocking
#undef cds_lfs_pop_lock
#undef cds_lfs_pop_unlock
#undef cds_lfs_push
#undef cds_lfs_init_rcu
#undef cds_lfs_node_init_rcu
#undef cds_lfs_pop_rcu
#undef cds_lfs_push_rcu

/* An exported function, the same code as the header's inline one. */
#define GRACE_URCU__EXPORT(name)                     \
	extern __typeof__(grace_urcu__x_##name) name \
		__attribute__((alias("grace_urcu__x_" #name), visibility("default")))

/* ---- liburcu-common: wfcqueue, wfqueue, wfstack ---- */

GRACE_URCU__EXPORT(cds_wfcq_dequeue_blocking);
GRACE_URCU__EXPORT(cds_wfcq_dequeue_lock);
GRACE_URCU__EXPORT(cds_wfcq_dequeue_unlock);
GRACE_URCU__EXPORT(cds_wfcq_dequeue_with_state_blocking);
GRACE_URCU__EXPORT(cds_wfcq_destroy);
GRACE_URCU__EXPORT(cds_wfcq_empty);
GRACE_URCU__EXPORT(cds_wfcq_enqueue);
GRACE_URCU__EXPORT(cds_wfcq_init);
GRACE_URCU__EXPORT(cds_wfcq_node_init);
GRACE_URCU__EXPORT(cds_wfcq_splice_blocking);
GRACE_URCU__EXPORT(cds_wfq_dequeue_blocking);
GRACE_URCU__EXPORT(cds_wfq_destroy);
GRACE_URCU__EXPORT(cds_wfq_enqueue);
GRACE_URCU__EXPORT(cds_wfq_init);
GRACE_URCU__EXPORT(cds_wfq_node_init);
GRACE_URCU__EXPORT(cds_wfs_destroy);
GRACE_URCU__EXPORT(cds_wfs_empty);
GRACE_URCU__EXPORT(cds_wfs_first);
GRACE_URCU__EXPORT(cds_wfs_init);
GRACE_URCU__EXPORT(cds_wfs_next_blocking);
GRACE_URCU__EXPORT(cds_wfs_next_nonblocking);
GRACE_URCU__EXPORT(cds_wfs_node_init);
GRACE_URCU__EXPORT(cds_wfs_pop_all_blocking);
GRACE_URCU__EXPORT(cds_wfs_pop_blocking);
GRACE_URCU__EXPORT(cds_wfs_pop_lock);
GRACE_URCU__EXPORT(cds_wfs_pop_unlock);
GRACE_URCU__EXPORT(cds_wfs_pop_with_state_blocking);
GRACE_URCU__EXPORT(cds_wfs_push);

/* ---- liburcu-cds: lfstack, rculfqueue, rculfstack, rculfhash ---- */

GRACE_URCU__EXPORT(cds_lfht_add);
GRACE_URCU__EXPORT(cds_lfht_add_replace);
GRACE_URCU__EXPORT(cds_lfht_add_unique);
GRACE_URCU__EXPORT(cds_lfht_count_nodes);
GRACE_URCU__EXPORT(cds_lfht_del);
GRACE_URCU__EXPORT(cds_lfht_destroy);
GRACE_URCU__EXPORT(cds_lfht_first);
GRACE_URCU__EXPORT(cds_lfht_is_node_deleted);
GRACE_URCU__EXPORT(cds_lfht_lookup);
GRACE_URCU__EXPORT(cds_lfht_next);
GRACE_URCU__EXPORT(cds_lfht_next_duplicate);
GRACE_URCU__EXPORT(cds_lfht_replace);
GRACE_URCU__EXPORT(cds_lfht_resize);
GRACE_URCU__EXPORT(cds_lfq_dequeue_rcu);
GRACE_URCU__EXPORT(cds_lfq_destroy_rcu);
GRACE_URCU__EXPORT(cds_lfq_enqueue_rcu);
GRACE_URCU__EXPORT(cds_lfq_init_rcu);
GRACE_URCU__EXPORT(cds_lfq_node_init_rcu);
GRACE_URCU__EXPORT(cds_lfs_destroy);
GRACE_URCU__EXPORT(cds_lfs_empty);
GRACE_URCU__EXPORT(cds_lfs_init);
GRACE_URCU__EXPORT(cds_lfs_node_init);
GRACE_URCU__EXPORT(cds_lfs_pop_all_blocking);
GRACE_URCU__EXPORT(cds_lfs_pop_blocking);
GRACE_URCU__EXPORT(cds_lfs_pop_lock);
GRACE_URCU__EXPORT(cds_lfs_pop_unlock);
GRACE_URCU__EXPORT(cds_lfs_push);
GRACE_URCU__EXPORT(cds_lfs_init_rcu);
GRACE_URCU__EXPORT(cds_lfs_node_init_rcu);
GRACE_URCU__EXPORT(cds_lfs_pop_rcu);
GRACE_URCU__EXPORT(cds_lfs_push_rcu);

/* ---- liburcu-cds: the hash table's exported bit helpers ---- */

unsigned int cds_lfht_fls_ulong(unsigned long x);
int cds_lfht_get_count_order_ulong(unsigned long x);

/* The position of the most significant bit set, counted from 1; 0 for 0. */
__attribute__((visibility("default"))) unsigned int cds_lfht_fls_ulong(unsigned long x)
{
	return x ? (unsigned int)(sizeof(x) * 8) - (unsigned int)__builtin_clzl(x) : 0u;
}

/* The order of the smallest power of two >= x; -1 for 0. */
__attribute__((visibility("default"))) int cds_lfht_get_count_order_ulong(unsigned long x)
{
	if (!x)
		return -1;
	return (int)cds_lfht_fls_ulong(x - 1);
}
