/* SPDX-License-Identifier: MIT */
/*
 * Library start-up: the interface on the ground floor, the implementation on the top floor
 * (src/init.c, the one file that names every module). Every module may call grace__init() to
 * make sure the library has started, without an include that reaches up.
 */
#ifndef GRACE_SRC_INIT_H
#define GRACE_SRC_INIT_H

#include <stdbool.h>
#include <grace/arch/atomic.h>

/* Set (release) once start-up has finished. */
extern bool grace__inited;
void grace__init_slow(void);

/* Once per process (also run by a constructor): choose membarrier or the fence fallback, set
 * up the flavors, install the fork handlers. After the first call: one load and a test.
 * Acquire: pairs with the release store at the end of start-up, so its choices are seen. */
static inline void grace__init(void)
{
	if (GRACE_UNLIKELY(!grace_load_acquire(&grace__inited)))
		grace__init_slow();
}

#endif
