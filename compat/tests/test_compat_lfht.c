/* SPDX-License-Identifier: MIT */
/*
 * cds_lfht on grace: liburcu's documented contract, call by call, then readers (memb and QSBR
 * flavors) that look up and traverse while updaters add, replace and delete and the table is
 * resized explicitly and automatically. Permanent keys must always be found, and found once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

struct item {
	unsigned long key;
	int value;
	struct cds_lfht_node node;
	struct rcu_head rh;
};

static unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	x ^= x >> 29;
	return x;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, node)->key == *(const unsigned long *)key;
}

static struct item *item_new(unsigned long key, int value)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	REQUIRE(it);
	it->key = key;
	it->value = value;
	return it;
}

static void item_free(struct rcu_head *rh)
{
	free(caa_container_of(rh, struct item, rh));
}

static struct item *lookup(struct cds_lfht *ht, unsigned long key)
{
	struct cds_lfht_iter iter;
	cds_lfht_lookup(ht, mix(key), match, &key, &iter);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
	return n ? caa_container_of(n, struct item, node) : NULL;
}

TEST(bad_input)
{
	CHECK(cds_lfht_new_flavor(3, 1, 0, 0, &urcu_memb_flavor, NULL) == NULL); /* not 2^n */
	CHECK(cds_lfht_new_flavor(0, 1, 0, 0, &urcu_memb_flavor, NULL) == NULL);
	CHECK(cds_lfht_new_flavor(8, 3, 0, 0, &urcu_memb_flavor, NULL) == NULL);
	CHECK(cds_lfht_new_flavor(8, 1, 100, 0, &urcu_memb_flavor, NULL) == NULL);
	CHECK(cds_lfht_new_flavor(8, 1, 0, 0x100, &urcu_memb_flavor, NULL) == NULL);
	struct cds_lfht *ht = _cds_lfht_new(8, 1, 0, 0, &cds_lfht_mm_chunk, &urcu_memb_flavor,
					    NULL);
	REQUIRE(ht);
	urcu_memb_read_lock();
	CHECK(cds_lfht_del(ht, NULL) == -ENOENT);
	struct cds_lfht_iter none;
	none.node = NULL;
	struct item *it = item_new(1, 1);
	CHECK(cds_lfht_replace(ht, &none, mix(1), match, &it->key, &it->node) == -ENOENT);
	urcu_memb_read_unlock();
	pthread_attr_t attr, *back = NULL;
	pthread_attr_init(&attr);
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
	ht = cds_lfht_new_flavor(8, 1, 0, 0, &urcu_memb_flavor, &attr);
	REQUIRE(ht);
	CHECK(cds_lfht_destroy(ht, &back) == 0);
	CHECK(back == &attr); /* the attribute given to new comes back (liburcu) */
	pthread_attr_destroy(&attr);
	free(it);
	/* A minimum above the maximum raises the maximum, as in liburcu (it was lowered to the
	 * maximum): the table grows to the minimum. */
	ht = cds_lfht_new_flavor(1, 1024, 64, 0, &urcu_memb_flavor, NULL);
	REQUIRE(ht);
	cds_lfht_resize(ht, 1024);
	CHECK_MSG(ht->size == 1024, "size %lu after resize(1024) with min 1024, max 64", ht->size);
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
}

/* docs/compat.md ("not matched"): liburcu's memory back-ends of _cds_lfht_new(),
 * cds_lfht_mm_order, _chunk and _mmap, are "accepted, no effect": a table made with each works
 * as any other (it grows past its initial size, finds what was added, and is destroyed). */
