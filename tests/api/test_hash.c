/* SPDX-License-Identifier: MIT */
/*
 * Resizable RCU hash table: API semantics, bad input, explicit and automatic resizing, and
 * readers (default flavor and QSBR) that look up and iterate while updaters add, delete and
 * replace entries and a resizer grows and shrinks the table. Permanent keys must be found by
 * every lookup and seen exactly once by every iteration; freed nodes are poisoned first, so a
 * reader that uses one after its grace period sees the poison (ASan sees the access).
 * GRACE_DS_TEST_MS sets the concurrent phases' duration.
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/hash.h>
#include "gtest_lite.h"
#include "model.h" /* gt_model_mix64() */

#define LIVE 0x4c495645u
#define DEAD 0xdeadbeefu

struct obj {
	uint64_t key;
	unsigned magic;
	struct grace_hash_node hn;
};

static unsigned test_ms(unsigned def)
{
	const char *e = getenv("GRACE_DS_TEST_MS");
	return e ? (unsigned)atoi(e) : def;
}

static uint64_t hash_key(const void *key, void *arg)
{
	(void)arg;
	return gt_model_mix64(*(const uint64_t *)key);
}

/* A poor hash: sixteen keys share each value, so chains hold equal hashes of different keys. */
static uint64_t weak_hash(const void *key, void *arg)
{
	(void)arg;
	return *(const uint64_t *)key >> 4;
}

static bool match_key(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	return container_of(n, struct obj, hn)->key == *(const uint64_t *)key;
}

static unsigned long frees;

static void obj_free(struct rcu_head *h)
{
	struct obj *o = container_of(grace_hash_node_of_rcu(h), struct obj, hn);
	__atomic_store_n(&o->magic, DEAD, __ATOMIC_RELAXED);
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
	free(o);
}

static struct obj *obj_new(uint64_t key)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->key = key;
	o->magic = LIVE;
	return o;
}

static struct grace_hash_params params(grace_hash_fn h, const struct grace_flavor_ops *ops)
{
	struct grace_hash_params p;
	memset(&p, 0, sizeof(p));
	p.hash = h;
	p.match = match_key;
	p.free = obj_free;
	p.ops = ops;
	return p;
}

static struct obj *find(struct grace_hash *ht, uint64_t key)
{
	struct grace_hash_node *n = grace_hash_lookup(ht, &key);
	return n ? container_of(n, struct obj, hn) : NULL;
}

/* Number of nodes an iteration returns; checks that keys [0, nperm) appear exactly once. */
static long iterate_check(struct grace_hash *ht, uint64_t nperm, unsigned char *seen)
{
	struct grace_hash_iter it;
	struct grace_hash_node *n;
	long count = 0;
	memset(seen, 0, nperm);
	grace_hash_for_each_rcu(ht, it, n) {
		struct obj *o = container_of(n, struct obj, hn);
		if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != LIVE)
			return -1;
		if (o->key < nperm && seen[o->key]++)
			return -2;
		count++;
	}
	for (uint64_t k = 0; k < nperm; k++)
		if (!seen[k])
			return -3;
	return count;
}

TEST(bad_input)
{
	struct grace_hash_params p = params(hash_key, NULL);
	CHECK(grace_hash_create(NULL) == NULL && errno == EINVAL);
	p.hash = NULL;
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);
	p = params(hash_key, NULL);
	p.match = NULL;
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);
	p = params(hash_key, NULL);
	p.init_buckets = 16;
	p.min_buckets = 32;
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);
	p = params(hash_key, NULL);
	p.init_buckets = 1024;
	p.max_buckets = 512;
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);
	p = params(hash_key, NULL);
	p.flags = 0x100;
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);
	struct grace_flavor_ops bad;
	memset(&bad, 0, sizeof(bad));
	p = params(hash_key, &bad);
	CHECK(grace_hash_create(&p) == NULL && errno == EINVAL);

	p = params(hash_key, NULL);
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	struct obj o;
	uint64_t k = 1;
	CHECK(grace_hash_add(NULL, &o.hn, &k) == -EINVAL);
	CHECK(grace_hash_add(ht, NULL, &k) == -EINVAL);
	CHECK(grace_hash_add(ht, &o.hn, NULL) == -EINVAL);
	CHECK(grace_hash_del(ht, NULL) == -EINVAL);
	CHECK(grace_hash_del_key(ht, NULL) == -EINVAL);
	CHECK(grace_hash_del_key(ht, &k) == -ENOENT);
	CHECK(grace_hash_replace(ht, &o.hn, &o.hn) == -EINVAL);
	CHECK(grace_hash_resize(ht, 0) == -EINVAL);
	CHECK(grace_hash_resize(NULL, 64) == -EINVAL);
	CHECK(grace_hash_count(NULL) == 0);
	grace_hash_destroy(ht);
	grace_hash_destroy(NULL);
}

/* Every value of every size parameter has a defined outcome (review of src/ds/hash.c: nlocks
 * above 2^31 rounded to 2^32, truncated to 0 stripes, and create divided by zero). */
static struct grace_hash *sized(size_t init, size_t min, size_t max, unsigned nlocks)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = init;
	p.min_buckets = min;
	p.max_buckets = max;
	p.nlocks = nlocks;
	errno = 0;
	return grace_hash_create(&p);
}

TEST(size_params_every_value)
{
	const unsigned big_locks[] = { 0x80000000u, 0x80000001u, 0xffffffffu, 1u << 30 };
	struct grace_hash_stats st;

	/* nlocks: rounded up, then clamped to min_buckets, whatever its value. */
	for (unsigned i = 0; i < sizeof(big_locks) / sizeof(big_locks[0]); i++) {
		struct grace_hash *ht = sized(64, 0, 0, big_locks[i]);
		REQUIRE(ht);
		grace_hash_get_stats(ht, &st);
		CHECK(st.nlocks == 64);
		for (uint64_t k = 0; k < 512; k++)
			CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
		CHECK(grace_hash_resize(ht, 1024) == 0 && grace_hash_buckets(ht) == 1024);
		rcu_read_lock();
		for (uint64_t k = 0; k < 512; k++)
			CHECK(find(ht, k) != NULL);
		rcu_read_unlock();
		grace_hash_destroy(ht);
	}
	struct grace_hash *ht = sized(1024, 256, 4096, 3);
	REQUIRE(ht);
	grace_hash_get_stats(ht, &st);
	CHECK(st.nlocks == 4);
	/* A resize request of any size is clamped to [min_buckets, max_buckets]. */
	CHECK(grace_hash_resize(ht, SIZE_MAX) == 0 && grace_hash_buckets(ht) == 4096);
	CHECK(grace_hash_resize(ht, 1) == 0 && grace_hash_buckets(ht) == 256);
	grace_hash_destroy(ht);
	/* init, min, max above 2^30 (the largest table): EINVAL, whatever the value. */
	CHECK(sized(SIZE_MAX, 0, 0, 0) == NULL && errno == EINVAL);
	CHECK(sized(0, SIZE_MAX, 0, 0) == NULL && errno == EINVAL);
	CHECK(sized(0, 0, SIZE_MAX, 0) == NULL && errno == EINVAL);
	CHECK(sized(0, 0, ((size_t)1 << 30) + 1, 0) == NULL && errno == EINVAL);
	CHECK(sized(((size_t)1 << 62) + 1, 0, 0, 0) == NULL && errno == EINVAL);
}

