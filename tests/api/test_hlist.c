/* SPDX-License-Identifier: MIT */
/*
 * <grace/hlist.h>: plain and RCU hash-list operations, iterators, debug checks, and readers
 * traversing buckets while updaters add, delete and replace nodes (QSBR readers here, to
 * exercise the flavor-independence of the list code; the default flavor in test_list.c).
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/hlist.h>
#include "gtest_lite.h"

#define LIVE 0x4c495645u
#define DEAD 0xdeadbeefu

struct item {
	int key;
	unsigned magic;
	struct grace_hlist_node node;
	struct rcu_head rcu;
};

static unsigned test_ms(unsigned def)
{
	const char *e = getenv("GRACE_DS_TEST_MS");
	return e ? (unsigned)atoi(e) : def;
}

static int keys(struct grace_hlist_head *h, int *buf)
{
	struct item *pos;
	int n = 0;
	grace_hlist_for_each_entry(pos, h, node)
		buf[n++] = pos->key;
	return n;
}

static int keys_rcu(struct grace_hlist_head *h, int *buf)
{
	struct item *pos;
	int n = 0;
	rcu_read_lock();
	grace_hlist_for_each_entry_rcu(pos, h, node)
		buf[n++] = pos->key;
	rcu_read_unlock();
	return n;
}

static void fill(struct item *it, int n)
{
	for (int i = 0; i < n; i++) {
		it[i].key = i;
		it[i].magic = LIVE;
		grace_hlist_node_init(&it[i].node);
	}
}

TEST(plain_operations)
{
	GRACE_HLIST_HEAD(h);
	struct grace_hlist_head h2;
	struct item it[5];
	int k[8];
	fill(it, 5);
	CHECK(grace_hlist_empty(&h));
	CHECK(grace_hlist_unhashed(&it[0].node));
	grace_hlist_add_head(&it[2].node, &h);
	grace_hlist_add_head(&it[0].node, &h);
	grace_hlist_add_behind(&it[1].node, &it[0].node);
	grace_hlist_add_before(&it[3].node, &it[0].node);
	CHECK(keys(&h, k) == 4 && k[0] == 3 && k[1] == 0 && k[2] == 1 && k[3] == 2);
	grace_hlist_del(&it[0].node);
	CHECK(it[0].node.next == GRACE_HLIST_POISON1 && it[0].node.pprev == GRACE_HLIST_POISON2);
	grace_hlist_del_init(&it[3].node);
	CHECK(grace_hlist_unhashed(&it[3].node));
	grace_hlist_del_init(&it[3].node); /* unhashed: nothing to do */
	CHECK(keys(&h, k) == 2 && k[0] == 1 && k[1] == 2);

	struct item *pos, *from;
	struct grace_hlist_node *n;
	from = &it[1];
	pos = from;
	int seen = 0;
	grace_hlist_for_each_entry_continue(pos, node)
		k[seen++] = pos->key;
	CHECK(seen == 1 && k[0] == 2);
	pos = from;
	seen = 0;
	grace_hlist_for_each_entry_from(pos, node)
		seen++;
	CHECK(seen == 2);

	grace_hlist_head_init(&h2);
	grace_hlist_move_list(&h, &h2);
	CHECK(grace_hlist_empty(&h));
	CHECK(keys(&h2, k) == 2);
	grace_hlist_for_each_entry_safe(pos, n, &h2, node)
		grace_hlist_del(&pos->node);
	CHECK(grace_hlist_empty(&h2));
	struct grace_hlist_node *p;
	seen = 0;
	grace_hlist_for_each(p, &h2)
		seen++;
	CHECK(seen == 0);
}

TEST(rcu_operations)
{
	struct grace_hlist_head h;
	struct item it[6];
	int k[8];
	fill(it, 6);
	grace_hlist_head_init(&h);
	grace_hlist_add_head_rcu(&it[1].node, &h);
	grace_hlist_add_head_rcu(&it[0].node, &h);
	grace_hlist_add_tail_rcu(&it[3].node, &h);
	grace_hlist_add_before_rcu(&it[2].node, &it[3].node);
	grace_hlist_add_behind_rcu(&it[4].node, &it[3].node);
	CHECK(keys_rcu(&h, k) == 5 && k[0] == 0 && k[1] == 1 && k[2] == 2 && k[3] == 3 &&
	      k[4] == 4);
	grace_hlist_del_rcu(&it[2].node);
	CHECK(it[2].node.next == &it[3].node); /* kept for readers standing on it */
	CHECK(it[2].node.pprev == GRACE_HLIST_POISON2);
	grace_hlist_replace_rcu(&it[0].node, &it[5].node);
	CHECK(it[0].node.next == &it[1].node);
	grace_hlist_del_init_rcu(&it[4].node);
	CHECK(grace_hlist_unhashed(&it[4].node));
	CHECK(keys_rcu(&h, k) == 3 && k[0] == 5 && k[1] == 1 && k[2] == 3);

	rcu_read_lock();
	CHECK(grace_hlist_first_rcu(&h) == &it[5].node);
	CHECK(grace_hlist_next_rcu(&it[5].node) == &it[1].node);
	struct item *pos = &it[5];
	int seen = 0;
	grace_hlist_for_each_entry_continue_rcu(pos, node)
		k[seen++] = pos->key;
	CHECK(seen == 2 && k[0] == 1 && k[1] == 3);
	pos = &it[1];
	seen = 0;
	grace_hlist_for_each_entry_from_rcu(pos, node)
		seen++;
	CHECK(seen == 2);
	rcu_read_unlock();

	struct grace_hlist_node *n;
	seen = 0;
	rcu_read_lock();
	grace_hlist_for_each_entry_safe_rcu(pos, n, &h, node) {
		k[seen++] = pos->key;
		if (pos->key == 1)
			grace_hlist_del_rcu(&pos->node);
	}
	rcu_read_unlock();
	CHECK(seen == 3 && k[2] == 3);
	CHECK(keys_rcu(&h, k) == 2 && k[0] == 5 && k[1] == 3);
}