TEST(every_memory_backend_is_accepted)
{
	const struct cds_lfht_mm_type *mm[] = { &cds_lfht_mm_order, &cds_lfht_mm_chunk,
						&cds_lfht_mm_mmap };
	for (unsigned int b = 0; b < 3; b++) {
		struct cds_lfht *ht = _cds_lfht_new(4, 1, 1 << 12, CDS_LFHT_AUTO_RESIZE, mm[b],
						    &urcu_memb_flavor, NULL);
		REQUIRE(ht);
		struct item *its[256];
		urcu_memb_read_lock();
		for (unsigned long k = 0; k < 256; k++) {
			its[k] = item_new(k, (int)k);
			cds_lfht_add(ht, mix(k), &its[k]->node);
		}
		urcu_memb_read_unlock();
		cds_lfht_resize(ht, 256);
		urcu_memb_read_lock();
		for (unsigned long k = 0; k < 256; k++)
			CHECK_MSG(lookup(ht, k) == its[k], "back-end %u: key %lu not found", b, k);
		for (unsigned long k = 0; k < 256; k++)
			CHECK(cds_lfht_del(ht, &its[k]->node) == 0);
		urcu_memb_read_unlock();
		urcu_memb_synchronize_rcu();
		for (unsigned long k = 0; k < 256; k++)
			free(its[k]);
		CHECK(cds_lfht_destroy(ht, NULL) == 0);
	}
}

TEST(contract_call_by_call)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(16, 1, 0, CDS_LFHT_ACCOUNTING, &urcu_memb_flavor,
						  NULL);
	REQUIRE(ht);
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	unsigned long k = 5;
	struct item *a = item_new(5, 1), *b = item_new(5, 2), *c = item_new(5, 3);

	/* add_unique: the node added, or the one present. */
	CHECK(cds_lfht_add_unique(ht, mix(5), match, &k, &a->node) == &a->node);
	CHECK(cds_lfht_add_unique(ht, mix(5), match, &k, &b->node) == &a->node);
	CHECK(!cds_lfht_is_node_deleted(&a->node));

	/* add_replace: the node replaced, marked deleted; NULL when it inserts. */
	CHECK(cds_lfht_add_replace(ht, mix(5), match, &k, &b->node) == &a->node);
	CHECK(cds_lfht_is_node_deleted(&a->node));
	CHECK(lookup(ht, 5) == b);
	unsigned long k6 = 6;
	struct item *d = item_new(6, 4);
	CHECK(cds_lfht_add_replace(ht, mix(6), match, &k6, &d->node) == NULL);

	/* replace through an iterator: -EINVAL if the key or hash differ, -ENOENT if removed. */
	struct cds_lfht_iter iter;
	cds_lfht_lookup(ht, mix(5), match, &k, &iter);
	CHECK(cds_lfht_iter_get_node(&iter) == &b->node);
	CHECK(cds_lfht_replace(ht, &iter, mix(6), match, &k, &c->node) == -EINVAL);
	CHECK(cds_lfht_replace(ht, &iter, mix(5), match, &k6, &c->node) == -EINVAL);
	CHECK(cds_lfht_replace(ht, &iter, mix(5), match, &k, &c->node) == 0);
	CHECK(cds_lfht_is_node_deleted(&b->node));
	CHECK(lookup(ht, 5) == c);
	struct item *e = item_new(5, 5);
	CHECK(cds_lfht_replace(ht, &iter, mix(5), match, &k, &e->node) == -ENOENT); /* b gone */

	/* del: 0, then -ENOENT for the same node. */
	CHECK(cds_lfht_del(ht, &d->node) == 0);
	CHECK(cds_lfht_is_node_deleted(&d->node));
	CHECK(cds_lfht_del(ht, &d->node) == -ENOENT);
	CHECK(lookup(ht, 6) == NULL);

	/* Duplicates: cds_lfht_add allows them; next_duplicate walks them. */
	struct item *dup[3];
	for (int i = 0; i < 3; i++) {
		dup[i] = item_new(7, 10 + i);
		cds_lfht_add(ht, mix(7), &dup[i]->node);
	}
	unsigned long k7 = 7;
	int seen = 0, sum = 0;
	struct cds_lfht_node *n;
	cds_lfht_for_each_duplicate(ht, mix(7), match, &k7, &iter, n) {
		seen++;
		sum += caa_container_of(n, struct item, node)->value;
	}
	CHECK(seen == 3 && sum == 33);
	struct item *pos;
	seen = 0;
	cds_lfht_for_each_entry_duplicate(ht, mix(7), match, &k7, &iter, pos, node)
		seen += pos->key == 7;
	CHECK(seen == 3);

	/* Count and traversal. */
	long before, after;
	unsigned long count;
	cds_lfht_count_nodes(ht, &before, &count, &after);
	CHECK_MSG(count == 4 && before == 4 && after == 4, "%ld %lu %ld", before, count, after);
	seen = 0;
	cds_lfht_for_each(ht, &iter, n)
		seen++;
	CHECK(seen == 4);
	urcu_memb_read_unlock();

	/* Destroy refuses a non-empty table (liburcu: -EPERM). */
	CHECK(cds_lfht_destroy(ht, NULL) == -EPERM);
	urcu_memb_read_lock();
	cds_lfht_for_each_entry(ht, &iter, pos, node) {
		CHECK(cds_lfht_del(ht, &pos->node) == 0);
		urcu_memb_call_rcu(&pos->rh, item_free);
	}
	urcu_memb_read_unlock();
	urcu_memb_call_rcu(&a->rh, item_free);
	urcu_memb_call_rcu(&b->rh, item_free);
	urcu_memb_call_rcu(&d->rh, item_free);
	free(e); /* never inserted */
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
	urcu_memb_barrier();
	urcu_memb_unregister_thread();
}