TEST(add_lookup_delete_replace)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = 8;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	CHECK(grace_hash_buckets(ht) == 8);
	frees = 0;
	for (uint64_t k = 0; k < 100; k++) {
		struct obj *o = obj_new(k);
		CHECK(grace_hash_add_unique(ht, &o->hn, &o->key) == 0);
	}
	CHECK(grace_hash_count(ht) == 100);
	struct obj *dup = obj_new(7);
	CHECK(grace_hash_add_unique(ht, &dup->hn, &dup->key) == -EEXIST);
	rcu_read_lock();
	for (uint64_t k = 0; k < 100; k++) {
		struct obj *o = find(ht, k);
		CHECK(o && o->key == k);
	}
	uint64_t missing = 1000;
	CHECK(find(ht, missing) == NULL);
	/* Inline candidate loop: compare keys without an indirect call. */
	uint64_t k42 = 42, h = gt_model_mix64(k42);
	struct grace_hash_node *n;
	int cands = 0;
	grace_hash_for_each_possible_rcu(ht, n, h) {
		CHECK(n->hash == h);
		cands++;
		CHECK(container_of(n, struct obj, hn)->key == 42);
	}
	CHECK(cands == 1);
	rcu_read_unlock();

	/* Duplicates are allowed by grace_hash_add(). */
	CHECK(grace_hash_add(ht, &dup->hn, &dup->key) == 0);
	CHECK(grace_hash_count(ht) == 101);
	/* del and replace read the node before locking: they run inside a read-side section. */
	rcu_read_lock();
	CHECK(grace_hash_del(ht, &dup->hn) == 0); /* dup is retired: do not touch it again */
	struct obj outsider;
	outsider.key = 3;
	outsider.hn.hash = gt_model_mix64(3); /* as if it were in the table, but it is not */
	outsider.hn.next[0] = outsider.hn.next[1] = NULL;
	CHECK(grace_hash_del(ht, &outsider.hn) == -ENOENT);

	struct obj *o5 = find(ht, 5);
	struct obj *n5 = obj_new(5);
	CHECK(grace_hash_replace(ht, &o5->hn, &n5->hn) == 0);
	struct obj spare;
	CHECK(grace_hash_replace(ht, &outsider.hn, &spare.hn) == -ENOENT); /* not in the table */
	CHECK(find(ht, 5) == n5);
	rcu_read_unlock();
	for (uint64_t k = 0; k < 100; k += 2)
		CHECK(grace_hash_del_key(ht, &k) == 0);
	CHECK(grace_hash_count(ht) == 50);
	rcu_read_lock();
	for (uint64_t k = 0; k < 100; k++)
		CHECK((find(ht, k) != NULL) == (k % 2 == 1));
	rcu_read_unlock();
	rcu_barrier();
	CHECK_MSG(frees == 52, "frees %lu", frees); /* dup, o5 and 50 deletions */
	grace_hash_destroy(ht);                     /* frees the 50 left */
	CHECK_MSG(frees == 102, "frees %lu", frees);
}

static unsigned long entry_frees;

/* A free callback that reaches its object in one step. */
static void obj_free_entry(struct rcu_head *h)
{
	struct obj *o = grace_hash_entry_of_rcu(h, struct obj, hn);
	__atomic_store_n(&o->magic, DEAD, __ATOMIC_RELAXED);
	__atomic_fetch_add(&entry_frees, 1, __ATOMIC_RELAXED);
	free(o);
}

