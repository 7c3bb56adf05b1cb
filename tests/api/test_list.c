/* SPDX-License-Identifier: MIT */
/*
 * <grace/list.h>: the plain and RCU list operations, the iterators, the debug checks, and
 * readers traversing while updaters add, delete and replace entries (default flavor; QSBR and
 * srcu readers too). Freed entries are poisoned first: a reader that sees poison used an entry
 * after its grace period.
 * Permanent entries, never removed, must be seen exactly once and in order by every traversal.
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/list.h>
#include "gtest_lite.h"

#define LIVE 0x4c495645u
#define DEAD 0xdeadbeefu

struct item {
	int key;
	unsigned magic;
	struct grace_list_head node;
	struct rcu_head rcu;
};

static unsigned test_ms(unsigned def)
{
	const char *e = getenv("GRACE_DS_TEST_MS");
	return e ? (unsigned)atoi(e) : def;
}

static void fill(struct item *it, int n)
{
	for (int i = 0; i < n; i++) {
		it[i].key = i;
		it[i].magic = LIVE;
	}
}

/* Keys of the list, in order, into buf; returns the count. */
static int keys(struct grace_list_head *head, int *buf, int max)
{
	struct item *pos;
	int n = 0;
	grace_list_for_each_entry(pos, head, node) {
		if (n < max)
			buf[n] = pos->key;
		n++;
	}
	return n;
}

static int keys_rcu(struct grace_list_head *head, int *buf, int max)
{
	struct item *pos;
	int n = 0;
	rcu_read_lock();
	grace_list_for_each_entry_rcu(pos, head, node) {
		if (n < max)
			buf[n] = pos->key;
		n++;
	}
	rcu_read_unlock();
	return n;
}

static bool same(const int *a, const int *b, int n)
{
	return memcmp(a, b, sizeof(int) * (size_t)n) == 0;
}

TEST(plain_operations)
{
	GRACE_LIST_HEAD(head);
	struct item it[6];
	int k[8];
	fill(it, 6);
	CHECK(grace_list_empty(&head));
	grace_list_add(&it[1].node, &head);
	grace_list_add(&it[0].node, &head);
	grace_list_add_tail(&it[2].node, &head);
	grace_list_add_tail(&it[3].node, &head);
	{
		int want[] = { 0, 1, 2, 3 };
		CHECK(keys(&head, k, 8) == 4 && same(k, want, 4));
	}
	CHECK(grace_list_is_first(&it[0].node, &head));
	CHECK(grace_list_is_last(&it[3].node, &head));
	CHECK(grace_list_first_entry(&head, struct item, node) == &it[0]);
	CHECK(grace_list_last_entry(&head, struct item, node) == &it[3]);
	CHECK(grace_list_next_entry(&it[1], node) == &it[2]);
	CHECK(grace_list_prev_entry(&it[1], node) == &it[0]);

	grace_list_del(&it[1].node);
	CHECK(it[1].node.next == GRACE_LIST_POISON1 && it[1].node.prev == GRACE_LIST_POISON2);
	grace_list_replace(&it[2].node, &it[4].node);
	grace_list_del_init(&it[3].node);
	CHECK(grace_list_empty(&it[3].node));
	{
		int want[] = { 0, 4 };
		CHECK(keys(&head, k, 8) == 2 && same(k, want, 2));
	}
	grace_list_move_tail(&it[0].node, &head);
	{
		int want[] = { 4, 0 };
		CHECK(keys(&head, k, 8) == 2 && same(k, want, 2));
	}
	struct item *pos, *n;
	int seen = 0;
	grace_list_for_each_entry_reverse(pos, &head, node)
		k[seen++] = pos->key;
	CHECK(seen == 2 && k[0] == 0 && k[1] == 4);

	GRACE_LIST_HEAD(other);
	grace_list_add_tail(&it[3].node, &other);
	grace_list_add_tail(&it[5].node, &other);
	CHECK(!grace_list_is_singular(&other));
	grace_list_splice_tail_init(&other, &head);
	CHECK(grace_list_empty(&other));
	{
		int want[] = { 4, 0, 3, 5 };
		CHECK(keys(&head, k, 8) == 4 && same(k, want, 4));
	}
	/* continue / from */
	pos = &it[0];
	seen = 0;
	grace_list_for_each_entry_continue(pos, &head, node)
		k[seen++] = pos->key;
	CHECK(seen == 2 && k[0] == 3 && k[1] == 5);
	pos = &it[0];
	seen = 0;
	grace_list_for_each_entry_from(pos, &head, node)
		k[seen++] = pos->key;
	CHECK(seen == 3 && k[0] == 0);
	/* safe: delete while iterating */
	grace_list_for_each_entry_safe(pos, n, &head, node)
		if (pos->key != 3)
			grace_list_del(&pos->node);
	CHECK(grace_list_is_singular(&head));
	CHECK(grace_list_first_entry_or_null(&head, struct item, node) == &it[3]);
	grace_list_del_init(&it[3].node);
	CHECK(grace_list_first_entry_or_null(&head, struct item, node) == NULL);
	struct grace_list_head *p;
	seen = 0;
	grace_list_for_each(p, &head)
		seen++;
	CHECK(seen == 0);
}

