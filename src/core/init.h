/* SPDX-License-Identifier: MIT */
/* Library start-up (core/init.c). */
#ifndef GRACE_SRC_INIT_H
#define GRACE_SRC_INIT_H

/* Once per process (also run by a constructor): choose membarrier or the fence fallback, set
 * up the flavors, install the fork handlers. Cheap after the first call. */
void grace__init(void);

#endif
