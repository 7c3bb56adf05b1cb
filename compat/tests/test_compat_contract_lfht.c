/* SPDX-License-Identifier: MIT */
/*
 * compat_contract_lfht: promises of docs/compat.md on cds_lfht that no other test checked
 * (tests/contract/promises-guide-compat.tsv names the case of each), through liburcu's API:
 * misuse of cds_lfht_del(), cds_lfht_next() after a lookup, racing add_unique/add_replace,
 * CDS_LFHT_ACCOUNTING's shrink, the full barrier of each update, a raw clone child.
 *
 * Above each TEST: the break of the library it was checked against (the library edited, the
 * test seen failing, the edit undone).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "gtest_lite.h"
#define MC_WANT_FMT "misuse: %s:"
#include "misuse_child.h"

#define CHECK_EQL(a, b) \
	CHECK_MSG((long)(a) == (long)(b), "%s = %ld, want %ld", #a, (long)(a), (long)(b))

/* A liveness bound: generous, never a performance check. */
#define LIVE_NS (20ull * 1000000000ull)

struct item {
	unsigned long key;
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

static struct item *item_new(unsigned long key)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));

	REQUIRE(it);
	it->key = key;
	cds_lfht_node_init(&it->node);
	return it;
}

static struct item *item_of(struct cds_lfht_node *n)
{
	return n ? caa_container_of(n, struct item, node) : NULL;
}

static void item_free(struct rcu_head *rh)
{
	free(caa_container_of(rh, struct item, rh));
}

static struct cds_lfht *table_new(unsigned long init, int flags)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(init, 1, 0, flags, &urcu_memb_flavor, NULL);

	REQUIRE(ht);
	return ht;
}

/* Remove every node (call_rcu frees them), wait for the callbacks, destroy. */
static int table_empty_and_destroy(struct cds_lfht *ht)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	urcu_memb_read_lock();
	cds_lfht_for_each(ht, &iter, n) {
		if (cds_lfht_del(ht, n) == 0)
			urcu_memb_call_rcu(&item_of(n)->rh, item_free);
	}
	urcu_memb_read_unlock();
	urcu_memb_barrier();
	return cds_lfht_destroy(ht, NULL);
}

/* ---- cds_lfht_del() of what is not a node of the table ---- */

static void del_never_added(void)
{
	struct cds_lfht *ht = table_new(8, 0);
	struct item *it = item_new(1); /* cds_lfht_node_init() only: its key is 0, even */

	urcu_memb_read_lock();
	cds_lfht_del(ht, &it->node);
	urcu_memb_read_unlock();
}

static void del_bucket_node(void)
{
	struct cds_lfht *ht = table_new(8, 0);
	struct item *it = item_new(1);

	urcu_memb_read_lock();
	cds_lfht_add(ht, mix(1), &it->node);
	/* No call hands out a bucket node: a stray pointer into the table's memory is what this
	 * check is for. Bucket 0's node, through the table's (internal) fields. */
	cds_lfht_del(ht, ht->tbl[0]);
	urcu_memb_read_unlock();
}

/*
 * docs/compat.md, cds_lfht differences: "cds_lfht_del() of a bucket node or of a node never
 * added (its key is even) is reported as misuse" (every build, abort), naming cds_lfht_del.
 * Checked against: compat/src/lfht.c grace_urcu_lfht_del() without its even-key check: the
 * never-added node is "removed" (0) and the bucket node's removal hangs or corrupts the table,
 * test fails.
 */
TEST(del_of_a_bucket_node_or_a_node_never_added_is_misuse)
{
	EXPECT_MISUSE_CHILD(del_never_added, MC_FATAL, "cds_lfht_del", "never added");
	EXPECT_MISUSE_CHILD(del_bucket_node, MC_FATAL, "cds_lfht_del", "bucket node");
}

/* ---- cds_lfht_next() after cds_lfht_lookup() ---- */

/*
 * docs/compat.md, cds_lfht: "cds_lfht_next() after cds_lfht_lookup() walks on through the
 * table, as in liburcu": from the node a lookup found (the first of its key), cds_lfht_next()
 * visits exactly the nodes after it in traversal order, to the end, duplicates included.
 * Checked against: <urcu/rculfhash.h> cds_lfht_lookup() leaving the iterator's link NULL (a
 * lookup iterator that ends at its node): cds_lfht_next() stops at once, test fails.
 */
