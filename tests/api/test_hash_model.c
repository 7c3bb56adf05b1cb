/* SPDX-License-Identifier: MIT */
/*
 * grace_hash against a reference model: long random sequences of every update call (add with
 * duplicates, add_unique, add_or_get, add_replace, del, del_key, replace), explicit resizes and,
 * in half the tables, automatic ones, each checked against a plain multiset of what include/
 * grace/hash.h says the table holds after the call. After every call the return value and the
 * count; every few calls lookups of present and absent keys, the full visit of a key's hash
 * (grace_hash_for_each_possible_rcu) and a whole iteration, which must return each node the
 * model holds exactly once and nothing else. Every node passes through the table's free
 * function exactly once, and only once it has left the table (or at destroy): a node freed
 * early is poisoned first, which the next visit or ASan sees.
 *
 * The tables vary by seed: sizes, stripes, a good hash or a poor one (sixteen keys per hash
 * value, so chains hold equal hashes of different keys), key ranges from 16 to 4096 (dense:
 * many duplicates; sparse: mostly misses). The second case runs threads on one table, each on
 * its own share of the keys with its own model (see struct runner). GRACE_MODEL_SEEDS,
 * GRACE_MODEL_OPS and GRACE_MODEL_THREADS set the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>
#include <grace/hash.h>
#include "gtest_lite.h"
#include "model.h"

#define LIVE 0x4c495645u
#define DEAD 0xdeadbeefu

enum { ST_OUT, ST_IN, ST_GONE };

struct runner;

struct obj {
	uint64_t key;
	unsigned magic;
	struct runner *owner;
	unsigned id; /* index in its runner's all[] */
	int state;   /* ST_*: where the model says the node is */
	struct grace_hash_node hn;
};

/*
 * One runner per thread: its random sequence, its nodes and its model. A sequential run has one
 * runner owning every key; a concurrent run splits the keys (key % nthreads == the runner's
 * index), so each runner's model stays exact while the others update the same stripes and
 * chains, resize and free beside it.
 */

struct runner {
	struct gt_model_rng rng;
	struct gt_model_where w; /* w.thread: the runner's index */
	unsigned idx, nthreads;
	struct obj **all;     /* every node made, by id */
	unsigned char *freed; /* by id: freed (the table's free function or drop_obj()) */
	unsigned nall, capall;
	unsigned long bad_frees;
	struct gt_model_bag m; /* the runner's nodes in the table, by key */
};

static unsigned below(struct runner *r, unsigned n)
{
	return gt_model_below(&r->rng, n);
}

static uint64_t good_hash(const void *key, void *arg)
{
	(void)arg;
	return gt_model_mix64(*(const uint64_t *)key);
}
static uint64_t weak_hash(const void *key, void *arg)
{
	(void)arg;
	return gt_model_mix64(*(const uint64_t *)key >> 4);
}
static bool match_key(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	const struct obj *o = container_of(n, struct obj, hn);
	return o->key == *(const uint64_t *)key;
}

/* The table's free function: after a grace period, once per node that left the table. */
static void free_obj(struct rcu_head *h)
{
	struct obj *o = container_of(grace_hash_node_of_rcu(h), struct obj, hn);
	struct runner *r = o->owner;
	if (o->magic != LIVE || r->freed[o->id] || o->state == ST_OUT)
		/* Relaxed: a count read after the table's destroy, whose barrier orders it. */
		__atomic_fetch_add(&r->bad_frees, 1, __ATOMIC_RELAXED);
	r->freed[o->id] = 1;
	o->magic = DEAD;
	free(o);
}

static struct obj *new_obj(struct runner *r, uint64_t key)
{
	/* all[] and freed[] are sized for the run before it starts: the table's free function
	 * writes freed[] from a callback worker while this thread makes nodes. */
	REQUIRE(r->nall < r->capall);
	struct obj *o = calloc(1, sizeof(*o));
	REQUIRE(o);
	o->key = key;
	o->magic = LIVE;
	o->owner = r;
	o->id = r->nall;
	o->state = ST_OUT;
	r->all[r->nall] = o;
	r->freed[r->nall] = 0;
	r->nall++;
	return o;
}

/* A node the table never took: the caller frees it. */
static void drop_obj(struct obj *o)
{
	o->owner->freed[o->id] = 1;
	o->magic = DEAD;
	free(o);
}

