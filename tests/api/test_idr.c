/* SPDX-License-Identifier: MIT */
/*
 * ID registry: allocation order, limits, bad input, reserve + replace, stale IDs, iteration, and
 * concurrent readers against allocating/removing updaters while the array grows (default flavor,
 * QSBR and srcu). Objects are poisoned before they are freed: a reader that sees poison has used
 * an object after its grace period. GRACE_DS_TEST_MS sets the concurrent phases' duration.
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/idr.h>
#include "gtest_lite.h"

#define OBJ_LIVE 0x6c697665u
#define OBJ_DEAD 0xdeaddeadu

struct obj {
	unsigned magic;
	int id;
	struct rcu_head rcu;
};

static unsigned test_ms(unsigned def)
{
	const char *e = getenv("GRACE_DS_TEST_MS");
	return e ? (unsigned)atoi(e) : def;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static struct obj *obj_new(int id)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->magic = OBJ_LIVE;
	o->id = id;
	return o;
}

static void obj_free_cb(struct rcu_head *h)
{
	struct obj *o = container_of(h, struct obj, rcu);
	__atomic_store_n(&o->magic, OBJ_DEAD, __ATOMIC_RELAXED);
	free(o);
}

TEST(defaults_and_order)
{
	struct grace_idr idr;
	int a[5];
	CHECK(grace_idr_init(&idr, NULL) == 0);
	CHECK(grace_idr_count(&idr) == 0);
	CHECK(grace_idr_max_index(&idr) == -1);
	for (int i = 0; i < 5; i++) {
		a[i] = grace_idr_alloc(&idr, &a[i]);
		CHECK(a[i] == i); /* lowest free slot, sequence 0: the first IDs are 0, 1, 2 ... */
	}
	CHECK(grace_idr_count(&idr) == 5);
	CHECK(grace_idr_max_index(&idr) == 4);
	rcu_read_lock();
	for (int i = 0; i < 5; i++)
		CHECK(grace_idr_lookup(&idr, a[i]) == &a[i]);
	CHECK(grace_idr_lookup(&idr, 5) == NULL);
	CHECK(grace_idr_lookup(&idr, -1) == NULL);
	CHECK(grace_idr_lookup(&idr, 1 << 30) == NULL);
	rcu_read_unlock();

	CHECK(grace_idr_remove(&idr, a[2]) == &a[2]);
	CHECK(grace_idr_remove(&idr, a[2]) == NULL); /* twice: stale */
	CHECK(grace_idr_count(&idr) == 4);
	int again = grace_idr_alloc(&idr, &again);
	/* The lowest free slot is reused with the next sequence number: same slot, new ID. */
	CHECK(grace_idr_id_slot(&idr, again) == 2);
	CHECK(again == (1 << 15) + 2); /* default max_ids 32768: 15 slot bits */
	rcu_read_lock();
	CHECK(grace_idr_lookup(&idr, a[2]) ==
	      NULL); /* the stale ID does not find the newer object */
	CHECK(grace_idr_lookup(&idr, again) == &again);
	rcu_read_unlock();
	CHECK(grace_idr_remove(&idr, a[4]) == &a[4]);
	CHECK(grace_idr_max_index(&idr) == 3);
	grace_idr_destroy(&idr);
}

