/* SPDX-License-Identifier: MIT */
/* global rwlock: see lockdesign.h. */
#define LD_GLOBAL 1
#define LD_RW 1
#define HB_SYM grw
#define HB_NAME "global-rwlock"
#define HB_LABEL "global rwlock"
#include "lockdesign.h"
