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
 * poisoned first. GRACE_MODEL_SEEDS and GRACE_MODEL_OPS set the work.
 */
#include <errno.h>
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

static uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}
static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	x ^= x >> 29;
	return x;
}
static bool weak;
static unsigned long hash_of(unsigned long key)
{
	return weak ? mix(key >> 4) : mix(key);
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

static unsigned next_id;
static struct item *item_new(unsigned long key)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	REQUIRE(it);
	it->key = key;
	it->magic = LIVE;
	it->id = next_id++;
	cds_lfht_node_init(&it->node);
	return it;
}

static void retire(struct item *it)
{
	urcu_memb_call_rcu(&it->rh, item_free);
}

/* ---- the model: the items in the table, by key ---- */

static unsigned nkeys;
static struct item ***in;
static unsigned *nin, *capin;
static long count;
/* Items removed in this section, freed after it (their lookups may still be checked). */
static struct item **gone;
static unsigned ngone, capgone;

static void m_add(struct item *it)
{
	unsigned k = (unsigned)it->key;
	if (nin[k] == capin[k]) {
		capin[k] = capin[k] ? 2 * capin[k] : 4;
		in[k] = realloc(in[k], capin[k] * sizeof(**in));
		REQUIRE(in[k]);
	}
	in[k][nin[k]++] = it;
	it->in = true;
	count++;
}

static int m_find(const struct item *it)
{
	unsigned k = (unsigned)it->key;
	for (unsigned i = 0; i < nin[k]; i++)
		if (in[k][i] == it)
			return (int)i;
	return -1;
}

static void m_del(struct item *it)
{
	unsigned k = (unsigned)it->key;
	int i = m_find(it);
	REQUIRE(i >= 0);
	in[k][i] = in[k][--nin[k]];
	it->in = false;
	count--;
	if (ngone == capgone) {
		capgone = capgone ? 2 * capgone : 64;
		gone = realloc(gone, capgone * sizeof(*gone));
		REQUIRE(gone);
	}
	gone[ngone++] = it;
}

static unsigned long failures;
static unsigned long long seed;
static unsigned long op;

#define MCHECK(cond, ...)                                                                     \
	do {                                                                                  \
		if (!(cond) && failures++ < 10) {                                              \
			fprintf(stderr, "  seed %llu op %lu: ", seed, op);                     \
			fprintf(stderr, __VA_ARGS__);                                          \
			fprintf(stderr, "\n");                                                 \
		}                                                                              \
	} while (0)

/* Inside a section: the lookup and its duplicates are the model's nodes of the key. */
static void check_key(struct cds_lfht *ht, unsigned long key)
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
		if (++seen > nin[k] + 1)
			break;
	}
	MCHECK(seen == nin[k], "key %u: lookup and its duplicates gave %u nodes, the model %u", k,
	       seen, nin[k]);
}

static void check_all(struct cds_lfht *ht)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;
	long seen = 0;
	unsigned char *mark = calloc(next_id + 1, 1);

	REQUIRE(mark);
	cds_lfht_for_each(ht, &iter, n)
	{
		struct item *it = caa_container_of(n, struct item, node);
		MCHECK(it->magic == LIVE && it->in, "traversal returned node %u, not in the table",
		       it->id);
		MCHECK(!mark[it->id], "traversal returned node %u twice", it->id);
		mark[it->id] = 1;
		if (++seen > count + 1)
			break;
	}
	free(mark);
	MCHECK(seen == count, "traversal returned %ld nodes, the model holds %ld", seen, count);
	long before, after;
	unsigned long c;
	cds_lfht_count_nodes(ht, &before, &c, &after);
	MCHECK((long)c == count, "count_nodes counted %lu, the model holds %ld", c, count);
}

