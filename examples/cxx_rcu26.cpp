// SPDX-License-Identifier: MIT
/*
 * C++26 <rcu> with grace: std::rcu code, the standard's names taken from grace with
 * using-declarations (the only grace-specific lines), and grace's two other domains.
 *
 *   rcu_domain / rcu_default_domain()  readers: std::lock_guard (or std::scoped_lock) on the
 *                                      default domain, which is rcu_read_lock() itself
 *   rcu_obj_base<T>::retire()          delete after a grace period, no allocation
 *   rcu_retire(p, deleter)             the same for any type, with a deleter of your own
 *   rcu_synchronize(), rcu_barrier()   wait for readers; wait for every retired object
 *   grace::srcu_domain                 a domain whose readers may sleep, independent of others
 *
 * Build against an installed grace (C++11 or later):
 *   c++ -O2 cxx_rcu26.cpp $(pkg-config --cflags --libs grace) -pthread -o cxx_rcu26
 */
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grace/grace.hpp>
using grace::rcu_barrier;
using grace::rcu_default_domain;
using grace::rcu_domain;
using grace::rcu_obj_base;
using grace::rcu_retire;
using grace::rcu_synchronize;

/* A routing table, read on every request, replaced now and then. */
struct route_table : rcu_obj_base<route_table> {
	int version;
	std::vector<int> next_hop;
	route_table(int v, std::size_t n) : version(v), next_hop(n, v) {}
};
static std::atomic<route_table *> routes;

static int lookup(std::size_t dst)
{
	std::lock_guard<rcu_domain> region(rcu_default_domain()); /* rcu_read_lock() */
	const route_table *t = routes.load(std::memory_order_acquire);
	return t->next_hop[dst % t->next_hop.size()] == t->version ? t->version : -1;
} /* rcu_read_unlock() */

/* A backend descriptor that readers hold across slow I/O: its own srcu domain, so a sleeping
 * reader delays nobody but the updaters of this domain. */
struct backend {
	std::string name;
};
static std::atomic<backend *> current_backend;
static std::atomic<int> backends_freed(0);
struct free_backend {
	void operator()(backend *b) const
	{
		backends_freed++;
		delete b;
	}
};

int main()
{
	routes.store(new route_table(0, 64));
	grace::srcu_domain io_domain;
	current_backend.store(new backend{ "disk0" });

	std::atomic<bool> stop(false);
	std::atomic<long> bad(0);
	std::vector<std::thread> readers;
	for (int i = 0; i < 2; i++)
		readers.emplace_back([&] {
			for (std::size_t n = 0; !stop.load(); n++)
				if (lookup(n) < 0)
					bad++;
		});
	std::atomic<bool> holding(false);
	std::thread sleeper([&] {
		std::lock_guard<grace::srcu_domain> region(io_domain); /* may sleep inside */
		const backend *b = current_backend.load(std::memory_order_acquire);
		holding.store(true);
		std::this_thread::sleep_for(std::chrono::milliseconds(50)); /* "slow I/O" */
		if (b->name != "disk0" || backends_freed.load() != 0)
			bad++; /* the old backend must outlive this region */
	});
	while (!holding.load())
		std::this_thread::yield();

	for (int v = 1; v <= 1000; v++)
		routes.exchange(new route_table(v, 64), std::memory_order_acq_rel)->retire();
	/* Not delayed by the sleeping srcu reader: different domains. */
	rcu_synchronize();

	rcu_retire(current_backend.exchange(new backend{ "disk1" }), free_backend(), io_domain);

	stop.store(true);
	for (auto &t : readers)
		t.join();
	sleeper.join();
	routes.exchange(nullptr)->retire();
	rcu_barrier(rcu_default_domain()); /* every route table is deleted on return */
	rcu_barrier(io_domain);
	delete current_backend.exchange(nullptr);
	std::printf("cxx_rcu26: %ld bad reads, %d backend(s) freed after the sleeping reader\n",
		    bad.load(), backends_freed.load());
	return bad.load() == 0 && backends_freed.load() == 1 ? 0 : 1;
}