/* ---- the model: the nodes in the table, by key (a node per entry; duplicates allowed) ---- */

static void model_add(struct gt_model_bag *m, struct obj *o)
{
	gt_bag_add(m, (unsigned)o->key, o);
	o->state = ST_IN;
}

static int model_find(const struct gt_model_bag *m, const struct obj *o)
{
	return gt_bag_find(m, (unsigned)o->key, o);
}

static void model_del(struct gt_model_bag *m, struct obj *o)
{
	gt_bag_del(m, (unsigned)o->key, o);
	o->state = ST_GONE;
}

/* ---- checks ---- */

#define MCHECK(cond, ...) GT_MODEL_CHECK(&r->w, cond, __VA_ARGS__)

static bool own(const struct runner *r, const struct obj *o)
{
	return o->owner == r;
}

/* Inside a section: lookup and the visit of the key's hash agree with the model. */
static void check_key(struct runner *r, struct grace_hash *ht, uint64_t key, grace_hash_fn hf)
{
	const struct gt_model_bag *m = &r->m;
	unsigned k = (unsigned)key;
	struct grace_hash_node *n = grace_hash_lookup(ht, &key);
	if (m->n[k] == 0) {
		MCHECK(n == NULL, "lookup of absent key %u found a node", k);
	} else {
		struct obj *o = n ? container_of(n, struct obj, hn) : NULL;
		MCHECK(o && o->magic == LIVE && o->key == key && model_find(m, o) >= 0,
		       "lookup of key %u (%u nodes) found %p, not one of them", k, m->n[k],
		       (void *)o);
	}
	unsigned seen = 0;
	struct grace_hash_node *pos;
	uint64_t h = hf(&key, NULL);
	grace_hash_for_each_possible_rcu(ht, pos, h) {
		struct obj *o = container_of(pos, struct obj, hn);
		MCHECK(o->magic == LIVE, "visit of key %u: a freed node", k);
		MCHECK(pos->hash == h, "visit of key %u: a node of another hash", k);
		if (o->key != key || !own(r, o))
			continue;
		MCHECK(model_find(m, o) >= 0, "visit of key %u: a node the model lacks", k);
		seen++;
	}
	MCHECK(seen == m->n[k], "visit of key %u: %u nodes, the model holds %u", k, seen, m->n[k]);
}

/* Inside a section: the iteration returns each node of the runner's model once (another
 * runner's are only checked to be live), and alone nothing else. */
static void check_all(struct runner *r, struct grace_hash *ht)
{
	const struct gt_model_bag *m = &r->m;
	unsigned char *mark = calloc(r->nall + 1, 1);
	REQUIRE(mark);
	size_t n = 0;
	struct grace_hash_iter it;
	struct grace_hash_node *pos;
	grace_hash_for_each_rcu(ht, it, pos) {
		struct obj *o = container_of(pos, struct obj, hn);
		MCHECK(o->magic == LIVE, "iteration returned a freed node");
		if (!own(r, o))
			continue;
		MCHECK(o->state == ST_IN, "iteration returned node %u (state %d) not in the table",
		       o->id, o->state);
		MCHECK(!mark[o->id], "iteration returned node %u twice", o->id);
		mark[o->id] = 1;
		n++;
	}
	MCHECK(n == m->count, "iteration returned %zu nodes, the model holds %zu", n, m->count);
	free(mark);
}

/* A key of the runner's share. */
static uint64_t own_key(struct runner *r)
{
	unsigned per = r->m.nkeys / r->nthreads;
	return (uint64_t)below(r, per) * r->nthreads + r->idx;
}

struct run_arg {
	struct runner *r;
	struct grace_hash *ht;
	grace_hash_fn hf;
	unsigned long nops;
};

