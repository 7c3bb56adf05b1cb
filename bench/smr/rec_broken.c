/* SPDX-License-Identifier: MIT */
/*
 * broken: frees a node the moment it is unlinked, while other threads may still stand on it.
 * Wrong on purpose: the check mode's own test (bench_smr_check_catches_early_free) requires
 * --check to catch it (a thread reaches a poisoned node); if it did not, the check mode would
 * prove nothing. Hidden: run only by name, and only with --check.
 */
#include "smr.h"

#define REC_NAME "broken"
#define REC_LABEL "broken (frees at once, no grace period: check-mode self-test)"
#define REC_ORDER 1000
#define REC_FLAGS (SMR_F_FREES | SMR_F_HIDDEN)

struct rec_thread {
	int unused_;
};

SMR_INLINE void rec_begin(struct smr_thread *t)
{
	(void)t;
}
SMR_INLINE void rec_end(struct smr_thread *t)
{
	(void)t;
}
SMR_INLINE void rec_retire(struct smr_thread *t, struct smr_node *n)
{
	(void)t;
	smr_node_free(n); /* the bug */
}
SMR_INLINE void rec_between(struct smr_thread *t)
{
	(void)t;
}
static void rec_init(struct smr_run *run)
{
	(void)run;
}
static void rec_fini(struct smr_run *run)
{
	(void)run;
}
static void rec_thread_init(struct smr_thread *t)
{
	(void)t;
}
static void rec_thread_fini(struct smr_thread *t)
{
	(void)t;
}
static uint64_t rec_gps(void)
{
	return 0;
}

#include "design.h"
