/* SPDX-License-Identifier: MIT */
/*
 * grace from C++: <grace/grace.hpp> guards and retire-on-grace-period objects.
 *
 *   grace::rcu_read_guard g;            scoped rcu_read_lock()/rcu_read_unlock()
 *   std::lock_guard<grace::rcu_domain>  the same through the standard lock helpers
 *   struct T : grace::rcu_obj_base<T>   obj->retire() deletes obj after a grace period
 *   grace::qsbr_thread_guard / qsbr_offline_guard   QSBR registration and blocking regions
 *
 * Build against an installed grace:
 *   c++ -O2 -std=c++11 cxx_guards.cpp $(pkg-config --cflags --libs grace) -pthread
 */
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <grace/grace.hpp>

namespace
{

/* A published snapshot of some settings; replaced whole, never modified in place. */
struct settings : grace::rcu_obj_base<settings> {
	std::string greeting;
	int level;
	settings(std::string g, int l) : greeting(std::move(g)), level(l) {}
	~settings()
	{
		level = -1;
	} /* poison: a reader that outlived the grace period would see it */
};

settings *current; /* RCU-protected */
std::mutex update_mutex;
std::atomic<bool> stop(false);

int read_level()
{
	grace::rcu_read_guard g; /* the section ends with the scope, also on an exception */
	const settings *s = rcu_dereference(current);
	if (s->level < 0) {
		std::fprintf(stderr, "reader saw retired settings\n");
		std::abort();
	}
	return s->level;
}

void update(int level)
{
	std::lock_guard<std::mutex> lock(update_mutex);
	settings *old = rcu_dereference_protected(current, true /* update_mutex held */);
	rcu_assign_pointer(current, new settings(old->greeting, level));
	old->retire(); /* delete old after a grace period, on a grace callback thread */
}

} // namespace

int main()
{
	current = new settings("hello", 0);
	std::vector<std::thread> readers;
	std::atomic<unsigned long> reads(0);
	for (int i = 0; i < 2; i++)
		readers.emplace_back([&] {
			unsigned long n = 0;
			while (!stop.load(std::memory_order_relaxed)) {
				read_level();
				n++;
			}
			reads += n;
		});

	/* A QSBR reader for contrast: registered for its whole life, offline while it sleeps. */
	std::thread qsbr_reader([] {
		grace::qsbr_thread_guard reg;
		while (!stop.load()) {
			grace::qsbr_default_domain().quiescent_state();
			grace::qsbr_offline_guard off;
			std::this_thread::yield(); /* stands for a blocking call */
		}
	});

	for (int level = 1; level <= 1000; level++)
		update(level);
	stop.store(true);
	for (auto &t : readers)
		t.join();
	qsbr_reader.join();

	int level = read_level();
	std::printf("cxx_guards: %lu guarded reads during 1000 updates; level %d\n", reads.load(),
		    level);
	delete rcu_dereference_protected(current, true);
	grace::rcu_barrier(); /* every retired object has been deleted */
	return level == 1000 ? 0 : 1;
}