static void *run_calls(void *arg)
{
	struct run_arg *a = (struct run_arg *)arg;
	struct runner *r = a->r;
	struct grace_hash *ht = a->ht;
	grace_hash_fn hf = a->hf;

	for (r->w.op = 0; r->w.op < a->nops && !gt_model_failed(); r->w.op++) {
		uint64_t key = own_key(r);
		unsigned k = (unsigned)key;
		unsigned what = below(r, 1000);

		if (what < 5) {
			/* An explicit resize, outside any section. */
			size_t want = (size_t)1 << below(r, 13);
			int e = grace_hash_resize(ht, want);
			MCHECK(e == 0, "resize to %zu returned %d", want, e);
			size_t b = grace_hash_buckets(ht);
			MCHECK(b >= 1 && (b & (b - 1)) == 0, "buckets %zu, not a power of two", b);
			continue;
		}
		rcu_read_lock();
		if (what < 220) {
			struct obj *o = new_obj(r, key);
			int e = grace_hash_add(ht, &o->hn, &o->key);
			MCHECK(e == 0, "add returned %d", e);
			model_add(&r->m, o);
		} else if (what < 320) {
			struct obj *o = new_obj(r, key);
			int e = grace_hash_add_unique(ht, &o->hn, &o->key);
			if (r->m.n[k]) {
				MCHECK(e == -EEXIST, "add_unique of present key %u returned %d", k,
				       e);
				if (e == 0)
					model_add(&r->m, o);
				else
					drop_obj(o);
			} else {
				MCHECK(e == 0, "add_unique of absent key %u returned %d", k, e);
				if (e == 0)
					model_add(&r->m, o);
				else
					drop_obj(o);
			}
		} else if (what < 420) {
			struct obj *o = new_obj(r, key);
			struct grace_hash_node *g = grace_hash_add_or_get(ht, &o->hn, &o->key);
			struct obj *go = g ? container_of(g, struct obj, hn) : NULL;
			if (r->m.n[k]) {
				MCHECK(go && go != o && model_find(&r->m, go) >= 0,
				       "add_or_get of present key %u returned %p", k, (void *)go);
				if (go == o)
					model_add(&r->m, o);
				else
					drop_obj(o);
			} else {
				MCHECK(go == o,
				       "add_or_get of absent key %u returned %p, not the node", k,
				       (void *)go);
				if (go == o)
					model_add(&r->m, o);
				else
					drop_obj(o);
			}
		} else if (what < 520) {
			struct obj *o = new_obj(r, key);
			unsigned before = r->m.n[k];
			struct grace_hash_node *g = grace_hash_add_replace(ht, &o->hn, &o->key);
			struct obj *go = g ? container_of(g, struct obj, hn) : NULL;
			if (before) {
				MCHECK(go && go->magic == LIVE && model_find(&r->m, go) >= 0,
				       "add_replace of present key %u returned %p", k, (void *)go);
				if (go && model_find(&r->m, go) >= 0)
					model_del(&r->m, go);
			} else {
				MCHECK(go == NULL, "add_replace of absent key %u returned %p", k,
				       (void *)go);
			}
			model_add(&r->m, o);
		} else if (what < 670) {
			/* del of a node the model holds, or of one that left (ENOENT). */
			if (r->m.n[k]) {
				struct obj *o = r->m.in[k][below(r, r->m.n[k])];
				int e = grace_hash_del(ht, &o->hn);
				MCHECK(e == 0, "del of a present node returned %d", e);
				model_del(&r->m, o);
				if (below(r, 4) == 0) {
					/* Again, inside the same section: it is gone. */
					e = grace_hash_del(ht, &o->hn);
					MCHECK(e == -ENOENT, "second del returned %d", e);
				}
			}
		} else if (what < 770) {
			/* del_key: the first node with the key, one of the model's. */
			unsigned before = r->m.n[k];
			int e = grace_hash_del_key(ht, &key);
			if (!before) {
				MCHECK(e == -ENOENT, "del_key of absent key %u returned %d", k, e);
			} else {
				MCHECK(e == 0, "del_key of present key %u returned %d", k, e);
				/* Which one left: the one the visit no longer finds. */
				struct grace_hash_node *pos;
				for (unsigned i = 0; i < r->m.n[k]; i++)
					((struct obj *)r->m.in[k][i])->state =
						ST_GONE; /* provisionally */
				grace_hash_for_each_possible_rcu(ht, pos, hf(&key, NULL)) {
					struct obj *o = container_of(pos, struct obj, hn);
					if (o->key == key)
						o->state = ST_IN;
				}
				unsigned gone = 0;
				for (unsigned i = 0; i < r->m.n[k];) {
					struct obj *o = r->m.in[k][i];
					if (o->state == ST_GONE) {
						o->state = ST_IN;
						model_del(&r->m, o);
						gone++;
					} else {
						i++;
					}
				}
				MCHECK(gone == 1, "del_key of key %u removed %u nodes", k, gone);
			}
		} else if (what < 850) {
			/* replace a present node with a new one of the same key. */
			if (r->m.n[k]) {
				struct obj *old = r->m.in[k][below(r, r->m.n[k])];
				struct obj *o = new_obj(r, key);
				int e = grace_hash_replace(ht, &old->hn, &o->hn);
				MCHECK(e == 0, "replace of a present node returned %d", e);
				if (e == 0) {
					model_del(&r->m, old);
					model_add(&r->m, o);
				} else {
					drop_obj(o);
				}
			}
		} else if (what < 970) {
			check_key(r, ht, key, hf);
			check_key(r, ht, own_key(r), hf);
		} else {
			check_all(r, ht);
		}
		rcu_read_unlock();
		if (r->nthreads == 1) {
			size_t c = grace_hash_count(ht);
			MCHECK(c == r->m.count, "count %zu, the model holds %zu", c, r->m.count);
		}
	}
	rcu_read_lock();
	check_all(r, ht);
	rcu_read_unlock();
	return NULL;
}

