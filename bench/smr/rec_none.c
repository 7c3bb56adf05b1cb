/* SPDX-License-Identifier: MIT */
/*
 * none: never free. Retired nodes are counted and leaked: the baseline every reclamation paper
 * measures against (what a scheme costs is its distance to this), and the upper bound of the
 * garbage outstanding (all of it).
 */
#include "smr.h"

#define REC_NAME "none"
#define REC_LABEL "none (never free: the baseline)"
#define REC_ORDER 10
#define REC_FLAGS (SMR_F_FREES | SMR_F_NEVER_FREES)

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
	(void)n; /* leaked */
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
