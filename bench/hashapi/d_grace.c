/* SPDX-License-Identifier: MIT */
/* grace's own table (<grace/hash.h>), default flavor: lookup through grace_hash_lookup() (the
 * caller's match function through a pointer), or the inline candidate loop; updates delete a
 * key (grace_hash_del_key(), the node retired through the table's free callback) and insert a
 * new node for it. */
#include <stdlib.h>
#include <grace/rcu.h>
#include <grace/hash.h>

#include "hashapi.h"

struct obj {
	uint64_t key;
	struct grace_hash_node hn;
};

static uint64_t key_hash(const void *key, void *arg)
{
	(void)arg;
	return ha_hash(*(const uint64_t *)key);
}

static bool key_match(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	return grace_container_of(n, struct obj, hn)->key == *(const uint64_t *)key;
}

static void obj_free(struct rcu_head *h)
{
	free(grace_hash_entry_of_rcu(h, struct obj, hn));
}

static void *create(uint64_t nkeys, uint64_t buckets, int auto_resize)
{
	struct grace_hash_params p = { 0 };
	p.hash = key_hash;
	p.match = key_match;
	p.free = obj_free;
	p.init_buckets = buckets;
	p.min_buckets = 64;
	p.flags = auto_resize ? GRACE_HASH_AUTO_RESIZE : 0;
	struct grace_hash *ht = grace_hash_create(&p);
	if (!ht)
		abort();
	for (uint64_t k = 0; k < nkeys; k++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		o->key = k;
		grace_hash_add(ht, &o->hn, &o->key);
	}
	return ht;
}

static void destroy(void *t)
{
	grace_hash_destroy((struct grace_hash *)t);
}

static void update(struct grace_hash *ht, uint64_t k)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	o->key = k;
	grace_hash_del_key(ht, &k);
	grace_hash_add(ht, &o->hn, &o->key);
}

/* The measured loop: global, so callgrind can count it alone (--toggle-collect). */
void ha_grace_loop(struct grace_hash *ht, struct ha_work *w);
void ha_grace_inline_loop(struct grace_hash *ht, struct ha_work *w);

__attribute__((noinline)) void ha_grace_loop(struct grace_hash *ht, struct ha_work *w)
{
	uint64_t s = w->seed, ops = 0, hits = 0;
	int upd;

	while (!*w->stop) {
		uint64_t k = ha_next(w, &s, &upd);
		if (upd) {
			update(ht, k);
		} else {
			rcu_read_lock();
			struct grace_hash_node *n = grace_hash_lookup(ht, &k);
			hits += n != NULL;
			rcu_read_unlock();
		}
		ops++;
	}
	w->ops = ops;
	w->hits = hits;
}

__attribute__((noinline)) void ha_grace_inline_loop(struct grace_hash *ht, struct ha_work *w)
{
	uint64_t s = w->seed, ops = 0, hits = 0;
	int upd;

	while (!*w->stop) {
		uint64_t k = ha_next(w, &s, &upd);
		if (upd) {
			update(ht, k);
		} else {
			struct grace_hash_node *n;
			rcu_read_lock();
			grace_hash_for_each_possible_rcu(ht, n, ha_hash(k))
				if (grace_container_of(n, struct obj, hn)->key == k) {
					hits++;
					break;
				}
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
	ha_grace_loop((struct grace_hash *)t, w);
	rcu_unregister_thread();
}

static void run_inline(void *t, struct ha_work *w)
{
	rcu_register_thread();
	ha_ready_wait(w);
	ha_grace_inline_loop((struct grace_hash *)t, w);
	rcu_unregister_thread();
}

static void resize(void *t, uint64_t buckets)
{
	grace_hash_resize((struct grace_hash *)t, buckets);
}

static void insert(void *t, uint64_t from, uint64_t to)
{
	for (uint64_t k = from; k < to; k++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		o->key = k;
		grace_hash_add((struct grace_hash *)t, &o->hn, &o->key);
	}
}

const struct ha_design ha_grace = { "grace",
				    "ha_grace_loop",
				    sizeof(struct grace_hash_node),
				    sizeof(struct obj),
				    create,
				    destroy,
				    run,
				    resize,
				    insert };
const struct ha_design ha_grace_inline = { "grace-inline",
					   "ha_grace_inline_loop",
					   sizeof(struct grace_hash_node),
					   sizeof(struct obj),
					   create,
					   destroy,
					   run_inline,
					   resize,
					   insert };
