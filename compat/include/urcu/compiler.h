/* SPDX-License-Identifier: MIT */
/*
 * grace-urcu <urcu/compiler.h>: compiler helpers under liburcu's names (branch hints, compiler
 * barrier, volatile access, container_of, build-time checks).
 */
#ifndef GRACE_URCU_COMPILER_H
#define GRACE_URCU_COMPILER_H

#include <stddef.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>

#define caa_likely(x) GRACE_LIKELY(x)
#define caa_unlikely(x) GRACE_UNLIKELY(x)

/* Compiler barrier: no instruction, no compiler motion of memory accesses across it. */
#define cmm_barrier() grace_barrier()

/* One access through a volatile lvalue: neither merged, repeated nor torn by the compiler. */
#define CMM_ACCESS_ONCE(x) (*(__volatile__ __typeof__(x) *)&(x))

/* Hide a value from the optimizer (liburcu's _CMM_OPTIMIZER_HIDE_VAR). */
#define _CMM_OPTIMIZER_HIDE_VAR(var) __asm__("" : "+r"(var))

#ifndef caa_max
#define caa_max(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef caa_min
#define caa_min(a, b) ((a) < (b) ? (a) : (b))
#endif

#if defined(__SIZEOF_LONG__)
#define CAA_BITS_PER_LONG (__SIZEOF_LONG__ * 8)
#elif defined(__LP64__)
#define CAA_BITS_PER_LONG 64
#else
#define CAA_BITS_PER_LONG 32
#endif

/* The structure that embeds @member at @ptr. */
#define caa_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
/* As caa_container_of(), but NULL stays NULL. */
#define caa_container_of_check_null(ptr, type, member)                                \
	__extension__({                                                               \
		const __typeof__(((type *)NULL)->member) *grace_urcu__p = (ptr);      \
		grace_urcu__p ? caa_container_of(grace_urcu__p, type, member) : NULL; \
	})

#define CAA_BUILD_BUG_ON_ZERO(cond) (sizeof(struct { int : -!!(cond); }))
#define CAA_BUILD_BUG_ON(cond) ((void)CAA_BUILD_BUG_ON_ZERO(cond))
#ifdef __cplusplus
#define urcu_static_assert(expr, msg, c_identifier) static_assert(expr, msg)
#else
#define urcu_static_assert(expr, msg, c_identifier) _Static_assert(expr, msg)
#endif

#define __CAA_COMBINE_TOKENS(a, b) a##b
#define CAA_COMBINE_TOKENS(a, b) __CAA_COMBINE_TOKENS(a, b)
#define CAA_ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

/* Sparse annotation in liburcu: nothing to the compiler. */
#define __rcu

#ifdef __cplusplus
#define URCU_FORCE_CAST(type, arg) ((type)(arg))
#else
#define URCU_FORCE_CAST(type, arg) ((type)(arg))
#endif

#define caa_is_signed_type(type) ((type)-1 < (type)0)
/* Cast to long, sign-extending signed types and zero-extending unsigned ones. */
#define caa_cast_long_keep_sign(v) \
	(caa_is_signed_type(__typeof__(v)) ? (long)(v) : (long)(unsigned long)(v))

#define CDS_DEPRECATED(msg) __attribute__((deprecated(msg)))
#define caa_unreachable() __builtin_unreachable()

#endif
