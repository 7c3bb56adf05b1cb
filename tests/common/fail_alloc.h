/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure on demand, in the calling thread only. An executable that includes this
 * header (from one file) defines malloc(), calloc(), realloc(), aligned_alloc() and
 * posix_memalign(), interposing glibc's for itself and the libraries it loads; each fails
 * (NULL, ENOMEM) while the calling thread's fail_alloc is set. Not under the sanitizers, which
 * interpose them themselves: GT_FAIL_ALLOC is then left undefined, and so is fail_alloc.
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

static __thread int fail_alloc;

#ifdef __cplusplus
extern "C" {
#endif
void *malloc(size_t size)
{
	return fail_alloc ? NULL : __libc_malloc(size);
}
void *calloc(size_t n, size_t size)
{
	return fail_alloc ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t size)
{
	return fail_alloc ? NULL : __libc_realloc(p, size);
}
void *aligned_alloc(size_t align, size_t size)
{
	return fail_alloc ? NULL : __libc_memalign(align, size);
}
int posix_memalign(void **pp, size_t align, size_t size)
{
	void *p = fail_alloc ? NULL : __libc_memalign(align, size);
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
