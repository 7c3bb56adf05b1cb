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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "gtest_lite.h"

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
	uint64_t rng;
	unsigned idx, nthreads;
	struct item ***in; /* in[key]: the runner's nodes of that key in the table */
	unsigned *nin, *capin;
	long count;
	struct item **gone; /* removed in this section: freed after it */
	unsigned ngone, capgone;
	unsigned next_id;
	unsigned long failures, op;
};

static unsigned nkeys;
static bool weak;
static unsigned long long seed;
static unsigned long total_failures;

static uint64_t rnd(struct runner *r)
{
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 2685821657736338717ull;
}
static unsigned below(struct runner *r, unsigned n)
{
	return (unsigned)(rnd(r) % n);
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
	unsigned k = (unsigned)it->key;
	if (r->nin[k] == r->capin[k]) {
		r->capin[k] = r->capin[k] ? 2 * r->capin[k] : 4;
		r->in[k] = realloc(r->in[k], r->capin[k] * sizeof(**r->in));
		REQUIRE(r->in[k]);
	}
	r->in[k][r->nin[k]++] = it;
	it->in = true;
	r->count++;
}

static int m_find(const struct runner *r, const struct item *it)
{
	unsigned k = (unsigned)it->key;
	for (unsigned i = 0; i < r->nin[k]; i++)
		if (r->in[k][i] == it)
			return (int)i;
	return -1;
}

static void m_del(struct runner *r, struct item *it)
{
	unsigned k = (unsigned)it->key;
	int i = m_find(r, it);
	REQUIRE(i >= 0);
	r->in[k][i] = r->in[k][--r->nin[k]];
	it->in = false;
	r->count--;
	if (r->ngone == r->capgone) {
		r->capgone = r->capgone ? 2 * r->capgone : 64;
		r->gone = realloc(r->gone, r->capgone * sizeof(*r->gone));
		REQUIRE(r->gone);
	}
	r->gone[r->ngone++] = it;
}

#define MCHECK(cond, ...)                                                                       \
	do {                                                                                    \
		if (!(cond) && r->failures++ < 10) {                                            \
			fprintf(stderr, "  seed %llu thread %u op %lu: ", seed, r->idx, r->op); \
			fprintf(stderr, __VA_ARGS__);                                           \
			fprintf(stderr, "\n");                                                  \
		}                                                                               \
	} while (0)

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
		if (++seen > r->nin[k] + 1)
			break;
	}
	MCHECK(seen == r->nin[k], "key %u: lookup and its duplicates gave %u nodes, the model %u",
	       k, seen, r->nin[k]);
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
		if (++seen > r->count + 1)
			break;
	}
	free(mark);
	MCHECK(seen == r->count, "traversal returned %ld nodes, the model holds %ld", seen,
	       r->count);
	if (r->nthreads == 1) {
		long before, after;
		unsigned long c;
		cds_lfht_count_nodes(ht, &before, &c, &after);
		MCHECK((long)c == r->count, "count_nodes counted %lu, the model holds %ld", c,
		       r->count);
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
	for (r->op = 0; r->op < a->nops && r->failures == 0; r->op++) {
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
			if (r->nin[k]) {
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
			unsigned before = r->nin[k];
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
			if (r->nin[k]) {
				struct item *it = r->in[k][below(r, r->nin[k])];
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
			if (r->nin[k]) {
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
		while (r->nin[kk]) {
			struct item *it = r->in[kk][0];
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

static void run_seed(unsigned long long s, unsigned long nops, unsigned nthreads)
{
	static const unsigned ranges[] = { 16, 64, 256, 1024, 4096 };
	struct runner main_r = { .rng = s * 0x9e3779b97f4a7c15ull + 3 };
	struct runner *rs = calloc(nthreads, sizeof(*rs));
	struct run_arg *args = calloc(nthreads, sizeof(*args));
	pthread_t *th = calloc(nthreads, sizeof(*th));

	REQUIRE(rs && args && th);
	seed = s;
	nkeys = ranges[below(&main_r, 5)];
	weak = below(&main_r, 3) == 0;
	unsigned long init = 1ul << below(&main_r, 10);
	unsigned long min_alloc = 1ul << below(&main_r, 4);
	if (min_alloc > init)
		min_alloc = init;
	int flags = (below(&main_r, 2) ? CDS_LFHT_AUTO_RESIZE : 0) |
		    (below(&main_r, 2) ? CDS_LFHT_ACCOUNTING : 0);
	struct cds_lfht *ht = cds_lfht_new_flavor(init, min_alloc, 0, flags, &urcu_memb_flavor,
						  NULL);
	REQUIRE(ht);
	for (unsigned t = 0; t < nthreads; t++) {
		struct runner *r = &rs[t];
		r->rng = main_r.rng + 0x632be59bd9b4e019ull * (t + 1);
		r->idx = t;
		r->nthreads = nthreads;
		r->in = calloc(nkeys, sizeof(*r->in));
		r->nin = calloc(nkeys, sizeof(*r->nin));
		r->capin = calloc(nkeys, sizeof(*r->capin));
		REQUIRE(r->in && r->nin && r->capin);
		args[t] = (struct run_arg){ r, ht, nops };
	}
	if (nthreads == 1) {
		run_calls(&args[0]);
	} else {
		for (unsigned t = 0; t < nthreads; t++)
			REQUIRE(pthread_create(&th[t], NULL, run_calls, &args[t]) == 0);
		for (unsigned t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	}
	int e = cds_lfht_destroy(ht, NULL);
	if (e != 0 && total_failures++ < 10)
		fprintf(stderr, "  seed %llu: destroy of the emptied table returned %d\n", s, e);
	urcu_memb_barrier();
	for (unsigned t = 0; t < nthreads; t++) {
		struct runner *r = &rs[t];
		total_failures += r->failures;
		for (unsigned kk = 0; kk < nkeys; kk++)
			free(r->in[kk]);
		free(r->in);
		free(r->nin);
		free(r->capin);
		free(r->gone);
	}
	free(rs);
	free(args);
	free(th);
}

static unsigned long env_num(const char *name, unsigned long def)
{
	const char *e = getenv(name);
	return e && *e ? strtoul(e, NULL, 10) : def;
}

TEST(random_calls_match_the_model)
{
	unsigned long seeds = env_num("GRACE_MODEL_SEEDS", 24);
	unsigned long nops = env_num("GRACE_MODEL_OPS", 6000);
	unsigned long first = env_num("GRACE_MODEL_FIRST_SEED", 1);

	for (unsigned long s = first; s < first + seeds && total_failures == 0; s++)
		run_seed(s, nops, 1);
	CHECK_MSG(total_failures == 0, "%lu mismatches (first seed that failed: %llu)",
		  total_failures, seed);
}

/* Threads on one table (GRACE_MODEL_THREADS, 2 by default), each with its own share of the keys
 * and its own model. */
TEST(concurrent_calls_match_each_threads_model)
{
	unsigned nthreads = (unsigned)env_num("GRACE_MODEL_THREADS", 2);
	unsigned long seeds = env_num("GRACE_MODEL_SEEDS", 24) / 2;
	unsigned long nops = env_num("GRACE_MODEL_OPS", 6000);
	unsigned long first = env_num("GRACE_MODEL_FIRST_SEED", 1);

	for (unsigned long s = first; s < first + seeds && total_failures == 0; s++)
		run_seed(s + 1000000, nops, nthreads < 2 ? 2 : nthreads);
	CHECK_MSG(total_failures == 0, "%lu mismatches (first seed that failed: %llu)",
		  total_failures, seed);
}

GT_MAIN()