/* ---- concurrent: readers vs updaters and resizes ---- */

#define NPERM 512
#define NTRANS 512

struct conc {
	struct cds_lfht *ht;
	int qsbr;
	int stop;
	unsigned long errors, reads;
	unsigned long err_kind[6];
};
#define ERR(c, k)                               \
	do {                                    \
		uatomic_inc(&(c)->errors);      \
		uatomic_inc(&(c)->err_kind[k]); \
	} while (0)

static void rd_register(struct conc *c)
{
	if (c->qsbr)
		urcu_qsbr_register_thread();
	else
		urcu_memb_register_thread();
}
static void rd_unregister(struct conc *c)
{
	if (c->qsbr)
		urcu_qsbr_unregister_thread();
	else
		urcu_memb_unregister_thread();
}
static void rd_lock(struct conc *c)
{
	if (c->qsbr)
		urcu_qsbr_read_lock();
	else
		urcu_memb_read_lock();
}
static void rd_unlock(struct conc *c)
{
	if (c->qsbr) {
		urcu_qsbr_read_unlock();
		urcu_qsbr_quiescent_state();
	} else {
		urcu_memb_read_unlock();
	}
}
static void call(struct conc *c, struct rcu_head *rh)
{
	if (c->qsbr)
		urcu_qsbr_call_rcu(rh, item_free);
	else
		urcu_memb_call_rcu(rh, item_free);
}

static void *conc_reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	static unsigned char seen_store[4][NPERM];
	static int slot;
	unsigned char *seen = seen_store[uatomic_add_return(&slot, 1) % 4];
	unsigned long rnd = (unsigned long)(uintptr_t)&rnd | 1;

	rd_register(c);
	while (!uatomic_read(&c->stop)) {
		rd_lock(c);
		unsigned long k = (rnd = rnd * 6364136223846793005ul + 1442695040888963407ul) >> 55;
		k %= NPERM;
		struct item *it = lookup(c->ht, k);
		if (!it || it->key != k)
			ERR(c, 0); /* permanent keys are always found */
		if ((rnd >> 40) % 64 == 0) {
			/* A traversal sees each permanent key exactly once, resize or not. */
			struct cds_lfht_iter iter;
			struct item *pos;
			memset(seen, 0, NPERM);
			cds_lfht_for_each_entry(c->ht, &iter, pos, node)
				if (pos->key < NPERM && seen[pos->key]++)
					ERR(c, 1);
			for (int i = 0; i < NPERM; i++)
				if (!seen[i])
					ERR(c, 2);
		}
		rd_unlock(c);
		uatomic_inc(&c->reads);
	}
	if (c->qsbr)
		urcu_qsbr_thread_offline();
	rd_unregister(c);
	return NULL;
}