TEST(rcu_operations)
{
	struct grace_list_head head;
	struct item it[6];
	int k[8];
	fill(it, 6);
	grace_list_init(&head);
	grace_list_add_rcu(&it[2].node, &head);
	grace_list_add_rcu(&it[0].node, &head);
	grace_list_add_tail_rcu(&it[3].node, &head);
	grace_list_add_rcu(&it[1].node, &it[0].node); /* after it[0] */
	{
		int want[] = { 0, 1, 2, 3 };
		CHECK(keys_rcu(&head, k, 8) == 4 && same(k, want, 4));
	}
	/* del_rcu keeps ->next for readers standing on the entry, poisons ->prev. */
	grace_list_del_rcu(&it[1].node);
	CHECK(it[1].node.next == &it[2].node);
	CHECK(it[1].node.prev == GRACE_LIST_POISON2);
	grace_list_replace_rcu(&it[2].node, &it[4].node);
	CHECK(it[2].node.next == &it[3].node);
	{
		int want[] = { 0, 4, 3 };
		CHECK(keys_rcu(&head, k, 8) == 3 && same(k, want, 3));
	}

	rcu_read_lock();
	CHECK(grace_list_first_or_null_rcu(&head, struct item, node) == &it[0]);
	CHECK(grace_list_next_or_null_rcu(&head, &it[0], node) == &it[4]);
	CHECK(grace_list_next_or_null_rcu(&head, &it[3], node) == NULL);
	struct item *pos = &it[0], *n;
	int seen = 0;
	grace_list_for_each_entry_continue_rcu(pos, &head, node)
		k[seen++] = pos->key;
	CHECK(seen == 2 && k[0] == 4 && k[1] == 3);
	pos = &it[4];
	seen = 0;
	grace_list_for_each_entry_from_rcu(pos, &head, node)
		k[seen++] = pos->key;
	CHECK(seen == 2 && k[0] == 4);
	struct grace_list_head *lp;
	seen = 0;
	grace_list_for_each_rcu(lp, &head)
		seen++;
	CHECK(seen == 3);
	rcu_read_unlock();

	/* safe_rcu: the body unlinks the current entry; the traversal continues. */
	rcu_read_lock();
	seen = 0;
	grace_list_for_each_entry_safe_rcu(pos, n, &head, node) {
		k[seen++] = pos->key;
		if (pos->key == 4)
			grace_list_del_rcu(&pos->node); /* single updater: this thread */
	}
	rcu_read_unlock();
	CHECK(seen == 3 && k[0] == 0 && k[1] == 4 && k[2] == 3);
	synchronize_rcu();
	{
		int want[] = { 0, 3 };
		CHECK(keys_rcu(&head, k, 8) == 2 && same(k, want, 2));
	}

	/* splice_init_rcu: waits for readers of the source list, then publishes its entries. */
	struct grace_list_head src;
	grace_list_init(&src);
	grace_list_add_tail_rcu(&it[1].node, &src);
	grace_list_add_tail_rcu(&it[5].node, &src);
	grace_list_splice_init_rcu(&src, &head, synchronize_rcu);
	CHECK(grace_list_empty(&src));
	{
		int want[] = { 1, 5, 0, 3 };
		CHECK(keys_rcu(&head, k, 8) == 4 && same(k, want, 4));
	}
	grace_list_init(&src);
	grace_list_del_rcu(&it[1].node);
	grace_list_add_tail_rcu(&it[2].node, &src);
	grace_list_splice_tail_init_rcu(&src, &head, synchronize_rcu);
	{
		int want[] = { 5, 0, 3, 2 };
		CHECK(keys_rcu(&head, k, 8) == 4 && same(k, want, 4));
	}
	/* Empty source: nothing happens, no wait. */
	grace_list_splice_init_rcu(&src, &head, synchronize_rcu);
	CHECK(keys_rcu(&head, k, 8) == 4);
}