TEST(next_after_lookup_walks_on_through_the_table)
{
	enum { NKEYS = 400, NDUP = 3 };
	struct cds_lfht *ht = table_new(16, 0);
	static struct cds_lfht_node *order[NKEYS + 2 * NDUP];
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;
	size_t total = 0;

	urcu_memb_read_lock();
	for (unsigned long k = 0; k < NKEYS; k++)
		cds_lfht_add(ht, mix(k), &item_new(k)->node);
	for (int d = 0; d < NDUP; d++) { /* duplicates of two keys */
		cds_lfht_add(ht, mix(7), &item_new(7)->node);
		cds_lfht_add(ht, mix(100), &item_new(100)->node);
	}
	cds_lfht_for_each(ht, &iter, n) {
		if (total < sizeof(order) / sizeof(order[0]))
			order[total] = n;
		total++;
	}
	urcu_memb_read_unlock();
	CHECK_EQL(total, NKEYS + 2 * NDUP);

	int bad = 0;
	for (size_t i = 0; i < total && !bad; i++) {
		unsigned long key = item_of(order[i])->key;

		if (i > 0 && item_of(order[i - 1])->key == key)
			continue; /* not the first of its run: a lookup finds the first */
		urcu_memb_read_lock();
		cds_lfht_lookup(ht, mix(key), match, &key, &iter);
		if (cds_lfht_iter_get_node(&iter) != order[i]) {
			bad = 1;
			fprintf(stderr, "  lookup of key %lu: not the first node of its run\n",
				key);
		}
		size_t j = i + 1;
		for (cds_lfht_next(ht, &iter); !bad && (n = cds_lfht_iter_get_node(&iter));
		     cds_lfht_next(ht, &iter), j++) {
			if (j >= total || n != order[j]) {
				bad = 1;
				fprintf(stderr,
					"  after the lookup of key %lu: step %zu is not the "
					"traversal's node %zu\n",
					key, j - i, j);
			}
		}
		if (!bad && j != total) {
			bad = 1;
			fprintf(stderr, "  after the lookup of key %lu: stopped at %zu of %zu\n",
				key, j, total);
		}
		urcu_memb_read_unlock();
	}
	CHECK(!bad);
	CHECK_EQL(table_empty_and_destroy(ht), 0);
}

/* ---- add_unique and add_replace racing on the same keys ---- */

#define RACE_KEYS 1000
#define RACE_THREADS 4
static struct cds_lfht *race_ht;
static int race_phase, race_stop;
static unsigned int race_won[RACE_KEYS];
static long race_bad_unique, race_replace_none, race_dup_seen, race_lookup_bad;
static unsigned long race_gen[RACE_KEYS], race_arrive;

/* Phase 0's two updaters meet before each key (k-th meeting: 2k arrivals), so that their
 * insertions of it run at the same time. */
static void race_meet(unsigned long k)
{
	unsigned long spins = 0;

	(void)uatomic_add_return(&race_arrive, 1);
	while (uatomic_load(&race_arrive, CMM_ACQUIRE) < 2 * k) {
		if (++spins % 1024 == 0)
			sched_yield();
		else
			caa_cpu_relax();
	}
}

static void *race_updater(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg;

	for (unsigned long k = 0; k < RACE_KEYS; k++) {
		struct item *it = item_new(k);
		struct cds_lfht_node *ret;

		if (race_phase == 0) {
			/* Both threads add every key, at the same moment: they collide. */
			race_meet(k + 1);
			urcu_memb_read_lock();
			ret = cds_lfht_add_unique(race_ht, mix(k), match, &k, &it->node);
			urcu_memb_read_unlock();
			if (ret == &it->node) {
				uatomic_inc(&race_won[k]);
			} else {
				REQUIRE(item_of(ret)->key == k);
				free(it); /* never published */
			}
		} else if ((k + t) & 1) {
			urcu_memb_read_lock();
			ret = cds_lfht_add_replace(race_ht, mix(k), match, &k, &it->node);
			urcu_memb_read_unlock();
			if (ret)
				urcu_memb_call_rcu(&item_of(ret)->rh, item_free);
			else
				uatomic_inc(&race_replace_none); /* the key is always present */
		} else {
			urcu_memb_read_lock();
			ret = cds_lfht_add_unique(race_ht, mix(k), match, &k, &it->node);
			urcu_memb_read_unlock();
			if (ret == &it->node)
				uatomic_inc(&race_bad_unique); /* added a second one */
			else
				free(it);
		}
	}
	return NULL;
}