static void *conc_updater(void *arg)
{
	struct conc *c = (struct conc *)arg;
	unsigned long rnd = 12345;
	unsigned char present[NTRANS];

	memset(present, 0, sizeof(present));
	rd_register(c);
	while (!uatomic_read(&c->stop)) {
		unsigned long k = NPERM + (rnd = rnd * 6364136223846793005ul + 1) % NTRANS;
		unsigned long i = k - NPERM;
		rd_lock(c);
		if (!present[i]) {
			struct item *it = item_new(k, 0);
			if (cds_lfht_add_unique(c->ht, mix(k), match, &k, &it->node) != &it->node)
				ERR(c, 3);
			present[i] = 1;
		} else if (rnd % 3 == 0) {
			struct item *old = lookup(c->ht, k);
			if (!old || cds_lfht_del(c->ht, &old->node) != 0)
				ERR(c, 4);
			else
				call(c, &old->rh);
			present[i] = 0;
		} else {
			/* Replace a permanent key: readers must find the old or the new node. */
			unsigned long pk = rnd % NPERM;
			struct item *it = item_new(pk, 1);
			struct cds_lfht_node *old = cds_lfht_add_replace(c->ht, mix(pk), match, &pk,
									 &it->node);
			if (!old)
				ERR(c, 5);
			else
				call(c, &caa_container_of(old, struct item, node)->rh);
		}
		rd_unlock(c);
	}
	if (c->qsbr)
		urcu_qsbr_thread_offline();
	rd_unregister(c);
	return NULL;
}

/* After every thread has stopped: remove what is left and retire it. */
static void remove_all(struct conc *c)
{
	struct cds_lfht_iter iter;
	struct item *pos;

	rd_lock(c);
	cds_lfht_for_each_entry(c->ht, &iter, pos, node) {
		if (cds_lfht_del(c->ht, &pos->node) != 0)
			ERR(c, 4);
		call(c, &pos->rh);
	}
	rd_unlock(c);
}

static void concurrent(int qsbr, int flags)
{
	static struct conc c;
	pthread_t r[2], u;

	memset(&c, 0, sizeof(c));
	c.qsbr = qsbr;
	c.ht = cds_lfht_new_flavor(1, 1, 0, flags, qsbr ? &urcu_qsbr_flavor : &urcu_memb_flavor,
				   NULL);
	REQUIRE(c.ht);
	for (unsigned long k = 0; k < NPERM; k++)
		cds_lfht_add(c.ht, mix(k), &item_new(k, 0)->node);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, conc_reader, &c);
	pthread_create(&u, NULL, conc_updater, &c);
	/* This thread resizes back and forth while the others run. */
	if (qsbr)
		urcu_qsbr_register_thread();
	for (int i = 0; i < 6; i++) {
		cds_lfht_resize(c.ht, i % 2 ? 16 : 4096);
		if (qsbr)
			urcu_qsbr_quiescent_state();
	}
	if (qsbr) {
		urcu_qsbr_thread_offline();
		usleep(50000);
		urcu_qsbr_thread_online();
	} else {
		usleep(50000);
	}
	/* The readers must have run beside the resizes: on a loaded machine 50 ms can pass before
	 * either is first scheduled. Bounded: a reader that never reads fails the check below. */
	for (int i = 0; i < 10000 && !uatomic_read(&c.reads); i++)
		usleep(1000);
	uatomic_set(&c.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	pthread_join(u, NULL);
	CHECK(c.reads > 0);
	remove_all(&c);
	CHECK_MSG(c.errors == 0,
		  "errors %lu (reads %lu): lookup %lu, twice %lu, missed %lu, add_unique %lu, "
		  "del %lu, add_replace %lu",
		  c.errors, c.reads, c.err_kind[0], c.err_kind[1], c.err_kind[2], c.err_kind[3],
		  c.err_kind[4], c.err_kind[5]);
	CHECK(cds_lfht_destroy(c.ht, NULL) == 0);
	if (qsbr) {
		urcu_qsbr_barrier();
		urcu_qsbr_unregister_thread();
	} else {
		urcu_memb_barrier();
	}
}

TEST(concurrent_memb_explicit_resize)
{
	concurrent(0, 0);
}

TEST(concurrent_memb_auto_resize)
{
	concurrent(0, CDS_LFHT_AUTO_RESIZE);
}

TEST(concurrent_qsbr_auto_resize)
{
	concurrent(1, CDS_LFHT_AUTO_RESIZE);
}