TEST(bad_input)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	memset(&p, 0, sizeof(p));
	CHECK(grace_idr_init(NULL, NULL) == -EINVAL);
	p.max_ids = GRACE_IDR_MAX_IDS + 1;
	CHECK(grace_idr_init(&idr, &p) == -EINVAL);
	p.max_ids = 10;
	p.init_size = 11;
	CHECK(grace_idr_init(&idr, &p) == -EINVAL);
	p.init_size = 0;
	p.flags = 0x80;
	CHECK(grace_idr_init(&idr, &p) == -EINVAL);
	struct grace_flavor_ops bad;
	memset(&bad, 0, sizeof(bad));
	p.flags = 0;
	p.ops = &bad;
	CHECK(grace_idr_init(&idr, &p) == -EINVAL);

	CHECK(grace_idr_alloc(NULL, &p) == -EINVAL);
	CHECK(grace_idr_remove(NULL, 0) == NULL);
	CHECK(grace_idr_replace(NULL, 0, NULL, NULL) == -EINVAL);
	CHECK(grace_idr_count(NULL) == 0);
	CHECK(grace_idr_max_index(NULL) == -1);

	CHECK(grace_idr_init(&idr, NULL) == 0);
	CHECK(grace_idr_remove(&idr, -5) == NULL);
	CHECK(grace_idr_remove(&idr, 12345) == NULL);
	CHECK(grace_idr_replace(&idr, 0, &p, NULL) == -ENOENT);
	grace_idr_destroy(&idr);
	/* After destroy: calls fail cleanly, lookups find nothing. */
	CHECK(grace_idr_alloc(&idr, &p) == -EINVAL);
	rcu_read_lock();
	CHECK(grace_idr_lookup(&idr, 0) == NULL);
	rcu_read_unlock();
}

static void destroy_twice(void *arg)
{
	(void)arg;
	struct grace_idr idr;
	grace_idr_init(&idr, NULL);
	grace_idr_destroy(&idr);
	grace_idr_destroy(&idr);
}

TEST(destroy_twice_is_reported)
{
	char out[1024];
	int st = gt_run_child(destroy_twice, NULL, out, sizeof(out));
	CHECK(WIFEXITED(st) || WIFSIGNALED(st));
	CHECK_MSG(strstr(out, "grace_idr_destroy") != NULL, "stderr: %s", out);
}

TEST(limit_enospc)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	int ids[100];
	memset(&p, 0, sizeof(p));
	p.max_ids = 100; /* not a power of two: 7 slot bits, slots 0..99 */
	p.init_size = 1;
	CHECK(grace_idr_init(&idr, &p) == 0);
	for (int i = 0; i < 100; i++) {
		ids[i] = grace_idr_alloc(&idr, &ids[i]);
		CHECK(ids[i] == i);
	}
	CHECK(grace_idr_alloc(&idr, &p) == -ENOSPC);
	CHECK(grace_idr_count(&idr) == 100);
	CHECK(grace_idr_remove(&idr, ids[57]) == &ids[57]);
	int id = grace_idr_alloc(&idr, &p);
	CHECK(id == (1 << 7) + 57);
	CHECK(grace_idr_alloc(&idr, &p) == -ENOSPC);
	rcu_read_lock();
	for (int i = 0; i < 100; i++)
		CHECK(grace_idr_lookup(&idr, ids[i]) == (i == 57 ? NULL : &ids[i]));
	CHECK(grace_idr_lookup(&idr, id) == &p);
	rcu_read_unlock();
	grace_idr_destroy(&idr);
}

TEST(single_slot_sequence_wraps_late)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	memset(&p, 0, sizeof(p));
	p.max_ids = 1; /* 0 slot bits: every bit of the ID is sequence */
	CHECK(grace_idr_init(&idr, &p) == 0);
	int prev = -1;
	for (int i = 0; i < 1000; i++) {
		int id = grace_idr_alloc(&idr, &p);
		CHECK(id == i);
		CHECK(grace_idr_alloc(&idr, &p) == -ENOSPC);
		rcu_read_lock();
		CHECK(prev < 0 || grace_idr_lookup(&idr, prev) == NULL);
		CHECK(grace_idr_lookup(&idr, id) == &p);
		rcu_read_unlock();
		CHECK(grace_idr_remove(&idr, id) == &p);
		prev = id;
	}
	grace_idr_destroy(&idr);
}

/*
 * docs/ds.md (IDs carry a sequence: "With max_ids 32768 there are 16 sequence bits: a stale ID
 * could match again only after 65536 reuses of its slot"; "The first ID of each slot equals the
 * slot index"; "id = seq << slot_bits | slot"): the default registry reuses slot 0 over and over;
 * the n-th reuse gets ID n << 15, the first ID (0) finds nothing through 65535 reuses, and the
 * 65536th reuse wraps to ID 0 again.
 */
