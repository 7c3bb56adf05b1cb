/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht_resize() with a size above 2^63 (ULONG_MAX: "as large as allowed") grows the table
 * to its max_nr_buckets, as liburcu does (it clamps first). It used to round up first, with a
 * shift by 64 (undefined; 1 on x86), and shrink the table to its minimum instead.
 */
#include <limits.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "gtest_lite.h"

TEST(resize_beyond_2_63_clamps_to_max)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(64, 1, 1024, 0, &urcu_memb_flavor, NULL);

	REQUIRE(ht);
	cds_lfht_resize(ht, ULONG_MAX);
	CHECK_MSG(ht->size == 1024, "size %lu after cds_lfht_resize(ULONG_MAX), max 1024",
		  ht->size);
	cds_lfht_resize(ht, 64);
	CHECK_MSG(ht->size == 64, "size %lu after cds_lfht_resize(64)", ht->size);
	cds_lfht_resize(ht, (1ul << 63) + 1);
	CHECK_MSG(ht->size == 1024, "size %lu after cds_lfht_resize(2^63 + 1), max 1024", ht->size);
	cds_lfht_resize(ht, 0);
	CHECK_MSG(ht->size == 1, "size %lu after cds_lfht_resize(0), min 1", ht->size);
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
}

GT_MAIN()