/*
 * splice_init_rcu() with a reader standing on an entry of the source list: the splice must not
 * return (nor relink the entries) before that reader's section ends, and the reader's walk
 * must end at the source head it started from. Found by the mutation audit (docs/torture.md):
 * a splice that skipped its grace period survived rcu_operations, which has no reader.
 */
struct splice_arg {
	struct grace_list_head *src;
	int inside, spliced, spliced_while_inside, walk_ok;
};

static void *splice_reader(void *arg)
{
	struct splice_arg *a = (struct splice_arg *)arg;
	struct grace_list_head *p;
	int n = 0;

	rcu_read_lock();
	p = rcu_dereference(a->src->next); /* the first entry */
	__atomic_store_n(&a->inside, 1, __ATOMIC_RELEASE);
	/* A window for a splice that does not wait (not a timing assertion: a correct splice
	 * waits however long this takes). */
	for (int i = 0; i < 300 && !__atomic_load_n(&a->spliced, __ATOMIC_ACQUIRE); i++)
		gt_sleep_ms(1);
	a->spliced_while_inside = __atomic_load_n(&a->spliced, __ATOMIC_ACQUIRE);
	while (p != a->src && n < 100) {
		p = rcu_dereference(p->next);
		n++;
	}
	a->walk_ok = p == a->src;
	rcu_read_unlock();
	return NULL;
}

TEST(splice_init_rcu_waits_for_readers_of_the_source)
{
	struct item it[6];
	struct grace_list_head src, dst;
	struct splice_arg a;
	pthread_t t;
	int k[8];

	fill(it, 6);
	grace_list_init(&src);
	grace_list_init(&dst);
	for (int i = 0; i < 3; i++)
		grace_list_add_tail_rcu(&it[i].node, &src);
	for (int i = 3; i < 6; i++)
		grace_list_add_tail_rcu(&it[i].node, &dst);
	memset(&a, 0, sizeof(a));
	a.src = &src;
	REQUIRE(pthread_create(&t, NULL, splice_reader, &a) == 0);
	while (!__atomic_load_n(&a.inside, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	grace_list_splice_init_rcu(&src, &dst, synchronize_rcu);
	__atomic_store_n(&a.spliced, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(!a.spliced_while_inside);
	CHECK(a.walk_ok);
	{
		int want[] = { 0, 1, 2, 3, 4, 5 };
		CHECK(keys_rcu(&dst, k, 8) == 6 && same(k, want, 6));
	}
}

static void double_del_rcu(void *arg)
{
	(void)arg;
	GRACE_LIST_HEAD(head);
	struct item a;
	grace_list_add_rcu(&a.node, &head);
	grace_list_del_rcu(&a.node);
	/* Hide the poison from the optimiser (it would warn about the store to it). */
	__asm__ __volatile__("" : : "r"(&a) : "memory");
	grace_list_del_rcu(&a.node);
}

__attribute__((unused)) static void add_twice(void *arg)
{
	(void)arg;
	GRACE_LIST_HEAD(head);
	struct item a;
	grace_list_add(&a.node, &head);
	grace_list_add(&a.node, &head);
}

TEST(double_deletion_is_caught)
{
	char out[2048];
	int st = gt_run_child(double_del_rcu, NULL, out, sizeof(out));
	/* Debug builds: a message naming the call; release builds: a fault at the poison. */
	/* Killed by a signal, or (sanitizers catch the fault and exit) a failure status. */
	CHECK_MSG(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0),
		  "status %d, stderr: %s", st, out);
#ifdef GRACE_DEBUG
	CHECK_MSG(strstr(out, "grace_list_del_rcu") && strstr(out, "double deletion"), "%s", out);
	st = gt_run_child(add_twice, NULL, out, sizeof(out));
	CHECK_MSG(WIFSIGNALED(st) && strstr(out, "grace_list_add"), "%s", out);
#endif
}

/*
 * docs/ds.md (Memory ordering, "Deletion poisons"): debug builds also check every list add and
 * delete for neighbours that do not point back (Linux's CONFIG_DEBUG_LIST), and abort with a
 * message naming the call. Release builds do not check (the corruption goes unnoticed there).
 */
__attribute__((unused)) static void add_next_to_stray(void *arg)
{
	(void)arg;
	GRACE_LIST_HEAD(head);
	struct item a, b, stray;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&stray, 0, sizeof(stray));
	grace_list_add_rcu(&a.node, &head);
	a.node.prev = &stray.node; /* head->next is a, but a->prev no longer points to head */
	__asm__ __volatile__("" : : "r"(&a) : "memory");
	grace_list_add_rcu(&b.node, &head);
}

__attribute__((unused)) static void del_rcu_behind_stray(void *arg)
{
	(void)arg;
	GRACE_LIST_HEAD(head);
	struct item a, b, stray;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&stray, 0, sizeof(stray));
	grace_list_add_tail_rcu(&a.node, &head);
	grace_list_add_tail_rcu(&b.node, &head);
	stray.node.next = &stray.node;
	b.node.prev = &stray.node; /* b->prev->next is not b */
	__asm__ __volatile__("" : : "r"(&b) : "memory");
	grace_list_del_rcu(&b.node);
}

