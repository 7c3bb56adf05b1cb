/* SPDX-License-Identifier: MIT */
/* Debug-build bookkeeping shared between flavors (core/debug.c). */
#ifndef GRACE_SRC_DEBUG_H
#define GRACE_SRC_DEBUG_H

#include <grace/compiler.h>

/* Open read-side sections of flavors other than rcu and qsbr (srcu), counted in debug builds
 * so that grace_debug_in_read_section() sees them. */
extern __thread unsigned int grace__dbg_extra_sections GRACE_TLS_IE;

#endif