/* One seed: a table drawn from it, then gt_model_nthreads runners on it. */
static void run_seed(unsigned long long s, unsigned long nops)
{
	static const unsigned ranges[] = { 16, 64, 256, 1024, 4096 };
	unsigned nthreads = gt_model_nthreads;
	struct runner *rs = calloc(nthreads, sizeof(*rs));
	struct run_arg *args = calloc(nthreads, sizeof(*args));
	struct runner main_r = { .w = { s, 0, 0 } };
	struct runner *r = &main_r;
	struct grace_hash_params p;

	REQUIRE(rs && args);
	gt_model_seed(&main_r.rng, s, 1);
	memset(&p, 0, sizeof(p));
	unsigned nkeys = ranges[below(r, 5)];
	grace_hash_fn hf = below(r, 3) == 0 ? weak_hash : good_hash;
	p.hash = hf;
	p.match = match_key;
	p.free = free_obj;
	p.init_buckets = (size_t)1 << below(r, 9);
	p.min_buckets = below(r, 2) ? 0 : (size_t)1 << below(r, 5);
	if (p.min_buckets > p.init_buckets)
		p.min_buckets = p.init_buckets;
	p.max_buckets = below(r, 3) ? 0 : (size_t)1 << (10 + below(r, 4));
	if (p.max_buckets && p.max_buckets < p.init_buckets)
		p.max_buckets = p.init_buckets;
	p.nlocks = below(r, 2) ? 0 : 1u << below(r, 9);
	p.flags = below(r, 2) ? GRACE_HASH_AUTO_RESIZE : 0;
	struct grace_hash *ht = grace_hash_create(&p);
	if (!ht)
		fprintf(stderr, "seed %llu: grace_hash_create failed: %s\n", s, strerror(errno));
	REQUIRE(ht);
	for (unsigned t = 0; t < nthreads; t++) {
		struct runner *q = &rs[t];
		gt_model_seed(&q->rng, s, 1 + 0x632be59bd9b4e019ull * (t + 1));
		q->w = (struct gt_model_where){ s, t, 0 };
		q->idx = t;
		q->nthreads = nthreads;
		q->capall = (unsigned)nops + 1;
		q->all = calloc(q->capall, sizeof(*q->all));
		q->freed = calloc(q->capall, 1);
		REQUIRE(q->all && q->freed);
		gt_bag_init(&q->m, nkeys);
		args[t] = (struct run_arg){ q, ht, hf, nops };
	}
	gt_model_threads(nthreads, run_calls, args, sizeof(*args));
	grace_hash_destroy(ht);
	/* Every node made has been freed once: by the table (it held it or retired it) or by
	 * the test (the table never took it). */
	for (unsigned t = 0; t < nthreads; t++) {
		r = &rs[t];
		unsigned long unfreed = 0;
		for (unsigned i = 0; i < r->nall; i++)
			unfreed += !r->freed[i];
		MCHECK(unfreed == 0, "%lu nodes never freed after destroy", unfreed);
		MCHECK(r->bad_frees == 0,
		       "%lu nodes freed while in the table, twice, or never added", r->bad_frees);
		gt_bag_free(&r->m);
		free(r->all);
		free(r->freed);
	}
	free(rs);
	free(args);
}

GT_MODEL_CASES(run_seed)

GT_MAIN()