/* Phase 0 (insertions only): a traversal never meets a key twice. Phase 1 (replacements): a
 * lookup and its duplicates find each present key exactly once. */
static void *race_reader(void *arg)
{
	unsigned long gen = 0, k = 0;

	(void)arg;
	while (!uatomic_load(&race_stop, CMM_ACQUIRE)) {
		struct cds_lfht_iter iter;
		struct cds_lfht_node *n;

		urcu_memb_read_lock();
		if (race_phase == 0) {
			gen++;
			cds_lfht_for_each(race_ht, &iter, n) {
				unsigned long key = item_of(n)->key;

				if (race_gen[key] == gen)
					uatomic_inc(&race_dup_seen);
				race_gen[key] = gen;
			}
		} else {
			for (int i = 0; i < 64; i++, k = (k + 7) % RACE_KEYS) {
				int found = 0;

				cds_lfht_for_each_duplicate(race_ht, mix(k), match, &k, &iter, n)
					found++;
				if (found != 1)
					uatomic_inc(&race_lookup_bad);
			}
		}
		urcu_memb_read_unlock();
	}
	return NULL;
}

static void *race_resizer(void *arg)
{
	unsigned int s = 1;

	(void)arg;
	while (!uatomic_load(&race_stop, CMM_ACQUIRE)) {
		cds_lfht_resize(race_ht, 1ul << (s % 13));
		s = s * 7 + 3;
	}
	return NULL;
}

/* Every key exactly once in a traversal (nothing running). */
static int race_keys_once(void)
{
	static unsigned int cnt[RACE_KEYS];
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;
	int bad = 0;

	memset(cnt, 0, sizeof(cnt));
	urcu_memb_read_lock();
	cds_lfht_for_each(race_ht, &iter, n)
		cnt[item_of(n)->key]++;
	urcu_memb_read_unlock();
	for (unsigned long k = 0; k < RACE_KEYS; k++)
		if (cnt[k] != 1 && bad++ < 5)
			fprintf(stderr, "  key %lu found %u times\n", k, cnt[k]);
	return bad;
}

static void race_run(int phase)
{
	pthread_t u[RACE_THREADS], rd, rs;
	int nu = phase == 0 ? 2 : RACE_THREADS;

	race_phase = phase;
	race_stop = 0;
	race_arrive = 0;
	memset(race_gen, 0, sizeof(race_gen)); /* the reader counts its traversals from 1 */
	REQUIRE(pthread_create(&rd, NULL, race_reader, NULL) == 0);
	REQUIRE(pthread_create(&rs, NULL, race_resizer, NULL) == 0);
	for (int i = 0; i < nu; i++)
		REQUIRE(pthread_create(&u[i], NULL, race_updater, (void *)(uintptr_t)i) == 0);
	for (int i = 0; i < nu; i++)
		pthread_join(u[i], NULL);
	uatomic_store(&race_stop, 1, CMM_RELEASE);
	pthread_join(rd, NULL);
	pthread_join(rs, NULL);
}

/*
 * docs/compat.md, cds_lfht: add_unique and add_replace are atomic "to each other (with only
 * them inserting, no key is ever present twice ...)": two threads insert each key with
 * cds_lfht_add_unique() at the same moment while the table resizes (explicitly and
 * automatically): for each key exactly one gets its own node back, the other the node present,
 * and a concurrent traversal never meets a key twice; then four threads race
 * cds_lfht_add_replace() and cds_lfht_add_unique() on the present keys: add_unique never adds,
 * add_replace always replaces, a concurrent lookup finds each key exactly once.
 * Checked against: compat/src/lfht.c do_add() made check-then-insert (after a walk that finds
 * no match, link_node(), which links at the end of the run without looking for the key again):
 * two racing insertions of one key both succeed, test fails.
 */
