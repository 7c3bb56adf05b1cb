/* SPDX-License-Identifier: MIT */
/* Debug-build checks called from the inline headers. */
#include <grace/pointer.h>
#include <grace/rcu.h>
#include <grace/qsbr.h>

#include "core/debug.h"
#include "core/diag.h"

/* Other flavors (srcu) count their open sections here in debug builds. */
GRACE_API __thread unsigned int grace__dbg_extra_sections GRACE_TLS_IE;

int grace_debug_in_read_section(void)
{
	return grace_rcu_read_ongoing() || grace_qsbr_thread_is_online() ||
	       grace__dbg_extra_sections != 0;
}

void grace__debug_deref_outside(const char *call, const char *file, int line)
{
	grace__misuse_fatal(call,
			    "%s:%d: called outside any read-side section "
			    "(use rcu_dereference_protected() on the update side)",
			    file, line);
}
