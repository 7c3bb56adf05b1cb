/* SPDX-License-Identifier: MIT */
/*
 * Fault-injection suite: locks held across every update-side call.
 *
 * Readers take a lock L *inside* their read-side sections; an updater holds L across batches
 * of update-side calls: call_* and call_*_hurry (far past the soft and hard limits, which are
 * set low), free_* and free_*_mightsleep (the per-thread caches; for srcu, the engine), the
 * polled API (get_state, start_poll, poll_state, and cond_synchronize only on a completed
 * cookie, where it does not wait), the hash table's add/del/replace (background resizes
 * included) and the ID registry's alloc/replace/remove (growth included). While the updater
 * holds L, a reader inside its section waits for L, so no grace period can end: every call
 * must still return within its documented bound (call_*: the stall timeout, at least 1 s;
 * call_srcu: 100 ms; free_*: as call_* of the flavor, past their per-thread bound; the others
 * never wait). Each flavor (default, QSBR, srcu) runs under each policy (ADAPTIVE, POLL,
 * BATCH).
 *
 * Each call is timed; a call longer than its bound plus HANG_SLACK_S is a failure (a hang,
 * not a measurement: the slack is seconds). The longest call of each kind is printed.
 * Readers check that no object they find was freed (the free poisons it first; ASan sees a
 * use after free directly). GRACE_FAULT_MS sets the duration of each configuration.
 */
#include <grace/grace.h>

#include "fault.h"
#include "gtest_lite.h"

#define HANG_SLACK_S 10.0
#define LIVE 0x11u
#define DEAD 0xddu

struct item {
	struct grace_hash_node hn;
	struct rcu_head rh;
	uint64_t key;
	uint32_t magic;
};

enum kind {
	K_CALL,
	K_FREE,
	K_GET_STATE,
	K_START_POLL,
	K_POLL_STATE,
	K_COND_SYNC,
	K_HASH,
	K_IDR,
	K_N
};
static const char *const kind_name[K_N] = { "call_*",      "free_*",     "get_state",
					    "start_poll",  "poll_state", "cond_synchronize",
					    "hash update", "idr update" };

static struct {
	const struct grace_flavor_ops *ops;
	const char *name;
	bool qsbr, srcu;
	struct srcu_struct *ssp;
	struct grace_hash *ht;
	struct grace_idr idr;
	pthread_mutex_t L;
	int stop;
	unsigned long bad, reads, freed;
	double worst[K_N];
	double bound[K_N];
} G;

static void item_free(struct rcu_head *h)
{
	struct item *it = grace_container_of(h, struct item, rh);
	it->magic = DEAD;
	free(it);
	__atomic_fetch_add(&G.freed, 1, __ATOMIC_RELAXED);
}

/* The hash table frees through &node->rcu. */
static void node_free(struct rcu_head *h)
{
	struct item *it = grace_container_of(h, struct item, hn.rcu);
	it->magic = DEAD;
	free(it);
	__atomic_fetch_add(&G.freed, 1, __ATOMIC_RELAXED);
}

static struct item *item_new(uint64_t key)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	REQUIRE(it != NULL);
	it->key = key;
	it->magic = LIVE;
	return it;
}

static uint64_t key_hash(const void *key, void *arg)
{
	(void)arg;
	uint64_t k = *(const uint64_t *)key;
	return k * 0x9E3779B97F4A7C15ull;
}

static bool key_match(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	return grace_container_of(n, struct item, hn)->key == *(const uint64_t *)key;
}

/* ---- readers ---- */

static void *reader_main(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg * 7919 + 1;

	if (G.qsbr)
		qsbr_register_thread();
	while (!__atomic_load_n(&G.stop, __ATOMIC_ACQUIRE)) {
		int tok = G.ops->read_lock(G.ops->ctx);
		uint64_t r = fault_rand(&seed);
		/* Inside the section: wait for the lock the updater holds across its calls. */
		if (r % 4 == 0) {
			pthread_mutex_lock(&G.L);
			pthread_mutex_unlock(&G.L);
		}
		uint64_t key = r % 256;
		struct grace_hash_node *n = grace_hash_lookup(G.ht, &key);
		if (n && grace_container_of(n, struct item, hn)->magic != LIVE)
			__atomic_fetch_add(&G.bad, 1, __ATOMIC_RELAXED);
		struct item *it = (struct item *)grace_idr_lookup(&G.idr, (int)(r % 1024));
		(void)it; /* IDs are stale most of the time: the registry's own test checks it */
		G.ops->read_unlock(G.ops->ctx, tok);
		if (G.qsbr)
			qsbr_quiescent_state();
		__atomic_fetch_add(&G.reads, 1, __ATOMIC_RELAXED);
	}
	if (G.qsbr)
		qsbr_unregister_thread();
	return NULL;
}

/* ---- the updater: every call timed ---- */

static double t_call;
static enum kind k_call;

static void begin(enum kind k)
{
	k_call = k;
	t_call = fault_now();
}

