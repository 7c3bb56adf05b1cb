/* SPDX-License-Identifier: MIT */
/*
 * grace_idr against a reference model of include/grace/idr.h and docs/ds.md: long random
 * sequences of grace_idr_alloc() (objects and reservations), grace_idr_replace(),
 * grace_idr_remove() and lookups, of live IDs and of stale ones, each checked call by call. The
 * model follows the documents' words only: an ID is seq << slot_bits | slot, slot_bits the bits
 * that index max_ids slots, and the first ID of a slot is its index; allocation takes the
 * lowest free slot, or with GRACE_IDR_CYCLIC the first free one after the last allocated
 * (wrapping); a slot's sequence advances at each reuse, so a stale ID finds nothing until the
 * sequence comes round again (2^(31 - slot_bits) reuses: with max_ids 2^24 that is 128, which
 * the churning runs pass); -ENOSPC at max_ids; a reserved ID looks up as NULL and is skipped by
 * the iteration; count, max_index and the iteration (each live object once, in slot order,
 * with its ID) every few calls.
 * GRACE_MODEL_SEEDS and GRACE_MODEL_OPS set the work.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>
#include <grace/idr.h>
#include "gtest_lite.h"
#include "model.h"

static struct gt_model_rng rng;
static struct gt_model_where w;
#define MCHECK(cond, ...) GT_MODEL_CHECK(&w, cond, __VA_ARGS__)

static uint32_t below(uint32_t n)
{
	return gt_model_below(&rng, n);
}

/* The model: per slot, whether it is in use, its pointer, and its sequence (0 until the
 * slot's first allocation: docs/ds.md, the first ID of each slot is its index). */
struct mslot {
	bool used, known;
	uint32_t seq, reuses;
	void *ptr;
};

static unsigned long wrapped; /* runs in which a slot's sequence came round */
static uintptr_t next_obj = 0x10000;
static void *new_ptr(void)
{
	next_obj += 16;
	return (void *)next_obj; /* never dereferenced: the registry does not own objects */
}

struct run {
	struct grace_idr idr;
	uint32_t max_ids, bits, seqmask;
	uint32_t cap; /* slots the model keeps: min(max_ids, calls + 1), all a run can reach */
	bool cyclic;
	uint32_t cursor; /* cyclic: where the next search starts */
	struct mslot *s;
	uint32_t count;
	uint32_t *live, *at; /* the slots in use (in any order), and each one's index there */
	int ids[256];        /* recent IDs, live or removed: for stale lookups */
	unsigned nids;
};

static int id_of(const struct run *r, uint32_t slot)
{
	return (int)((r->s[slot].seq << r->bits) | slot);
}

/* What a lookup (or replace, remove) of id must find: the slot's pointer if the ID is that of
 * the slot's current allocation, else nothing. */
static bool model_live(const struct run *r, int id, uint32_t *slotp)
{
	if (id < 0)
		return false;
	uint32_t slot = (uint32_t)id & ((1u << r->bits) - 1);
	uint32_t seq = (uint32_t)id >> r->bits;
	*slotp = slot;
	return slot < r->cap && r->s[slot].used && r->s[slot].known && r->s[slot].seq == seq;
}

static void remember(struct run *r, int id)
{
	r->ids[r->nids++ % 256] = id;
}

static int pick_id(struct run *r)
{
	uint32_t n = r->nids < 256 ? r->nids : 256;
	if (n == 0 || below(8) == 0)
		return (int)below(1u << 30); /* anything, most likely never allocated */
	return r->ids[below(n)];
}