TEST(stale_id_matches_again_only_after_65536_reuses)
{
	struct grace_idr idr;
	int obj;
	CHECK(grace_idr_init(&idr, NULL) == 0);
	int first = grace_idr_alloc(&idr, &obj);
	CHECK(first == 0);
	CHECK(grace_idr_remove(&idr, first) == &obj);
	for (int n = 1; n < 65536; n++) {
		int id = grace_idr_alloc(&idr, &obj);
		CHECK_MSG(id == n << 15, "reuse %d: id %d", n, id);
		rcu_read_lock();
		bool stale_found = grace_idr_lookup(&idr, first) != NULL;
		bool found = grace_idr_lookup(&idr, id) == &obj;
		rcu_read_unlock();
		CHECK_MSG(!stale_found && found, "reuse %d", n);
		CHECK(grace_idr_remove(&idr, id) == &obj);
	}
	CHECK(grace_idr_alloc(&idr, &obj) == first); /* 16 bits of sequence: wrapped */
	grace_idr_destroy(&idr);
}

TEST(reserve_then_replace)
{
	struct grace_idr idr;
	int x = 1, y = 2;
	void *old = &idr;
	CHECK(grace_idr_init(&idr, NULL) == 0);
	int id = grace_idr_alloc(&idr, NULL);
	CHECK(id == 0);
	rcu_read_lock();
	CHECK(grace_idr_lookup(&idr, id) == NULL); /* reserved: not visible */
	rcu_read_unlock();
	CHECK(grace_idr_count(&idr) == 1);
	CHECK(grace_idr_alloc(&idr, &y) == 1); /* the reserved slot is taken */
	CHECK(grace_idr_replace(&idr, id, &x, &old) == 0);
	CHECK(old == NULL);
	rcu_read_lock();
	CHECK(grace_idr_lookup(&idr, id) == &x);
	rcu_read_unlock();
	CHECK(grace_idr_replace(&idr, id, &y, &old) == 0);
	CHECK(old == &x);
	CHECK(grace_idr_remove(&idr, id) == &y);
	CHECK(grace_idr_replace(&idr, id, &x, NULL) == -ENOENT); /* stale */
	/* Removing a reserved ID frees its slot and returns NULL. */
	int r = grace_idr_alloc(&idr, NULL);
	CHECK(r >= 0);
	CHECK(grace_idr_remove(&idr, r) == NULL);
	CHECK(grace_idr_count(&idr) == 1);
	grace_idr_destroy(&idr);
}

TEST(cyclic_allocation)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	int v;
	memset(&p, 0, sizeof(p));
	p.max_ids = 8;
	p.init_size = 2;
	p.flags = GRACE_IDR_CYCLIC;
	CHECK(grace_idr_init(&idr, &p) == 0);
	CHECK(grace_idr_alloc(&idr, &v) == 0);
	CHECK(grace_idr_alloc(&idr, &v) == 1);
	CHECK(grace_idr_remove(&idr, 0) == &v);
	/* Cyclic: slot 2 next, not the freed slot 0. */
	int id = grace_idr_alloc(&idr, &v);
	CHECK(grace_idr_id_slot(&idr, id) == 2);
	for (int s = 3; s < 8; s++)
		CHECK(grace_idr_id_slot(&idr, grace_idr_alloc(&idr, &v)) == s);
	/* Wraps to the only free slot, 0, with its next sequence. */
	id = grace_idr_alloc(&idr, &v);
	CHECK(id == (1 << 3) + 0);
	CHECK(grace_idr_alloc(&idr, &v) == -ENOSPC);
	grace_idr_destroy(&idr);
}

