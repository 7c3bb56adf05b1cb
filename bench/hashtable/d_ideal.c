/* SPDX-License-Identifier: MIT */
/*
 * ideal: no synchronization at all. Run with one thread; the driver multiplies its throughput
 * by the thread count, which is how the slides define "ideal" ("take single-CPU results without
 * locking, and multiply by the number of CPUs"). Every other design is measured against it.
 */
#include "hb.h"

struct hb_bucket {
	struct hb_node head;
};
#define D_EL_SIZE sizeof(struct hb_el)

static inline void d_table_init(struct hb_bucket *b, unsigned long n, struct hb_run *run) {}
static inline void d_table_fini(struct hb_bucket *b, unsigned long n) {}
static inline void d_thread_start(struct hb_thread *th) {}
static inline void d_thread_stop(struct hb_thread *th) {}
static inline void d_batch_end(struct hb_thread *th) {}
static inline void d_settle(struct hb_run *run) {}

HB_INLINE bool d_lookup(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key, unsigned long *sum)
{
	struct hb_el *e = hb_chain_find(&b[key & mask].head, key);

	if (!e)
		return false;
	hb_check_found(e, key);
	*sum += e->data;
	return true;
}

HB_INLINE void d_update(struct hb_bucket *b, unsigned long mask, struct hb_thread *th,
			unsigned long key)
{
	struct hb_bucket *bk = &b[key & mask];
	struct hb_el *n = hb_el_new(D_EL_SIZE, key);
	struct hb_el *old = hb_chain_find_upd(&bk->head, key);

	if (HB_UNLIKELY(!old))
		hb_fatal("ideal: key %lu missing", key);
	hb_chain_del(&old->node);
	hb_chain_add(&n->node, &bk->head);
	hb_el_free(old);
}

#define HB_SYM ideal
#define HB_NAME "ideal"
#define HB_LABEL "ideal (1 thread, no sync, x threads)"
#define HB_KIND "ideal"
#define HB_SINGLE 1
#define HB_UNAVAILABLE NULL
#include "loop.h"