/*
 * A del returns only when its node is off the list, even when another walker unlinked it: the
 * removers of a run of duplicates unlink one another's nodes. Threads delete the first duplicate
 * of one key and add another, and after each successful del walk the raw list from the bucket
 * (removed nodes included, white-box): the node must not be on it.
 */
struct dups {
	struct cds_lfht *ht;
	unsigned long errors, dels;
};

static void *dups_thread(void *arg)
{
	struct dups *d = (struct dups *)arg;
	unsigned long key = 7;

	urcu_memb_register_thread();
	for (int i = 0; i < 3000; i++) {
		urcu_memb_read_lock();
		struct item *it = lookup(d->ht, key);
		if (it && cds_lfht_del(d->ht, &it->node) == 0) {
			struct cds_lfht_node *n = grace_urcu__lfht_clear(
				rcu_dereference(d->ht->tbl[0]->next));
			for (; n; n = grace_urcu__lfht_clear(rcu_dereference(n->next)))
				if (n == &it->node)
					uatomic_inc(&d->errors);
			uatomic_inc(&d->dels);
			urcu_memb_call_rcu(&it->rh, item_free);
		}
		cds_lfht_add(d->ht, mix(key), &item_new(key, 0)->node);
		urcu_memb_read_unlock();
	}
	urcu_memb_unregister_thread();
	return NULL;
}

TEST(del_returns_with_its_node_unlinked_among_duplicates)
{
	static struct dups d;
	pthread_t t[3];
	struct cds_lfht_iter iter;
	struct item *pos;

	d.ht = cds_lfht_new_flavor(1, 1, 1, 0, &urcu_memb_flavor, NULL); /* one bucket */
	REQUIRE(d.ht);
	for (int i = 0; i < 1000; i++)
		cds_lfht_add(d.ht, mix(7), &item_new(7, 0)->node);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, dups_thread, &d);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_MSG(d.errors == 0, "%lu of %lu deleted nodes still on the list after del returned",
		  d.errors, d.dels);
	CHECK(d.dels > 0);
	urcu_memb_read_lock();
	cds_lfht_for_each_entry(d.ht, &iter, pos, node) {
		CHECK(cds_lfht_del(d.ht, &pos->node) == 0);
		urcu_memb_call_rcu(&pos->rh, item_free);
	}
	urcu_memb_read_unlock();
	CHECK(cds_lfht_destroy(d.ht, NULL) == 0);
	urcu_memb_barrier();
}

/*
 * Growth waits for no grace period: a QSBR thread that stays online (this one) holds every grace
 * period back, and the table must still grow to its count as it fills. A resize that needed a
 * grace period per step would stay at its first size.
 */
TEST(grows_while_grace_periods_are_held_back)
{
	enum { N = 100000 };
	struct cds_lfht *ht = cds_lfht_new_flavor(1, 1, 0,
						  CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
						  &urcu_qsbr_flavor, NULL);
	struct cds_lfht_iter iter;
	struct item *pos;
	unsigned long missing = 0;

	REQUIRE(ht);
	urcu_qsbr_register_thread();
	urcu_qsbr_read_lock();
	for (unsigned long k = 0; k < N; k++) {
		struct item *it = item_new(k, 0);
		REQUIRE(cds_lfht_add_unique(ht, mix(k), match, &it->key, &it->node) == &it->node);
	}
	CHECK_MSG(ht->size >= N / 2, "size %lu after %d insertions with no grace period", ht->size,
		  (int)N);
	for (unsigned long k = 0; k < N; k++)
		missing += lookup(ht, k) == NULL;
	CHECK_MSG(missing == 0, "%lu keys not found", missing);
	cds_lfht_for_each_entry(ht, &iter, pos, node) {
		CHECK(cds_lfht_del(ht, &pos->node) == 0);
		urcu_qsbr_call_rcu(&pos->rh, item_free);
	}
	urcu_qsbr_read_unlock();
	urcu_qsbr_quiescent_state();
	cds_lfht_resize(ht, 1); /* the shrink's two grace periods, then its frees */
	CHECK(ht->size == 1);
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
	urcu_qsbr_barrier();
	urcu_qsbr_unregister_thread();
}

GT_MAIN()
