/* SPDX-License-Identifier: MIT */
/*
 * Compiler glue shared by every public header: export macro, forced inlining, branch hints,
 * C/C++ linkage. Nothing here allocates or touches shared state.
 */
#ifndef GRACE_COMPILER_H
#define GRACE_COMPILER_H

#if !defined(__GNUC__)
#error "grace needs GCC or Clang (GNU C extensions: __atomic builtins, TLS models, asm)"
#endif
/* 64-bit targets only: grace-period cookies, sequence numbers and section numbers are 64-bit
 * words that readers and updaters load and store with single-copy atomicity (docs/build.md,
 * "Supported targets"). */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ < 8
#error "grace supports 64-bit Linux targets only (x86-64 and aarch64; not -m32, i386 or armhf)"
#endif

#ifdef __cplusplus
#define GRACE_BEGIN_DECLS extern "C" {
#define GRACE_END_DECLS }
#else
#define GRACE_BEGIN_DECLS
#define GRACE_END_DECLS
#endif

/* Every exported function carries GRACE_API; the library is built with -fvisibility=hidden. */
#define GRACE_API __attribute__((visibility("default")))
#define GRACE_INLINE static inline __attribute__((always_inline))
#define GRACE_NOINLINE __attribute__((noinline))
#define GRACE_COLD __attribute__((cold, noinline))
#define GRACE_NORETURN __attribute__((noreturn))
#define GRACE_LIKELY(x) __builtin_expect(!!(x), 1)
#define GRACE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GRACE_CACHE_LINE 64
#define GRACE_ALIGNED_CACHE __attribute__((aligned(GRACE_CACHE_LINE)))
/* Per-thread reader state: initial-exec TLS, so the inline fast path is a %fs-relative access
 * (plus one GOT load of the offset when the state lives in libgrace.so), never __tls_get_addr. */
#define GRACE_TLS_IE __attribute__((tls_model("initial-exec")))

/* TSan cannot see membarrier(2) or stand-alone fences: in TSan mode the read side uses
 * acquire/release atomics and the library uses its fence fallback. */
#if defined(GRACE_TSAN) || defined(__SANITIZE_THREAD__)
#define GRACE__TSAN_MODE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GRACE__TSAN_MODE 1
#endif
#endif
#ifndef GRACE__TSAN_MODE
#define GRACE__TSAN_MODE 0
#endif

/* Debug checks in the inline fast paths (rcu_dereference outside a section, QSBR read while
 * offline). Define GRACE_DEBUG when compiling your code (-DGRACE_DEBUG, -DGRACE_DEBUG=1); the
 * CMake option sets it for you. GRACE_DEBUG=0, like leaving it undefined, turns them off: the
 * first test below is true only for a macro defined empty, the second for a non-zero value. */
#if defined(GRACE_DEBUG) && ((0 - GRACE_DEBUG - 1) == 1 || (GRACE_DEBUG + 0) != 0)
#define GRACE__DEBUG 1
#else
#define GRACE__DEBUG 0
#endif

#endif /* GRACE_COMPILER_H */
