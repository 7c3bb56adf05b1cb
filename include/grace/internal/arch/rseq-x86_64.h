/* SPDX-License-Identifier: MIT */
/*
 * x86-64 critical sections for <grace/internal/rseq.h>, which holds the contract and the
 * pseudo-code each function here implements. Never include this file directly.
 *
 * Memory order on x86-64 (TSO): every store is a release store and loads are not reordered with
 * other loads, so the relaxed and release forms of a commit are the same instruction; `release`
 * is accepted (the common wrappers pass it) and only the "memory" clobber, a compiler barrier,
 * carries it. A push's load of the list mode is therefore an acquire load too.
 */
#ifndef GRACE__RSEQ_ARCH_INSIDE
#error "Never include <grace/internal/arch/rseq-x86_64.h> directly; use <grace/internal/rseq.h>"
#endif
#ifndef GRACE_INTERNAL_ARCH_RSEQ_X86_64_H
#define GRACE_INTERNAL_ARCH_RSEQ_X86_64_H

#define GRACE__RSEQ_ARCH 1
/* The signature before every abort handler; the same value as glibc's RSEQ_SIG for x86, since
 * the kernel checks it against the signature the area was registered with (glibc's or ours). */
#define GRACE__RSEQ_SIG 0x53053053u

#if !GRACE__TSAN_MODE
/*
 * Building blocks. A critical section is one asm goto statement with numeric local labels:
 * 1 start, 2 post-commit, 3 descriptor (struct rseq_cs, in section __grace_rseq_cs), 4 abort
 * handler (in section __grace_rseq_abort, outside [1, 2) as the ABI requires, preceded by the
 * signature the kernel checks before jumping there), and 5.. for early exits. `cs` is the asm
 * operand that names the area's rseq_cs word (a memory operand, or %fs-relative).
 */
/* clang-format off */
#define GRACE__RSEQ_ASM_DESC                                                              \
	".pushsection __grace_rseq_cs, \"aw\"\n\t"                                        \
	".balign 32\n\t"                                                                  \
	"3:\n\t"                                                                          \
	".long 0x0, 0x0\n\t" /* version, flags */                                        \
	".quad 1f, (2f - 1f), 4f\n\t" /* start_ip, post_commit_offset, abort_ip */       \
	".popsection\n\t"

/* rseq_cs = &descriptor, then the start label. Clobbers rax. */
#define GRACE__RSEQ_ASM_START(cs)                                                         \
	"leaq 3b(%%rip), %%rax\n\t"                                                       \
	"movq %%rax, " cs "\n\t"                                                          \
	"1:\n\t"

/* What every exit of a section does: rseq_cs = 0 (contract rule 6 of internal/rseq.h), so that
 * the kernel never reads a descriptor after the section's object may have been unloaded. */
#define GRACE__RSEQ_ASM_CLEAR(cs) "movq $0, " cs "\n\t"

/* The post-commit label (the instruction before it is the commit), then the clear. */
#define GRACE__RSEQ_ASM_END(cs)                                                           \
	"2:\n\t"                                                                          \
	GRACE__RSEQ_ASM_CLEAR(cs)

/* An early exit that did not commit: out of line, clear, then jump to the C label `target`. */
#define GRACE__RSEQ_ASM_EXIT(label, cs, target)                                           \
	".pushsection __grace_rseq_abort, \"ax\"\n\t"                                     \
	label ":\n\t"                                                                     \
	GRACE__RSEQ_ASM_CLEAR(cs)                                                         \
	"jmp " target "\n\t"                                                              \
	".popsection\n\t"

/* The abort handler, label 4. ud1 0x53053053(%rip), %edi: its last four bytes, right before
 * the label, are the signature. The kernel's abort has cleared rseq_cs already; a jump from
 * inside the section (wrong CPU, bound) has not, hence the clear. */
#define GRACE__RSEQ_ASM_ABORT(cs, target)                                                 \
	".pushsection __grace_rseq_abort, \"ax\"\n\t"                                     \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                                      \
	".long 0x53053053\n\t"                                                            \
	"4:\n\t"                                                                          \
	GRACE__RSEQ_ASM_CLEAR(cs)                                                         \
	"jmp " target "\n\t"                                                              \
	".popsection\n\t"
/* clang-format on */

/* grace__rseq_add_on(): see the pseudo-code in internal/rseq.h. */
GRACE_INLINE int grace__rseq_add_on(struct grace__rseq_abi *rs, uint64_t *p, uint64_t v,
				    uint32_t cpu, int release)
{
	(void)release; /* TSO: the commit is a release store either way */
	/* clang-format off */
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		GRACE__RSEQ_ASM_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"addq %[v], %[mem]\n\t" /* commit */
		GRACE__RSEQ_ASM_END("%[rseq_cs]")
		GRACE__RSEQ_ASM_ABORT("%[rseq_cs]", "%l[aborted]")
		: /* no outputs (asm goto) */
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mem] "m"(*p), [v] "er"(v)
		: "memory", "cc", "rax"
		: aborted);
	/* clang-format on */
	return 0;
