/* SPDX-License-Identifier: MIT */
/*
 * One design = one reclaimer, instantiated over every structure. A reclaimer file (rec_*.c)
 * defines the interface below, then includes this file last; this file includes the structures
 * (ds_*.h), builds their measured loops around the reclaimer's inline calls (no indirect call
 * per operation), and registers the design with the driver from a constructor. Adding a
 * reclaimer is adding one rec_*.c file: CMake picks up every rec_*.c (bench/smr/CMakeLists.txt).
 *
 * The interface (every item required; empty functions where there is nothing to do):
 *
 *   REC_NAME, REC_LABEL   CSV id and human label (string literals)
 *   REC_ORDER             place in the list and in the report (int)
 *   REC_FLAGS             SMR_F_* (smr.h): SMR_F_FREES when every free goes through
 *                         smr_node_free() (then garbage outstanding is measured), SMR_F_GPS when
 *                         rec_gps() counts grace periods or epochs
 *   struct rec_thread     per-thread state; lives in smr_thread.rec (SMR_REC_BYTES at most)
 *
 *   rec_begin(t)          start of an operation (a read-side section begins)
 *   rec_end(t)            end of it
 *   rec_retire(t, n)      node n was unlinked by this thread inside the operation: free it once
 *                         no reader can reach it (through smr_node_free(), or the library's own
 *                         free). Called between rec_begin and rec_end, possibly several times.
 *   rec_between(t)        after rec_end, outside any section: QSBR's quiescent state, or the
 *                         library calls that must not run inside a section (t->stash)
 *   rec_init(run), rec_fini(run), rec_thread_init(t), rec_thread_fini(t), rec_gps():
 *                         as struct smr_design's members (smr.h)
 *
 * Optional, for reclaimers that protect node by node (hazard pointers):
 *
 *   REC_PROTECTS          1: the reclaimer defines rec_protect() (default 0: this file supplies
 *                         the constant-true one below, which compiles to nothing)
 *   rec_protect(t, slot, n, src, expect)
 *                         the structure loaded node n from the link *src and is about to read
 *                         it: protect n in the thread's slot (0 or 1; the structure rotates
 *                         them so that the node holding src stays protected in the other one),
 *                         then return whether *src still holds expect (n, unmarked). false:
 *                         the structure restarts its traversal.
 *   REC_NO_BST            a string: the reclaimer does not run on the BST, and why (the driver
 *                         prints it instead of running; about.md says why for hazard pointers)
 *   REC_BOUND             1: the reclaimer defines uint64_t rec_bound(void), the most retired
 *                         nodes that may wait unfreed now whatever readers do
 *
 * Each rec_*.c is compiled twice (SMR_CHECK 0 and 1) and registers both variants.
 */
#ifndef SMR_DESIGN_H
#define SMR_DESIGN_H

#include "smr.h"

_Static_assert(sizeof(struct rec_thread) <= SMR_REC_BYTES, "struct rec_thread fits smr_thread.rec");

#if defined(REC_PROTECTS) && REC_PROTECTS && !defined(REC_NO_BST)
#error "ds_bst.h does not protect node by node: a REC_PROTECTS reclaimer must set REC_NO_BST"
#endif
#ifndef REC_PROTECTS
#define REC_PROTECTS 0
/* Reclaimers that protect whole operations: nothing to do per node; the traversals' restart
 * branches after it are dead code and go away. */
SMR_INLINE bool rec_protect(struct smr_thread *t, unsigned int slot, struct smr_node *n,
			    uintptr_t *src, uintptr_t expect)
{
	(void)t;
	(void)slot;
	(void)n;
	(void)src;
	(void)expect;
	return true;
}
#endif

/* What the structures call for a node they unlinked: counted, checked, handed on. */
SMR_INLINE void smr_retire(struct smr_thread *t, struct smr_node *n)
{
#if SMR_CHECK
	/* Relaxed: only the unlinking thread retires a node, and it reached the node through
	 * acquire loads. */
	uint32_t m = __atomic_load_n(&n->magic, __ATOMIC_RELAXED);
	if (SMR_UNLIKELY(m != SMR_LIVE))
		smr_fail("check: a node (key %llu) was retired twice or after it was freed "
			 "(magic %#x)",
			 (unsigned long long)n->key, m);
	/* Relaxed: readers only compare it; the node stays readable until it is freed. */
	__atomic_store_n(&n->magic, SMR_RETIRED, __ATOMIC_RELAXED);
#endif
	smr_ctr_add(&smr_ctr()->retired, 1);
	rec_retire(t, n);
}