TEST(add_unique_and_add_replace_race_never_duplicate_a_key)
{
	uint64_t t0 = gt_now_ns();

	/* Two rounds at least, more while they take less than 2 s (at most 20): two insertions
	 * of a key collide only while both threads are on a CPU. */
	for (int round = 0; round < 20 && (round < 2 || gt_now_ns() - t0 < 2000000000ull);
	     round++) {
		race_ht = table_new(1, CDS_LFHT_AUTO_RESIZE);
		memset(race_won, 0, sizeof(race_won));
		race_bad_unique = race_replace_none = race_dup_seen = race_lookup_bad = 0;

		race_run(0);
		int won_bad = 0;
		for (unsigned long k = 0; k < RACE_KEYS; k++)
			if (race_won[k] != 1 && won_bad++ < 5)
				fprintf(stderr, "  key %lu: add_unique added it %u times\n", k,
					race_won[k]);
		CHECK_MSG(won_bad == 0, "round %d: %d keys added other than once", round, won_bad);
		CHECK_EQL(race_dup_seen, 0);
		CHECK(race_keys_once() == 0);

		race_run(1);
		CHECK_EQL(race_bad_unique, 0);
		CHECK_EQL(race_replace_none, 0);
		CHECK_EQL(race_lookup_bad, 0);
		CHECK(race_keys_once() == 0);
		CHECK_EQL(table_empty_and_destroy(race_ht), 0);
	}
}

/* ---- CDS_LFHT_ACCOUNTING: the table shrinks by itself ---- */

/*
 * docs/compat.md, cds_lfht: "with CDS_LFHT_ACCOUNTING it shrinks below one node per 8 buckets":
 * a CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING table filled with 65536 nodes grows; emptied by
 * cds_lfht_del() it shrinks, with no cds_lfht_resize(), until it no longer has fewer than one
 * node per 8 buckets (a few later updates carry on a shrink left waiting for its grace periods:
 * the updaters do the resize work; liveness bound 20 s). The size is read from the table's
 * (internal) field: liburcu has no call that returns it.
 * Checked against: compat/src/lfht.c after_remove() without its shrink_check(): the size stays
 * at its largest, test fails.
 */
TEST(accounting_table_shrinks_when_emptied)
{
	enum { N = 1 << 16 };
	struct cds_lfht *ht = table_new(1, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING);
	static struct item *items[N];
	unsigned long big, size;

	for (unsigned long k = 0; k < N; k++) {
		items[k] = item_new(k);
		urcu_memb_read_lock();
		cds_lfht_add(ht, mix(k), &items[k]->node);
		urcu_memb_read_unlock();
	}
	big = uatomic_load(&ht->size, CMM_ACQUIRE);
	printf("  %d nodes: %lu buckets\n", N, big);
	CHECK_MSG(big >= N / 8, "the table did not grow (%lu buckets)", big);
	for (unsigned long k = 0; k < N; k++) {
		urcu_memb_read_lock();
		CHECK(cds_lfht_del(ht, &items[k]->node) == 0);
		urcu_memb_read_unlock();
		urcu_memb_call_rcu(&items[k]->rh, item_free);
	}
	uint64_t t0 = gt_now_ns();
	struct item *dummy = item_new(N);
	for (;;) {
		size = uatomic_load(&ht->size, CMM_ACQUIRE);
		if (size < 8 || gt_now_ns() - t0 > LIVE_NS)
			break;
		urcu_memb_barrier(); /* the shrink's grace-period callbacks */
		urcu_memb_read_lock();
		cds_lfht_add(ht, mix(N), &dummy->node);
		urcu_memb_read_unlock();
		urcu_memb_read_lock();
		cds_lfht_del(ht, &dummy->node);
		urcu_memb_read_unlock();
		urcu_memb_synchronize_rcu(); /* dummy is reused */
	}
	printf("  emptied: %lu buckets\n", size);
	CHECK_MSG(size < 8, "emptied, the table still has %lu buckets (%lu when full)", size, big);
	urcu_memb_barrier();
	free(dummy);
	CHECK_EQL(cds_lfht_destroy(ht, NULL), 0);
}

/* ---- a full barrier before and after each successful update ---- */

/*
 * Store buffering around updates: each side has a table of its own (so each update succeeds
 * and is its thread's alone) and, in each round, stores its flag, makes one update, loads the
 * other side's flag. With a full barrier between its store and its load (before or after the
 * update's commit), at least one side sees the other's flag of the round.
 */
struct fb_side {
	struct cds_lfht *ht;
	struct item a, b;
};
static struct fb_side fb[2];
/* Each flag on a cache line of its own: a store to one does not wait for the other's line. */
static struct {
	unsigned long v;
	char pad[64 - sizeof(unsigned long)];
} fb_flag[2] __attribute__((aligned(64)));
static unsigned long fb_arrive;
static int fb_saw[2], fb_stop;

