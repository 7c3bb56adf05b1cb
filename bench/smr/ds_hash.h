/* SPDX-License-Identifier: MIT */
/*
 * A lock-free hash table of Harris-Michael lists (Michael, SPAA 2002): a fixed array of buckets,
 * range/4 of them (a power of two), each the head word of a sorted list (ds_list.h); key k lives
 * in bucket k & (buckets - 1). With the table prefilled to half the range, a bucket holds two
 * keys on average, so an operation touches the bucket's head and about one node: the cost is the
 * cache misses, which the key range moves from L2 to beyond the last-level cache.
 *
 * The heads are packed (eight to a cache line), as in the papers' tables. No resizing.
 */
#ifndef SMR_DS_HASH_H
#define SMR_DS_HASH_H

#include "ds_list.h"

struct hht {
	uint64_t mask;
	uintptr_t *heads;
};

SMR_INLINE uintptr_t *hht_bucket(struct hht *h, uint64_t key)
{
	return &h->heads[key & h->mask];
}

static inline struct hht *hht_create(uint64_t range)
{
	struct hht *h = (struct hht *)calloc(1, sizeof(*h));
	uint64_t n = range / 4 ? range / 4 : 1;
	void *heads = NULL;

	if (!h || posix_memalign(&heads, SMR_LINE, n * sizeof(uintptr_t)))
		smr_fail("out of memory");
	memset(heads, 0, n * sizeof(uintptr_t));
	h->heads = (uintptr_t *)heads;
	h->mask = n - 1; /* range is a power of two (the driver checks) */
	return h;
}

static inline uint64_t hht_verify(struct hht *h, uint64_t range, uint8_t *present)
{
	uint64_t n = 0;

	for (uint64_t b = 0; b <= h->mask; b++)
		n += hml_verify(&h->heads[b], range, true, h->mask, b, present);
	return n;
}

static inline void hht_destroy(struct hht *h)
{
	for (uint64_t b = 0; b <= h->mask; b++)
		hml_destroy(&h->heads[b]);
	free(h->heads);
	free(h);
}

#endif /* SMR_DS_HASH_H */
