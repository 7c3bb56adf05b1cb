/* SPDX-License-Identifier: MIT */
#ifndef GRACE_SRC_INIT_H
#define GRACE_SRC_INIT_H
#include <stdbool.h>
/* Library start-up, once per process (also run by a constructor): choose membarrier or the
 * fence fallback, set up the flavors. Cheap after the first call. */
void grace__init(void);
/* Fork handlers of each module, called by init.c in a fixed order. */
void grace__memb_atfork_prepare(void);
void grace__memb_atfork_parent(void);
void grace__memb_atfork_child(void);
void grace__qsbr_atfork_prepare(void);
void grace__qsbr_atfork_parent(void);
void grace__qsbr_atfork_child(void);
void grace__memb_init(void);
void grace__qsbr_init(void);
#endif