static void fb_barrier(unsigned long k)
{
	unsigned long spins = 0;

	(void)uatomic_add_return(&fb_arrive, 1); /* full barrier */
	while (uatomic_load(&fb_arrive, CMM_ACQUIRE) < 2 * k) {
		if (++spins % 4096 == 0)
			sched_yield();
		else
			caa_cpu_relax();
	}
}

/* One successful update, of kind (r - 1) % 6 (round r starts at 1), on the side's table. */
static void fb_update(struct fb_side *s, unsigned long r)
{
	unsigned long key = 1, h = mix(1);
	struct cds_lfht_iter iter;

	switch ((r - 1) % 6) {
	case 0:
		cds_lfht_add(s->ht, h, &s->a.node);
		break;
	case 1:
		REQUIRE(cds_lfht_add_replace(s->ht, h, match, &key, &s->b.node) == &s->a.node);
		break;
	case 2:
		cds_lfht_lookup(s->ht, h, match, &key, &iter);
		REQUIRE(cds_lfht_replace(s->ht, &iter, h, match, &key, &s->a.node) == 0);
		break;
	case 3:
		REQUIRE(cds_lfht_del(s->ht, &s->a.node) == 0);
		break;
	case 4:
		REQUIRE(cds_lfht_add_unique(s->ht, h, match, &key, &s->a.node) == &s->a.node);
		break;
	default:
		REQUIRE(cds_lfht_del(s->ht, &s->a.node) == 0);
		break;
	}
}

static void fb_round(int me, unsigned long r)
{
	urcu_memb_read_lock();
	uatomic_store(&fb_flag[me].v, r, CMM_RELAXED);
	fb_update(&fb[me], r);
	uatomic_store(&fb_saw[me], uatomic_load(&fb_flag[1 - me].v, CMM_RELAXED) == r, CMM_RELAXED);
	urcu_memb_read_unlock();
}

static void *fb_other(void *arg)
{
	(void)arg;
	for (unsigned long r = 1;; r++) {
		fb_barrier(2 * r - 1);
		if (uatomic_load(&fb_stop, CMM_RELAXED))
			break;
		fb_round(1, r);
		fb_barrier(2 * r);
	}
	return NULL;
}

/*
 * docs/compat.md, cds_lfht: a "full memory barrier before and after each successful update, as
 * liburcu documents": the store-buffering litmus above, over add, add_replace, replace, del and
 * add_unique, never shows both sides missing the other's flag. On x86 the update's locked
 * compare-and-swap is the barrier (the fences the library adds elsewhere compile to nothing
 * there), so only a mutant without any locked instruction shows there; on a weakly ordered CPU
 * the test checks the fences themselves.
 * Checked against: compat/src/lfht.c with cas() and remove_node()'s compare-and-swap made a
 * load, a compare and a store-release, and count_change() a load and a store (no locked
 * instruction left on the update paths, as none is a full barrier on a weakly ordered CPU): the
 * forbidden outcome shows within the rounds (some hundreds in 6 million rounds on an idle
 * machine), test fails. Removing only the fences the library adds (mb_non_tso()) shows on a
 * weakly ordered CPU only. The rounds need both threads on a CPU at once, so a heavily loaded
 * machine sees few that count.
 */
