/* SPDX-License-Identifier: MIT */
/*
 * aarch64 critical sections for <grace/internal/rseq.h>, which holds the contract and the
 * pseudo-code each function here implements. Never include this file directly.
 *
 * Memory order on aarch64 (weakly ordered: loads and stores to different addresses may be
 * observed by other CPUs in any order unless an acquire, a release or a barrier orders them):
 *  - The store of rseq_cs, the load of cpu_id and the clear of rseq_cs need no ordering: only
 *    the kernel reads rseq_cs and writes cpu_id, on this thread's own exception entry and
 *    return, which see the thread's accesses in program order.
 *  - A commit is a plain store (str) when the caller asked for relaxed, a store-release (stlr)
 *    when it asked for release: stlr orders every earlier load and store of the thread before
 *    the commit, which is what a consumer's acquire load of the word pairs with. The memory order
 *    is a macro argument of one asm template per primitive: the commit mnemonic.
 *  - A push reads the list's mode with a load-acquire (ldar): the take that ends an atomic-mode
 *    period stores mode = 0 with release after emptying the head; without the acquire, the
 *    push's later load of the head could be satisfied before its load of mode (a control
 *    dependency does not order two loads on aarch64) and return the head the take already
 *    detached, so the chain would be consumed twice.
 *  - A push links the node (str node->next) and publishes it with stlr: the node's fields and
 *    link are visible to whoever sees the new head (pairs with the acquire exchange of the take;
 *    a local pop runs on the same CPU, after a context switch, and follows the pointer it loaded,
 *    an address dependency).
 *  - A pop's loads are plain: the list is consumed on its own CPU, where every push it can see
 *    ran before it in that CPU's program order (separated by context switches), and the pop's
 *    consumer is serialized with takes by the caller.
 *
 * Branch range: conditional branches (b.cond, cbnz) reach +-1 MiB, so the abort handler and the
 * early exits are in subsection 1 of the section the code is emitted into (the end of the same
 * section, next to the function), never in a separate section that a large program could place
 * out of reach; they leave with an unconditional b (+-128 MiB, and the linker adds a veneer
 * beyond). Scratch registers: x15, x16, x17 (declared clobbered).
 */
#ifndef GRACE__RSEQ_ARCH_INSIDE
#error "Never include <grace/internal/arch/rseq-aarch64.h> directly; use <grace/internal/rseq.h>"
#endif
#ifndef GRACE_INTERNAL_ARCH_RSEQ_AARCH64_H
#define GRACE_INTERNAL_ARCH_RSEQ_AARCH64_H

#define GRACE__RSEQ_ARCH 1
/*
 * The signature before every abort handler is the instruction brk #0x45e0 (0xd428bc00), as in
 * glibc, since the kernel checks it against the signature the area was registered with (glibc's
 * or ours). Instructions are little-endian even on a big-endian CPU, so the 32-bit value the
 * kernel reads there (and that registration passes) is byte-swapped on big-endian.
 */
#if defined(__AARCH64EB__)
#define GRACE__RSEQ_SIG 0x00bc28d4u
#else
#define GRACE__RSEQ_SIG 0xd428bc00u
#endif

#if !GRACE__TSAN_MODE
/*
 * Building blocks. A critical section is one asm goto statement with numeric local labels:
 * 1 start, 2 post-commit, 3 descriptor (struct rseq_cs, in section __grace_rseq_cs), 4 abort
 * handler (subsection 1: outside [1, 2) as the ABI requires, preceded by the signature), and
 * 5.. for early exits. `area` is a register that holds the rseq area's address for the whole
 * section and its exits. START clobbers x17.
 */
/* clang-format off */
#define GRACE__RSEQ_ASM_DESC                                                              \
	".pushsection __grace_rseq_cs, \"aw\"\n\t"                                        \
	".balign 32\n\t"                                                                  \
	"3:\n\t"                                                                          \
	".long 0x0, 0x0\n\t" /* version, flags */                                        \
	".quad 1f, (2f - 1f), 4f\n\t" /* start_ip, post_commit_offset, abort_ip */       \
	".popsection\n\t"