__attribute__((unused)) static void del_before_stray(void *arg)
{
	(void)arg;
	GRACE_LIST_HEAD(head);
	struct item a, b, stray;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&stray, 0, sizeof(stray));
	grace_list_add_tail(&a.node, &head);
	grace_list_add_tail(&b.node, &head);
	b.node.prev = &stray.node; /* a->next is b, but b->prev no longer points to a */
	__asm__ __volatile__("" : : "r"(&a) : "memory");
	grace_list_del(&a.node);
}

TEST(debug_checks_neighbours_that_do_not_point_back)
{
#ifdef GRACE_DEBUG
	CHECK(gt_child_aborts_with(add_next_to_stray, NULL, "misuse: grace_list_add_rcu",
				   "next->prev does not point to prev"));
	CHECK(gt_child_aborts_with(del_rcu_behind_stray, NULL, "misuse: grace_list_del_rcu",
				   "prev->next does not point to the entry"));
	CHECK(gt_child_aborts_with(del_before_stray, NULL, "misuse: grace_list_del",
				   "next->prev does not point to the entry"));
#else
	printf("  release build: the list checks are GRACE_DEBUG's\n");
#endif
}

/*
 * docs/ds.md (Lists, grace_list_for_each_entry_safe_rcu: "the body may unlink or move `pos`"):
 * the next entry is loaded before the body runs, so a body that moves @pos to another list
 * leaves the traversal on this one. An iterator that loaded it after the body would follow
 * @pos into the other list and never come back to this head.
 */
TEST(safe_rcu_body_may_move_pos)
{
	struct item it[6];
	GRACE_LIST_HEAD(from);
	GRACE_LIST_HEAD(to);
	struct item *pos, *n;
	int k[8], seen = 0;

	fill(it, 6);
	for (int i = 0; i < 6; i++)
		grace_list_add_tail_rcu(&it[i].node, &from);
	rcu_read_lock();
	grace_list_for_each_entry_safe_rcu(pos, n, &from, node) {
		if (seen == 8)
			break; /* walked off this list: the check below fails */
		k[seen++] = pos->key;
		if (pos->key % 2 == 0) {
			/* single updater: this thread */
			grace_list_del_rcu(&pos->node);
			grace_list_add_tail_rcu(&pos->node, &to);
		}
	}
	rcu_read_unlock();
	{
		int want[] = { 0, 1, 2, 3, 4, 5 };
		CHECK_MSG(seen == 6 && same(k, want, 6), "visited %d entries", seen);
	}
	{
		int odd[] = { 1, 3, 5 }, even[] = { 0, 2, 4 };
		CHECK(keys_rcu(&from, k, 8) == 3 && same(k, odd, 3));
		CHECK(keys_rcu(&to, k, 8) == 3 && same(k, even, 3));
	}
}

/* ---- concurrent readers and updaters ---- */

enum { PERM = 16, SLOTS = 64 };

struct conc {
	struct grace_list_head head;
	pthread_mutex_t lock;
	struct item perm[PERM];
	struct item *slot[SLOTS]; /* transient entries on the list, under lock */
	int stop, failed;
	unsigned long traversals, updates, max_len;
};

