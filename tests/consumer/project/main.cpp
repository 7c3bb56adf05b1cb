/* SPDX-License-Identifier: MIT */
/*
 * Consumer of an installed grace (C++): the umbrella header and the C++ guards of
 * <grace/grace.hpp> compile and work against the installed library.
 */
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <grace/grace.hpp>

namespace
{

struct cfg : grace::rcu_obj_base<cfg> {
	int value;
	explicit cfg(int v) : value(v) {}
};
cfg *cur;
std::atomic<bool> stop(false);

void fail(const char *what)
{
	std::fprintf(stderr, "consumer_cxx: FAIL: %s\n", what);
	std::exit(1);
}

} // namespace

int main()
{
	if (std::strcmp(grace_version_string(), GRACE_EXPECT_VERSION) != 0)
		fail("library version differs from the package version");
	cur = new cfg(1);

	std::thread qsbr_worker([] {
		grace::qsbr_thread_guard reg;
		while (!stop.load()) {
			{
				grace::qsbr_read_guard g;
			}
			grace::qsbr_default_domain().quiescent_state();
			grace::qsbr_offline_guard off; // would block here in a real worker
		}
	});

	for (int i = 2; i < 50; i++) {
		{
			grace::rcu_read_guard g;
			if (!grace_rcu_read_ongoing())
				fail("rcu_read_guard did not open a section");
			if (rcu_dereference(cur)->value != i - 1)
				fail("wrong value");
		}
		{
			std::lock_guard<grace::rcu_domain> g(grace::rcu_default_domain());
			if (!grace_rcu_read_ongoing())
				fail("lock_guard<rcu_domain> did not open a section");
		}
		cfg *old = rcu_dereference_protected(cur, true);
		rcu_assign_pointer(cur, new cfg(i));
		if (i % 2) {
			grace::rcu_synchronize();
			delete old;
		} else {
			old->retire(); /* deleted after a grace period */
		}
		grace::qsbr_default_domain().synchronize();
	}
	if (grace_rcu_read_ongoing())
		fail("a guard leaked a section");
	stop.store(true);
	qsbr_worker.join();
	delete cur;
	grace::rcu_barrier();
	std::printf("consumer_cxx: C++ OK\n");
	return 0;
}
