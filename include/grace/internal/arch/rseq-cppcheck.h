/* SPDX-License-Identifier: MIT */
/*
 * Plain-C stand-ins for the critical sections of <grace/internal/rseq.h>, seen only by static
 * analysers: cppcheck cannot parse asm goto, so without these every file that includes the rseq
 * header would be analysed without its rseq paths (the one configuration cppcheck checks then has
 * no architecture) or not at all (with -D__x86_64__: "AST broken"). Each function does what the
 * pseudo-code in internal/rseq.h says, without the atomicity a real critical section has: NEVER
 * compiled (internal/rseq.h selects this file only when the preprocessor is cppcheck's, see
 * there). Never include this file directly.
 */
#ifndef GRACE__RSEQ_ARCH_INSIDE
#error "Never include <grace/internal/arch/rseq-cppcheck.h> directly; use <grace/internal/rseq.h>"
#endif
#ifndef GRACE_INTERNAL_ARCH_RSEQ_CPPCHECK_H
#define GRACE_INTERNAL_ARCH_RSEQ_CPPCHECK_H

#define GRACE__RSEQ_ARCH 1
#define GRACE__RSEQ_SIG 0x53053053u

static inline int grace__rseq_add_on(struct grace__rseq_abi *rs, uint64_t *p, uint64_t v,
				     uint32_t cpu, int release)
{
	(void)release;
	if (rs->cpu_id != cpu) {
		rs->rseq_cs = 0;
		return -1;
	}
	*p += v;
	rs->rseq_cs = 0;
	return 0;
}

static inline int grace__rseq_inc_line(const struct grace__rseq_ref *ref, uint64_t *base,
				       int release)
{
	char *tp = (char *)&grace__rseq_own; /* stands in for the thread pointer */
	struct grace__rseq_abi *rs = (struct grace__rseq_abi *)(tp + ref->off);
	uint32_t c = rs->cpu_id;

	(void)release;
	rs->rseq_cs = 0;
	if (c >= ref->bound)
		return -1;
	base[(size_t)c * 8] += 1;
	return 0;
}

static inline int grace__rseq_list_push_on(struct grace__rseq_abi *rs, struct grace__rseq_list *l,
					   struct rcu_head *node, uint32_t cpu)
{
	rs->rseq_cs = 0;
	if (rs->cpu_id != cpu)
		return -1;
	if (l->mode != 0)
		return 1;
	node->next = l->head;
	l->head = node;
	return 0;
}

static inline int grace__rseq_list_pop_on(struct grace__rseq_abi *rs, struct grace__rseq_list *l,
					  uint32_t cpu, struct rcu_head **out)
{
	rs->rseq_cs = 0;
	if (rs->cpu_id != cpu || l->mode != 0)
		return 1;
	*out = l->head;
	l->head = NULL;
	return 0;
}

#endif /* GRACE_INTERNAL_ARCH_RSEQ_CPPCHECK_H */