aborted:
	return -1;
}

/*
 * grace__rseq_inc_line(): see the pseudo-code in internal/rseq.h. The fastest form, for the srcu
 * read side: ref (cached by the caller next to its data) gives the area's offset from the
 * thread pointer, so the area is addressed %fs-relative without loading a global or a GOT entry,
 * and the bound, compared straight from memory; the CPU number is read once, inside the
 * section. ref->off must come from grace__rseq_tp_offset() after grace__rseq_enabled() said
 * yes: any other value makes the section store into the wrong thread-local word.
 */
GRACE_INLINE int grace__rseq_inc_line(const struct grace__rseq_ref *ref, uint64_t *base,
				      int release)
{
	(void)release; /* TSO: the commit is a release store either way */
	/* clang-format off */
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		"movslq %[off], %%rdx\n\t" /* the area's offset from %fs */
		GRACE__RSEQ_ASM_START("%%fs:8(%%rdx)")
		"movl %%fs:4(%%rdx), %%eax\n\t" /* cpu_id (zero-extends) */
		"cmpl %[bound], %%eax\n\t"
		"jae 4f\n\t"
		"shlq $6, %%rax\n\t"
		"addq $1, (%[base], %%rax)\n\t" /* commit */
		GRACE__RSEQ_ASM_END("%%fs:8(%%rdx)")
		GRACE__RSEQ_ASM_ABORT("%%fs:8(%%rdx)", "%l[aborted]")
		:
		: [off] "m"(ref->off), [bound] "m"(ref->bound), [base] "r"(base)
		: "memory", "cc", "rax", "rdx"
		: aborted);
	/* clang-format on */
	return 0;
aborted:
	return -1;
}

/* grace__rseq_list_push_on(): see the pseudo-code in internal/rseq.h. 0 committed, 1 list in
 * atomic mode (not pushed), -1 aborted or not on `cpu` (not pushed). */
GRACE_INLINE int grace__rseq_list_push_on(struct grace__rseq_abi *rs, struct grace__rseq_list *l,
					  struct rcu_head *node, uint32_t cpu)
{
	/* clang-format off */
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		GRACE__RSEQ_ASM_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"cmpl $0, %[mode]\n\t" /* acquire: TSO keeps the head load after it */
		"jnz 5f\n\t"
		"movq %[head], %%rax\n\t"
		"movq %%rax, %[link]\n\t"
		"movq %[node], %[head]\n\t" /* commit, a release store */
		GRACE__RSEQ_ASM_END("%[rseq_cs]")
		GRACE__RSEQ_ASM_EXIT("5", "%[rseq_cs]", "%l[atomic_mode]")
		GRACE__RSEQ_ASM_ABORT("%[rseq_cs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mode] "m"(l->mode), [head] "m"(l->head), [link] "m"(node->next), [node] "r"(node)
		: "memory", "cc", "rax"
		: aborted, atomic_mode);
	/* clang-format on */
	return 0;
aborted:
	return -1;
atomic_mode:
	return 1;
}

/* grace__rseq_list_pop_on(): see the pseudo-code in internal/rseq.h. 0 detached (chain in
 * *out), 1 not on `cpu` or list in atomic mode, -1 aborted. */
GRACE_INLINE int grace__rseq_list_pop_on(struct grace__rseq_abi *rs, struct grace__rseq_list *l,
					 uint32_t cpu, struct rcu_head **out)
{
	/* clang-format off */
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		GRACE__RSEQ_ASM_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 5f\n\t"
		"cmpl $0, %[mode]\n\t"
		"jnz 5f\n\t"
		"movq %[head], %%rax\n\t"
		"movq %%rax, (%[out])\n\t"
		"movq $0, %[head]\n\t" /* commit */
		GRACE__RSEQ_ASM_END("%[rseq_cs]")
		GRACE__RSEQ_ASM_EXIT("5", "%[rseq_cs]", "%l[not_here]")
		GRACE__RSEQ_ASM_ABORT("%[rseq_cs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mode] "m"(l->mode), [head] "m"(l->head), [out] "r"(out)
		: "memory", "cc", "rax"
		: aborted, not_here);
	/* clang-format on */
	return 0;
aborted:
	return -1;
not_here:
	return 1;
}
#endif /* !GRACE__TSAN_MODE */

#endif /* GRACE_INTERNAL_ARCH_RSEQ_X86_64_H */