static void double_del(void *arg)
{
	(void)arg;
	GRACE_HLIST_HEAD(h);
	struct item a;
	grace_hlist_add_head_rcu(&a.node, &h);
	grace_hlist_del_rcu(&a.node);
	__asm__ __volatile__("" : : "r"(&a) : "memory");
	grace_hlist_del_rcu(&a.node);
}

TEST(double_deletion_is_caught)
{
	char out[2048];
	int st = gt_run_child(double_del, NULL, out, sizeof(out));
	/* Killed by a signal, or (sanitizers catch the fault and exit) a failure status. */
	CHECK_MSG(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0),
		  "status %d, stderr: %s", st, out);
#ifdef GRACE_DEBUG
	CHECK_MSG(strstr(out, "grace_hlist_del_rcu") && strstr(out, "double deletion"), "%s", out);
#endif
}

/*
 * docs/ds.md (Memory ordering, "Deletion poisons"): debug builds also check every delete for
 * neighbours that do not point back (Linux's CONFIG_DEBUG_LIST), and abort with a message
 * naming the call. Release builds do not check.
 */
/* Two nodes, a then b, with b's pprev pointing astray; delete b (arg NULL: *b->pprev is not b)
 * or a (arg non-NULL: a->next is b, but b->pprev does not point to a->next). */
__attribute__((unused)) static int del_a_too = 1;

__attribute__((unused)) static void del_near_stray(void *del_a)
{
	GRACE_HLIST_HEAD(h);
	struct item a, b;
	struct grace_hlist_node *stray = NULL;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	grace_hlist_add_head_rcu(&b.node, &h);
	grace_hlist_add_head_rcu(&a.node, &h);
	b.node.pprev = &stray;
	__asm__ __volatile__("" : : "r"(&b) : "memory");
	grace_hlist_del_rcu(del_a ? &a.node : &b.node);
}

TEST(debug_checks_neighbours_that_do_not_point_back)
{
#ifdef GRACE_DEBUG
	CHECK(gt_child_aborts_with(del_near_stray, NULL, "misuse: grace_hlist_del_rcu",
				   "*pprev does not point to the node"));
	CHECK(gt_child_aborts_with(del_near_stray, &del_a_too, "misuse: grace_hlist_del_rcu",
				   "next->pprev does not point to the node"));
#else
	printf("  release build: the list checks are GRACE_DEBUG's\n");
#endif
}

/*
 * docs/ds.md ("Readers use any flavor (default, QSBR, srcu)"): the read-side iterators work in
 * an srcu reader's section as in the default flavor's (rcu_operations) and QSBR's (the
 * concurrent case below). Debug builds check that each rcu_dereference() runs inside a
 * section of some flavor: an srcu section must count.
 */
static DEFINE_SRCU(hlist_srcu);

TEST(srcu_reader_traverses)
{
	GRACE_HLIST_HEAD(h);
	struct item it[4];
	struct item *pos;
	int k[8], n = 0;
	fill(it, 4);
	for (int i = 3; i >= 0; i--)
		grace_hlist_add_head_rcu(&it[i].node, &h);
	int idx = srcu_read_lock(&hlist_srcu);
	grace_hlist_for_each_entry_rcu(pos, &h, node)
		k[n++] = pos->key;
	struct grace_hlist_node *first = grace_hlist_first_rcu(&h);
	struct grace_hlist_node *second = grace_hlist_next_rcu(first);
	pos = &it[1];
	int cont = 0;
	grace_hlist_for_each_entry_continue_rcu(pos, node)
		cont++;
	srcu_read_unlock(&hlist_srcu, idx);
	CHECK(n == 4 && k[0] == 0 && k[1] == 1 && k[2] == 2 && k[3] == 3);
	CHECK(first == &it[0].node && second == &it[1].node);
	CHECK(cont == 2);
}