static void item_free(struct rcu_head *h)
{
	struct item *it = container_of(h, struct item, rcu);
	__atomic_store_n(&it->magic, DEAD, __ATOMIC_RELAXED);
	free(it);
}

/* Unlink it (an updater's lock held, or the only updater) and free it after a grace period. */
static void item_retire(struct item *it)
{
	grace_list_del_rcu(&it->node);
	call_rcu(&it->rcu, item_free);
}

static void *reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	unsigned long n = 0, maxlen = 0;
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		struct item *pos, *nx;
		int next_perm = 0;
		unsigned long len = 0;
		rcu_read_lock();
		if (n & 1) {
			grace_list_for_each_entry_rcu(pos, &c->head, node) {
				if (__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) != LIVE) {
					fprintf(stderr, "  reader: entry used after free\n");
					__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
				}
				if (pos->key < PERM) {
					if (pos->key != next_perm) {
						fprintf(stderr,
							"  reader: permanent %d, expected %d\n",
							pos->key, next_perm);
						__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
					}
					next_perm++;
				}
				len++;
			}
		} else {
			grace_list_for_each_entry_safe_rcu(pos, nx, &c->head, node) {
				if (__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) != LIVE)
					__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
				if (pos->key < PERM) {
					if (pos->key != next_perm)
						__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
					next_perm++;
				}
				len++;
			}
		}
		rcu_read_unlock();
		if (next_perm != PERM) {
			fprintf(stderr, "  reader: saw %d of %d permanent entries\n", next_perm,
				PERM);
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
		}
		if (len > maxlen)
			maxlen = len;
		n++;
	}
	__atomic_fetch_add(&c->traversals, n, __ATOMIC_RELAXED);
	if (maxlen > __atomic_load_n(&c->max_len, __ATOMIC_RELAXED))
		__atomic_store_n(&c->max_len, maxlen, __ATOMIC_RELAXED);
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
		unsigned op = (unsigned)(xorshift(&rnd) % 4);
		pthread_mutex_lock(&c->lock);
		struct item *old = c->slot[s];
		if (!old) {
			struct item *it = (struct item *)malloc(sizeof(*it));
			REQUIRE(it);
			it->key = PERM + (int)s;
			it->magic = LIVE;
			struct item *where = &c->perm[xorshift(&rnd) % PERM];
			if (op & 1)
				grace_list_add_rcu(&it->node, &where->node);
			else if (op == 2)
				grace_list_add_tail_rcu(&it->node, &c->head);
			else
				grace_list_add_rcu(&it->node, &c->head);
			c->slot[s] = it;
		} else if (op == 0) {
			struct item *it = (struct item *)malloc(sizeof(*it));
			REQUIRE(it);
			it->key = old->key;
			it->magic = LIVE;
			grace_list_replace_rcu(&old->node, &it->node);
			c->slot[s] = it;
			call_rcu(&old->rcu, item_free);
		} else {
			grace_list_del_rcu(&old->node);
			c->slot[s] = NULL;
			call_rcu(&old->rcu, item_free);
		}
		pthread_mutex_unlock(&c->lock);
		n++;
	}
	__atomic_fetch_add(&c->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

TEST(concurrent_readers_and_updaters)
{
	struct conc *c = (struct conc *)calloc(1, sizeof(*c));
	pthread_t r[2], w[2];
	CHECK(c);
	grace_list_init(&c->head);
	pthread_mutex_init(&c->lock, NULL);
	fill(c->perm, PERM);
	for (int i = 0; i < PERM; i++)
		grace_list_add_tail_rcu(&c->perm[i].node, &c->head);
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
	printf("  %lu traversals (longest %lu entries), %lu updates\n", c->traversals, c->max_len,
	       c->updates);
	int failed = c->failed;
	for (int s = 0; s < SLOTS; s++)
		if (c->slot[s])
			item_retire(c->slot[s]);
	rcu_barrier();
	pthread_mutex_destroy(&c->lock);
	free(c);
	CHECK(!failed);
}

/*
 * docs/ds.md (Lists, grace_list_replace_rcu: "readers see old or new"): an entry replaced while
 * readers traverse is seen as the old entry or the new one, never neither and never both. The
 * updater replaces entries of fixed keys 0..REPL-1 over and over; every traversal must see each
 * key exactly once and in order, and never a freed entry. A replacement made of a deletion and
 * an insertion would let a reader miss the key (or see it twice, or out of order).
 */
enum { REPL = 8 };

/* A list that one thread updates while others watch it until stop: what they found wrong, and
 * how many looks they took. */
struct watched {
	struct grace_list_head head;
	int stop, failed;
	unsigned long looks;
};

static void *repl_reader(void *arg)
{
	struct watched *r = (struct watched *)arg;
	unsigned long n = 0;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct item *pos;
		int next = 0;
		rcu_read_lock();
		grace_list_for_each_entry_rcu(pos, &r->head, node) {
			if (__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) != LIVE ||
			    pos->key != next) {
				fprintf(stderr, "  reader: key %d, expected %d\n", pos->key, next);
				__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
			}
			next++;
		}
		rcu_read_unlock();
		if (next != REPL) {
			fprintf(stderr, "  reader: saw %d of %d entries\n", next, REPL);
			__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
		}
		n++;
	}
	__atomic_fetch_add(&r->looks, n, __ATOMIC_RELAXED);
	return NULL;
}

