/* SPDX-License-Identifier: MIT */
/* The global-lock baseline's ID array: see ipc_ary.h. Every function runs under the global lock,
 * so plain loads and stores suffice and a grown array replaces the old one at once. */
#include "ipc_ary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t ipc_slot_bits(uint32_t limit)
{
	uint32_t b = 0;

	while ((1u << b) < limit)
		b++;
	return b;
}

int ipc_ary_init(struct ipc_ary *ids, uint32_t limit)
{
	memset(ids, 0, sizeof(*ids));
	ids->limit = limit;
	ids->size = limit < IPC_ARY_INIT ? limit : IPC_ARY_INIT;
	ids->slot_bits = ipc_slot_bits(limit);
	ids->slot_mask = (1u << ids->slot_bits) - 1;
	ids->seq_mask = (uint32_t)(0x7fffffffu >> ids->slot_bits);
	ids->slot = (void **)calloc(ids->size, sizeof(void *));
	ids->seq = (uint32_t *)calloc(ids->size, sizeof(uint32_t));
	if (!ids->slot || !ids->seq) {
		ipc_ary_fini(ids);
		return -ENOMEM;
	}
	return 0;
}

void ipc_ary_fini(struct ipc_ary *ids)
{
	free(ids->slot);
	free(ids->seq);
	ids->slot = NULL;
	ids->seq = NULL;
}

static int grow(struct ipc_ary *ids)
{
	uint32_t n = ids->size * 2 < ids->limit ? ids->size * 2 : ids->limit;
	void **s = (void **)realloc(ids->slot, n * sizeof(void *));
	uint32_t *q;

	if (!s)
		return -ENOMEM;
	ids->slot = s;
	q = (uint32_t *)realloc(ids->seq, n * sizeof(uint32_t));
	if (!q)
		return -ENOMEM; /* slot already larger: harmless, size unchanged */
	ids->seq = q;
	memset(ids->slot + ids->size, 0, (n - ids->size) * sizeof(void *));
	memset(ids->seq + ids->size, 0, (n - ids->size) * sizeof(uint32_t));
	ids->size = n;
	ids->grows++;
	return 0;
}

/* Reserved slots hold this marker until ipc_ary_set(). */
static char reserved_marker;
#define RESERVED ((void *)&reserved_marker)

int ipc_ary_alloc(struct ipc_ary *ids, void *p)
{
	uint32_t i;

	if (ids->in_use >= ids->limit)
		return -ENOSPC;
	for (i = ids->hint; i < ids->size; i++)
		if (!ids->slot[i])
			break;
	if (i == ids->size) {
		int err = grow(ids);

		if (err)
			return err;
	}
	ids->slot[i] = p ? p : RESERVED;
	ids->seq[i] = (ids->seq[i] + 1) & ids->seq_mask;
	ids->in_use++;
	ids->hint = i + 1;
	return (int)(ids->seq[i] << ids->slot_bits | i);
}

static void **slot_of(struct ipc_ary *ids, int id)
{
	uint32_t i = (uint32_t)id & ids->slot_mask;

	if (id < 0 || i >= ids->size || !ids->slot[i] ||
	    ids->seq[i] != (uint32_t)id >> ids->slot_bits)
		return NULL;
	return &ids->slot[i];
}

void ipc_ary_set(struct ipc_ary *ids, int id, void *p)
{
	void **s = slot_of(ids, id);

	if (s)
		*s = p;
}

void *ipc_ary_find(struct ipc_ary *ids, int id)
{
	void **s = slot_of(ids, id);

	return s && *s != RESERVED ? *s : NULL;
}

void ipc_ary_remove(struct ipc_ary *ids, int id)
{
	void **s = slot_of(ids, id);
	uint32_t i;

	if (!s)
		return;
	i = (uint32_t)(s - ids->slot);
	*s = NULL;
	ids->in_use--;
	if (i < ids->hint)
		ids->hint = i;
}

void *ipc_ary_at(struct ipc_ary *ids, uint32_t idx, int *id)
{
	if (idx >= ids->size || !ids->slot[idx] || ids->slot[idx] == RESERVED)
		return NULL;
	*id = (int)(ids->seq[idx] << ids->slot_bits | idx);
	return ids->slot[idx];
}

int ipc_ary_max_index(const struct ipc_ary *ids)
{
	for (uint32_t i = ids->size; i > 0; i--)
		if (ids->slot[i - 1] && ids->slot[i - 1] != RESERVED)
			return (int)(i - 1);
	return -1;
}
