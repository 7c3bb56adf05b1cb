/* SPDX-License-Identifier: MIT */
/* Debug-build reports of the header-only lists (<grace/list.h>, <grace/hlist.h>). */
#include <grace/list.h>
#include <grace/hlist.h>

#include "core/diag.h"

void grace__list_corrupt(const char *call, const void *entry, const char *what)
{
	grace__misuse_fatal(call, "list corruption at entry %p: %s", entry, what);
}