static void do_alloc(struct run *r)
{
	void *p = below(8) == 0 ? NULL : new_ptr();
	int id = grace_idr_alloc(&r->idr, p);

	if (r->count == r->max_ids) {
		MCHECK(id == -ENOSPC, "alloc into a full registry (%u) returned %d", r->max_ids,
		       id);
		return;
	}
	/* The slot the header promises. */
	uint32_t want = UINT32_MAX;
	/* (Slots from cap on are free: a run never reaches them.) */
	for (uint32_t i = 0; i < r->max_ids; i++) {
		uint32_t j = r->cyclic ? (r->cursor + i) % r->max_ids : i;
		if (j >= r->cap || !r->s[j].used) {
			want = j;
			break;
		}
	}
	MCHECK(id >= 0, "alloc returned %d with %u of %u IDs in use", id, r->count, r->max_ids);
	if (id < 0)
		return;
	uint32_t slot = (uint32_t)id & ((1u << r->bits) - 1);
	uint32_t seq = (uint32_t)id >> r->bits;
	MCHECK(slot == want, "alloc took slot %u, the model's next free one is %u (%s)", slot, want,
	       r->cyclic ? "cyclic" : "lowest");
	REQUIRE(slot < r->cap);
	struct mslot *m = &r->s[slot];
	MCHECK(!m->used, "alloc took slot %u, which is in use", slot);
	/* docs/ds.md: the first ID of each slot equals the slot index (sequence 0). */
	MCHECK(seq == (m->known ? m->seq : 0), "alloc into slot %u: sequence %u, the model's is %u",
	       slot, seq, m->known ? m->seq : 0);
	m->known = true;
	m->seq = seq;
	m->used = true;
	m->ptr = p;
	r->at[slot] = r->count;
	r->live[r->count++] = slot;
	r->cursor = slot + 1 < r->max_ids ? slot + 1 : 0;
	remember(r, id);
}

/* Mostly a live ID (removals and replacements must hit), else any of pick_id()'s. */
static int pick_live(struct run *r)
{
	if (r->count && below(4) != 0)
		return id_of(r, r->live[below(r->count)]);
	return pick_id(r);
}

static void do_remove(struct run *r)
{
	int id = pick_live(r);
	uint32_t slot = 0;
	bool live = model_live(r, id, &slot);
	void *p = grace_idr_remove(&r->idr, id);
	if (!live) {
		MCHECK(p == NULL, "remove of dead ID %d returned %p", id, p);
		return;
	}
	struct mslot *m = &r->s[slot];
	MCHECK(p == m->ptr, "remove of ID %d returned %p, the model holds %p", id, p, m->ptr);
	m->used = false;
	m->ptr = NULL;
	m->seq = (m->seq + 1) & r->seqmask; /* the next allocation's sequence */
	m->reuses++;
	uint32_t last = r->live[--r->count];
	r->live[r->at[slot]] = last;
	r->at[last] = r->at[slot];
}

static void do_replace(struct run *r)
{
	int id = pick_live(r);
	uint32_t slot = 0;
	bool live = model_live(r, id, &slot);
	void *p = below(6) == 0 ? NULL : new_ptr(), *old = (void *)1;
	int e = grace_idr_replace(&r->idr, id, p, &old);
	if (!live) {
		MCHECK(e == -ENOENT, "replace of dead ID %d returned %d", id, e);
		return;
	}
	MCHECK(e == 0, "replace of live ID %d returned %d", id, e);
	MCHECK(old == r->s[slot].ptr, "replace of ID %d: old %p, the model holds %p", id, old,
	       r->s[slot].ptr);
	if (e == 0)
		r->s[slot].ptr = p;
}

static void do_lookup(struct run *r)
{
	int id = pick_id(r);
	uint32_t slot = 0;
	bool live = model_live(r, id, &slot);
	rcu_read_lock();
	void *p = grace_idr_lookup(&r->idr, id);
	rcu_read_unlock();
	void *want = live ? r->s[slot].ptr : NULL;
	MCHECK(p == want, "lookup of ID %d (%s) returned %p, the model says %p", id,
	       live ? "live" : "dead", p, want);
}

