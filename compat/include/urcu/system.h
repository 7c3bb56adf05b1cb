/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/system.h>: shared-variable loads and stores under liburcu's names. */
#ifndef GRACE_URCU_SYSTEM_H
#define GRACE_URCU_SYSTEM_H

#include <urcu/compiler.h>
#include <urcu/arch.h>

/* One untorn load or store the compiler may not merge or repeat (liburcu's semantics: no
 * fence). The _-less names are the same on the cache-coherent machines grace supports. */
#define _CMM_LOAD_SHARED(p) CMM_ACCESS_ONCE(p)
#define CMM_LOAD_SHARED(p) _CMM_LOAD_SHARED(p)
#define _CMM_STORE_SHARED(x, v) __extension__({ CMM_ACCESS_ONCE(x) = (v); })
#define CMM_STORE_SHARED(x, v)                                         \
	__extension__({                                                \
		__typeof__(x) grace_urcu__v = _CMM_STORE_SHARED(x, v); \
		grace_urcu__v;                                         \
	})

#endif