TEST(add_or_get_and_add_replace)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.free = obj_free_entry;
	p.init_buckets = 8;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	entry_frees = 0;
	uint64_t k = 11;
	struct obj *a = obj_new(11), *b = obj_new(11), *c = obj_new(11);

	/* Bad input: NULL with errno EINVAL, nothing inserted. */
	errno = 0;
	CHECK(grace_hash_add_or_get(NULL, &a->hn, &k) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(grace_hash_add_or_get(ht, NULL, &k) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(grace_hash_add_replace(ht, &a->hn, NULL) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(grace_hash_add_replace(NULL, &a->hn, &k) == NULL && errno == EINVAL);
	CHECK(grace_hash_count(ht) == 0);

	rcu_read_lock();
	/* add_or_get: inserts when absent (returns the node itself) ... */
	CHECK(grace_hash_add_or_get(ht, &a->hn, &k) == &a->hn);
	/* ... and hands back the present node otherwise, inserting nothing. */
	CHECK(grace_hash_add_or_get(ht, &b->hn, &k) == &a->hn);
	CHECK(grace_hash_count(ht) == 1);
	CHECK(find(ht, 11) == a);

	/* add_replace: replaces the present node and returns it (retired after a grace period)... */
	CHECK(grace_hash_add_replace(ht, &b->hn, &k) == &a->hn);
	CHECK(find(ht, 11) == b);
	CHECK(grace_hash_count(ht) == 1);
	CHECK(a->magic == LIVE); /* still valid until this section ends */
	rcu_read_unlock();

	/* ... or inserts and returns NULL when the key is absent. */
	uint64_t k2 = 12;
	struct obj *d = obj_new(12);
	CHECK(grace_hash_add_replace(ht, &d->hn, &k2) == NULL);
	CHECK(grace_hash_count(ht) == 2);
	rcu_read_lock();
	CHECK(find(ht, 12) == d);
	/* Under add_or_get and add_replace only, a key is never present twice. */
	CHECK(grace_hash_add_or_get(ht, &c->hn, &k) == &b->hn);
	struct grace_hash_node *n;
	int cands = 0;
	grace_hash_for_each_possible_rcu(ht, n, gt_model_mix64(11))
		cands++;
	CHECK(cands == 1);
	rcu_read_unlock();
	free(c); /* never inserted: no grace period needed */
	rcu_barrier();
	CHECK_MSG(entry_frees == 1, "entry_frees %lu", entry_frees); /* a */
	grace_hash_destroy(ht);
	CHECK_MSG(entry_frees == 3, "entry_frees %lu", entry_frees); /* b and d */
}

/* With params.free NULL the table never touches node->rcu: the caller may use it. */
TEST(rcu_head_left_to_caller_without_free)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.free = NULL;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	entry_frees = 0;
	struct obj *o[64];
	for (uint64_t k = 0; k < 64; k++) {
		o[k] = obj_new(k);
		o[k]->hn.rcu.next = (struct rcu_head *)(uintptr_t)(0x1000 + k);
		o[k]->hn.rcu.func = NULL;
		CHECK(grace_hash_add(ht, &o[k]->hn, &o[k]->key) == 0);
	}
	CHECK(grace_hash_resize(ht, 1024) == 0);
	rcu_read_lock();
	for (uint64_t k = 0; k < 64; k += 2)
		CHECK(grace_hash_del(ht, &o[k]->hn) == 0);
	rcu_read_unlock();
	CHECK(grace_hash_resize(ht, 64) == 0);
	for (uint64_t k = 0; k < 64; k++)
		CHECK(o[k]->hn.rcu.next == (struct rcu_head *)(uintptr_t)(0x1000 + k) &&
		      o[k]->hn.rcu.func == NULL);
	rcu_read_lock();
	for (uint64_t k = 1; k < 64; k += 2)
		CHECK(grace_hash_del(ht, &o[k]->hn) == 0);
	rcu_read_unlock();
	grace_hash_destroy(ht);
	for (uint64_t k = 0; k < 64; k++) {
		CHECK(o[k]->hn.rcu.next == (struct rcu_head *)(uintptr_t)(0x1000 + k));
		call_rcu(&o[k]->hn.rcu, obj_free_entry); /* the caller retires its objects */
	}
	rcu_barrier();
	CHECK(entry_frees == 64);
}

/*
 * An online QSBR thread that resizes (or destroys) a QSBR table while a background resize runs
 * must not wait in a way that holds grace periods back: the background steps need this thread's
 * quiescent state. It used to sleep on a condition variable, online: a deadlock (stall warning
 * after 10 s, then forever). Run in a child with an alarm, so the old behaviour fails the test.
 */
static void qsbr_resize_during_background(void *arg)
{
	(void)arg;
	alarm(30);
	struct grace_hash_params p = params(hash_key, &grace_flavor_qsbr);
	p.init_buckets = 64;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	if (!ht)
		_exit(2);
	qsbr_register_thread(); /* online from here on */
	for (int round = 0; round < 4; round++) {
		for (uint64_t k = 0; k < 1000; k++) {
			uint64_t key = (uint64_t)round * 1000 + k;
			grace_hash_add(ht, &obj_new(key)->hn, &key); /* crosses the limits: grows */
		}
		/* A background resize is (most likely) in flight: wait for it, online. */
		if (grace_hash_resize(ht, round % 2 ? 64 : 4096) != 0)
			_exit(3);
	}
	grace_hash_destroy(ht);
	qsbr_unregister_thread();
	_exit(0);
}

TEST(qsbr_online_resize_during_background_resize)
{
	static char out[4096];
	int st = gt_run_child(qsbr_resize_during_background, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, out);
}

TEST(iteration_each_node_once)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = 16;
	struct grace_hash *ht = grace_hash_create(&p);
	static unsigned char seen[500];
	CHECK(ht);
	for (uint64_t k = 0; k < 500; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	rcu_read_lock();
	CHECK(iterate_check(ht, 500, seen) == 500);
	rcu_read_unlock();
	grace_hash_destroy(ht);
}

TEST(explicit_resize)
{
	struct grace_hash_params p = params(weak_hash, NULL);
	p.init_buckets = 4;
	p.min_buckets = 4;
	p.max_buckets = 1 << 12;
	struct grace_hash *ht = grace_hash_create(&p);
	static unsigned char seen[3000];
	struct grace_hash_stats st;
	CHECK(ht);
	for (uint64_t k = 0; k < 3000; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	CHECK(grace_hash_resize(ht, 1000) == 0); /* rounded up: 1024 */
	CHECK(grace_hash_buckets(ht) == 1024);
	grace_hash_get_stats(ht, &st);
	printf("  grow 4 -> 1024: %llu resizes, %llu nodes relinked\n",
	       (unsigned long long)st.grows, (unsigned long long)st.relinked);
	CHECK(st.grows == 1 && st.relinked == 3000); /* one step, however far: every node once */
	rcu_read_lock();
	CHECK(iterate_check(ht, 3000, seen) == 3000);
	for (uint64_t k = 0; k < 3000; k++)
		CHECK(find(ht, k) && find(ht, k)->key == k);
	rcu_read_unlock();
	CHECK(grace_hash_resize(ht, 1 << 20) == 0); /* clamped to max_buckets */
	CHECK(grace_hash_buckets(ht) == (1 << 12));
	CHECK(grace_hash_resize(ht, 1) == 0); /* clamped to min_buckets */
	CHECK(grace_hash_buckets(ht) == 4);
	grace_hash_get_stats(ht, &st);
	CHECK(st.grows == 2 && st.shrinks == 1 && st.count == 3000 && !st.resizing);
	rcu_read_lock();
	CHECK(iterate_check(ht, 3000, seen) == 3000);
	for (uint64_t k = 0; k < 3000; k++)
		CHECK(find(ht, k) && find(ht, k)->key == k);
	rcu_read_unlock();
	grace_hash_destroy(ht);
}

static void wait_resize_idle(struct grace_hash *ht, bool qsbr)
{
	struct grace_hash_stats st;
	for (;;) {
		grace_hash_get_stats(ht, &st);
		if (!st.resizing)
			return;
		/* Each background step is a callback: a barrier lets it (and the step it queues
		 * next) run. No timing assumption. */
		if (qsbr)
			qsbr_barrier();
		else
			rcu_barrier();
	}
}

TEST(automatic_resize)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = 16;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	struct grace_hash_stats st;
	CHECK(ht);
	for (uint64_t k = 0; k < 5000; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	wait_resize_idle(ht, false);
	grace_hash_get_stats(ht, &st);
	printf("  5000 entries: %zu buckets after %llu resizes\n", st.buckets,
	       (unsigned long long)st.grows);
	CHECK(st.buckets >= 4096 && st.grows >= 1);
	for (uint64_t k = 0; k < 5000; k++)
		if (k % 100)
			CHECK(grace_hash_del_key(ht, &k) == 0);
	wait_resize_idle(ht, false);
	grace_hash_get_stats(ht, &st);
	printf("  50 entries: %zu buckets after %llu shrinking resizes\n", st.buckets,
	       (unsigned long long)st.shrinks);
	CHECK(st.buckets <= 512 && st.shrinks >= 1);
	rcu_read_lock();
	for (uint64_t k = 0; k < 5000; k++)
		CHECK((find(ht, k) != NULL) == (k % 100 == 0));
	rcu_read_unlock();
	grace_hash_destroy(ht);
}

/* Every thread the process creates, counted (the library's calls of pthread_create() bind to
 * this definition: a shared library's calls go through the executable's first). Not under the
 * sanitizers, whose runtimes define pthread_create() themselves. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <dlfcn.h>
#define COUNT_CREATES 1
static int creates;
int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	__atomic_fetch_add(&creates, 1, __ATOMIC_RELAXED);
	return real(th, attr, fn, arg);
}
#else
#define COUNT_CREATES 0
static int creates;
#endif

/* The threads of this process that are not the callback engine's workers (which name
 * themselves "grace-<flavor>/<n>" before they run a callback), as a sorted list of tids; the
 * workers are counted. */
struct thread_census {
	int *tids, n, max, workers;
};

static void census_one(int tid, const char *comm, void *arg)
{
	struct thread_census *c = (struct thread_census *)arg;
	if (strncmp(comm, "grace-", 6) == 0)
		c->workers++;
	else if (c->n < c->max)
		c->tids[c->n++] = tid;
}

static int other_threads(int *tids, int max, int *workers)
{
	struct thread_census c = { tids, 0, max, 0 };

	gt_for_each_thread(census_one, &c);
	for (int i = 1; i < c.n; i++) /* insertion sort: a handful */
		for (int j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			int t = tids[j];
			tids[j] = tids[j - 1];
			tids[j - 1] = t;
		}
	*workers += c.workers;
	return c.n;
}

/* docs/ds.md: a table larger than 16384 buckets resizes "in a flavor callback, so no thread is
 * created". The table grows from 16384 buckets in the background; afterwards the process has
 * the same threads as before but for the engine's own workers, which run every flavor's
 * callbacks and are named so. */
TEST(background_resize_creates_no_thread_of_its_own)
{
	int before[64], after[64], nb, na, wb = 0, wa = 0;
	struct grace_hash_params p = params(hash_key, NULL);
	struct grace_hash_stats st;

	rcu_barrier(); /* the engine's workers started, named */
	int c0 = __atomic_load_n(&creates, __ATOMIC_RELAXED);
	nb = other_threads(before, 64, &wb);
	p.init_buckets = 16384;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	REQUIRE(ht);
	for (uint64_t k = 0; k < 40000; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	wait_resize_idle(ht, false);
	grace_hash_get_stats(ht, &st);
	printf("  40000 entries: %zu buckets after %llu resizes\n", st.buckets,
	       (unsigned long long)st.grows);
	CHECK(st.buckets >= 32768 && st.grows >= 1);
	na = other_threads(after, 64, &wa);
	CHECK_MSG(na == nb, "%d threads besides the engine's workers before, %d after", nb, na);
	for (int i = 0; i < na && i < nb; i++)
		CHECK(after[i] == before[i]);
	/* Every thread created meanwhile is a worker of the engine, still there. */
	int made = __atomic_load_n(&creates, __ATOMIC_RELAXED) - c0;
	printf("  threads created during the resize: %d of %d since the start (engine workers %d "
	       "before, %d after)%s\n",
	       made, __atomic_load_n(&creates, __ATOMIC_RELAXED), wb, wa,
	       COUNT_CREATES ? "" : " (not counted under a sanitizer)");
	if (COUNT_CREATES)
		CHECK(made <= wa - wb);
	grace_hash_destroy(ht);
}

/* ---- concurrent readers, updaters and a resizer ---- */

enum { NPERM = 400, NTRANS = 400 };

enum { RCU, QSBR, SRCU };

struct conc {
	struct grace_hash *ht;
	int flavor, churn, stop, failed;
	unsigned long lookups, iterations, updates, resizes;
};

/* The readers' flavor; the table itself only sees struct grace_flavor_ops. */
static DEFINE_SRCU(test_srcu);

static int rd_lock(struct conc *c)
{
	if (c->flavor == QSBR) {
		qsbr_read_lock();
		return 0;
	}
	if (c->flavor == SRCU)
		return srcu_read_lock(&test_srcu);
	rcu_read_lock();
	return 0;
}

static void rd_unlock(struct conc *c, int idx)
{
	if (c->flavor == QSBR)
		qsbr_read_unlock();
	else if (c->flavor == SRCU)
		srcu_read_unlock(&test_srcu, idx);
	else
		rcu_read_unlock();
}

static void rd_quiescent(struct conc *c)
{
	if (c->flavor == QSBR)
		qsbr_quiescent_state();
}

static void rd_register(struct conc *c)
{
	if (c->flavor == QSBR)
		qsbr_register_thread();
}

static void rd_unregister(struct conc *c)
{
	if (c->flavor == QSBR)
		qsbr_unregister_thread();
}

static void fail(struct conc *c, const char *what, long v)
{
	fprintf(stderr, "  reader: %s (%ld)\n", what, v);
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void *reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd | 1;
	unsigned long n = 0, iters = 0;
	unsigned char *seen = (unsigned char *)malloc(NPERM);
	REQUIRE(seen);
	rd_register(c);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		int rdx = rd_lock(c);
		for (int i = 0; i < 100; i++) {
			uint64_t k = xorshift(&rnd) % (NPERM + NTRANS);
			struct obj *o;
			if (i & 1) {
				o = find(c->ht, k);
			} else {
				/* The inline candidate loop. */
				struct grace_hash_node *hn;
				o = NULL;
				grace_hash_for_each_possible_rcu(c->ht, hn, gt_model_mix64(k)) {
					if (container_of(hn, struct obj, hn)->key == k) {
						o = container_of(hn, struct obj, hn);
						break;
					}
				}
			}
			if (k < NPERM && !o)
				fail(c, "permanent key not found", (long)k);
			if (o && __atomic_load_n(&o->magic, __ATOMIC_RELAXED) != LIVE)
				fail(c, "node used after its grace period", (long)k);
			if (o && o->key != k)
				fail(c, "lookup returned another key", (long)k);
			n++;
		}
		if ((n / 100) % 64 == 0) {
			long r = iterate_check(c->ht, NPERM, seen);
			if (r < 0)
				fail(c,
				     r == -1   ? "iteration saw a freed node"
				     : r == -2 ? "iteration saw a key twice"
					       : "iteration missed a key",
				     r);
			iters++;
		}
		rd_unlock(c, rdx);
		rd_quiescent(c);
	}
	rd_unregister(c);
	free(seen);
	__atomic_fetch_add(&c->lookups, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->iterations, iters, __ATOMIC_RELAXED);
	return NULL;
}

/* Iterates slowly, so it stands on chain nodes while resize steps happen around it: a step taken
 * without the grace period the algorithm requires makes it miss (or repeat) keys. */
static void *slow_iterator(void *arg)
{
	struct conc *c = (struct conc *)arg;
	unsigned char *seen = (unsigned char *)malloc(NPERM);
	unsigned long iters = 0;
	REQUIRE(seen);
	rd_register(c);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		struct grace_hash_iter it;
		struct grace_hash_node *n;
		long count = 0;
		memset(seen, 0, NPERM);
		int rdx = rd_lock(c);
		grace_hash_for_each_rcu(c->ht, it, n) {
			struct obj *o = container_of(n, struct obj, hn);
			if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != LIVE)
				fail(c, "slow iteration saw a freed node", (long)o->key);
			if (o->key < NPERM && seen[o->key]++)
				fail(c, "slow iteration saw a key twice", (long)o->key);
			for (volatile int spin = 0; spin < 3000; spin++) {
			}
			count++;
		}
		for (uint64_t k = 0; k < NPERM; k++)
			if (!seen[k])
				fail(c, "slow iteration missed a key", (long)k);
		rd_unlock(c, rdx);
		rd_quiescent(c);
		iters++;
	}
	rd_unregister(c);
	free(seen);
	__atomic_fetch_add(&c->iterations, iters, __ATOMIC_RELAXED);
	return NULL;
}

