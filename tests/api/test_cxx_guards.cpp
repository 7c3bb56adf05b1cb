/* SPDX-License-Identifier: MIT */
/*
 * C++ guards of <grace/grace.hpp>: each guard opens and closes exactly what it names, a held
 * guard holds grace periods like the C call it wraps, QSBR guards register, go offline and
 * come back online, and the domains work with the standard lock helpers.
 */
#include <atomic>
#include <mutex>
#include <thread>
#include <grace/grace.hpp>
#include "gtest_lite.h"

TEST(rcu_read_guard_scopes)
{
	CHECK(!grace_rcu_read_ongoing());
	{
		grace::rcu_read_guard g;
		CHECK(grace_rcu_read_ongoing());
		{
			grace::rcu_read_guard inner;
			CHECK(grace_rcu_read_ongoing());
		}
		CHECK(grace_rcu_read_ongoing());
	}
	CHECK(!grace_rcu_read_ongoing());
}

TEST(rcu_domain_is_lockable)
{
	grace::rcu_domain &d = grace::rcu_default_domain();
	CHECK(&d == &grace::rcu_default_domain());
	{
		std::lock_guard<grace::rcu_domain> g(d);
		CHECK(grace_rcu_read_ongoing());
	}
	CHECK(!grace_rcu_read_ongoing());
	{
		std::unique_lock<grace::rcu_domain> l(d, std::try_to_lock);
		CHECK(l.owns_lock());
		CHECK(grace_rcu_read_ongoing());
		l.unlock();
		CHECK(!grace_rcu_read_ongoing());
		l.lock();
		CHECK(grace_rcu_read_ongoing());
	}
	CHECK(!grace_rcu_read_ongoing());
	d.synchronize();
	grace::rcu_synchronize();
}

TEST(rcu_read_guard_holds_grace_period)
{
	std::atomic<int> phase(0);
	std::atomic<bool> synced(false);
	std::thread reader([&] {
		grace::rcu_read_guard g;
		phase.store(1);
		while (phase.load() != 2)
			gt_sleep_ms(1);
		/* The synchronize that began while this guard was alive cannot have returned. */
		REQUIRE(!synced.load());
	});
	while (phase.load() != 1)
		gt_sleep_ms(1);
	std::thread updater([&] {
		grace::rcu_synchronize();
		synced.store(true);
	});
	gt_sleep_ms(50);
	CHECK(!synced.load());
	phase.store(2);
	updater.join();
	reader.join();
	CHECK(synced.load());
}

TEST(rcu_thread_guard_registers)
{
	std::thread t([] {
		grace::rcu_thread_guard reg;
		grace::rcu_read_guard g;
		REQUIRE(grace_rcu_read_ongoing());
	});
	t.join();
	grace::rcu_synchronize();
}

TEST(qsbr_thread_and_offline_guards)
{
	std::atomic<int> state(0);
	std::thread t([&] {
		REQUIRE(!grace_qsbr_thread_is_online());
		{
			grace::qsbr_thread_guard reg;
			REQUIRE(grace_qsbr_thread_is_online());
			{
				grace::qsbr_read_guard g;
			}
			{
				std::lock_guard<grace::qsbr_domain> g(grace::qsbr_default_domain());
			}
			grace::qsbr_default_domain().quiescent_state();
			{
				grace::qsbr_offline_guard off;
				REQUIRE(!grace_qsbr_thread_is_online());
				/* Blocked while offline: grace periods must not wait for this thread. */
				state.store(1);
				while (state.load() != 2)
					gt_sleep_ms(1);
			}
			REQUIRE(grace_qsbr_thread_is_online());
		}
		REQUIRE(!grace_qsbr_thread_is_online());
	});
	while (state.load() != 1)
		gt_sleep_ms(1);
	/* Returns although the registered thread reports no quiescent state: it is offline. */
	for (int i = 0; i < 10; i++)
		grace::qsbr_default_domain().synchronize();
	state.store(2);
	t.join();
}

#if GRACE__HPP_HAVE_SRCU
DEFINE_STATIC_SRCU(cxx_srcu);

TEST(srcu_read_guard_scopes)
{
	CHECK(grace_srcu_readers_active(&cxx_srcu) == 0);
	{
		grace::srcu_read_guard g(cxx_srcu);
		CHECK(g.index() == 0 || g.index() == 1);
		CHECK(grace_srcu_readers_active(&cxx_srcu) == 1);
		{
			grace::srcu_read_guard inner(cxx_srcu);
			CHECK(grace_srcu_readers_active(&cxx_srcu) == 2);
		}
		CHECK(grace_srcu_readers_active(&cxx_srcu) == 1);
	}
	CHECK(grace_srcu_readers_active(&cxx_srcu) == 0);
	grace::srcu_synchronize(cxx_srcu);
}

TEST(srcu_read_guard_holds_grace_period)
{
	std::atomic<int> phase(0);
	std::atomic<bool> synced(false);
	std::thread reader([&] {
		grace::srcu_read_guard g(cxx_srcu);
		phase.store(1);
		while (phase.load() != 2)
			gt_sleep_ms(1); /* srcu readers may sleep */
		REQUIRE(!synced.load());
	});
	while (phase.load() != 1)
		gt_sleep_ms(1);
	std::thread updater([&] {
		grace::srcu_synchronize(cxx_srcu);
		synced.store(true);
	});
	gt_sleep_ms(50);
	CHECK(!synced.load());
	phase.store(2);
	updater.join();
	reader.join();
	CHECK(synced.load());
	grace::srcu_barrier(cxx_srcu);
}
#endif

#if GRACE__DEBUG
static void read_guard_offline(void *)
{
	grace::qsbr_read_guard g; /* not registered: a misuse the debug build reports */
}

TEST(debug_qsbr_read_guard_offline_is_reported)
{
	char out[2048];
	int st = gt_run_child(read_guard_offline, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "qsbr_read_lock") != NULL, "stderr: %s", out);
}
#endif

GT_MAIN()
