/* SPDX-License-Identifier: MIT */
/* Built without grace-urcu (-DGRACE_URCU=OFF): the design is absent. */
#include <stddef.h>

#include "hashapi.h"

static void *create(uint64_t nkeys, uint64_t buckets, int auto_resize)
{
	(void)nkeys;
	(void)buckets;
	(void)auto_resize;
	return NULL;
}

const struct ha_design ha_grace_urcu = {
	"grace-urcu-absent", "", 0, 0, create, NULL, NULL, NULL, NULL
};