struct upd_arg {
	struct conc *c;
	int index; /* owns the transient keys NPERM + index, NPERM + index + 2, ... */
};

static void upd_fail(struct conc *c, const char *what, uint64_t k)
{
	fprintf(stderr, "  updater: %s (key %llu)\n", what, (unsigned long long)k);
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
}

static void *updater(void *arg)
{
	struct upd_arg *ua = (struct upd_arg *)arg;
	struct conc *c = ua->c;
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd | 1;
	unsigned long n = 0;
	unsigned char present[NTRANS / 2];
	memset(present, 0, sizeof(present));
	rd_register(c);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		unsigned i = (unsigned)(xorshift(&rnd) % (NTRANS / 2));
		uint64_t k = NPERM + 2 * i + (uint64_t)ua->index;
		if (xorshift(&rnd) % 4 == 0) {
			/* Replace the entry of a permanent key: readers must find the old or the new
			 * one. Two updaters may race for the same key: the loser gets -ENOENT. */
			uint64_t pk = xorshift(&rnd) % NPERM;
			struct obj *o = obj_new(pk);
			int rdx = rd_lock(c);
			if (xorshift(&rnd) % 2) {
				/* Insert-or-replace: a permanent key is always present, so it is
				 * always a replacement, atomic for readers. */
				if (grace_hash_add_replace(c->ht, &o->hn, &o->key) == NULL)
					upd_fail(c, "add_replace of a permanent key inserted", pk);
				rd_unlock(c, rdx);
			} else {
				struct grace_hash_node *old = grace_hash_lookup(c->ht, &pk);
				int r = old ? grace_hash_replace(c->ht, old, &o->hn) : -ENOENT;
				rd_unlock(c, rdx);
				if (r != 0)
					free(o);
			}
		} else if (!present[i]) {
			/* This thread owns k: the add must succeed and be visible at once. */
			struct obj *o = obj_new(k);
			if (xorshift(&rnd) % 2) {
				if (grace_hash_add_unique(c->ht, &o->hn, &o->key) != 0) {
					upd_fail(c, "add_unique of an absent key failed", k);
					free(o);
				}
			} else {
				int rdx = rd_lock(c);
				if (grace_hash_add_or_get(c->ht, &o->hn, &o->key) != &o->hn) {
					upd_fail(c, "add_or_get of an absent key found one", k);
					free(o);
				}
				rd_unlock(c, rdx);
			}
			present[i] = 1;
		} else {
			if (grace_hash_del_key(c->ht, &k) != 0)
				upd_fail(c, "del_key of a present key failed", k);
			present[i] = 0;
		}
		/* Whatever the resize phase, the table now holds k exactly when present[i]. */
		int rdx = rd_lock(c);
		struct obj *f = find(c->ht, k);
		if ((f != NULL) != (present[i] != 0))
			upd_fail(c, present[i] ? "own key not found" : "deleted key still found",
				 k);
		rd_unlock(c, rdx);
		rd_quiescent(c);
		n++;
	}
	rd_unregister(c);
	__atomic_fetch_add(&c->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *resizer(void *arg)
{
	struct conc *c = (struct conc *)arg;
	/* churn: halve 2048 -> 64 (builds, no grace period) and double back, over and over;
	 * otherwise a mix of sizes. */
	size_t mix_sizes[] = { 64, 1024, 128, 512, 64, 2048 }, churn[] = { 64, 2048 };
	unsigned long n = 0;
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		size_t target = c->churn ? churn[n % 2] : mix_sizes[n % 6];
		REQUIRE(grace_hash_resize(c->ht, target) == 0);
		n++;
	}
	c->resizes = n;
	return NULL;
}

