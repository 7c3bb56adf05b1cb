/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht against a reference model of liburcu's contract (the top of
 * compat/include/urcu/rculfhash.h): long random sequences of cds_lfht_add() (duplicates),
 * cds_lfht_add_unique(), cds_lfht_add_replace(), cds_lfht_replace(), cds_lfht_del() (of
 * present nodes and of removed ones) and explicit resizes, in tables with and without
 * CDS_LFHT_AUTO_RESIZE and CDS_LFHT_ACCOUNTING, each checked call by call against a multiset:
 * return values, cds_lfht_is_node_deleted(), the lookup and cds_lfht_next_duplicate() walk of a
 * key (every node of the key, once), the whole traversal (every node once) and
 * cds_lfht_count_nodes(). Hash values are the key's mix or a poor one (sixteen keys per value,
 * so a run of equal hashes holds different keys). Removed nodes are freed with call_rcu() and
 * poisoned first. The second case runs threads on one table, each on its own share of the keys
 * with its own model (see struct runner). GRACE_MODEL_SEEDS, GRACE_MODEL_OPS and
 * GRACE_MODEL_THREADS set the work.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "gtest_lite.h"
#include "model.h"

#define LIVE 0x4c495645u
#define DEAD 0xdeadbeefu

struct item {
	unsigned long key;
	unsigned magic;
	unsigned id;
	bool in; /* the model's view: in the table */
	struct cds_lfht_node node;
	struct rcu_head rh;
};

/*
 * One runner per thread: its random sequence, its model and its keys. Sequential runs have one
 * runner owning every key; concurrent runs split the keys (key % nthreads == the runner's
 * index), so each runner's model stays exact while the others update the same buckets and runs
 * of equal hashes beside it, resize, and free: cds_lfht's updates are lock-free, and a node
 * lost or duplicated at a neighbour's insertion or removal shows as a mismatch.
 */
struct runner {
	struct gt_model_rng rng;
	struct gt_model_where w; /* w.thread: the runner's index */
	unsigned idx, nthreads;
	struct gt_model_bag m; /* the runner's nodes in the table, by key */
	struct item **gone;    /* removed in this section: freed after it */
	unsigned ngone, capgone;
	unsigned next_id;
};

static unsigned nkeys;
static bool weak;
static unsigned below(struct runner *r, unsigned n)
{
	return gt_model_below(&r->rng, n);
}

static unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	x ^= x >> 29;
	return x;
}
static unsigned long hash_of(unsigned long key)
{
	return weak ? mix(key >> 4) : mix(key);
}

/* A key of the runner's share. */
static unsigned long own_key(struct runner *r)
{
	unsigned per = nkeys / r->nthreads;
	return (unsigned long)below(r, per) * r->nthreads + r->idx;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, node)->key == *(const unsigned long *)key;
}

static void item_free(struct rcu_head *rh)
{
	struct item *it = caa_container_of(rh, struct item, rh);
	it->magic = DEAD;
	free(it);
}

static struct item *item_new(struct runner *r, unsigned long key)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	REQUIRE(it);
	it->key = key;
	it->magic = LIVE;
	it->id = r->next_id++;
	cds_lfht_node_init(&it->node);
	return it;
}

static void retire(struct item *it)
{
	urcu_memb_call_rcu(&it->rh, item_free);
}

/* ---- the model: the runner's items in the table, by key ---- */

static void m_add(struct runner *r, struct item *it)
{
	gt_bag_add(&r->m, (unsigned)it->key, it);
	it->in = true;
}

static void m_del(struct runner *r, struct item *it)
{
	gt_bag_del(&r->m, (unsigned)it->key, it);
	it->in = false;
	if (r->ngone == r->capgone) {
		r->capgone = r->capgone ? 2 * r->capgone : 64;
		r->gone = realloc(r->gone, r->capgone * sizeof(*r->gone));
		REQUIRE(r->gone);
	}
	r->gone[r->ngone++] = it;
}

#define MCHECK(cond, ...) GT_MODEL_CHECK(&r->w, cond, __VA_ARGS__)

