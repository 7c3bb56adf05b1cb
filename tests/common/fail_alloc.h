/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure on demand, in the calling thread only. An executable that includes this
 * header (from one file) defines malloc(), calloc(), realloc(), aligned_alloc() and
 * posix_memalign(), interposing glibc's for itself and the libraries it loads; each fails
 * (NULL, errno ENOMEM, as glibc's) while the calling thread's fail_alloc says so, and counts the
 * failure in fail_alloc_count (every thread), so that a test can tell that it did run out of
 * memory. fail_alloc = GT_FAIL_ALL: every one fails; GT_FAIL_MALLOC: malloc() alone, which the
 * library's blocks and carriers come from, while glibc's own allocations (calloc() for a new
 * thread's TLS, when the library starts a worker) still succeed: a test of a retire path then
 * does not also meet the engine's "cannot start a worker" (fatal, docs/api.md). Not
 * under the sanitizers, which interpose them themselves: GT_FAIL_ALLOC is then left undefined,
 * and so are fail_alloc and fail_alloc_count.
 */
#ifndef GRACE_TEST_FAIL_ALLOC_H
#define GRACE_TEST_FAIL_ALLOC_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h> /* the declarations this header defines */

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GT_FAIL_ALLOC 1
#ifdef __cplusplus
extern "C" {
#endif
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
#ifdef __cplusplus
}
#endif

#define GT_FAIL_ALL 1
#define GT_FAIL_MALLOC 2
static __thread int fail_alloc;
static unsigned long fail_alloc_count;

/* Whether this call fails (counted, errno ENOMEM): is_malloc says it is malloc(). */
static inline int fail_alloc_now(int is_malloc)
{
	if (!fail_alloc || (fail_alloc == GT_FAIL_MALLOC && !is_malloc))
		return 0;
	__atomic_fetch_add(&fail_alloc_count, 1, __ATOMIC_RELAXED);
	errno = ENOMEM;
	return 1;
}

#ifdef __cplusplus
extern "C" {
#endif
void *malloc(size_t size)
{
	return fail_alloc_now(1) ? NULL : __libc_malloc(size);
}
void *calloc(size_t n, size_t size)
{
	return fail_alloc_now(0) ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t size)
{
	return fail_alloc_now(0) ? NULL : __libc_realloc(p, size);
}
void *aligned_alloc(size_t align, size_t size)
{
	return fail_alloc_now(0) ? NULL : __libc_memalign(align, size);
}
int posix_memalign(void **pp, size_t align, size_t size)
{
	void *p = fail_alloc_now(0) ? NULL : __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*pp = p;
	return 0;
}
#ifdef __cplusplus
}
#endif
#endif /* not under a sanitizer */

#endif /* GRACE_TEST_FAIL_ALLOC_H */
