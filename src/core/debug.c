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
#define PAUSE_SITES 4
static pthread_once_t pause_once = PTHREAD_ONCE_INIT;
static struct {
	char site[32];
	long us;
} pauses[PAUSE_SITES];

/* GRACE_TEST_PAUSE=<site>:<us>[,<site>:<us>...]: up to PAUSE_SITES sites. A malformed list is
 * ignored as a whole, with a warning (a test that sets it wrong must not half-run). */
static void pause_init(void)
{
	const char *e = getenv("GRACE_TEST_PAUSE");
	const char *p = e;

	if (!e || !*e)
		return;
	for (int n = 0; *p; n++) {
		const char *colon = strchr(p, ':');
		char *end;

		if (n == PAUSE_SITES || !colon || colon == p ||
		    (size_t)(colon - p) >= sizeof(pauses[n].site) ||
		    memchr(p, ',', (size_t)(colon - p)))
			goto bad;
		long us = strtol(colon + 1, &end, 10);
		if ((*end && (*end != ',' || !end[1])) || end == colon + 1 || us <= 0 ||
		    us > 1000000)
			goto bad;
		memcpy(pauses[n].site, p, (size_t)(colon - p));
		pauses[n].us = us;
		p = *end ? end + 1 : end;
	}
	return;
bad:
	memset(pauses, 0, sizeof(pauses));
	grace__warn("GRACE_TEST_PAUSE=%s: expected <site>:<1..1000000 microseconds>, up to %d "
		    "separated by commas",
		    e, PAUSE_SITES);
}

GRACE_API void grace__test_pause(const char *site)
{
	/* pthread_once orders pause_init's stores before these loads, in every thread. */
	pthread_once(&pause_once, pause_init);
	for (int i = 0; i < PAUSE_SITES && pauses[i].us; i++) {
		if (strcmp(site, pauses[i].site) == 0) {
			struct timespec ts = { pauses[i].us / 1000000,
					       (pauses[i].us % 1000000) * 1000 };
			nanosleep(&ts, NULL);
			return;
		}
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