TEST(growth_and_iteration)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	enum { N = 3000 };
	static int ids[N];
	static unsigned char seen[N];
	memset(&p, 0, sizeof(p));
	p.max_ids = 4096;
	p.init_size = 1;
	CHECK(grace_idr_init(&idr, &p) == 0);
	for (int i = 0; i < N; i++) {
		ids[i] = grace_idr_alloc(&idr, &ids[i]);
		CHECK(ids[i] == i);
	}
	for (int i = 0; i < N; i += 3)
		CHECK(grace_idr_remove(&idr, ids[i]) == &ids[i]);
	memset(seen, 0, sizeof(seen));
	uint32_t slot;
	int id, n = 0;
	void *ptr;
	rcu_read_lock();
	grace_idr_for_each(&idr, slot, id, ptr) {
		int i = (int)((int *)ptr - ids);
		CHECK(i >= 0 && i < N && i % 3 != 0);
		CHECK(id == ids[i]);
		CHECK(slot == (uint32_t)i);
		CHECK(!seen[i]);
		seen[i] = 1;
		n++;
	}
	rcu_read_unlock();
	CHECK(n == N - (N + 2) / 3);
	CHECK((int)grace_idr_count(&idr) == n);
	CHECK(grace_idr_max_index(&idr) == N - 1);
	grace_idr_destroy(&idr);
}

/*
 * A reader that loaded the array keeps indexing it while an updater grows the registry: the
 * old array must stay intact until the reader's section ends. The updater then allocates (and
 * fills) blocks of the old array's size, which would reuse it had it been freed at once. Found
 * by the mutation audit (docs/torture.md): an old array freed without a grace period survived
 * the concurrent case, whose array stops growing within its first milliseconds.
 */
struct grow_arg {
	struct grace_idr *idr;
	size_t bytes;
	void *reuse[32];
};

static void *grow_and_reuse(void *arg)
{
	struct grow_arg *g = (struct grow_arg *)arg;
	uint32_t before = g->idr->ary->size;

	while (g->idr->ary->size == before)
		REQUIRE(grace_idr_alloc(g->idr, &g->bytes) >= 0);
	for (int i = 0; i < 32; i++) {
		g->reuse[i] = aligned_alloc(64, g->bytes);
		REQUIRE(g->reuse[i]);
		memset(g->reuse[i], 0xa5, g->bytes);
	}
	return NULL;
}

TEST(growth_keeps_old_array_for_readers)
{
	struct grace_idr idr;
	struct grace_idr_params p;
	int objs[64];

	memset(&p, 0, sizeof(p));
	p.max_ids = 4096;
	p.init_size = 8;
	CHECK(grace_idr_init(&idr, &p) == 0);
	for (int round = 0; round < 5; round++) {
		struct grow_arg g;
		pthread_t t;

		while (grace_idr_count(&idr) < idr.ary->size)
			REQUIRE(grace_idr_alloc(&idr, &objs[0]) >= 0);
		rcu_read_lock();
		struct grace_idr_array *a = rcu_dereference(idr.ary);
		uint32_t size = a->size;
		struct grace_idr_slot *sl = grace__idr_slots(a);
		void *ptr0 = sl[0].ptr, *ptr_last = sl[size - 1].ptr;
		uint32_t seq_last = sl[size - 1].seq;

		memset(&g, 0, sizeof(g));
		g.idr = &idr;
		g.bytes = (sizeof(*a) + size * sizeof(*sl) + 63) & ~(size_t)63;
		REQUIRE(pthread_create(&t, NULL, grow_and_reuse, &g) == 0);
		pthread_join(t, NULL);
		/* The array grew, and this reader still holds the old one, intact. Checked after
		 * the unlock: a failed check leaves the test. */
		bool grew = idr.ary->size > size;
		bool intact = a->size == size && sl[0].ptr == ptr0 && ptr0 != NULL &&
			      sl[size - 1].ptr == ptr_last && ptr_last != NULL &&
			      sl[size - 1].seq == seq_last;
		rcu_read_unlock();
		CHECK(grew);
		CHECK(intact);
		for (int i = 0; i < 32; i++)
			free(g.reuse[i]);
	}
	grace_idr_destroy(&idr);
}