static void run_seed(unsigned long long s, unsigned long nops)
{
	static const unsigned ranges[] = { 16, 64, 256, 1024, 4096 };

	seed = s;
	rng = s * 0x9e3779b97f4a7c15ull + 3;
	next_id = 0; /* the last run's items are all freed (its barrier) */
	nkeys = ranges[below(5)];
	weak = below(3) == 0;
	in = calloc(nkeys, sizeof(*in));
	nin = calloc(nkeys, sizeof(*nin));
	capin = calloc(nkeys, sizeof(*capin));
	REQUIRE(in && nin && capin);
	count = 0;
	unsigned long init = 1ul << below(10);
	unsigned long min_alloc = 1ul << below(4);
	if (min_alloc > init)
		min_alloc = init;
	int flags = (below(2) ? CDS_LFHT_AUTO_RESIZE : 0) | (below(2) ? CDS_LFHT_ACCOUNTING : 0);
	struct cds_lfht *ht = cds_lfht_new_flavor(init, min_alloc, 0, flags, &urcu_memb_flavor,
						  NULL);
	REQUIRE(ht);

	for (op = 0; op < nops && failures == 0; op++) {
		unsigned long key = below(nkeys);
		unsigned k = (unsigned)key;
		unsigned long h = hash_of(key);
		unsigned what = below(1000);

		if (what < 4) {
			unsigned long want = 1ul << below(13);
			cds_lfht_resize(ht, want); /* outside any section: it waits */
			continue;
		}
		urcu_memb_read_lock();
		if (what < 220) {
			struct item *it = item_new(key);
			cds_lfht_add(ht, h, &it->node);
			m_add(it);
		} else if (what < 340) {
			struct item *it = item_new(key);
			struct cds_lfht_node *r = cds_lfht_add_unique(ht, h, match, &key, &it->node);
			struct item *ri = caa_container_of(r, struct item, node);
			if (nin[k]) {
				MCHECK(r != &it->node && ri->in && ri->key == key,
				       "add_unique of present key %u returned node %u", k,
				       r == &it->node ? it->id : ri->id);
				if (r == &it->node)
					m_add(it);
				else
					free(it); /* never published */
			} else {
				MCHECK(r == &it->node, "add_unique of absent key %u returned another node",
				       k);
				if (r == &it->node)
					m_add(it);
				else
					free(it);
			}
		} else if (what < 460) {
			struct item *it = item_new(key);
			unsigned before = nin[k];
			struct cds_lfht_node *r = cds_lfht_add_replace(ht, h, match, &key, &it->node);
			if (before) {
				struct item *ri = r ? caa_container_of(r, struct item, node) : NULL;
				MCHECK(ri && ri->in && ri->key == key,
				       "add_replace of present key %u returned %p", k, (void *)ri);
				if (ri && ri->in) {
					MCHECK(cds_lfht_is_node_deleted(r),
					       "the node add_replace replaced is not deleted");
					m_del(ri);
				}
			} else {
				MCHECK(r == NULL, "add_replace of absent key %u returned a node", k);
			}
			m_add(it);
		} else if (what < 600) {
			if (nin[k]) {
				struct item *it = in[k][below(nin[k])];
				int r = cds_lfht_del(ht, &it->node);
				MCHECK(r == 0, "del of a present node returned %d", r);
				MCHECK(cds_lfht_is_node_deleted(&it->node),
				       "a node del removed is not deleted");
				m_del(it);
			} else if (ngone) {
				/* A node removed earlier in this section: -ENOENT. */
				struct item *it = gone[below(ngone)];
				int r = cds_lfht_del(ht, &it->node);
				MCHECK(r == -ENOENT, "del of a removed node returned %d", r);
			}
		} else if (what < 700) {
			/* cds_lfht_replace() of the node a lookup found. */
			if (nin[k]) {
				struct cds_lfht_iter iter;
				cds_lfht_lookup(ht, h, match, &key, &iter);
				struct cds_lfht_node *old = cds_lfht_iter_get_node(&iter);
				MCHECK(old != NULL, "lookup of present key %u found nothing", k);
				if (old) {
					struct item *oi = caa_container_of(old, struct item, node);
					struct item *it = item_new(key);
					int r = cds_lfht_replace(ht, &iter, h, match, &key, &it->node);
					MCHECK(r == 0, "replace of a present node returned %d", r);
					if (r == 0) {
						m_del(oi);
						m_add(it);
					} else {
						free(it);
					}
				}
			}
		} else if (what < 970) {
			check_key(ht, key);
			check_key(ht, below(nkeys));
		} else {
			check_all(ht);
		}
		urcu_memb_read_unlock();
		/* The section is over: what it removed may be freed after a grace period. */
		for (unsigned i = 0; i < ngone; i++) {
			MCHECK(gone[i]->magic == LIVE, "a removed node was freed under the section");
			retire(gone[i]);
		}
		ngone = 0;
	}
	urcu_memb_read_lock();
	check_all(ht);
	/* Empty the table for cds_lfht_destroy(). */
	for (unsigned kk = 0; kk < nkeys; kk++)
		while (nin[kk]) {
			struct item *it = in[kk][0];
			MCHECK(cds_lfht_del(ht, &it->node) == 0, "del at the end failed");
			m_del(it);
		}
	urcu_memb_read_unlock();
	for (unsigned i = 0; i < ngone; i++)
		retire(gone[i]);
	ngone = 0;
	int r = cds_lfht_destroy(ht, NULL);
	MCHECK(r == 0, "destroy of the emptied table returned %d", r);
	urcu_memb_barrier();
	for (unsigned kk = 0; kk < nkeys; kk++)
		free(in[kk]);
	free(in);
	free(nin);
	free(capin);
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

	urcu_memb_register_thread();
	for (unsigned long s = first; s < first + seeds && failures == 0; s++)
		run_seed(s, nops);
	urcu_memb_unregister_thread();
	free(gone);
	CHECK_MSG(failures == 0, "%lu mismatches (first seed that failed: %llu)", failures, seed);
}

GT_MAIN()
