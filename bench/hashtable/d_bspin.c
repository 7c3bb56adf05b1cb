/* SPDX-License-Identifier: MIT */
/* per-bucket spinlock: see lockdesign.h. */
#define LD_GLOBAL 0
#define LD_RW 0
#define HB_SYM bspin
#define HB_NAME "bucket-spinlock"
#define HB_LABEL "per-bucket spinlock"
#include "lockdesign.h"
