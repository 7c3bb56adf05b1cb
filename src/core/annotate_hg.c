/* SPDX-License-Identifier: MIT */
/* helgrind client requests for core/annotate.c (valgrind/helgrind.h, when installed at build
 * time; its ANNOTATE_* names clash with drd.h's, hence a file of its own). No-ops natively. */
#include <stddef.h>
#include <stdint.h>

#if defined(__has_include) && !defined(__cppcheck__) /* cppcheck cannot evaluate it */
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/valgrind.h>
#include <valgrind/helgrind.h>
#define GRACE__HG 1
#endif
#endif

int grace__ann_vg_running(void);
int grace__ann_hg_tool(void);
void grace__ann_hg_before(const volatile void *addr);
void grace__ann_hg_after(const volatile void *addr);
void grace__ann_hg_forget(const volatile void *addr);
void grace__ann_hg_shared(const volatile void *addr, size_t len);

#ifdef GRACE__HG
int grace__ann_vg_running(void)
{
	return RUNNING_ON_VALGRIND != 0;
}
/* Is the tool helgrind? Its address-bits query answers -2 under any other tool (seen as
 * 0xfffffffe through the request's 32-bit default: compare the low 32 bits). */
int grace__ann_hg_tool(void)
{
	static char probe;
	return (unsigned int)VALGRIND_HG_GET_ABITS(&probe, NULL, 1) != (unsigned int)-2;
}
void grace__ann_hg_before(const volatile void *addr)
{
	ANNOTATE_HAPPENS_BEFORE((void *)(uintptr_t)addr);
}
void grace__ann_hg_after(const volatile void *addr)
{
	ANNOTATE_HAPPENS_AFTER((void *)(uintptr_t)addr);
}
void grace__ann_hg_forget(const volatile void *addr)
{
	ANNOTATE_HAPPENS_BEFORE_FORGET_ALL((void *)(uintptr_t)addr);
}
void grace__ann_hg_shared(const volatile void *addr, size_t len)
{
	VALGRIND_HG_DISABLE_CHECKING((void *)(uintptr_t)addr, len);
}
#else
int grace__ann_vg_running(void)
{
	return 0;
}
int grace__ann_hg_tool(void)
{
	return 0;
}
void grace__ann_hg_before(const volatile void *addr)
{
	(void)addr;
}
void grace__ann_hg_after(const volatile void *addr)
{
	(void)addr;
}
void grace__ann_hg_forget(const volatile void *addr)
{
	(void)addr;
}
void grace__ann_hg_shared(const volatile void *addr, size_t len)
{
	(void)addr;
	(void)len;
}
#endif