static void run_concurrent(int flavor, int churn, unsigned ms)
{
	static struct grace_flavor_ops srcu_ops;
	struct conc c;
	grace_flavor_ops_srcu(&srcu_ops, &test_srcu);
	struct grace_hash_params p = params(hash_key, flavor == QSBR   ? &grace_flavor_qsbr
						      : flavor == SRCU ? &srcu_ops
								       : &grace_flavor_rcu);
	pthread_t r[3], w[2], z;
	struct upd_arg ua[2];
	memset(&c, 0, sizeof(c));
	p.init_buckets = 512;
	p.min_buckets = 64;
	p.nlocks = 4;
	c.flavor = flavor;
	c.churn = churn;
	if (churn)
		p.init_buckets = 2048;
	c.ht = grace_hash_create(&p);
	REQUIRE(c.ht);
	for (uint64_t k = 0; k < NPERM; k++)
		REQUIRE(grace_hash_add(c.ht, &obj_new(k)->hn, &k) == 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, &c);
	if (!churn) /* its long sections would slow the grace periods the doublings wait for */
		pthread_create(&r[2], NULL, slow_iterator, &c);
	for (int i = 0; i < 2; i++) {
		ua[i].c = &c;
		ua[i].index = i;
		pthread_create(&w[i], NULL, updater, &ua[i]);
	}
	pthread_create(&z, NULL, resizer, &c);
	gt_sleep_ms(ms);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	pthread_join(z, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < (churn ? 2 : 3); i++)
		pthread_join(r[i], NULL);
	struct grace_hash_stats st;
	grace_hash_get_stats(c.ht, &st);
	printf("  %s%s: %lu lookups, %lu iterations, %lu updates, %lu resizes (%llu growing, "
	       "%llu shrinking, %llu nodes relinked), %zu entries\n",
	       flavor == QSBR   ? "qsbr"
	       : flavor == SRCU ? "srcu"
				: "rcu",
	       churn ? " churn" : "", c.lookups, c.iterations, c.updates, c.resizes,
	       (unsigned long long)st.grows, (unsigned long long)st.shrinks,
	       (unsigned long long)st.relinked, st.count);
	REQUIRE(!c.failed);
	grace_hash_destroy(c.ht);
}

TEST(concurrent_resize_rcu)
{
	run_concurrent(RCU, 0, test_ms(700));
}

TEST(concurrent_resize_qsbr)
{
	run_concurrent(QSBR, 0, test_ms(700));
}

/* srcu readers: the table gets call_srcu/synchronize_srcu/srcu_barrier through its ops. */
TEST(concurrent_resize_srcu)
{
	run_concurrent(SRCU, 0, test_ms(500));
}

/* Updaters racing with halvings: many builds of zipped chain pairs per second. */
TEST(concurrent_shrink_churn)
{
	run_concurrent(RCU, 1, test_ms(700));
}

/* Automatic resizing under load: updaters swing the population up and down. */
struct swing {
	struct grace_hash *ht;
	int stop, failed;
	unsigned long lookups;
};

static void *swing_reader(void *arg)
{
	struct swing *s = (struct swing *)arg;
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd | 1;
	unsigned long n = 0;
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		rcu_read_lock();
		for (int i = 0; i < 100; i++) {
			uint64_t k = xorshift(&rnd) % 64; /* permanent keys 0..63 */
			struct obj *o = find(s->ht, k);
			if (!o || o->key != k ||
			    __atomic_load_n(&o->magic, __ATOMIC_RELAXED) != LIVE)
				__atomic_store_n(&s->failed, 1, __ATOMIC_RELAXED);
		}
		rcu_read_unlock();
		n += 100;
	}
	__atomic_fetch_add(&s->lookups, n, __ATOMIC_RELAXED);
	return NULL;
}

