/* SPDX-License-Identifier: MIT */
/* global spinlock: see lockdesign.h. */
#define LD_GLOBAL 1
#define LD_RW 0
#define HB_SYM gspin
#define HB_NAME "global-spinlock"
#define HB_LABEL "global spinlock"
#include "lockdesign.h"