#define GRACE__RSEQ_ASM_START(area)                                                       \
	"adrp x17, 3b\n\t"                                                                \
	"add x17, x17, :lo12:3b\n\t"                                                      \
	"str x17, [" area ", #8]\n\t" /* rseq_cs */                                      \
	"1:\n\t"

/* What every exit of a section does: rseq_cs = 0 (contract rule 6 of internal/rseq.h), so that
 * the kernel never reads a descriptor after the section's object may have been unloaded. */
#define GRACE__RSEQ_ASM_CLEAR(area) "str xzr, [" area ", #8]\n\t"

/* The post-commit label (the instruction before it is the commit), then the clear. */
#define GRACE__RSEQ_ASM_END(area)                                                         \
	"2:\n\t"                                                                          \
	GRACE__RSEQ_ASM_CLEAR(area)

/* An early exit that did not commit: out of line, clear, then branch to the C label. */
#define GRACE__RSEQ_ASM_EXIT(label, area, target)                                         \
	".subsection 1\n\t"                                                               \
	label ":\n\t"                                                                     \
	GRACE__RSEQ_ASM_CLEAR(area)                                                       \
	"b " target "\n\t"                                                                \
	".previous\n\t"

/* The abort handler, label 4, right after the signature (an instruction, so .inst). */
#define GRACE__RSEQ_ASM_ABORT(area, target)                                               \
	".subsection 1\n\t"                                                               \
	".inst 0xd428bc00\n\t"                                                            \
	"4:\n\t"                                                                          \
	GRACE__RSEQ_ASM_CLEAR(area)                                                       \
	"b " target "\n\t"                                                                \
	".previous\n\t"

/* The commit instruction of each memory order (the template argument). */
#define GRACE__RSEQ_A64_RELAXED "str"
#define GRACE__RSEQ_A64_RELEASE "stlr"

/* grace__rseq_add_on(): one template, instantiated per memory order. */
#define GRACE__RSEQ_A64_ADD_ON(commit)                                                    \
	__asm__ __volatile__ goto(                                                        \
		GRACE__RSEQ_ASM_DESC                                                      \
		GRACE__RSEQ_ASM_START("%[rs]")                                            \
		"ldr w17, [%[rs], #4]\n\t" /* cpu_id */                                  \
		"cmp w17, %w[cpu]\n\t"                                                    \
		"b.ne 4f\n\t"                                                             \
		"ldr x17, [%[p]]\n\t"                                                     \
		"add x17, x17, %[v]\n\t"                                                  \
		commit " x17, [%[p]]\n\t" /* commit */                                   \
		GRACE__RSEQ_ASM_END("%[rs]")                                              \
		GRACE__RSEQ_ASM_ABORT("%[rs]", "%l[aborted]")                             \
		: /* no outputs (asm goto) */                                             \
		: [cpu] "r"(cpu), [rs] "r"(rs), [p] "r"(p), [v] "r"(v)                    \
		: "memory", "cc", "x17"                                                   \
		: aborted)

/* grace__rseq_inc_line(): one template, instantiated per memory order. x16 holds the area. */
#define GRACE__RSEQ_A64_INC_LINE(commit)                                                  \
	__asm__ __volatile__ goto(                                                        \
		GRACE__RSEQ_ASM_DESC                                                      \
		"ldrsw x16, [%[ref]]\n\t" /* the area's offset from the thread pointer */ \
		"mrs x17, tpidr_el0\n\t"                                                  \
		"add x16, x16, x17\n\t"                                                   \
		GRACE__RSEQ_ASM_START("x16")                                              \
		"ldr w17, [x16, #4]\n\t" /* cpu_id (zero-extends) */                     \
		"ldr w15, [%[ref], #4]\n\t" /* bound */                                  \
		"cmp w17, w15\n\t"                                                        \
		"b.hs 4f\n\t"                                                             \
		"add x17, %[base], x17, lsl #6\n\t"                                       \
		"ldr x15, [x17]\n\t"                                                      \
		"add x15, x15, #1\n\t"                                                    \
		commit " x15, [x17]\n\t" /* commit */                                    \
		GRACE__RSEQ_ASM_END("x16")                                                \
		GRACE__RSEQ_ASM_ABORT("x16", "%l[aborted]")                               \
		:                                                                         \
		: [ref] "r"(ref), [base] "r"(base)                                        \
		: "memory", "cc", "x15", "x16", "x17"                                     \
		: aborted)
