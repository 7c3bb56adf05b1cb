/* SPDX-License-Identifier: MIT */
/* The default flavor's internal names (flavor/memb.c). */
#ifndef GRACE_SRC_MEMB_H
#define GRACE_SRC_MEMB_H

struct grace__flavor;

/* The default flavor's descriptor (core/flavor.h). */
extern struct grace__flavor grace__memb_flavor;
/* Start-up: the registry and the thread-exit key (called once by src/init.c). */
void grace__memb_init(void);
/* Blocking grace periods that slept for their asks' answers, and those sleeps that ran out and
 * fell back to barrier A (flavor/memb.c, "Sleeping for the answers"). Statistics: relaxed. */
extern unsigned long grace__memb_ask_sleeps, grace__memb_ask_sleeps_out;

#endif