static struct item *item_new(int key)
{
	struct item *it = (struct item *)malloc(sizeof(*it));
	REQUIRE(it);
	it->key = key;
	it->magic = LIVE;
	return it;
}

TEST(replace_rcu_readers_see_old_or_new)
{
	struct watched r;
	struct item *cur[REPL];
	pthread_t t[2];
	uint64_t rnd = 0x9e3779b97f4a7c15ull;
	unsigned long replaced = 0;

	memset(&r, 0, sizeof(r));
	grace_list_init(&r.head);
	for (int i = 0; i < REPL; i++) {
		cur[i] = item_new(i);
		grace_list_add_tail_rcu(&cur[i]->node, &r.head);
	}
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, repl_reader, &r) == 0);
	uint64_t t_end = gt_now_ns() + (uint64_t)test_ms(400) * 1000000ull;
	while (gt_now_ns() < t_end) {
		/* The only updater: no lock needed. */
		int i = (int)(xorshift(&rnd) % REPL);
		struct item *n = item_new(i);
		grace_list_replace_rcu(&cur[i]->node, &n->node);
		call_rcu(&cur[i]->rcu, item_free);
		cur[i] = n;
		replaced++;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("  %lu traversals, %lu replacements\n", r.looks, replaced);
	for (int i = 0; i < REPL; i++)
		item_retire(cur[i]);
	rcu_barrier();
	CHECK(!r.failed);
}

/*
 * docs/ds.md (Lists: "`empty` is a lockless relaxed load"): grace_list_empty() may be called
 * with no lock while an updater changes the list under its own. The list always holds one
 * permanent entry, so the answer is always false. (A plain load here would be a data race:
 * the TSan build reports it.)
 */
static void *empty_poller(void *arg)
{
	struct watched *e = (struct watched *)arg;
	unsigned long n = 0;
	while (!__atomic_load_n(&e->stop, __ATOMIC_RELAXED)) {
		if (grace_list_empty(&e->head))
			__atomic_store_n(&e->failed, 1, __ATOMIC_RELAXED);
		n++;
	}
	__atomic_store_n(&e->looks, n, __ATOMIC_RELAXED);
	return NULL;
}