TEST(automatic_resize_under_load)
{
	struct swing s;
	struct grace_hash_params p = params(hash_key, NULL);
	pthread_t r[2];
	memset(&s, 0, sizeof(s));
	p.init_buckets = 16;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	s.ht = grace_hash_create(&p);
	CHECK(s.ht);
	for (uint64_t k = 0; k < 64; k++)
		CHECK(grace_hash_add(s.ht, &obj_new(k)->hn, &k) == 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, swing_reader, &s);
	uint64_t t_end = gt_now_ns() + (uint64_t)test_ms(700) * 1000000ull;
	int rounds = 0;
	while (gt_now_ns() < t_end) {
		for (uint64_t k = 1000; k < 9000; k++)
			grace_hash_add(s.ht, &obj_new(k)->hn, &k);
		for (uint64_t k = 1000; k < 9000; k++)
			grace_hash_del_key(s.ht, &k);
		rounds++;
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	struct grace_hash_stats st;
	wait_resize_idle(s.ht, false);
	grace_hash_get_stats(s.ht, &st);
	printf("  %d rounds of 8000 adds and deletes: %llu doublings, %llu halvings, %zu buckets "
	       "at the end, %lu lookups\n",
	       rounds, (unsigned long long)st.grows, (unsigned long long)st.shrinks, st.buckets,
	       s.lookups);
	CHECK(!s.failed);
	CHECK(st.count == 64);
	CHECK(st.grows > 0);
	grace_hash_destroy(s.ht);
}

TEST(destroy_during_background_resize)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = 8;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	for (uint64_t k = 0; k < 20000; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	grace_hash_destroy(ht); /* waits for the step in flight, frees everything (LSan) */
}

/*
 * docs/ds.md (Bad input: "`init_buckets`, `min_buckets` and `max_buckets` are rounded up to a
 * power of two; one above 2^30 (the largest table), min above init or init above max is
 * EINVAL"): the comparisons are made after rounding, and 2^30 itself is a legal size.
 */
TEST(size_params_rounded_up)
{
	struct grace_hash *ht = sized(100, 33, 1000, 0);
	CHECK(ht);
	CHECK(grace_hash_buckets(ht) == 128);
	CHECK(grace_hash_resize(ht, 1) == 0 && grace_hash_buckets(ht) == 64);          /* min */
	CHECK(grace_hash_resize(ht, SIZE_MAX) == 0 && grace_hash_buckets(ht) == 1024); /* max */
	grace_hash_destroy(ht);
	/* min 100 and init 120 both round to 128; init 1000 and max 600 both to 1024: legal. */
	ht = sized(120, 100, 0, 0);
	CHECK(ht && grace_hash_buckets(ht) == 128);
	grace_hash_destroy(ht);
	ht = sized(1000, 0, 600, 0);
	CHECK(ht && grace_hash_buckets(ht) == 1024);
	grace_hash_destroy(ht);
	/* After rounding: min 300 (512) above init 256, init 1000 (1024) above max 512. */
	CHECK(sized(256, 300, 0, 0) == NULL && errno == EINVAL);
	CHECK(sized(1000, 0, 512, 0) == NULL && errno == EINVAL);
	/* 2^30, the largest table, is a legal maximum. */
	ht = sized(0, 0, (size_t)1 << 30, 0);
	CHECK(ht);
	grace_hash_destroy(ht);
}

/* docs/ds.md (Updaters: "default min(min_buckets, 256) stripes"). */
TEST(default_stripes)
{
	const size_t init[] = { 16, 1024, 4096, 1024, 128 }, min[] = { 0, 0, 1024, 512, 128 };
	const unsigned want[] = { 16, 64, 256, 256, 128 }; /* min_buckets 0: min(init, 64) */
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct grace_hash_stats st;
		struct grace_hash *ht = sized(init[i], min[i], 0, 0);
		CHECK(ht);
		grace_hash_get_stats(ht, &st);
		grace_hash_destroy(ht);
		CHECK_MSG(st.nlocks == want[i], "init %zu min %zu: %u stripes, expected %u",
			  init[i], min[i], st.nlocks, want[i]);
	}
}

/*
 * docs/ds.md (Updaters: "never waits for a grace period (callable inside a read-side section)"):
 * each of add, add_unique, add_or_get, add_replace, del, del_key and replace, called inside a
 * read-side section of the table's flavor, returns; so does an add that crosses the automatic
 * growth limit of a small table (it resizes in the update). A call that waited for a grace
 * period there would deadlock: the default flavor reports that (abort), debug builds report it
 * for srcu and QSBR, and a release srcu build hangs until the child's alarm.
 */
static void updates_in_section(void *arg)
{
	static struct grace_flavor_ops srcu_ops;
	struct conc c;
	memset(&c, 0, sizeof(c));
	c.flavor = *(int *)arg;
	alarm(30);
	grace_flavor_ops_srcu(&srcu_ops, &test_srcu);
	struct grace_hash_params p = params(hash_key, c.flavor == QSBR   ? &grace_flavor_qsbr
						      : c.flavor == SRCU ? &srcu_ops
									 : &grace_flavor_rcu);
	p.init_buckets = 16;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	if (!ht)
		_exit(2);
	rd_register(&c);
	int rdx = rd_lock(&c);
	for (uint64_t k = 0; k < 64; k++)
		if (grace_hash_add(ht, &obj_new(k)->hn, &k) != 0)
			_exit(3);
	if (grace_hash_buckets(ht) <= 16) /* 64 entries in 16 buckets: grown in an update */
		_exit(4);
	struct obj *o = obj_new(100);
	if (grace_hash_add_unique(ht, &o->hn, &o->key) != 0)
		_exit(5);
	o = obj_new(100);
	if (grace_hash_add_unique(ht, &o->hn, &o->key) != -EEXIST)
		_exit(6);
	free(o);
	o = obj_new(101);
	if (grace_hash_add_or_get(ht, &o->hn, &o->key) != &o->hn)
		_exit(7);
	o = obj_new(5);
	if (grace_hash_add_replace(ht, &o->hn, &o->key) == NULL)
		_exit(8);
	struct obj *old = find(ht, 6);
	o = obj_new(6);
	if (!old || grace_hash_replace(ht, &old->hn, &o->hn) != 0)
		_exit(9);
	old = find(ht, 7);
	if (!old || grace_hash_del(ht, &old->hn) != 0)
		_exit(10);
	for (uint64_t k = 8; k < 64; k++) /* down past the shrink limit as well */
		if (grace_hash_del_key(ht, &k) != 0)
			_exit(11);
	rd_unlock(&c, rdx);
	rd_unregister(&c);
	grace_hash_destroy(ht);
	_exit(0);
}

TEST(updates_inside_a_section_never_wait)
{
	static char out[4096];
	const int flavors[] = { RCU, QSBR, SRCU };
	for (int i = 0; i < 3; i++) {
		int f = flavors[i];
		int st = gt_run_child(updates_in_section, &f, out, sizeof(out));
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "flavor %d: status 0x%x: %s", f,
			  st, out);
	}
}

/*
 * docs/ds.md (Updaters: "retires removed nodes through the flavor's `call` after dropping the
 * lock"): the flavor's call (wrapped here) is given each node that del, del_key, replace and
 * add_replace remove, with the table's free function, and runs with no stripe lock held: with
 * one stripe, the wrapper's own add needs the very lock the update took. A call made under the
 * lock would deadlock there (the child's alarm ends it) or, in debug builds, be reported.
 */
static struct grace_hash *unlock_ht;
static int unlock_armed;
static unsigned long unlock_retired;
static uint64_t unlock_key = 1000;

static void call_then_update(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	if (unlock_armed && func == obj_free) {
		uint64_t k = unlock_key++;
		unlock_retired++;
		if (grace_hash_add(unlock_ht, &obj_new(k)->hn, &k) != 0)
			_exit(3);
	}
	grace_flavor_rcu.call(ctx, head, func);
}

