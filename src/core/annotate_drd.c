/* SPDX-License-Identifier: MIT */
/* drd client requests for core/annotate.c (valgrind/drd.h, when installed at build time; a
 * file of its own because helgrind.h defines the same ANNOTATE_* names). No-ops natively. */
#include <stddef.h>
#include <stdint.h>

#if defined(__has_include) && !defined(__cppcheck__) /* cppcheck cannot evaluate it */
#if __has_include(<valgrind/drd.h>)
#include <valgrind/drd.h>
#define GRACE__DRD 1
#endif
#endif

int grace__ann_drd_tool(void);
void grace__ann_drd_before(const volatile void *addr);
void grace__ann_drd_after(const volatile void *addr);
void grace__ann_drd_shared(const volatile void *addr, size_t len);

#ifdef GRACE__DRD
/* Is the tool drd? Its thread-id query answers 0 under any other tool. */
int grace__ann_drd_tool(void)
{
	return DRD_GET_DRD_THREADID != 0;
}
void grace__ann_drd_before(const volatile void *addr)
{
	ANNOTATE_HAPPENS_BEFORE((void *)(uintptr_t)addr);
}
void grace__ann_drd_after(const volatile void *addr)
{
	ANNOTATE_HAPPENS_AFTER((void *)(uintptr_t)addr);
}
void grace__ann_drd_shared(const volatile void *addr, size_t len)
{
	ANNOTATE_BENIGN_RACE_SIZED((void *)(uintptr_t)addr, len, "grace: shared through atomics");
}
#else
int grace__ann_drd_tool(void)
{
	return 0;
}
void grace__ann_drd_before(const volatile void *addr)
{
	(void)addr;
}
void grace__ann_drd_after(const volatile void *addr)
{
	(void)addr;
}
void grace__ann_drd_shared(const volatile void *addr, size_t len)
{
	(void)addr;
	(void)len;
}
#endif