static int end(void)
{
	double d = fault_now() - t_call;
	if (d > G.worst[k_call])
		G.worst[k_call] = d;
	if (d > G.bound[k_call] + HANG_SLACK_S) {
		fprintf(stderr, "  %s/%s: %s took %.1f s (bound %.1f s)\n", G.name,
			kind_name[k_call], kind_name[k_call], d, G.bound[k_call]);
		return 1;
	}
	return 0;
}

#define TIMED(k, stmt)            \
	do {                      \
		begin(k);         \
		stmt;             \
		if (end())        \
			return 1; \
	} while (0)

/* A read-side section of the table's flavor around grace_hash_del()/replace(): the QSBR
 * updater (not registered between its calls) registers, which puts it online, for it. */
static int section_begin(void)
{
	if (G.ops->register_thread)
		G.ops->register_thread();
	return G.ops->read_lock(G.ops->ctx);
}

static void section_end(int tok)
{
	G.ops->read_unlock(G.ops->ctx, tok);
	if (G.ops->unregister_thread)
		G.ops->unregister_thread();
}

static struct grace_hash_node *hash_nodes[256];
static int idr_ids[64];
static unsigned long cookie_pending;

static int updater_batch(uint64_t *seed)
{
	for (int i = 0; i < 64; i++) {
		uint64_t r = fault_rand(seed);
		switch (r % 8) {
		case 0:
		case 1: {
			struct item *it = item_new(r);
			if (r & 512) /* free_*(): the caller frees later, with L still held */
				TIMED(K_FREE, G.ops->free(G.ops->ctx, it, &it->rh));
			else if (r & 1024)
				TIMED(K_FREE, G.ops->free_headless(G.ops->ctx, it));
			else if ((r & 256) && G.ops->call_hurry)
				TIMED(K_CALL, G.ops->call_hurry(G.ops->ctx, &it->rh, item_free));
			else
				TIMED(K_CALL, G.ops->call(G.ops->ctx, &it->rh, item_free));
			break;
		}
		case 2:
			TIMED(K_GET_STATE, (void)G.ops->get_state(G.ops->ctx));
			TIMED(K_START_POLL, cookie_pending = G.ops->start_poll(G.ops->ctx));
			break;
		case 3: {
			bool done;
			TIMED(K_POLL_STATE, done = G.ops->poll_state(G.ops->ctx, cookie_pending));
			if (done)
				TIMED(K_COND_SYNC,
				      G.ops->cond_synchronize(G.ops->ctx, cookie_pending));
			break;
		}
		case 4:
		case 5: {
			uint64_t key = (r >> 8) % 256;
			struct item *it = item_new(key);
			struct grace_hash_node *old = hash_nodes[key];
			if (old) {
				/* del and replace read the node before they lock it: the contract
				 * (api.md) is a read-side section around them, checked in debug
				 * builds, though this thread is the only one that deletes. */
				int tok = section_begin();
				int rc;
				begin(K_HASH);
				rc = grace_hash_replace(G.ht, old, &it->hn);
				section_end(tok);
				REQUIRE(rc == 0);
				if (end())
					return 1;
				hash_nodes[key] = &it->hn;
			} else {
				TIMED(K_HASH,
				      REQUIRE(grace_hash_add(G.ht, &it->hn, &it->key) == 0));
				hash_nodes[key] = &it->hn;
			}
			break;
		}
		case 6: {
			uint64_t key = (r >> 8) % 256;
			if (hash_nodes[key]) {
				int tok = section_begin();
				int rc;
				begin(K_HASH);
				rc = grace_hash_del(G.ht, hash_nodes[key]);
				section_end(tok);
				REQUIRE(rc == 0);
				if (end())
					return 1;
				hash_nodes[key] = NULL;
			}
			break;
		}
		case 7: {
			int s = (int)((r >> 8) % 64);
			if (idr_ids[s] > 0) {
				void *p;
				struct item *it = item_new(r);
				TIMED(K_IDR, p = NULL;
				      REQUIRE(grace_idr_replace(&G.idr, idr_ids[s] - 1, it, &p) ==
					      0));
				struct item *o = (struct item *)p;
				TIMED(K_CALL, G.ops->call(G.ops->ctx, &o->rh, item_free));
				if (r & (1u << 20)) {
					TIMED(K_IDR, p = grace_idr_remove(&G.idr, idr_ids[s] - 1));
					REQUIRE(p == it);
					TIMED(K_CALL, G.ops->call(G.ops->ctx, &it->rh, item_free));
					idr_ids[s] = 0;
				}
			} else {
				struct item *it = item_new(r);
				int id;
				TIMED(K_IDR, id = grace_idr_alloc(&G.idr, it));
				REQUIRE(id >= 0);
				idr_ids[s] = id + 1;
			}
			break;
		}
		}
	}
	return 0;
}

static int run_config(const struct grace_flavor_ops *ops, const char *name, bool qsbr,
		      struct srcu_struct *ssp, enum grace_gp_policy pol, unsigned int ms)
{
	pthread_t rd[2];
	uint64_t seed = fault_seed();
	struct grace_hash_params hp;
	struct grace_idr_params ip = { 2048, 1, 0, ops };
	int fail = 0;
	double call_bound = ssp ? 0.1 : 1.0;

