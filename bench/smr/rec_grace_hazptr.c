/* SPDX-License-Identifier: MIT */
/*
 * grace-hazptr: grace's hazard pointers (<grace/hazptr.h>). Each worker holds two hazard
 * pointers for the whole run (allocated once); the list's find() protects every node it reads,
 * hand over hand (rec_protect(), ds_list.h): publish the node, then check that the link it came
 * from still holds it unmarked, else restart. An unlinked node is retired with hazptr_retire()
 * into the default domain, whose free hook is smr_node_free(): garbage is counted and check
 * mode poisons the nodes. The frees run on the retiring thread, a few per later retire, and a
 * scan of the hazard pointers (one membarrier) every GRACE_HAZPTR_BATCH retires.
 *
 * No read-side section: begin does nothing; end resets the two hazard pointers (two release
 * stores, plain moves on x86-64). Whatever a reader does, at most H*T + one batch per thread of
 * retired nodes wait (docs/design.md, section 13): the stalled-reader runs of run.sh measure it.
 *
 * Not on the Natarajan-Mittal BST: its seek walks tagged and flagged edges into segments that
 * a cleanup CAS has already removed as a whole, so a node reached there can be retired while
 * its parent's edge still holds it; validating "the edge still holds it" proves nothing, and the
 * paper's tree has no per-node hazard-pointer scheme (bench/smr/about.md).
 */
#include <grace/hazptr.h>

#include "smr.h"

#define REC_NAME "grace-hazptr"
#define REC_LABEL "grace hazard pointers, 2 per thread, hazptr_retire"
#define REC_ORDER 70
#define REC_FLAGS SMR_F_FREES
#define REC_PROTECTS 1
#define REC_NO_BST                                                                           \
	"hazard pointers are not safe on the Natarajan-Mittal BST (its seek passes through " \
	"flagged and tagged edges into removed segments, where validating an edge proves "   \
	"nothing): see bench/smr/about.md"

struct rec_thread {
	struct grace_hazptr *hp[2];
};

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	(void)t;
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	/* Release stores of NULL (hazptr_reset): the operation's reads of the nodes happen
	 * before a scan that sees the slots empty and frees them. */
	grace_hazptr_reset(rec_of(t)->hp[0]);
	grace_hazptr_reset(rec_of(t)->hp[1]);
}
SMR_INLINE bool rec_protect(struct smr_thread *t, unsigned int slot, struct smr_node *n,
			    uintptr_t *src, uintptr_t expect)
{
	/*
	 * hazptr_set publishes n (release store, then the compiler barrier of the asymmetric
	 * fence, paired with the scanner's membarrier); the reload of *src after it is ordered
	 * by that pairing: a scan that runs after the node's retire either sees n published, or
	 * this reload sees the unlink (the link changed or its node was marked) and the caller
	 * restarts. Acquire: as every link load of the list (ds_list.h), it pairs with the
	 * release of the CAS that stored the link.
	 */
	grace_hazptr_set(rec_of(t)->hp[slot], n);
	return __atomic_load_n(src, __ATOMIC_ACQUIRE) == expect;
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	(void)t;
	grace_hazptr_retire(NULL, n);
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
}
static void g_free_hook(void *p)
{
	smr_node_free((struct smr_node *)p);
}
static void rec_init(struct smr_run *run)
{
	(void)run;
	/* One design per process: nothing was retired into the default domain before. */
	if (grace_hazptr_set_free_hook(NULL, g_free_hook) != 0) {
		fprintf(stderr,
			"smr: grace_hazptr_set_free_hook: objects were retired before it\n");
		exit(1);
	}
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
	grace_hazptr_barrier(NULL); /* every node retired so far is freed */
}
static void rec_thread_init(struct smr_thread *t)
{
	for (int i = 0; i < 2; i++) {
		rec_of(t)->hp[i] = grace_hazptr_alloc();
		if (!rec_of(t)->hp[i]) {
			fputs("smr: hazptr_alloc: out of memory\n", stderr);
			exit(1);
		}
	}
}
static void rec_thread_fini(struct smr_thread *t)
{
	for (int i = 0; i < 2; i++) {
		grace_hazptr_free(rec_of(t)->hp[i]);
		rec_of(t)->hp[i] = NULL;
	}
}
static uint64_t rec_gps(void)
{
	return 0;
}
/* docs/design.md, section 13, Claim 2: H hazard pointers, T batches (threads with a retire
 * cache, plus the orphan list); every node is retired into the default domain without a
 * function, one slot of a batch each. */
#define REC_BOUND 1
static uint64_t rec_bound(void)
{
	struct grace_hazptr_stats st;

	grace_hazptr_get_stats(&st);
	return st.records * st.batches + (uint64_t)GRACE_HAZPTR_BATCH * st.batches;
}

#include "design.h"
