/* SPDX-License-Identifier: MIT */
/* Debug-build checks called from the inline headers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/pointer.h>
#include <grace/rcu.h>
#include <grace/qsbr.h>

#include "core/debug.h"
#include "core/diag.h"

/* Other flavors (srcu) count their open sections here in debug builds. */
GRACE_API __thread unsigned int grace__dbg_extra_sections GRACE_TLS_IE;

#ifdef GRACE_DEBUG
static pthread_once_t pause_once = PTHREAD_ONCE_INIT;
static char pause_site[32];
static long pause_us;

static void pause_init(void)
{
	const char *e = getenv("GRACE_TEST_PAUSE");
	const char *colon = e ? strchr(e, ':') : NULL;
	char *end;

	if (!colon || (size_t)(colon - e) >= sizeof(pause_site))
		return;
	long us = strtol(colon + 1, &end, 10);
	if (*end || us <= 0 || us > 1000000) {
		grace__warn("GRACE_TEST_PAUSE=%s: expected <site>:<1..1000000 microseconds>", e);
		return;
	}
	memcpy(pause_site, e, (size_t)(colon - e));
	pause_us = us;
}

GRACE_API void grace__test_pause(const char *site)
{
	/* pthread_once orders pause_init's stores before these loads, in every thread. */
	pthread_once(&pause_once, pause_init);
	if (pause_us && strcmp(site, pause_site) == 0) {
		struct timespec ts = { pause_us / 1000000, (pause_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
	}
}
#endif

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
