/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu: included first by every public header. liburcu's own headers and grace-urcu's in
 * one translation unit would mix two definitions of every structure, silently where they
 * happen to agree: stop instead. A liburcu header can only come before grace-urcu's: grace-urcu
 * provides every public liburcu header name, and the names it does not serve (urcu/static/...,
 * urcu/arch/..., urcu/uatomic/...) are stubs that stop with an #error of their own. No include
 * guard: the check is worth repeating, as another liburcu header may come in between.
 *
 * Not a liburcu header: programs never include it directly.
 */
#if defined(_URCU_COMPILER_H) || defined(_URCU_ARCH_H) || defined(_URCU_UATOMIC_H) ||         \
	defined(_URCU_POINTER_H) || defined(_URCU_CALL_RCU_H) || defined(_URCU_H) ||          \
	defined(_URCU_MEMB_H) || defined(_URCU_MB_H) || defined(_URCU_SIGNAL_H) ||            \
	defined(_URCU_BP_H) || defined(_URCU_QSBR_H) || defined(_CDS_LIST_H) ||               \
	defined(_KCOMPAT_HLIST_H) || defined(_URCU_WFCQUEUE_H) || defined(_URCU_WFSTACK_H) || \
	defined(_URCU_LFSTACK_H) || defined(_URCU_RCULFHASH_H) || defined(_URCU_REF_H) ||     \
	defined(_URCU_SYSTEM_H) || defined(_URCU_TLS_COMPAT_H) || defined(_URCU_FUTEX_H) ||   \
	defined(_URCU_SYSCALL_COMPAT_H) || defined(_URCU_DEBUG_H)
#error "grace-urcu: a header of liburcu itself came first: use grace-urcu's headers alone"
#endif