static void retire_after_unlock(void *arg)
{
	static struct grace_flavor_ops ops;
	(void)arg;
	alarm(30);
	ops = grace_flavor_rcu;
	ops.call = call_then_update;
	struct grace_hash_params p = params(hash_key, &ops);
	p.nlocks = 1; /* every chain under the one stripe lock */
	unlock_ht = grace_hash_create(&p);
	if (!unlock_ht)
		_exit(2);
	for (uint64_t k = 0; k < 16; k++)
		grace_hash_add(unlock_ht, &obj_new(k)->hn, &k);
	unlock_armed = 1;
	rcu_read_lock();
	struct obj *o1 = find(unlock_ht, 1), *o2 = find(unlock_ht, 2);
	if (!o1 || !o2 || grace_hash_del(unlock_ht, &o1->hn) != 0 ||
	    grace_hash_replace(unlock_ht, &o2->hn, &obj_new(2)->hn) != 0)
		_exit(4);
	rcu_read_unlock();
	uint64_t k3 = 3, k4 = 4;
	if (grace_hash_del_key(unlock_ht, &k3) != 0)
		_exit(5);
	if (grace_hash_add_replace(unlock_ht, &obj_new(4)->hn, &k4) == NULL)
		_exit(6);
	unlock_armed = 0;
	if (unlock_retired != 4)
		_exit(7);
	if (grace_hash_count(unlock_ht) != 16 - 2 + 4) /* two removed, four added by the wrapper */
		_exit(8);
	grace_hash_destroy(unlock_ht);
	_exit(0);
}

TEST(retires_through_the_flavor_after_dropping_the_stripe_lock)
{
	static char out[4096];
	int st = gt_run_child(retire_after_unlock, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, out);
}

/*
 * docs/ds.md (the cache example: "insert-or-replace, and get-or-insert, each atomic for readers
 * and updaters"; Caches: "If only `add_unique`, `add_or_get` and `add_replace` insert, no key is
 * ever present twice"): two threads meet before each key (a spinning rendezvous, so that both
 * run at once) and insert it together, by two different calls of the three, every pair in
 * turn; afterwards every key is present exactly once. An insertion that looked for the key
 * outside the stripe lock would let both insert it.
 */
enum { RACE_THREADS = 2, RACE_KEYS = 100000 };

struct race {
	struct grace_hash *ht;
	int *arrived; /* per key: threads that reached it */
};

struct race_arg {
	struct race *r;
	int index;
};

static void *racer(void *arg)
{
	struct race_arg *a = (struct race_arg *)arg;
	struct grace_hash *ht = a->r->ht;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(a->index + 1);
	for (int k = 0; k < RACE_KEYS; k++) {
		struct obj *o = obj_new((uint64_t)k);
		__atomic_fetch_add(&a->r->arrived[k], 1, __ATOMIC_ACQ_REL);
		for (unsigned spin = 1;
		     __atomic_load_n(&a->r->arrived[k], __ATOMIC_ACQUIRE) < RACE_THREADS; spin++)
			if (spin % 1024 == 0)
				sched_yield(); /* the other thread may be off its CPU */
		/* A random head start either way, so that the two calls overlap at every point. */
		for (volatile unsigned d = (unsigned)(xorshift(&rnd) % 256); d > 0; d--) {
		}
		rcu_read_lock();
		switch ((a->index + k) % 3) {
		case 0:
			if (grace_hash_add_unique(ht, &o->hn, &o->key) != 0)
				free(o); /* not inserted */
			break;
		case 1:
			if (grace_hash_add_or_get(ht, &o->hn, &o->key) != &o->hn)
				free(o); /* not inserted */
			break;
		default:
			(void)grace_hash_add_replace(ht, &o->hn, &o->key);
			break;
		}
		rcu_read_unlock();
	}
	return NULL;
}

TEST(unique_inserts_race_to_one_node_per_key)
{
	struct race r;
	struct race_arg a[RACE_THREADS];
	pthread_t t[RACE_THREADS];
	struct grace_hash_params p = params(hash_key, NULL);
	p.flags = GRACE_HASH_AUTO_RESIZE; /* resizes run among the racing inserts too */
	r.ht = grace_hash_create(&p);
	r.arrived = (int *)calloc(RACE_KEYS, sizeof(int));
	CHECK(r.ht && r.arrived);
	for (int i = 0; i < RACE_THREADS; i++) {
		a[i].r = &r;
		a[i].index = i;
		REQUIRE(pthread_create(&t[i], NULL, racer, &a[i]) == 0);
	}
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	free(r.arrived);
	uint64_t bad = 0, bad_key = 0;
	rcu_read_lock();
	for (uint64_t k = 0; k < RACE_KEYS; k++) {
		struct grace_hash_node *n;
		int copies = 0;
		grace_hash_for_each_possible_rcu(r.ht, n, gt_model_mix64(k))
			copies += container_of(n, struct obj, hn)->key == k;
		if (copies != 1 && bad++ == 0)
			bad_key = k;
	}
	rcu_read_unlock();
	size_t count = grace_hash_count(r.ht);
	grace_hash_destroy(r.ht);
	CHECK_MSG(bad == 0, "%llu keys not present exactly once (first: %llu)",
		  (unsigned long long)bad, (unsigned long long)bad_key);
	CHECK(count == RACE_KEYS);
}

/*
 * docs/ds.md (Resizing: "A resize goes to any power of two in one pass and one grace period,
 * however far the table is from its target"): grace_hash_resize() from 4 buckets to 65536 and
 * back, with 3000 nodes, relinks each node once and waits for one grace period of the flavor
 * (counted by wrapping its synchronize and call), whatever the distance.
 */
static unsigned long gp_waits;

static void counting_sync(void *ctx)
{
	gp_waits++;
	grace_flavor_rcu.synchronize(ctx);
}

static void counting_call(void *ctx, struct rcu_head *head, rcu_callback_t func)
{
	if (func != obj_free)
		gp_waits++; /* a step or an array retired after a grace period */
	grace_flavor_rcu.call(ctx, head, func);
}

