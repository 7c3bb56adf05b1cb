/* SPDX-License-Identifier: MIT */
/* per-bucket rwlock: see lockdesign.h. */
#define LD_GLOBAL 0
#define LD_RW 1
#define HB_SYM brw
#define HB_NAME "bucket-rwlock"
#define HB_LABEL "per-bucket rwlock"
#include "lockdesign.h"
