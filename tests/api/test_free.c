/* SPDX-License-Identifier: MIT */
/*
 * free_rcu(), free_qsbr(), free_srcu(), their headless twins and barriers, as a user sees them
 * (linked against the shared library; also compiled as C++). The ASan build checks that nothing
 * leaks at exit (objects are left queued on purpose at the end) and that no reader touches a
 * freed object; the debug build's poisoning and the reuse of freed memory by the updaters' next
 * malloc() make an early free visible to the readers' checks in the other builds.
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/srcu.h>

#include "gtest_lite.h"

#define LIVE 0x600dcafeu

struct item {
	unsigned int magic;
	unsigned int gen;
	unsigned long data[4];
	struct rcu_head rh;
};

/* The rcu_head inside a nested member, not at the start. */
struct wrapped {
	char name[40];
	struct {
		int refs;
		struct rcu_head rh;
	} meta;
};

static struct item *item_new(unsigned int gen)
{
	struct item *it = (struct item *)malloc(sizeof(*it));
	REQUIRE(it);
	it->gen = gen;
	for (int i = 0; i < 4; i++)
		it->data[i] = gen * 31u + (unsigned int)i;
	__atomic_store_n(&it->magic, LIVE, __ATOMIC_RELAXED);
	return it;
}

static bool item_ok(const struct item *it, unsigned int gen)
{
	if (__atomic_load_n(&it->magic, __ATOMIC_RELAXED) != LIVE || it->gen != gen)
		return false;
	for (int i = 0; i < 4; i++)
		if (it->data[i] != gen * 31u + (unsigned long)i)
			return false;
	return true;
}

TEST(null_does_nothing)
{
	struct item *none = NULL;
	struct wrapped *w = NULL;

	free_rcu(none, rh);
	free_rcu(w, meta.rh);
	free_qsbr(none, rh);
	free_srcu((struct srcu_struct *)NULL, none, rh); /* ssp is not looked at */
	free_rcu_mightsleep(NULL);
	free_qsbr_mightsleep(NULL);
	free_srcu_mightsleep((struct srcu_struct *)NULL, NULL);
	grace_rcu_free(NULL, NULL);
	grace_rcu_free_ptr(NULL);
	grace_flavor_rcu.free(grace_flavor_rcu.ctx, NULL, NULL);
	grace_flavor_qsbr.free_headless(grace_flavor_qsbr.ctx, NULL);
	free_rcu_barrier();
	CHECK(true);
}

TEST(flavor_tables_have_the_free_operations)
{
	struct grace_flavor_ops s;
	static struct srcu_struct dom;

	CHECK(grace_flavor_rcu.free && grace_flavor_rcu.free_headless &&
	      grace_flavor_rcu.free_barrier);
	CHECK(grace_flavor_qsbr.free && grace_flavor_qsbr.free_headless &&
	      grace_flavor_qsbr.free_barrier);
	CHECK(init_srcu_struct(&dom) == 0);
	grace_flavor_ops_srcu(&s, &dom);
	CHECK(s.free && s.free_headless && s.free_barrier);
	struct item *it = item_new(1);
	s.free(s.ctx, it, &it->rh);
	s.free_headless(s.ctx, item_new(2));
	s.free_barrier(s.ctx); /* the domain has nothing pending now: cleanup frees it */
	cleanup_srcu_struct(&dom);
}

TEST(nested_field_and_every_entry_point)
{
	DEFINE_STATIC_SRCU(dom);
	for (int i = 0; i < 2000; i++) {
		struct wrapped *w = (struct wrapped *)malloc(sizeof(*w));
		REQUIRE(w);
		free_rcu(w, meta.rh);
		free_rcu(item_new(1), rh);
		free_rcu_mightsleep(item_new(2));
		free_qsbr(item_new(3), rh);
		free_qsbr_mightsleep(malloc(24));
		free_srcu(&dom, item_new(4), rh);
		free_srcu_mightsleep(&dom, malloc(8));
	}
	free_rcu_barrier();
	free_qsbr_barrier();
	free_srcu_barrier(&dom);
	CHECK(true); /* ASan/LSan and the allocator check the frees */
}

/* Readers hold items across their sections while updaters replace and free them. */
struct race {
	const struct grace_flavor_ops *ops;
	bool qsbr;
	struct item *slot;
	int stop;
	unsigned long bad, sections;
};

static void *reader(void *arg)
{
	struct race *r = (struct race *)arg;
	const struct grace_flavor_ops *o = r->ops;
	unsigned long n = 0;

	if (r->qsbr)
		o->register_thread();
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		int idx = o->read_lock(o->ctx);
		struct item *it = rcu_dereference_raw(r->slot);
		if (it) {
			unsigned int gen = it->gen;
			bool ok = item_ok(it, gen);
			for (int i = 0; i < 300; i++)
				grace_cpu_relax();
			if (!ok || !item_ok(it, gen))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		}
		o->read_unlock(o->ctx, idx);
		if (r->qsbr)
			o->quiescent_state();
		n++;
	}
	if (r->qsbr)
		o->unregister_thread();
	__atomic_fetch_add(&r->sections, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *updater(void *arg)
{
	struct race *r = (struct race *)arg;
	const struct grace_flavor_ops *o = r->ops;
	unsigned int g = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct item *old = rcu_xchg_pointer(&r->slot, item_new(++g));
		if (!old)
			continue;
		if (g % 3)
			o->free(o->ctx, old, &old->rh);
		else
			o->free_headless(o->ctx, old);
	}
	return NULL;
}

static void run_race(const struct grace_flavor_ops *ops, bool qsbr)
{
	struct race r;
	pthread_t t[4];

	memset(&r, 0, sizeof(r));
	r.ops = ops;
	r.qsbr = qsbr;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &r);
	for (int i = 2; i < 4; i++)
		pthread_create(&t[i], NULL, updater, &r);
	gt_sleep_ms(400);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	struct item *last = rcu_xchg_pointer(&r.slot, (struct item *)NULL);
	ops->free(ops->ctx, last, &last->rh);
	ops->free_barrier(ops->ctx);
	printf("  %s: %lu sections, %lu saw a freed item\n", ops->name, r.sections, r.bad);
	CHECK(r.bad == 0);
}

TEST(readers_never_see_a_freed_item_rcu)
{
	run_race(&grace_flavor_rcu, false);
}
TEST(readers_never_see_a_freed_item_qsbr)
{
	run_race(&grace_flavor_qsbr, true);
}
TEST(readers_never_see_a_freed_item_srcu)
{
	DEFINE_STATIC_SRCU(dom);
	struct grace_flavor_ops s;
	grace_flavor_ops_srcu(&s, &dom);
	run_race(&s, false);
}

/* Many threads, each exits with objects still in its cache; then a process exit with objects
 * still queued everywhere (LSan checks, in the ASan build, that the library freed them). */
static void *short_lived(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		free_rcu(item_new((unsigned int)i), rh);
		if ((i & 7) == 0)
			free_qsbr_mightsleep(malloc(40));
	}
	return NULL;
}

TEST(threads_exit_then_process_exits_with_objects_queued)
{
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, short_lived, (void *)(long)(1000 * (i + 1)));
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 777; i++) {
		free_rcu(item_new(1), rh);
		free_qsbr(item_new(2), rh);
	}
	CHECK(true); /* no barrier: exit frees them */
}

GT_MAIN()