TEST(empty_without_lock_while_updated)
{
	struct watched e;
	struct item perm, *tr[4] = { NULL, NULL, NULL, NULL };
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t;
	unsigned long updates = 0;

	memset(&e, 0, sizeof(e));
	fill(&perm, 1);
	grace_list_init(&e.head);
	grace_list_add_rcu(&perm.node, &e.head);
	REQUIRE(pthread_create(&t, NULL, empty_poller, &e) == 0);
	uint64_t t_end = gt_now_ns() + (uint64_t)test_ms(200) * 1000000ull;
	while (gt_now_ns() < t_end) {
		int s = (int)(updates % 4);
		pthread_mutex_lock(&lock);
		if (tr[s]) {
			item_retire(tr[s]);
			tr[s] = NULL;
		} else {
			tr[s] = item_new(100 + s);
			grace_list_add_rcu(&tr[s]->node, &e.head); /* at the front: head->next */
		}
		pthread_mutex_unlock(&lock);
		updates++;
	}
	__atomic_store_n(&e.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("  %lu polls, %lu updates\n", e.looks, updates);
	for (int s = 0; s < 4; s++)
		if (tr[s])
			item_retire(tr[s]);
	rcu_barrier();
	CHECK(!e.failed);
}

/*
 * docs/ds.md ("Readers use any flavor (default, QSBR, srcu)"): the list code does not depend on
 * how readers mark their sections. QSBR and srcu readers traverse while an updater adds and
 * deletes entries and retires them through its flavor (call_qsbr, call_srcu); the permanent
 * entries must be seen exactly once and in order, and no freed entry ever (concurrent_readers_
 * and_updaters above is the default flavor's run). Debug builds also check that each
 * rcu_dereference() of the iterators runs inside a section of some flavor.
 */
static DEFINE_SRCU(list_srcu);

enum { FL_QSBR, FL_SRCU };

struct flv {
	struct conc c;
	int flavor;
};

static void *flavor_reader(void *arg)
{
	struct flv *f = (struct flv *)arg;
	struct conc *c = &f->c;
	unsigned long n = 0;
	if (f->flavor == FL_QSBR)
		qsbr_register_thread();
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		struct item *pos;
		int next_perm = 0, idx = 0;
		if (f->flavor == FL_QSBR)
			qsbr_read_lock();
		else
			idx = srcu_read_lock(&list_srcu);
		grace_list_for_each_entry_rcu(pos, &c->head, node) {
			if (__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) != LIVE)
				__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
			if (pos->key < PERM) {
				if (pos->key != next_perm)
					__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
				next_perm++;
			}
		}
		if (f->flavor == FL_QSBR) {
			qsbr_read_unlock();
			qsbr_quiescent_state();
		} else {
			srcu_read_unlock(&list_srcu, idx);
		}
		if (next_perm != PERM) {
			fprintf(stderr, "  reader: saw %d of %d permanent entries\n", next_perm,
				PERM);
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
		}
		n++;
	}
	if (f->flavor == FL_QSBR)
		qsbr_unregister_thread();
	__atomic_fetch_add(&c->traversals, n, __ATOMIC_RELAXED);
	return NULL;
}

static void flavor_retire(struct flv *f, struct item *it)
{
	if (f->flavor == FL_QSBR)
		call_qsbr(&it->rcu, item_free);
	else
		call_srcu(&list_srcu, &it->rcu, item_free);
}

static int run_flavor(int flavor, unsigned ms)
{
	struct flv *f = (struct flv *)calloc(1, sizeof(*f));
	struct conc *c;
	pthread_t r[2];
	uint64_t rnd = 0x2545f4914f6cdd1dull;
	REQUIRE(f);
	c = &f->c;
	f->flavor = flavor;
	grace_list_init(&c->head);
	fill(c->perm, PERM);
	for (int i = 0; i < PERM; i++)
		grace_list_add_tail_rcu(&c->perm[i].node, &c->head);
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&r[i], NULL, flavor_reader, f) == 0);
	uint64_t t_end = gt_now_ns() + (uint64_t)ms * 1000000ull;
	while (gt_now_ns() < t_end) {
		/* The only updater: no lock needed. */
		unsigned s = (unsigned)(xorshift(&rnd) % SLOTS);
		struct item *old = c->slot[s];
		if (!old) {
			struct item *it = item_new(PERM + (int)s);
			grace_list_add_rcu(&it->node, &c->perm[xorshift(&rnd) % PERM].node);
			c->slot[s] = it;
		} else {
			grace_list_del_rcu(&old->node);
			c->slot[s] = NULL;
			flavor_retire(f, old);
		}
		c->updates++;
	}
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	printf("  %s: %lu traversals, %lu updates\n", flavor == FL_QSBR ? "qsbr" : "srcu",
	       c->traversals, c->updates);
	int failed = c->failed;
	for (int s = 0; s < SLOTS; s++)
		if (c->slot[s]) {
			grace_list_del_rcu(&c->slot[s]->node);
			flavor_retire(f, c->slot[s]);
		}
	if (flavor == FL_QSBR)
		qsbr_barrier();
	else
		srcu_barrier(&list_srcu);
	free(f);
	return failed;
}

TEST(concurrent_qsbr_readers)
{
	CHECK(run_flavor(FL_QSBR, test_ms(300)) == 0);
}

TEST(concurrent_srcu_readers)
{
	CHECK(run_flavor(FL_SRCU, test_ms(300)) == 0);
}

GT_MAIN()