TEST(successful_updates_are_full_barriers)
{
	unsigned long forbidden = 0, r;
	uint64_t t0 = gt_now_ns();
	pthread_t t;

	memset(fb, 0, sizeof(fb));
	for (int i = 0; i < 2; i++) {
		fb[i].ht = table_new(8, 0);
		fb[i].a.key = fb[i].b.key = 1;
	}
	fb_flag[0].v = fb_flag[1].v = 0;
	fb_arrive = 0;
	fb_stop = 0;
	REQUIRE(pthread_create(&t, NULL, fb_other, NULL) == 0);
	/* Whole cycles of the six updates, for 3 s (at most 10 million rounds). */
	for (r = 1;; r++) {
		int stop = (r % 6 == 1) && (r > 10000000 || gt_now_ns() - t0 > 3000000000ull);

		if (stop)
			uatomic_store(&fb_stop, 1, CMM_RELAXED);
		fb_barrier(2 * r - 1);
		if (stop)
			break;
		fb_round(0, r);
		fb_barrier(2 * r);
		if (!uatomic_load(&fb_saw[0], CMM_RELAXED) &&
		    !uatomic_load(&fb_saw[1], CMM_RELAXED))
			forbidden++;
	}
	pthread_join(t, NULL);
	printf("  %lu rounds\n", r - 1);
	CHECK_MSG(forbidden == 0, "%lu rounds of %lu saw neither side's flag", forbidden, r - 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQL(cds_lfht_destroy(fb[i].ht, NULL), 0); /* empty after whole cycles */
}

/* ---- a child made without the fork handlers ---- */

static int rc_holding, rc_release;
static struct rcu_flavor_struct rc_flavor;
static struct cds_lfht *rc_ht;

/* memb's call_rcu, except that the first call waits until the test lets it go: the shrink
 * that queues it holds the table's resize lock meanwhile. */
static void rc_call_rcu(struct rcu_head *h, void (*fn)(struct rcu_head *))
{
	if (!uatomic_load(&rc_release, CMM_ACQUIRE)) {
		uatomic_store(&rc_holding, 1, CMM_RELEASE);
		while (!uatomic_load(&rc_release, CMM_ACQUIRE))
			usleep(1000);
	}
	urcu_memb_call_rcu(h, fn);
}

static void *rc_resizer(void *arg)
{
	(void)arg;
	cds_lfht_resize(rc_ht, 1); /* a shrink: it queues a callback under the resize lock */
	return NULL;
}

/*
 * docs/compat.md, cds_lfht: "A child made without the handlers (a raw clone system call) that
 * inherits a resize lock held gets a misuse report from cds_lfht_resize() ... instead of a
 * hang": a raw clone system call (SIGCHLD) while another thread holds the table's resize lock
 * (its shrink is inside the table's flavor's call_rcu, which the test holds back); the child's
 * cds_lfht_resize(), or cds_lfht_destroy() of the (empty) table, aborts with the report naming
 * it.
 * Checked against: compat/src/lfht.c rs_lock_wait() without its check of the holder's process
 * (it waits for the lock): the child's resize hangs until its alarm, test fails; and
 * grace_urcu_lfht_destroy() without its check before the grace period (the parent's thread
 * that holds the lock is inside a read-side section, which never ends in the child): the
 * child's destroy hangs until its alarm (seen: SIGALRM after 10 s), test fails.
 */
static void raw_clone_case(int destroy)
{
	static char out[4096];
	int p[2], st = 0;
	pthread_t t;
	size_t n = 0;
	ssize_t k;

	rc_flavor = urcu_memb_flavor;
	rc_flavor.update_call_rcu = rc_call_rcu;
	rc_holding = rc_release = 0;
	rc_ht = cds_lfht_new_flavor(1024, 1, 0, 0, &rc_flavor, NULL);
	CHECK(rc_ht != NULL);
	REQUIRE(pipe(p) == 0);
	REQUIRE(pthread_create(&t, NULL, rc_resizer, NULL) == 0);
	uint64_t t0 = gt_now_ns();
	while (!uatomic_load(&rc_holding, CMM_ACQUIRE) && gt_now_ns() - t0 < LIVE_NS)
		usleep(1000);
	CHECK(uatomic_load(&rc_holding, CMM_ACQUIRE));
	fflush(stdout);
	fflush(stderr);
	/* The clone system call, SIGCHLD and no new stack: fork() without its handlers. */
	long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0ul, 0ul, 0ul, 0ul);
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 2);
		signal(SIGABRT, SIG_DFL);
		alarm(20);
		if (destroy)
			(void)cds_lfht_destroy(rc_ht, NULL);
		else
			cds_lfht_resize(rc_ht, 4096);
		fprintf(stderr, "contract: the child went on\n");
		_exit(0);
	}
	close(p[1]);
	while (pid > 0 && (k = read(p[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(p[0]);
	if (pid > 0)
		waitpid((pid_t)pid, &st, 0);
	uatomic_store(&rc_release, 1, CMM_RELEASE);
	pthread_join(t, NULL);
	printf("  child: %s; stderr: %.300s\n",
	       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited", out);
	CHECK(pid > 0);
	CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "the child: status %#x", st);
	CHECK(strstr(out, destroy ? "grace: misuse: cds_lfht_destroy: "
				  : "grace: misuse: cds_lfht_resize: ") != NULL);
	CHECK(strstr(out, "forked while another thread was resizing") != NULL);
	CHECK_EQL(cds_lfht_destroy(rc_ht, NULL), 0);
}

TEST(raw_clone_child_reports_a_held_resize_lock)
{
	raw_clone_case(0);
}

TEST(raw_clone_child_destroy_reports_a_held_resize_lock)
{
	raw_clone_case(1);
}

GT_MAIN()
