/* SPDX-License-Identifier: MIT */
/*
 * The peer at its fastest: liburcu's memb flavor (Debian's liburcu-dev) built with
 * _LGPL_SOURCE, so its read side and rcu_dereference are inlined into the loop (what liburcu
 * recommends when speed matters). Otherwise the design of d_urcu.c, which this file includes.
 */
#define _LGPL_SOURCE
#define HB_SYM urcu_lgpl
#define HB_NAME "urcu-memb-lgpl"
#define HB_LABEL "liburcu memb (_LGPL_SOURCE, inlined)"
#include "d_urcu.c"
