/* SPDX-License-Identifier: MIT */
/* The default flavor's internal names (flavor/memb.c). */
#ifndef GRACE_SRC_MEMB_H
#define GRACE_SRC_MEMB_H

struct grace__flavor;

/* The default flavor's descriptor (core/flavor.h). */
extern struct grace__flavor grace__memb_flavor;
/* Start-up: the registry and the thread-exit key (called once by src/init.c). */
void grace__memb_init(void);

#endif
