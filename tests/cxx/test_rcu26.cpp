/* SPDX-License-Identifier: MIT */
/*
 * The C++26 <rcu> shape of <grace/grace.hpp> ([saferecl.rcu]), for the three domain types
 * (rcu_domain, qsbr_domain, srcu_domain). Built as C++11, C++17 and C++20 (cxx26.cmake).
 *
 * Happy paths: Lockable domains with the standard lock helpers, nesting; retire() with the
 * default and with stateful deleters in every domain, rcu_retire() likewise; rcu_barrier()
 * runs everything retired before it; rcu_synchronize() waits for a region that began before it
 * and not for one that began after; the type properties the wording states (no copies, one
 * default domain, trivially copyable rcu_obj_base when D is, no storage for empty deleters).
 * Hostile paths: srcu regions interleaved across domains and threads, an unlock without a
 * region (message, abort), more regions than a thread may hold, rcu_synchronize() inside a
 * region (message, abort), a deleter whose move throws (rcu_retire schedules nothing), retire
 * from inside a region and from a deleter, floods.
 */
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>
#include <grace/grace.hpp>
#include "gtest_lite.h"

/* The regression test of the ambiguity (issue 14): with every grace name visible, the calls of
 * the C API and of the C++ API with no argument must resolve. Compiling this file is the test. */
namespace ambiguity
{
using namespace grace;
inline void all_names_visible()
{
	rcu_barrier();     /* the C function (non-template preferred): same effect */
	rcu_synchronize(); /* grace::rcu_synchronize(rcu_default_domain()) */
	rcu_barrier(rcu_default_domain());
	rcu_barrier(qsbr_default_domain());
	synchronize_rcu();
}
} // namespace ambiguity

static std::atomic<int> deleted_count(0);

struct obj : grace::rcu_obj_base<obj> {
	int v;
	explicit obj(int x) : v(x) {}
	~obj() { deleted_count.fetch_add(1); }
};

/* A deleter with state: the state stored by retire() must reach the evaluation. */
struct tagged_deleter {
	int tag;
	std::atomic<int> *seen;
	tagged_deleter() : tag(0), seen(nullptr) {}
	tagged_deleter(int t, std::atomic<int> *s) : tag(t), seen(s) {}
	template <class T> void operator()(T *p) const
	{
		if (seen)
			seen->fetch_add(tag);
		delete p;
	}
};

struct sobj : grace::rcu_obj_base<sobj, tagged_deleter> {
	int v = 0;
};

struct plain {
	int v;
	explicit plain(int x) : v(x) {}
	~plain() { deleted_count.fetch_add(1); }
};

/* Type properties of [saferecl.rcu.domain.general] and [saferecl.rcu.base]. */
static_assert(!std::is_copy_constructible<grace::rcu_domain>::value, "rcu_domain copies");
static_assert(!std::is_copy_assignable<grace::rcu_domain>::value, "rcu_domain assigns");
static_assert(!std::is_default_constructible<grace::rcu_domain>::value,
	      "rcu_domain has no public constructor");
static_assert(!std::is_copy_constructible<grace::srcu_domain>::value, "srcu_domain copies");
static_assert(sizeof(obj) == sizeof(struct rcu_head) + sizeof(int) + 4 ||
		      sizeof(obj) == sizeof(struct rcu_head) + sizeof(int),
	      "an empty deleter takes no room");
struct triv : grace::rcu_obj_base<triv> {
	int a;
};
#if !defined(__GNUC__) || defined(__clang__) || __GNUC__ >= 5
static_assert(std::is_trivially_copyable<triv>::value,
	      "rcu_obj_base<T, D> is trivially copyable when D is");
#endif
static_assert(noexcept(grace::rcu_synchronize()), "rcu_synchronize is noexcept");
static_assert(noexcept(grace::rcu_barrier()), "rcu_barrier is noexcept");
static_assert(noexcept(grace::rcu_default_domain().lock()), "lock is noexcept");

static void wait_deleted(int n)
{
	grace::rcu_barrier(grace::rcu_default_domain());
	for (int i = 0; i < 1000 && deleted_count.load() < n; i++)
		gt_sleep_ms(1);
}

TEST(domain_is_lockable_and_nests)
{
	grace::rcu_domain &d = grace::rcu_default_domain();
	CHECK(&d == &grace::rcu_default_domain());
	CHECK(!grace_rcu_read_ongoing());
	{
		std::lock_guard<grace::rcu_domain> g(d);
		CHECK(grace_rcu_read_ongoing());
		{
			std::unique_lock<grace::rcu_domain> u(d, std::try_to_lock);
			CHECK(u.owns_lock());
			CHECK(grace_rcu_read_ongoing());
		}
		CHECK(grace_rcu_read_ongoing());
	}
	CHECK(!grace_rcu_read_ongoing());
	CHECK(d.try_lock());
	d.unlock();
#if __cplusplus >= 201703L
	{
		std::scoped_lock l(d); /* the wording's Example 1 */
		CHECK(grace_rcu_read_ongoing());
	}
	CHECK(!grace_rcu_read_ongoing());
#endif
}