#include "ds_list.h"
#include "ds_hash.h"
#ifndef REC_NO_BST
#include "ds_bst.h"
#endif

/* ---- the measured loop, one per structure ---------------------------------------------------- */

/*
 * An operation: a random key in [0, range); with probability upd_thresh / 2^32 an update (insert
 * or delete, even odds), otherwise a lookup. The loop looks at the stop flag every SMR_BATCH
 * operations. Check mode records, per key, successful inserts minus successful deletes (the
 * driver's replay check).
 */
#define SMR_DEFINE_LOOP(fn, T, INSERT, DELETE, CONTAINS)                                         \
	static void fn(void *ds_, struct smr_thread *t)                                          \
	{                                                                                        \
		T *ds = (T *)ds_;                                                                \
		struct smr_run *run = t->run;                                                    \
		const uint64_t range = run->range;                                               \
		const uint32_t thresh = run->upd_thresh;                                         \
		uint64_t ops = 0, lookups = 0, found = 0, ins = 0, del = 0;                      \
		while (!smr_stopped(run)) {                                                      \
			for (int i = 0; i < SMR_BATCH; i++) {                                    \
				uint64_t r = smr_rng(&t->rng);                                   \
				uint64_t key = ((r & 0xffffffffu) * range) >> 32;                \
				uint32_t dice = (uint32_t)(r >> 32);                             \
				bool ok;                                                         \
				rec_begin(t);                                                    \
				if (dice < thresh) {                                             \
					if (dice & 1) {                                          \
						ok = INSERT(ds, key, t);                         \
						ins += ok;                                       \
						if (SMR_CHECK && ok)                             \
							t->delta[key]++;                         \
					} else {                                                 \
						ok = DELETE(ds, key, t);                         \
						del += ok;                                       \
						if (SMR_CHECK && ok)                             \
							t->delta[key]--;                         \
					}                                                        \
				} else {                                                         \
					found += CONTAINS(ds, key, t);                           \
					lookups++;                                               \
				}                                                                \
				rec_end(t);                                                      \
				rec_between(t);                                                  \
			}                                                                        \
			ops += SMR_BATCH;                                                        \
		}                                                                                \
		t->ops = ops;                                                                    \
		t->lookups = lookups;                                                            \
		t->found = found;                                                                \
		t->inserts = ins;                                                                \
		t->deletes = del;                                                                \
	}                                                                                        \
	static void fn##_stall(void *ds_, struct smr_thread *t, void (*wait)(void *), void *arg) \
	{                                                                                        \
		T *ds = (T *)ds_;                                                                \
		uint64_t key = ((smr_rng(&t->rng) & 0xffffffffu) * t->run->range) >> 32;         \
		rec_begin(t);                                                                    \
		t->found = CONTAINS(ds, key, t);                                                 \
		wait(arg);                                                                       \
		rec_end(t);                                                                      \
		rec_between(t);                                                                  \
	}                                                                                        \
	static void fn##_prefill(void *ds_, struct smr_thread *t, uint64_t n)                    \
	{                                                                                        \
		T *ds = (T *)ds_;                                                                \
		const uint64_t range = t->run->range;                                            \
		for (uint64_t have = 0; have < n;) {                                             \
			uint64_t key = ((smr_rng(&t->rng) & 0xffffffffu) * range) >> 32;         \
			bool ok;                                                                 \
			rec_begin(t);                                                            \
			ok = INSERT(ds, key, t);                                                 \
			rec_end(t);                                                              \
			rec_between(t);                                                          \
			if (ok) {                                                                \
				have++;                                                          \
				if (SMR_CHECK)                                                   \
					t->delta[key]++;                                         \
			}                                                                        \
		}                                                                                \
	}

