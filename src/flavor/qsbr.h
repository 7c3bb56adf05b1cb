/* SPDX-License-Identifier: MIT */
/* QSBR's internal names (flavor/qsbr.c). */
#ifndef GRACE_SRC_QSBR_H
#define GRACE_SRC_QSBR_H

struct grace__flavor;

/* QSBR's descriptor (core/flavor.h). */
extern struct grace__flavor grace__qsbr_flavor;
/* Start-up: the registry and the thread-exit key (called once by src/init.c). */
void grace__qsbr_init(void);

#endif