/* ---- concurrent: QSBR readers, buckets of permanent and transient nodes ---- */

enum { BUCKETS = 8, PERM = 4, SLOTS = 32 };

struct conc {
	struct grace_hlist_head bucket[BUCKETS];
	pthread_mutex_t lock;
	struct item perm[BUCKETS][PERM]; /* keys b * 100 + i, at the end of each bucket */
	struct item *slot[SLOTS];
	int stop, failed;
	unsigned long traversals, updates;
};

static void item_free(struct rcu_head *h)
{
	struct item *it = container_of(h, struct item, rcu);
	__atomic_store_n(&it->magic, DEAD, __ATOMIC_RELAXED);
	free(it);
}

static void *reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	unsigned long n = 0;
	qsbr_register_thread();
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		int b = (int)(n % BUCKETS);
		struct item *pos;
		int next = 0;
		qsbr_read_lock();
		grace_hlist_for_each_entry_rcu(pos, &c->bucket[b], node) {
			if (__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) != LIVE)
				__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
			if (pos->key >= 1000)
				continue; /* transient */
			if (pos->key != b * 100 + next) {
				fprintf(stderr, "  reader: bucket %d: key %d, expected %d\n", b,
					pos->key, b * 100 + next);
				__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
			}
			next++;
		}
		qsbr_read_unlock();
		if (next != PERM) {
			fprintf(stderr, "  reader: bucket %d: %d of %d permanent nodes\n", b, next,
				PERM);
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
		}
		if ((++n & 15) == 0)
			qsbr_quiescent_state();
	}
	qsbr_unregister_thread();
	__atomic_fetch_add(&c->traversals, n, __ATOMIC_RELAXED);
	return NULL;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void *updater(void *arg)
{
	struct conc *c = (struct conc *)arg;
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd | 1;
	unsigned long n = 0;
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		unsigned s = (unsigned)(xorshift(&rnd) % SLOTS);
		unsigned op = (unsigned)(xorshift(&rnd) % 5);
		unsigned b = (unsigned)(xorshift(&rnd) % BUCKETS);
		pthread_mutex_lock(&c->lock);
		struct item *old = c->slot[s];
		if (!old) {
			struct item *it = (struct item *)malloc(sizeof(*it));
			REQUIRE(it);
			it->key = 1000 + (int)s;
			it->magic = LIVE;
			struct item *at = &c->perm[b][xorshift(&rnd) % PERM];
			switch (op) {
			case 0:
				grace_hlist_add_head_rcu(&it->node, &c->bucket[b]);
				break;
			case 1:
				grace_hlist_add_tail_rcu(&it->node, &c->bucket[b]);
				break;
			case 2:
				grace_hlist_add_before_rcu(&it->node, &at->node);
				break;
			default:
				grace_hlist_add_behind_rcu(&it->node, &at->node);
				break;
			}
			c->slot[s] = it;
		} else if (op == 0) {
			struct item *it = (struct item *)malloc(sizeof(*it));
			REQUIRE(it);
			it->key = old->key;
			it->magic = LIVE;
			grace_hlist_replace_rcu(&old->node, &it->node);
			c->slot[s] = it;
			call_qsbr(&old->rcu, item_free);
		} else {
			if (op == 1)
				grace_hlist_del_init_rcu(&old->node);
			else
				grace_hlist_del_rcu(&old->node);
			c->slot[s] = NULL;
			call_qsbr(&old->rcu, item_free);
		}
		pthread_mutex_unlock(&c->lock);
		n++;
	}
	__atomic_fetch_add(&c->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

TEST(concurrent_qsbr_readers_and_updaters)
{
	struct conc *c = (struct conc *)calloc(1, sizeof(*c));
	pthread_t r[2], w[2];
	CHECK(c);
	pthread_mutex_init(&c->lock, NULL);
	for (int b = 0; b < BUCKETS; b++) {
		grace_hlist_head_init(&c->bucket[b]);
		for (int i = 0; i < PERM; i++) {
			c->perm[b][i].key = b * 100 + i;
			c->perm[b][i].magic = LIVE;
			grace_hlist_add_tail_rcu(&c->perm[b][i].node, &c->bucket[b]);
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, c);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, updater, c);
	gt_sleep_ms(test_ms(600));
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	printf("  %lu traversals, %lu updates\n", c->traversals, c->updates);
	int failed = c->failed;
	for (int s = 0; s < SLOTS; s++)
		if (c->slot[s]) {
			grace_hlist_del_rcu(&c->slot[s]->node);
			call_qsbr(&c->slot[s]->rcu, item_free);
		}
	qsbr_barrier();
	pthread_mutex_destroy(&c->lock);
	free(c);
	CHECK(!failed);
}

GT_MAIN()