/* ---- concurrent readers and updaters ---- */

enum { PUB = 512, UPDATERS = 2 };

struct conc {
	struct grace_idr idr;
	int qsbr, srcu; /* the readers' flavor: QSBR, srcu (idr_srcu), or the default */
	int stop;
	int published[PUB]; /* live IDs (-1: none); each updater owns a range of indices */
	int stale[PUB];     /* IDs removed (their remove returned) */
	unsigned long lookups, hits, stale_checks, updates;
	int failed;
};

/* The srcu readers' domain (concurrent_srcu): the registry retires through its ops. */
static DEFINE_SRCU(idr_srcu);

static void fail(struct conc *c, const char *what, int id)
{
	fprintf(stderr, "  reader: %s (id %d)\n", what, id);
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	struct conc *c = (struct conc *)arg;
	uint64_t rnd = (uint64_t)(uintptr_t)&rnd | 1;
	unsigned long n = 0, hits = 0, stale = 0;

	if (c->qsbr)
		qsbr_register_thread();
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		int sidx = 0;
		if (c->qsbr)
			qsbr_read_lock();
		else if (c->srcu)
			sidx = srcu_read_lock(&idr_srcu);
		else
			rcu_read_lock();
		for (int k = 0; k < 64; k++) {
			unsigned i = (unsigned)(xorshift(&rnd) % PUB);
			/* Relaxed: the registry must give the right answer even when an ID reaches
			 * the reader without synchronisation. */
			int id = __atomic_load_n(&c->published[i], __ATOMIC_RELAXED);
			if (id >= 0) {
				struct obj *o = (struct obj *)grace_idr_lookup(&c->idr, id);
				if (o) {
					if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) !=
					    OBJ_LIVE)
						fail(c, "object used after its grace period", id);
					else if (o->id != id)
						fail(c, "ID found another object", id);
					hits++;
				}
				n++;
			}
			/* Acquire: the remove that made this ID stale happened before. */
			int sid = __atomic_load_n(&c->stale[i], __ATOMIC_ACQUIRE);
			if (sid >= 0) {
				struct obj *o = (struct obj *)grace_idr_lookup(&c->idr, sid);
				if (o) {
					/* Possible only if the slot was reused and then the stale ID
					 * was overwritten; the object must never be someone else's. */
					if (o->id == sid)
						fail(c, "a removed ID still finds its object", sid);
					else
						fail(c, "stale ID finds a newer object", sid);
				}
				stale++;
			}
		}
		if (c->qsbr) {
			qsbr_read_unlock();
			qsbr_quiescent_state();
		} else if (c->srcu) {
			srcu_read_unlock(&idr_srcu, sidx);
		} else {
			rcu_read_unlock();
		}
	}
	if (c->qsbr)
		qsbr_unregister_thread();
	__atomic_fetch_add(&c->lookups, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->hits, hits, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->stale_checks, stale, __ATOMIC_RELAXED);
	return NULL;
}

struct upd_arg {
	struct conc *c;
	int index;
};

static void retire(struct conc *c, struct obj *o)
{
	if (c->qsbr)
		call_qsbr(&o->rcu, obj_free_cb);
	else if (c->srcu)
		call_srcu(&idr_srcu, &o->rcu, obj_free_cb);
	else
		call_rcu(&o->rcu, obj_free_cb);
}