/* Inside a section: the lookup and its duplicates are the model's nodes of the key. */
static void check_key(struct runner *r, struct cds_lfht *ht, unsigned long key)
{
	unsigned k = (unsigned)key, seen = 0;
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	cds_lfht_lookup(ht, hash_of(key), match, &key, &iter);
	for (n = cds_lfht_iter_get_node(&iter); n;
	     cds_lfht_next_duplicate(ht, match, &key, &iter), n = cds_lfht_iter_get_node(&iter)) {
		struct item *it = caa_container_of(n, struct item, node);
		MCHECK(it->magic == LIVE && it->key == key && it->in,
		       "lookup of key %u: node %u (key %lu, in %d) is not the model's", k, it->id,
		       it->key, it->in);
		MCHECK(!cds_lfht_is_node_deleted(n), "lookup of key %u returned a deleted node", k);
		if (++seen > r->m.n[k] + 1)
			break;
	}
	MCHECK(seen == r->m.n[k], "key %u: lookup and its duplicates gave %u nodes, the model %u",
	       k, seen, r->m.n[k]);
}

/* Inside a section: the traversal returns each of the runner's nodes once (another runner's
 * are only checked to be live); alone, it returns nothing else and count_nodes agrees. */
static void check_all(struct runner *r, struct cds_lfht *ht)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;
	long seen = 0, others = 0;
	unsigned char *mark = calloc(r->next_id + 1, 1);

	REQUIRE(mark);
	cds_lfht_for_each(ht, &iter, n) {
		struct item *it = caa_container_of(n, struct item, node);
		MCHECK(it->magic == LIVE, "traversal returned a freed node");
		if (it->key % r->nthreads != r->idx) {
			if (++others > 10000000)
				break;
			continue;
		}
		MCHECK(it->in, "traversal returned node %u, not in the table", it->id);
		MCHECK(!mark[it->id], "traversal returned node %u twice", it->id);
		mark[it->id] = 1;
		if (++seen > (long)r->m.count + 1)
			break;
	}
	free(mark);
	MCHECK(seen == (long)r->m.count, "traversal returned %ld nodes, the model holds %zu", seen,
	       r->m.count);
	if (r->nthreads == 1) {
		long before, after;
		unsigned long c;
		cds_lfht_count_nodes(ht, &before, &c, &after);
		MCHECK(c == r->m.count, "count_nodes counted %lu, the model holds %zu", c,
		       r->m.count);
	}
}

struct run_arg {
	struct runner *r;
	struct cds_lfht *ht;
	unsigned long nops;
};

static void *run_calls(void *arg)
{
	struct run_arg *a = (struct run_arg *)arg;
	struct runner *r = a->r;
	struct cds_lfht *ht = a->ht;

	urcu_memb_register_thread();
	for (r->w.op = 0; r->w.op < a->nops && !gt_model_failed(); r->w.op++) {
		unsigned long key = own_key(r);
		unsigned k = (unsigned)key;
		unsigned long h = hash_of(key);
		unsigned what = below(r, 1000);

		if (what < 4) {
			unsigned long want = 1ul << below(r, 13);
			cds_lfht_resize(ht, want); /* outside any section: it waits */
			continue;
		}
		urcu_memb_read_lock();
		if (what < 220) {
			struct item *it = item_new(r, key);
			cds_lfht_add(ht, h, &it->node);
			m_add(r, it);
		} else if (what < 340) {
			struct item *it = item_new(r, key);
			struct cds_lfht_node *n = cds_lfht_add_unique(ht, h, match, &key,
								      &it->node);
			struct item *ni = caa_container_of(n, struct item, node);
			if (r->m.n[k]) {
				MCHECK(n != &it->node && ni->in && ni->key == key,
				       "add_unique of present key %u returned node %u", k,
				       n == &it->node ? it->id : ni->id);
			} else {
				MCHECK(n == &it->node,
				       "add_unique of absent key %u returned another node", k);
			}
			if (n == &it->node)
				m_add(r, it);
			else
				free(it); /* never published */
		} else if (what < 460) {
			struct item *it = item_new(r, key);
			unsigned before = r->m.n[k];
			struct cds_lfht_node *n = cds_lfht_add_replace(ht, h, match, &key,
								       &it->node);
			if (before) {
				struct item *ni = n ? caa_container_of(n, struct item, node) : NULL;
				MCHECK(ni && ni->in && ni->key == key,
				       "add_replace of present key %u returned %p", k, (void *)ni);
				if (ni && ni->in) {
					MCHECK(cds_lfht_is_node_deleted(n),
					       "the node add_replace replaced is not deleted");
					m_del(r, ni);
				}
			} else {
				MCHECK(n == NULL, "add_replace of absent key %u returned a node",
				       k);
			}
			m_add(r, it);
		} else if (what < 600) {
			if (r->m.n[k]) {
				struct item *it = r->m.in[k][below(r, r->m.n[k])];
				int e = cds_lfht_del(ht, &it->node);
				MCHECK(e == 0, "del of a present node returned %d", e);
				MCHECK(cds_lfht_is_node_deleted(&it->node),
				       "a node del removed is not deleted");
				m_del(r, it);
			} else if (r->ngone) {
				/* A node removed earlier in this section: -ENOENT. */
				struct item *it = r->gone[below(r, r->ngone)];
				int e = cds_lfht_del(ht, &it->node);
				MCHECK(e == -ENOENT, "del of a removed node returned %d", e);
			}
		} else if (what < 700) {
			/* cds_lfht_replace() of the node a lookup found. */
			if (r->m.n[k]) {
				struct cds_lfht_iter iter;
				cds_lfht_lookup(ht, h, match, &key, &iter);
				struct cds_lfht_node *old = cds_lfht_iter_get_node(&iter);
				MCHECK(old != NULL, "lookup of present key %u found nothing", k);
				if (old) {
					struct item *oi = caa_container_of(old, struct item, node);
					struct item *it = item_new(r, key);
					int e = cds_lfht_replace(ht, &iter, h, match, &key,
								 &it->node);
					MCHECK(e == 0, "replace of a present node returned %d", e);
					if (e == 0) {
						m_del(r, oi);
						m_add(r, it);
					} else {
						free(it);
					}
				}
			}
		} else if (what < 970) {
			check_key(r, ht, key);
			check_key(r, ht, own_key(r));
		} else {
			check_all(r, ht);
		}
		urcu_memb_read_unlock();
		/* The section is over: what it removed may be freed after a grace period. */
		for (unsigned i = 0; i < r->ngone; i++) {
			MCHECK(r->gone[i]->magic == LIVE,
			       "a removed node was freed under the section");
			retire(r->gone[i]);
		}
		r->ngone = 0;
	}
	urcu_memb_read_lock();
	check_all(r, ht);
	/* Empty the runner's share for cds_lfht_destroy(). */
	for (unsigned kk = 0; kk < nkeys; kk++)
		while (r->m.n[kk]) {
			struct item *it = r->m.in[kk][0];
			MCHECK(cds_lfht_del(ht, &it->node) == 0, "del at the end failed");
			m_del(r, it);
		}
	urcu_memb_read_unlock();
	for (unsigned i = 0; i < r->ngone; i++)
		retire(r->gone[i]);
	r->ngone = 0;
	urcu_memb_unregister_thread();
	return NULL;
}