TEST(retire_default_deleter)
{
	int before = deleted_count.load();
	for (int i = 0; i < 100; i++) {
		obj *o = new obj(i);
		if (i % 2) {
			grace::rcu_read_guard g; /* retire inside a region is allowed */
			o->retire();
		} else {
			o->retire(std::default_delete<obj>(), grace::rcu_default_domain());
		}
	}
	grace::rcu_barrier();
	CHECK(deleted_count.load() == before + 100);
}

TEST(retire_stateful_deleter_every_domain)
{
	std::atomic<int> seen(0);
	grace::srcu_domain sd;
	sobj *a = new sobj, *b = new sobj, *c = new sobj;
	a->retire(tagged_deleter(1, &seen));
	b->retire(tagged_deleter(10, &seen), grace::qsbr_default_domain());
	c->retire(tagged_deleter(100, &seen), sd);
	grace::rcu_barrier();
	grace::rcu_barrier(grace::qsbr_default_domain());
	grace::rcu_barrier(sd);
	CHECK_MSG(seen.load() == 111, "seen %d", seen.load());
}

TEST(rcu_retire_every_domain)
{
	int before = deleted_count.load();
	std::atomic<int> seen(0);
	grace::srcu_domain sd;
	grace::rcu_retire(new plain(1));
	grace::rcu_retire(new plain(2), std::default_delete<plain>());
	grace::rcu_retire(new plain(3), tagged_deleter(1, &seen), grace::rcu_default_domain());
	grace::rcu_retire(new plain(4), tagged_deleter(10, &seen), grace::qsbr_default_domain());
	grace::rcu_retire(new plain(5), tagged_deleter(100, &seen), sd);
	grace::rcu_barrier();
	grace::rcu_barrier(grace::qsbr_default_domain());
	grace::rcu_barrier(sd);
	CHECK(seen.load() == 111);
	CHECK(deleted_count.load() == before + 5);
}

/* A deleter whose move constructor throws: rcu_retire must throw and schedule nothing. */
struct throwing_deleter {
	bool arm = false;
	throwing_deleter() = default;
	throwing_deleter(const throwing_deleter &) = default;
	throwing_deleter(throwing_deleter &&o) : arm(o.arm)
	{
		if (arm)
			throw std::runtime_error("move");
	}
	void operator()(plain *p) const { delete p; }
};

TEST(rcu_retire_throwing_deleter_schedules_nothing)
{
	int before = deleted_count.load();
	plain *p = new plain(7);
	throwing_deleter d;
	d.arm = true;
	bool threw = false;
	try {
		grace::rcu_retire(p, d);
	} catch (const std::runtime_error &) {
		threw = true;
	}
	CHECK(threw);
	grace::rcu_barrier();
	CHECK(deleted_count.load() == before); /* not deleted: nothing was scheduled */
	delete p;
}

/* rcu_synchronize(dom) waits for a region of dom that began before it. */
template <class Dom> static void check_synchronize_waits(Dom &dom, bool qsbr)
{
	std::atomic<int> phase(0);
	std::atomic<bool> synced(false);
	std::thread reader([&] {
		if (qsbr)
			grace_qsbr_register_thread();
		dom.lock();
		phase.store(1);
		while (phase.load() != 2)
			gt_sleep_ms(1);
		gt_sleep_ms(20);
		REQUIRE(!synced.load()); /* still inside: the synchronize must not have returned */
		dom.unlock();
		if (qsbr) {
			grace_qsbr_quiescent_state();
			grace_qsbr_unregister_thread();
		}
	});
	while (phase.load() != 1)
		gt_sleep_ms(1);
	std::thread updater([&] {
		phase.store(2);
		grace::rcu_synchronize(dom);
		synced.store(true);
	});
	updater.join();
	reader.join();
	CHECK(synced.load());
}

TEST(synchronize_waits_rcu)
{
	check_synchronize_waits(grace::rcu_default_domain(), false);
}
TEST(synchronize_waits_qsbr)
{
	check_synchronize_waits(grace::qsbr_default_domain(), true);
}
TEST(synchronize_waits_srcu)
{
	grace::srcu_domain sd;
	check_synchronize_waits(sd, false);
}

/* A region that began after the synchronize started is not waited for (srcu: independent
 * domains too). */
TEST(srcu_domains_are_independent)
{
	grace::srcu_domain a, b;
	std::atomic<int> phase(0);
	std::thread reader([&] {
		std::lock_guard<grace::srcu_domain> g(a); /* sleeps inside a region of a */
		phase.store(1);
		while (phase.load() != 2)
			gt_sleep_ms(1);
	});
	while (phase.load() != 1)
		gt_sleep_ms(1);
	grace::rcu_synchronize(b); /* does not wait for a's reader */
	grace::rcu_retire(new plain(9), std::default_delete<plain>(), b);
	grace::rcu_barrier(b);
	phase.store(2);
	reader.join();
}

