/* SPDX-License-Identifier: MIT */
/*
 * A small program written the liburcu way, built against grace-urcu: a configuration pointer,
 * an RCU list of sessions, a cds_lfht cache, call_rcu() and defer_rcu() reclamation, the polled
 * grace-period API, and the runtime flavor table. Readers run while the main thread updates;
 * every freed object is poisoned first, so a reader that used one after its grace period would
 * see the poison. Built as C and as C++ (test_liburcu_program_cxx).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu.h>
#include <urcu/rculist.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"

#define LIVE 0x11111111u
#define DEAD 0xdeaddeadu

struct config {
	int a, b;
	unsigned magic;
	struct rcu_head rh;
};

struct session {
	unsigned long id;
	unsigned magic;
	struct cds_list_head list;
	struct cds_lfht_node node;
	struct rcu_head rh;
};

static struct config *cfg;
static CDS_LIST_HEAD(sessions);
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cds_lfht *cache;
static int stop;
static unsigned long freed_cfg, freed_sess, deferred;

static unsigned long hash_id(unsigned long id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdul;
	id ^= id >> 33;
	return id;
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
	struct session *s = caa_container_of(node, struct session, node);
	return s->id == *(const unsigned long *)key;
}

static void free_config(struct rcu_head *rh)
{
	struct config *c = caa_container_of(rh, struct config, rh);
	uatomic_set(&c->magic, DEAD);
	uatomic_inc(&freed_cfg);
	free(c);
}

static void free_session(struct rcu_head *rh)
{
	struct session *s = caa_container_of(rh, struct session, rh);
	uatomic_set(&s->magic, DEAD);
	uatomic_inc(&freed_sess);
	free(s);
}

static void deferred_free(void *p)
{
	struct config *c = (struct config *)p;
	uatomic_set(&c->magic, DEAD);
	uatomic_inc(&deferred);
	free(c);
}

static unsigned long reader_errors;

static void *reader(void *arg)
{
	unsigned long seed = (unsigned long)(uintptr_t)arg, n = 0;

	rcu_register_thread();
	while (!uatomic_read(&stop)) {
		rcu_read_lock();
		struct config *c = rcu_dereference(cfg);
		if (c && (uatomic_read(&c->magic) != LIVE || c->b != c->a + 1))
			uatomic_inc(&reader_errors);
		struct session *s;
		cds_list_for_each_entry_rcu(s, &sessions, list)
			if (uatomic_read(&s->magic) != LIVE)
				uatomic_inc(&reader_errors);
		unsigned long key = (seed = seed * 6364136223846793005ul + 1) >> 58;
		struct cds_lfht_iter it;
		cds_lfht_lookup(cache, hash_id(key), match_id, &key, &it);
		struct cds_lfht_node *node = cds_lfht_iter_get_node(&it);
		if (node) {
			s = caa_container_of(node, struct session, node);
			if (uatomic_read(&s->magic) != LIVE || s->id != key)
				uatomic_inc(&reader_errors);
		}
		rcu_read_unlock();
		n++;
	}
	rcu_unregister_thread();
	return (void *)n;
}

static struct config *config_new(int a)
{
	struct config *c = (struct config *)malloc(sizeof(*c));
	REQUIRE(c);
	c->a = a;
	c->b = a + 1;
	c->magic = LIVE;
	return c;
}

static struct session *session_new(unsigned long id)
{
	struct session *s = (struct session *)malloc(sizeof(*s));
	REQUIRE(s);
	s->id = id;
	s->magic = LIVE;
	cds_lfht_node_init(&s->node);
	return s;
}

TEST(program_written_the_liburcu_way)
{
	pthread_t r[2];

	/* The flavor table: <urcu.h> maps rcu_flavor to the memb flavor's table. */
	CHECK(&rcu_flavor == &urcu_memb_flavor);
	CHECK(rcu_flavor.read_lock != NULL && rcu_flavor.update_call_rcu != NULL);
	cache = cds_lfht_new_flavor(8, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    &rcu_flavor, NULL);
	REQUIRE(cache);
	rcu_assign_pointer(cfg, config_new(0));
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 1));

	rcu_register_thread();
	CHECK(rcu_defer_register_thread() == 0); /* liburcu requires it before defer_rcu() */
	for (int round = 1; round <= 300; round++) {
		/* Configuration: replace, retire through call_rcu or defer_rcu, alternately. */
		struct config *old = rcu_xchg_pointer(&cfg, config_new(round));
		if (round % 2)
			call_rcu(&old->rh, free_config);
		else
			defer_rcu(deferred_free, old);

		/* Sessions: add to the list and the cache; remove one now and then. */
		unsigned long id = (unsigned long)round % 64;
		struct session *s = session_new(id);
		pthread_mutex_lock(&sessions_lock);
		rcu_read_lock();
		struct cds_lfht_node *prev = cds_lfht_add_replace(cache, hash_id(id), match_id, &id,
								  &s->node);
		if (prev) {
			struct session *ps = caa_container_of(prev, struct session, node);
			CHECK(cds_lfht_is_node_deleted(prev));
			cds_list_del_rcu(&ps->list);
			call_rcu(&ps->rh, free_session);
		}
		rcu_read_unlock();
		cds_list_add_tail_rcu(&s->list, &sessions);
		pthread_mutex_unlock(&sessions_lock);

		/* Polling: a cookie taken now completes after a grace period. */
		if (round % 50 == 0) {
			struct urcu_gp_poll_state st = start_poll_synchronize_rcu();
			synchronize_rcu();
			CHECK(poll_state_synchronize_rcu(st));
		}
	}
	uatomic_set(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);

	/* Tear down: empty the cache and the list, then wait for every callback. */
	struct cds_lfht_iter it;
	struct session *s;
	unsigned long left = 0;
	rcu_read_lock();
	cds_lfht_for_each_entry(cache, &it, s, node) {
		CHECK(cds_lfht_del(cache, &s->node) == 0);
		CHECK(cds_lfht_del(cache, &s->node) == -ENOENT); /* already removed */
		left++;
	}
	rcu_read_unlock();
	CHECK_MSG(left == 64, "left %lu", left);
	struct session *n;
	pthread_mutex_lock(&sessions_lock);
	cds_list_for_each_entry_safe(s, n, &sessions, list) {
		cds_list_del_rcu(&s->list);
		call_rcu(&s->rh, free_session);
	}
	pthread_mutex_unlock(&sessions_lock);
	CHECK(cds_lfht_destroy(cache, NULL) == 0);
	struct config *last = rcu_xchg_pointer(&cfg, (struct config *)NULL);
	call_rcu(&last->rh, free_config);
	rcu_defer_barrier();
	rcu_barrier();
	rcu_defer_unregister_thread();
	rcu_unregister_thread();
	CHECK_MSG(reader_errors == 0, "reader errors %lu", reader_errors);
	CHECK_MSG(freed_sess == 300, "sessions freed %lu", freed_sess);
	CHECK_MSG(freed_cfg + deferred == 301, "configs freed %lu + %lu", freed_cfg, deferred);
	CHECK(deferred == 150);
}

GT_MAIN()
