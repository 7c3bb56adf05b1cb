/* SPDX-License-Identifier: MIT */
/* grace-urcu: the deprecated name of <urcu/uatomic.h>. */
#include <urcu/uatomic.h>