TEST(resize_takes_one_pass_and_one_grace_period)
{
	static struct grace_flavor_ops ops;
	const size_t targets[] = { 1 << 16, 4, 1024, 8 };
	ops = grace_flavor_rcu;
	ops.synchronize = counting_sync;
	ops.call = counting_call;
	struct grace_hash_params p = params(hash_key, &ops);
	p.init_buckets = 4;
	p.min_buckets = 4;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	for (uint64_t k = 0; k < 3000; k++)
		CHECK(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	for (unsigned i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		struct grace_hash_stats a, b;
		grace_hash_get_stats(ht, &a);
		gp_waits = 0;
		CHECK(grace_hash_resize(ht, targets[i]) == 0);
		unsigned long waits = gp_waits;
		grace_hash_get_stats(ht, &b);
		CHECK(b.buckets == targets[i]);
		CHECK_MSG(waits == 1, "resize %zu -> %zu: %lu grace periods", a.buckets, b.buckets,
			  waits);
		CHECK(b.grows + b.shrinks == a.grows + a.shrinks + 1);
		CHECK(b.relinked - a.relinked == 3000);
	}
	grace_hash_destroy(ht);
}

/*
 * docs/ds.md (Resizing: "With `GRACE_HASH_AUTO_RESIZE` the table grows, past one entry per bucket
 * on average, to the power of two at or above its count"; "a table of up to 16384 buckets
 * resizes in the update that crosses the limit"; Automatic thresholds: the approximate count is
 * off by less than size / 16). Inside a read-side section, which holds every grace period back
 * (so no flavor callback can run), a table of 16384 buckets does not grow while it holds at most
 * one entry per bucket, and has grown by the time it holds one entry per bucket plus 1/16,
 * within the update: to 32768 buckets.
 */
TEST(auto_resize_small_tables_inline)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.init_buckets = 16384;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	const uint64_t limit = 16384 + 16384 / 16;
	uint64_t grown_at = 0;
	rcu_read_lock();
	for (uint64_t k = 0; k < limit && !grown_at; k++) {
		REQUIRE(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
		if (grace_hash_buckets(ht) != 16384)
			grown_at = k + 1;
	}
	size_t buckets = grace_hash_buckets(ht);
	rcu_read_unlock();
	wait_resize_idle(ht, false);
	grace_hash_destroy(ht);
	CHECK_MSG(grown_at > 16384 && grown_at <= limit, "grown at %llu entries",
		  (unsigned long long)grown_at);
	CHECK_MSG(buckets == 32768, "%zu buckets", buckets);
}

/*
 * docs/ds.md (Resizing: "larger ones in a flavor callback, so no thread is created and no updater
 * waits for a grace period"; "A resize goes to any power of two in one pass and one grace
 * period, however far the table is from its target"; growth "to the power of two at or above
 * its count"): inside a read-side section a table of 32768 buckets takes 140000 insertions
 * (none waits) and stays as it is, its resize queued; once the section ends, the resize goes to
 * 262144 buckets (the power of two at or above 140000) in one step.
 */
TEST(auto_resize_large_tables_in_a_callback)
{
	struct grace_hash_params p = params(hash_key, NULL);
	struct grace_hash_stats in, out;
	p.init_buckets = 32768;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht);
	rcu_read_lock();
	for (uint64_t k = 0; k < 140000; k++)
		REQUIRE(grace_hash_add(ht, &obj_new(k)->hn, &k) == 0);
	grace_hash_get_stats(ht, &in);
	rcu_read_unlock();
	wait_resize_idle(ht, false);
	grace_hash_get_stats(ht, &out);
	grace_hash_destroy(ht);
	CHECK_MSG(in.buckets == 32768 && in.resizing && in.grows == 0,
		  "in the section: %zu buckets, resizing %d, %llu grows", in.buckets, in.resizing,
		  (unsigned long long)in.grows);
	CHECK_MSG(out.buckets == 262144 && out.grows == 1, "after: %zu buckets, %llu grows",
		  out.buckets, (unsigned long long)out.grows);
}

/*
 * docs/ds.md (Resizing: the table "shrinks below one entry per eight buckets"; Automatic
 * thresholds: the count is off by less than size / 16). Inside a read-side section, a table of
 * 16384 buckets (resized in the update) does not shrink while it holds 2048 entries or more,
 * and has shrunk by the time it holds fewer than 2048 - 1024; never below one entry per bucket.
 * The table has no free function (the test owns the nodes), so no deletion queues a callback.
 */
TEST(auto_shrink_below_one_entry_per_eight_buckets)
{
	struct grace_hash_params p = params(hash_key, NULL);
	p.free = NULL;
	p.init_buckets = 16384;
	p.min_buckets = 16;
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct obj *objs = (struct obj *)calloc(16384, sizeof(*objs));
	struct grace_hash *ht = grace_hash_create(&p);
	CHECK(ht && objs);
	for (uint64_t k = 0; k < 16384; k++) {
		objs[k].key = k;
		objs[k].magic = LIVE;
		CHECK(grace_hash_add(ht, &objs[k].hn, &objs[k].key) == 0);
	}
	CHECK(grace_hash_buckets(ht) == 16384); /* one entry per bucket: not past the limit */
	uint64_t shrunk_at = 0;
	bool shrunk = false;
	rcu_read_lock();
	for (uint64_t k = 16384; k-- > 0 && !shrunk;) {
		REQUIRE(grace_hash_del_key(ht, &k) == 0);
		if (grace_hash_buckets(ht) != 16384) {
			shrunk = true;
			shrunk_at = k; /* entries left */
		}
	}
	size_t buckets = grace_hash_buckets(ht);
	rcu_read_unlock();
	wait_resize_idle(ht, false);
	grace_hash_destroy(ht);
	free(objs); /* destroy waited for the flavor's barrier: no reader holds them */
	CHECK_MSG(shrunk && shrunk_at < 2048 && shrunk_at >= 2048 - 1024, "shrunk at %llu entries",
		  (unsigned long long)shrunk_at);
	CHECK_MSG(buckets < 16384 && buckets >= shrunk_at, "%zu buckets", buckets);
}

/*
 * docs/ds.md (Destroy: "retires the remaining nodes (`free`) and the arrays through the flavor,
 * ... then waits for the flavor's barrier"): a reader inside a section that found a node before
 * grace_hash_destroy() began keeps it, intact, until its section ends, and destroy returns only
 * after that. A destroy that freed the nodes itself would poison the reader's node (obj_free
 * writes DEAD before it frees); one that did not wait would return while the reader is inside.
 */
struct destroy_arg {
	struct grace_hash *ht;
	int inside, destroying, destroyed;
	int destroyed_while_inside, intact;
};

static void *destroy_reader(void *arg)
{
	struct destroy_arg *d = (struct destroy_arg *)arg;
	rcu_read_lock();
	struct obj *o = find(d->ht, 5);
	__atomic_store_n(&d->inside, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&d->destroying, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	/* A window for a destroy that does not wait (not a timing assertion: a correct destroy
	 * waits however long this takes). */
	for (int i = 0; i < 200 && !__atomic_load_n(&d->destroyed, __ATOMIC_ACQUIRE); i++)
		gt_sleep_ms(1);
	d->destroyed_while_inside = __atomic_load_n(&d->destroyed, __ATOMIC_ACQUIRE);
	d->intact = o && o->key == 5 && __atomic_load_n(&o->magic, __ATOMIC_RELAXED) == LIVE;
	rcu_read_unlock();
	return NULL;
}

TEST(destroy_lets_readers_finish)
{
	struct destroy_arg d;
	pthread_t t;
	struct grace_hash_params p = params(hash_key, NULL);
	memset(&d, 0, sizeof(d));
	d.ht = grace_hash_create(&p);
	CHECK(d.ht);
	frees = 0;
	for (uint64_t k = 0; k < 64; k++)
		CHECK(grace_hash_add(d.ht, &obj_new(k)->hn, &k) == 0);
	REQUIRE(pthread_create(&t, NULL, destroy_reader, &d) == 0);
	while (!__atomic_load_n(&d.inside, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	__atomic_store_n(&d.destroying, 1, __ATOMIC_RELEASE);
	grace_hash_destroy(d.ht);
	__atomic_store_n(&d.destroyed, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(!d.destroyed_while_inside);
	CHECK(d.intact);
	CHECK_MSG(frees == 64, "frees %lu", frees); /* all retired, none pending after destroy */
}

GT_MAIN()