	memset(&G.worst, 0, sizeof(G.worst));
	for (int k = 0; k < K_N; k++)
		G.bound[k] = 0;
	G.bound[K_CALL] = call_bound;
	G.bound[K_FREE] = call_bound;
	/* The hash and the registry retire through ops->call. */
	G.bound[K_HASH] = 2 * call_bound; /* a retirement and a resize step */
	G.bound[K_IDR] = call_bound;
	G.ops = ops;
	G.name = name;
	G.qsbr = qsbr;
	G.ssp = ssp;
	G.stop = 0;
	G.bad = 0;
	pthread_mutex_init(&G.L, NULL);
	memset(&hp, 0, sizeof(hp));
	hp.hash = key_hash;
	hp.match = key_match;
	hp.free = node_free;
	hp.ops = ops;
	hp.init_buckets = 8;
	hp.min_buckets = 8;
	hp.flags = GRACE_HASH_AUTO_RESIZE;
	G.ht = grace_hash_create(&hp);
	REQUIRE(G.ht != NULL);
	REQUIRE(grace_idr_init(&G.idr, &ip) == 0);
	memset(hash_nodes, 0, sizeof(hash_nodes));
	memset(idr_ids, 0, sizeof(idr_ids));
	REQUIRE(ops->set_policy(ops->ctx, pol, 20000) == 0);
	REQUIRE(ops->set_callback_limits(ops->ctx, 2, 8) == 0);
	cookie_pending = ops->get_state(ops->ctx);
	for (int i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader_main, (void *)(uintptr_t)(i + 1));

	double t0 = fault_now();
	unsigned long batches = 0;
	while (!fail && fault_now() - t0 < ms / 1000.0) {
		pthread_mutex_lock(&G.L);
		fail = updater_batch(&seed);
		pthread_mutex_unlock(&G.L);
		batches++;
		if (batches % 8 == 0)
			fault_sleep_ms(1); /* let the readers in */
	}
	__atomic_store_n(&G.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);

	/* Tear down: everything retired runs, nothing freed was read. */
	ops->set_policy(ops->ctx, GRACE_POLICY_ADAPTIVE, 0);
	ops->set_callback_limits(ops->ctx, 10000, 100000);
	for (int s = 0; s < 64; s++) {
		if (idr_ids[s] > 0) {
			struct item *it = (struct item *)grace_idr_remove(&G.idr, idr_ids[s] - 1);
			ops->call(ops->ctx, &it->rh, item_free);
		}
	}
	grace_idr_destroy(&G.idr);
	grace_hash_destroy(G.ht); /* frees the nodes left, then waits for the barrier */
	ops->barrier(ops->ctx);
	ops->free_barrier(ops->ctx); /* the free_*() objects: nothing leaks (ASan build) */
	pthread_mutex_destroy(&G.L);
	printf("  %s %s: %lu batches under the lock, %lu reads, %lu freed; longest call:", name,
	       pol == GRACE_POLICY_BATCH  ? "BATCH"
	       : pol == GRACE_POLICY_POLL ? "POLL"
					  : "ADAPTIVE",
	       batches, G.reads, G.freed);
	for (int k = 0; k < K_N; k++)
		printf(" %s %.3f s%s", kind_name[k], G.worst[k], k + 1 < K_N ? "," : "\n");
	if (G.bad) {
		fprintf(stderr, "  %s: readers found %lu freed objects\n", name, G.bad);
		fail = 1;
	}
	return fail;
}

static const enum grace_gp_policy policies[3] = { GRACE_POLICY_ADAPTIVE, GRACE_POLICY_POLL,
						  GRACE_POLICY_BATCH };

static unsigned int config_ms(void)
{
	return fault_env_ms("GRACE_FAULT_MS", 300);
}

TEST(locks_held_rcu)
{
	grace_set_stall_timeout_ms(100);
	for (int p = 0; p < 3; p++)
		CHECK(run_config(&grace_flavor_rcu, "rcu", false, NULL, policies[p], config_ms()) ==
		      0);
}

TEST(locks_held_qsbr)
{
	grace_set_stall_timeout_ms(100);
	CHECK(run_config(&grace_flavor_qsbr, "qsbr", true, NULL, GRACE_POLICY_POLL, config_ms()) ==
	      0);
	CHECK(run_config(&grace_flavor_qsbr, "qsbr", true, NULL, GRACE_POLICY_BATCH, config_ms()) ==
	      0);
}

TEST(locks_held_srcu)
{
	static struct srcu_struct ss;
	struct grace_flavor_ops ops;

	grace_set_stall_timeout_ms(100);
	CHECK(init_srcu_struct(&ss) == 0);
	grace_flavor_ops_srcu(&ops, &ss);
	for (int p = 0; p < 3; p++)
		CHECK(run_config(&ops, "srcu", false, &ss, policies[p], config_ms()) == 0);
	cleanup_srcu_struct(&ss);
}

int main(int argc, char **argv)
{
	/* The stall and hard-limit warnings are expected here: keep them short. */
	return gt_main(argc, argv);
}