/* clang-format on */

/* grace__rseq_add_on(): see the pseudo-code in internal/rseq.h. */
GRACE_INLINE int grace__rseq_add_on(struct grace__rseq_abi *rs, uint64_t *p, uint64_t v,
				    uint32_t cpu, int release)
{
	if (release)
		GRACE__RSEQ_A64_ADD_ON(GRACE__RSEQ_A64_RELEASE);
	else
		GRACE__RSEQ_A64_ADD_ON(GRACE__RSEQ_A64_RELAXED);
	return 0;
aborted:
	return -1;
}

/* grace__rseq_inc_line(): see the pseudo-code in internal/rseq.h and the x86-64 version. */
GRACE_INLINE int grace__rseq_inc_line(const struct grace__rseq_ref *ref, uint64_t *base,
				      int release)
{
	if (release)
		GRACE__RSEQ_A64_INC_LINE(GRACE__RSEQ_A64_RELEASE);
	else
		GRACE__RSEQ_A64_INC_LINE(GRACE__RSEQ_A64_RELAXED);
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
		GRACE__RSEQ_ASM_START("%[rs]")
		"ldr w17, [%[rs], #4]\n\t" /* cpu_id */
		"cmp w17, %w[cpu]\n\t"
		"b.ne 4f\n\t"
		"add x17, %[l], #16\n\t"
		"ldar w17, [x17]\n\t" /* mode, acquire: pairs with the take's release store */
		"cbnz w17, 5f\n\t"
		"ldr x17, [%[l]]\n\t" /* head */
		"str x17, [%[node]]\n\t" /* node->next */
		"stlr %[node], [%[l]]\n\t" /* commit, store-release: publishes the node */
		GRACE__RSEQ_ASM_END("%[rs]")
		GRACE__RSEQ_ASM_EXIT("5", "%[rs]", "%l[atomic_mode]")
		GRACE__RSEQ_ASM_ABORT("%[rs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [rs] "r"(rs), [l] "r"(l), [node] "r"(node)
		: "memory", "cc", "x17"
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
		GRACE__RSEQ_ASM_START("%[rs]")
		"ldr w17, [%[rs], #4]\n\t" /* cpu_id */
		"cmp w17, %w[cpu]\n\t"
		"b.ne 5f\n\t"
		"ldr w17, [%[l], #16]\n\t" /* mode: only this consumer changes it */
		"cbnz w17, 5f\n\t"
		"ldr x17, [%[l]]\n\t" /* head */
		"str x17, [%[out]]\n\t"
		"str xzr, [%[l]]\n\t" /* commit */
		GRACE__RSEQ_ASM_END("%[rs]")
		GRACE__RSEQ_ASM_EXIT("5", "%[rs]", "%l[not_here]")
		GRACE__RSEQ_ASM_ABORT("%[rs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [rs] "r"(rs), [l] "r"(l), [out] "r"(out)
		: "memory", "cc", "x17"
		: aborted, not_here);
	/* clang-format on */
	return 0;
aborted:
	return -1;
not_here:
	return 1;
}
#endif /* !GRACE__TSAN_MODE */

#endif /* GRACE_INTERNAL_ARCH_RSEQ_AARCH64_H */