/* The structures behind one signature: (ds, key, t). */
#define SMR_LIST_INSERT(ds, key, t) hml_insert((uintptr_t *)(ds), (key), (t))
#define SMR_LIST_DELETE(ds, key, t) hml_delete((uintptr_t *)(ds), (key), (t))
#define SMR_LIST_CONTAINS(ds, key, t) hml_contains((uintptr_t *)(ds), (key), (t))
#define SMR_HASH_INSERT(ds, key, t) hml_insert(hht_bucket((ds), (key)), (key), (t))
#define SMR_HASH_DELETE(ds, key, t) hml_delete(hht_bucket((ds), (key)), (key), (t))
#define SMR_HASH_CONTAINS(ds, key, t) hml_contains(hht_bucket((ds), (key)), (key), (t))
#define SMR_BST_INSERT(ds, key, t) bst_insert((ds), (key), (t))
#define SMR_BST_DELETE(ds, key, t) bst_delete((ds), (key), (t))
#define SMR_BST_CONTAINS(ds, key, t) bst_contains((ds), (key))

SMR_DEFINE_LOOP(smr_loop_list, uintptr_t, SMR_LIST_INSERT, SMR_LIST_DELETE, SMR_LIST_CONTAINS)
SMR_DEFINE_LOOP(smr_loop_hash, struct hht, SMR_HASH_INSERT, SMR_HASH_DELETE, SMR_HASH_CONTAINS)
#ifndef REC_NO_BST
SMR_DEFINE_LOOP(smr_loop_bst, struct bst, SMR_BST_INSERT, SMR_BST_DELETE, SMR_BST_CONTAINS)
#endif

/* ---- create, verify, destroy ----------------------------------------------------------------- */

static void *smr_list_create(struct smr_run *run)
{
	uintptr_t *head = (uintptr_t *)calloc(1, SMR_LINE);

	(void)run;
	if (!head)
		smr_fail("out of memory");
	return head;
}
static uint64_t smr_list_verify(void *ds, struct smr_run *run, uint8_t *present)
{
	return hml_verify((uintptr_t *)ds, run->range, false, 0, 0, present);
}
static void smr_list_destroy(void *ds)
{
	hml_destroy((uintptr_t *)ds);
	free(ds);
}
static void *smr_hash_create(struct smr_run *run)
{
	return hht_create(run->range);
}
static uint64_t smr_hash_verify(void *ds, struct smr_run *run, uint8_t *present)
{
	return hht_verify((struct hht *)ds, run->range, present);
}
static void smr_hash_destroy(void *ds)
{
	hht_destroy((struct hht *)ds);
}
#ifndef REC_NO_BST
static void *smr_bst_create(struct smr_run *run)
{
	(void)run;
	return bst_create();
}
static uint64_t smr_bst_verify(void *ds, struct smr_run *run, uint8_t *present)
{
	return bst_verify((struct bst *)ds, run->range, present);
}
static void smr_bst_destroy(void *ds)
{
	bst_destroy((struct bst *)ds);
}
#endif

/* ---- registration ---------------------------------------------------------------------------- */

static const struct smr_design smr_this_design = {
	.name = REC_NAME,
	.label = REC_LABEL,
	.order = REC_ORDER,
	.flags = (REC_FLAGS) | (SMR_CHECK ? SMR_F_CHECK : 0u),
	.init = rec_init,
	.fini = rec_fini,
	.thread_init = rec_thread_init,
	.thread_fini = rec_thread_fini,
	.gps = rec_gps,
#if defined(REC_BOUND) && REC_BOUND
	.bound = rec_bound,
#endif
	.ds = {
		[SMR_LIST] = { smr_list_create, smr_loop_list_prefill, smr_loop_list,
			       smr_list_verify, smr_list_destroy, smr_loop_list_stall },
		[SMR_HASH] = { smr_hash_create, smr_loop_hash_prefill, smr_loop_hash,
			       smr_hash_verify, smr_hash_destroy, smr_loop_hash_stall },
#ifndef REC_NO_BST
		[SMR_BST] = { smr_bst_create, smr_loop_bst_prefill, smr_loop_bst, smr_bst_verify,
			      smr_bst_destroy, smr_loop_bst_stall },
#endif
	},
#ifdef REC_NO_BST
	.skip = { [SMR_BST] = REC_NO_BST },
#endif
};

__attribute__((constructor)) static void smr_this_register(void)
{
	smr_register(&smr_this_design);
}

#endif /* SMR_DESIGN_H */