TEST(srcu_regions_interleave)
{
	grace::srcu_domain a, b;
	a.lock();
	b.lock();
	a.lock();
	CHECK(grace_srcu_readers_active(&a.native()) == 2);
	a.unlock(); /* closes a's most recent region, not b's */
	CHECK(grace_srcu_readers_active(&a.native()) == 1);
	CHECK(grace_srcu_readers_active(&b.native()) == 1);
	a.unlock();
	b.unlock();
	CHECK(grace_srcu_readers_active(&a.native()) == 0);
	CHECK(grace_srcu_readers_active(&b.native()) == 0);
	CHECK(b.try_lock());
	b.unlock();
}

DEFINE_STATIC_SRCU(wrapped_srcu);

/* docs/api.md: an owning srcu_domain's "destructor runs srcu_barrier() then
 * cleanup_srcu_struct()": what was retired in it and not yet run has run when it is gone (a
 * cleanup with a callback pending would be refused: misuse, abort). */
TEST(owned_srcu_domain_destructor_runs_what_was_retired)
{
	std::atomic<int> seen(0);
	int before = deleted_count.load();
	{
		grace::srcu_domain d;
		grace::rcu_retire(new plain(5), std::default_delete<plain>(), d);
		sobj *s = new sobj;
		s->retire(tagged_deleter(7, &seen), d);
	}
	CHECK(deleted_count.load() == before + 1);
	CHECK(seen.load() == 7);
}

TEST(srcu_domain_wraps_a_c_domain)
{
	{
		grace::srcu_domain w(wrapped_srcu);
		CHECK(&w.native() == &wrapped_srcu);
		{
			std::lock_guard<grace::srcu_domain> g(w);
			CHECK(grace_srcu_readers_active(&wrapped_srcu) == 1);
		}
		grace::rcu_retire(new plain(3), std::default_delete<plain>(), w);
		grace::rcu_barrier(w);
	}
	/* The wrapper left the C domain alone: still usable. */
	int idx = srcu_read_lock(&wrapped_srcu);
	srcu_read_unlock(&wrapped_srcu, idx);
	synchronize_srcu(&wrapped_srcu);
}

/* Deleters may retire more objects (in any domain); the barrier of each domain covers them. */
struct chain_deleter {
	int depth = 0;
	chain_deleter() = default;
	explicit chain_deleter(int d) : depth(d) {}
	void operator()(plain *p) const
	{
		if (depth > 0)
			grace::rcu_retire(new plain(depth), chain_deleter(depth - 1));
		delete p;
	}
};

TEST(retire_from_a_deleter)
{
	int before = deleted_count.load();
	grace::rcu_retire(new plain(0), chain_deleter(5));
	/* Each barrier runs at least one more link of the chain. */
	for (int i = 0; i < 100 && deleted_count.load() < before + 6; i++)
		grace::rcu_barrier();
	CHECK_MSG(deleted_count.load() == before + 6, "%d", deleted_count.load() - before);
}

TEST(flood_from_threads)
{
	int before = deleted_count.load();
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([] {
			for (int i = 0; i < 20000; i++) {
				std::lock_guard<grace::rcu_domain> g(grace::rcu_default_domain());
				(new obj(i))->retire();
			}
		});
	for (auto &t : ts)
		t.join();
	wait_deleted(before + 80000);
	CHECK_MSG(deleted_count.load() == before + 80000, "%d", deleted_count.load() - before);
}

/* ---- hostile: misuse is reported with a message, then abort ---- */

static void unlock_without_region(void *)
{
	grace::srcu_domain a;
	a.unlock();
}
static void too_many_regions(void *)
{
	grace::srcu_domain a;
	for (int i = 0; i < 65; i++)
		a.lock();
}
static void synchronize_inside_region(void *)
{
	std::lock_guard<grace::rcu_domain> g(grace::rcu_default_domain());
	grace::rcu_synchronize();
}

static bool aborted_with(void (*fn)(void *), const char *msg)
{
	char out[4096];
	int st = gt_run_child(fn, nullptr, out, sizeof(out));
	bool ok = WIFSIGNALED(st) && strstr(out, msg) != nullptr;
	if (!ok)
		fprintf(stderr, "  child status %#x, stderr: %s\n", st, out);
	return ok;
}

TEST(misuse_srcu_unlock_without_region)
{
	CHECK(aborted_with(unlock_without_region, "grace::srcu_domain::unlock"));
}
TEST(misuse_srcu_too_many_regions)
{
	CHECK(aborted_with(too_many_regions, "more than 64 srcu regions"));
}
TEST(misuse_synchronize_inside_region)
{
	CHECK(aborted_with(synchronize_inside_region, "synchronize_rcu"));
}

GT_MAIN()
