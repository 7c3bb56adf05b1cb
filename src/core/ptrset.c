/* SPDX-License-Identifier: MIT */
/* Debug builds' pointer set (core/ptrset.h). */
#include "core/ptrset.h"

#include <stdlib.h>

#if GRACE__LIB_DEBUG
#define GRACE__PTRSET_TOMB ((uintptr_t)1)

static size_t ps_hash(uintptr_t p, size_t cap)
{
	return (size_t)(((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* Rehash into a table with room (twice the size unless tombstones filled it). Lock held. */
static bool ps_grow(struct grace__ptrset *s)
{
	size_t ncap = s->cap == 0 ? 1024 : s->live * 4 < s->cap ? s->cap : s->cap * 2;
	uintptr_t *n = (uintptr_t *)calloc(ncap, sizeof(*n));

	grace__lock_assert_held(&s->lock);
	if (!n)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		uintptr_t v = s->tab[i];
		if (v <= GRACE__PTRSET_TOMB)
			continue;
		size_t j = ps_hash(v, ncap);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = v;
	}
	free(s->tab);
	s->tab = n;
	s->cap = ncap;
	s->used = s->live;
	return true;
}

bool grace__ptrset_add(struct grace__ptrset *s, const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;
	size_t tomb = SIZE_MAX, i;

	grace__lock(&s->lock);
	if ((s->used + 1) * 2 > s->cap && !ps_grow(s)) {
		grace__unlock(&s->lock); /* no memory for the check: skip it */
		return true;
	}
	for (i = ps_hash(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
		uintptr_t v = s->tab[i];
		if (v == p) {
			grace__unlock(&s->lock);
			return false;
		}
		if (v == GRACE__PTRSET_TOMB) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if (v == 0)
			break;
	}
	if (tomb != SIZE_MAX) {
		s->tab[tomb] = p;
	} else {
		s->tab[i] = p;
		s->used++;
	}
	s->live++;
	grace__unlock(&s->lock);
	return true;
}

void grace__ptrset_del(struct grace__ptrset *s, const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;

	grace__lock(&s->lock);
	for (size_t i = s->cap ? ps_hash(p, s->cap) : 0; s->cap; i = (i + 1) & (s->cap - 1)) {
		uintptr_t v = s->tab[i];
		if (v == p) {
			s->tab[i] = GRACE__PTRSET_TOMB;
			s->live--;
			break;
		}
		if (v == 0)
			break;
	}
	grace__unlock(&s->lock);
}
#endif
