/* SPDX-License-Identifier: MIT */
/* A cds_lfht design: lookups with cds_lfht_lookup(); updates look the key up, cds_lfht_del() it
 * (freed with call_rcu()) and cds_lfht_add() a new node. One source, compiled twice
 * (CMakeLists.txt): against Debian's liburcu-dev (memb flavor, inline _LGPL_SOURCE read side;
 * HA_LFHT_DESIGN=ha_urcu, only when liburcu was found) and against grace-urcu's headers
 * (HA_LFHT_DESIGN=ha_grace_urcu): the same program on both libraries. */
#define _LGPL_SOURCE
#include <stdlib.h>
#include <urcu.h>
#include <urcu/rculfhash.h>

#include "hashapi.h"

#ifndef HA_LFHT_DESIGN
#error "define HA_LFHT_DESIGN (ha_urcu or ha_grace_urcu) and HA_LFHT_NAME"
#endif
#define HA_CAT2(a, b) a##b
#define HA_CAT(a, b) HA_CAT2(a, b)
#define HA_STR2(a) #a
#define HA_STR(a) HA_STR2(a)
#define HA_LOOP HA_CAT(HA_LFHT_DESIGN, _loop) /* ha_urcu_loop, ha_grace_urcu_loop */

struct obj {
	uint64_t key;
	struct cds_lfht_node node;
	struct rcu_head rh;
};

static int match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct obj, node)->key == *(const uint64_t *)key;
}

static void obj_free(struct rcu_head *h)
{
	free(caa_container_of(h, struct obj, rh));
}

static void *create(uint64_t nkeys, uint64_t buckets, int auto_resize)
{
	struct cds_lfht *ht =
		cds_lfht_new(buckets, 1, 0,
			     auto_resize ? CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING : 0, NULL);
	if (!ht)
		abort();
	rcu_register_thread();
	rcu_read_lock();
	for (uint64_t k = 0; k < nkeys; k++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		o->key = k;
		cds_lfht_node_init(&o->node);
		cds_lfht_add(ht, ha_hash(k), &o->node);
	}
	rcu_read_unlock();
	rcu_unregister_thread();
	return ht;
}

static void destroy(void *t)
{
	struct cds_lfht *ht = (struct cds_lfht *)t;
	struct cds_lfht_iter it;
	struct obj *o;

	rcu_register_thread();
	rcu_read_lock();
	cds_lfht_for_each_entry(ht, &it, o, node) {
		if (cds_lfht_del(ht, &o->node) == 0)
			call_rcu(&o->rh, obj_free);
	}
	rcu_read_unlock();
	rcu_barrier();
	cds_lfht_destroy(ht, NULL);
	rcu_unregister_thread();
}

static void update(struct cds_lfht *ht, uint64_t k)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	struct cds_lfht_iter it;

	o->key = k;
	cds_lfht_node_init(&o->node);
	rcu_read_lock();
	cds_lfht_lookup(ht, ha_hash(k), match, &k, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	if (n && cds_lfht_del(ht, n) == 0)
		call_rcu(&caa_container_of(n, struct obj, node)->rh, obj_free);
	cds_lfht_add(ht, ha_hash(k), &o->node);
	rcu_read_unlock();
}

/* The measured loop: global, so callgrind can count it alone (--toggle-collect). */
void HA_LOOP(struct cds_lfht *ht, struct ha_work *w);

__attribute__((noinline)) void HA_LOOP(struct cds_lfht *ht, struct ha_work *w)
{
	uint64_t s = w->seed, ops = 0, hits = 0;
	int upd;

	while (!*w->stop) {
		uint64_t k = ha_next(w, &s, &upd);
		if (upd) {
			update(ht, k);
		} else {
			struct cds_lfht_iter it;
			rcu_read_lock();
			cds_lfht_lookup(ht, ha_hash(k), match, &k, &it);
			hits += cds_lfht_iter_get_node(&it) != NULL;
			rcu_read_unlock();
		}
		ops++;
	}
	w->ops = ops;
	w->hits = hits;
}

static void run(void *t, struct ha_work *w)
{
	rcu_register_thread();
	ha_ready_wait(w);
	HA_LOOP((struct cds_lfht *)t, w);
	rcu_unregister_thread();
}

static void resize(void *t, uint64_t buckets)
{
	rcu_register_thread();
	cds_lfht_resize((struct cds_lfht *)t, buckets);
	rcu_unregister_thread();
}

static void insert(void *t, uint64_t from, uint64_t to)
{
	rcu_register_thread();
	for (uint64_t k = from; k < to; k++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		o->key = k;
		cds_lfht_node_init(&o->node);
		rcu_read_lock();
		cds_lfht_add((struct cds_lfht *)t, ha_hash(k), &o->node);
		rcu_read_unlock();
	}
	rcu_unregister_thread();
}

const struct ha_design HA_LFHT_DESIGN = { HA_LFHT_NAME,
					  HA_STR(HA_LOOP),
					  sizeof(struct cds_lfht_node),
					  sizeof(struct obj),
					  create,
					  destroy,
					  run,
					  resize,
					  insert };