static void check_all(struct run *r)
{
	uint32_t c = grace_idr_count(&r->idr);
	MCHECK(c == r->count, "count %u, the model holds %u", c, r->count);
	int maxi = -1;
	for (uint32_t j = 0; j < r->cap; j++)
		if (r->s[j].used)
			maxi = (int)j;
	int mi = grace_idr_max_index(&r->idr);
	MCHECK(mi == maxi, "max_index %d, the model's %d", mi, maxi);
	/* The iteration: each live object once, in slot order, with its ID; reserved IDs are
	 * skipped. */
	uint32_t slot = 0, seen = 0, want = 0, last = 0;
	int id = -1;
	void *p;
	bool first = true;
	for (uint32_t j = 0; j < r->cap; j++)
		want += r->s[j].used && r->s[j].ptr;
	rcu_read_lock();
	grace_idr_for_each(&r->idr, slot, id, p) {
		MCHECK(first || slot > last, "iteration went from slot %u to %u", last, slot);
		MCHECK(slot < r->cap && r->s[slot].used && r->s[slot].ptr == p,
		       "iteration returned %p at slot %u, not the model's", p, slot);
		if (slot < r->cap && r->s[slot].used)
			MCHECK(id == id_of(r, slot), "iteration gave ID %d for slot %u, not %d", id,
			       slot, id_of(r, slot));
		first = false;
		last = slot;
		seen++;
	}
	rcu_read_unlock();
	MCHECK(seen == want, "iteration returned %u objects, the model holds %u", seen, want);
}

static void run_seed(unsigned long long s, unsigned long nops)
{
	static const uint32_t maxes[] = { 1, 2, 7, 64, 100, 1000, 0, 1u << 24 };
	struct grace_idr_params p;
	struct run *r = calloc(1, sizeof(*r));

	REQUIRE(r);
	w.seed = s;
	gt_model_seed(&rng, s, 7);
	memset(&p, 0, sizeof(p));
	bool churn = below(3) == 0;
	p.max_ids = churn && below(2) ? 1u << 24 : maxes[below(8)];
	r->max_ids = p.max_ids ? p.max_ids : GRACE_IDR_DEFAULT_MAX;
	p.init_size = below(2) ? 0 : 1 + below(r->max_ids < 300 ? r->max_ids : 300);
	r->cyclic = below(2);
	p.flags = r->cyclic ? GRACE_IDR_CYCLIC : 0;
	while ((1u << r->bits) < r->max_ids)
		r->bits++;
	r->seqmask = (1u << (31 - r->bits)) - 1;
	r->cap = r->max_ids < nops + 1 ? r->max_ids : (uint32_t)nops + 1;
	r->s = calloc(r->cap, sizeof(*r->s));
	r->live = calloc(r->cap, sizeof(*r->live));
	r->at = calloc(r->cap, sizeof(*r->at));
	REQUIRE(r->s && r->live && r->at);
	int e = grace_idr_init(&r->idr, &p);
	MCHECK(e == 0, "init (max_ids %u, init_size %u) returned %d", p.max_ids, p.init_size, e);
	if (e) {
		free(r->live);
		free(r->at);
		free(r->s);
		free(r);
		return;
	}
	/* Small registries fill up (ENOSPC, the cyclic search's wrap): allocation leads. A
	 * churning run keeps few IDs, whose slots come round many times (sequence wrap). */
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++) {
		unsigned what = below(100);
		if (churn && what < 65)
			what = what < 25 ? 0 : 50; /* more removals than allocations */
		if (what < 40)
			do_alloc(r);
		else if (what < 65)
			do_remove(r);
		else if (what < 75)
			do_replace(r);
		else if (what < 97)
			do_lookup(r);
		else
			check_all(r);
	}
	check_all(r);
	uint32_t most = 0;
	for (uint32_t j = 0; j < r->cap; j++)
		most = r->s[j].reuses > most ? r->s[j].reuses : most;
	if (most > r->seqmask)
		wrapped++;

	grace_idr_destroy(&r->idr);
	free(r->live);
	free(r->at);
	free(r->s);
	free(r);
}

TEST(random_calls_match_the_model)
{
	gt_model_run_seeds(run_seed, 32, 12000, 1, 0);
	printf("  %lu runs reused a slot past its sequence's wrap\n", wrapped);
}

GT_MAIN()