/* One seed: a table drawn from it, then gt_model_nthreads runners on it. */
static void run_seed(unsigned long long s, unsigned long nops)
{
	static const unsigned ranges[] = { 16, 64, 256, 1024, 4096 };
	unsigned nthreads = gt_model_nthreads;
	struct runner main_r = { .w = { s, 0, 0 } };
	struct runner *rs = calloc(nthreads, sizeof(*rs));
	struct run_arg *args = calloc(nthreads, sizeof(*args));

	REQUIRE(rs && args);
	gt_model_seed(&main_r.rng, s, 3);
	struct runner *r = &main_r; /* for MCHECK */
	nkeys = ranges[below(r, 5)];
	weak = below(r, 3) == 0;
	unsigned long init = 1ul << below(r, 10);
	unsigned long min_alloc = 1ul << below(r, 4);
	if (min_alloc > init)
		min_alloc = init;
	int flags = (below(r, 2) ? CDS_LFHT_AUTO_RESIZE : 0) |
		    (below(r, 2) ? CDS_LFHT_ACCOUNTING : 0);
	struct cds_lfht *ht = cds_lfht_new_flavor(init, min_alloc, 0, flags, &urcu_memb_flavor,
						  NULL);
	REQUIRE(ht);
	for (unsigned t = 0; t < nthreads; t++) {
		struct runner *q = &rs[t];
		gt_model_seed(&q->rng, s, 3 + 0x632be59bd9b4e019ull * (t + 1));
		q->w = (struct gt_model_where){ s, t, 0 };
		q->idx = t;
		q->nthreads = nthreads;
		gt_bag_init(&q->m, nkeys);
		args[t] = (struct run_arg){ q, ht, nops };
	}
	gt_model_threads(nthreads, run_calls, args, sizeof(*args));
	int e = cds_lfht_destroy(ht, NULL);
	MCHECK(e == 0, "destroy of the emptied table returned %d", e);
	urcu_memb_barrier();
	for (unsigned t = 0; t < nthreads; t++) {
		struct runner *q = &rs[t];
		gt_bag_free(&q->m);
		free(q->gone);
	}
	free(rs);
	free(args);
}

GT_MODEL_CASES(run_seed)

GT_MAIN()