static void *updater(void *arg)
{
	struct upd_arg *u = (struct upd_arg *)arg;
	struct conc *c = u->c;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(u->index + 1);
	unsigned lo = (unsigned)u->index * (PUB / UPDATERS), hi = lo + PUB / UPDATERS;
	unsigned long n = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		unsigned i = lo + (unsigned)(xorshift(&rnd) % (hi - lo));
		int id = c->published[i];
		if (id < 0) {
			/* Reserve, let the object learn its ID, then publish it. */
			id = grace_idr_alloc(&c->idr, NULL);
			REQUIRE(id >= 0);
			struct obj *o = obj_new(id);
			void *old = o;
			REQUIRE(grace_idr_replace(&c->idr, id, o, &old) == 0 && old == NULL);
			__atomic_store_n(&c->published[i], id, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&c->published[i], -1, __ATOMIC_RELAXED);
			struct obj *o = (struct obj *)grace_idr_remove(&c->idr, id);
			REQUIRE(o && o->id == id);
			/* Release: a reader that loads this stale ID sees the removal done. */
			__atomic_store_n(&c->stale[i], id, __ATOMIC_RELEASE);
			retire(c, o);
		}
		n++;
	}
	__atomic_fetch_add(&c->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

enum { FL_RCU, FL_QSBR, FL_SRCU };

static void run_concurrent(int flavor, unsigned ms)
{
	static struct grace_flavor_ops srcu_ops;
	struct conc *c = (struct conc *)calloc(1, sizeof(*c));
	struct grace_idr_params p;
	pthread_t r[2], w[UPDATERS];
	struct upd_arg ua[UPDATERS];

	REQUIRE(c);
	memset(&p, 0, sizeof(p));
	p.max_ids = 1024; /* 10 slot bits, 21 sequence bits */
	p.init_size = 1;  /* the array grows while readers run */
	grace_flavor_ops_srcu(&srcu_ops, &idr_srcu);
	p.ops = flavor == FL_QSBR   ? &grace_flavor_qsbr
		: flavor == FL_SRCU ? &srcu_ops
				    : &grace_flavor_rcu;
	REQUIRE(grace_idr_init(&c->idr, &p) == 0);
	c->qsbr = flavor == FL_QSBR;
	c->srcu = flavor == FL_SRCU;
	for (int i = 0; i < PUB; i++)
		c->published[i] = c->stale[i] = -1;
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, c);
	for (int i = 0; i < UPDATERS; i++) {
		ua[i].c = c;
		ua[i].index = i;
		pthread_create(&w[i], NULL, updater, &ua[i]);
	}
	gt_sleep_ms(ms);
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < UPDATERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	printf("  %s: %lu lookups (%lu hits), %lu stale checks, %lu updates, array %u slots\n",
	       flavor == FL_QSBR   ? "qsbr"
	       : flavor == FL_SRCU ? "srcu"
				   : "rcu",
	       c->lookups, c->hits, c->stale_checks, c->updates, c->idr.ary->size);
	REQUIRE(!c->failed);
	/* Empty the registry and free what it held; destroy leaves nothing behind (LSan). */
	uint32_t slot;
	int id;
	void *ptr;
	int left = 0;
	grace_idr_for_each(&c->idr, slot, id, ptr) {
		REQUIRE(grace_idr_remove(&c->idr, id) == ptr);
		retire(c, (struct obj *)ptr);
		left++;
	}
	REQUIRE(grace_idr_count(&c->idr) == 0);
	REQUIRE(grace_idr_max_index(&c->idr) == -1);
	grace_idr_destroy(&c->idr);
	if (flavor == FL_QSBR)
		qsbr_barrier();
	else if (flavor == FL_SRCU)
		srcu_barrier(&idr_srcu);
	else
		rcu_barrier();
	free(c);
}

TEST(concurrent_rcu)
{
	run_concurrent(FL_RCU, test_ms(700));
}

TEST(concurrent_qsbr)
{
	run_concurrent(FL_QSBR, test_ms(700));
}

/*
 * docs/ds.md ("Readers use any flavor (default, QSBR, srcu)"; Growth: the old array is retired
 * "through the flavor's `call`"): the same run with srcu readers, the registry's ops filled in
 * by grace_flavor_ops_srcu(), so its grown arrays are retired through call_srcu and wait for
 * the srcu readers that may still index them.
 */
TEST(concurrent_srcu)
{
	run_concurrent(FL_SRCU, test_ms(500));
}

GT_MAIN()
