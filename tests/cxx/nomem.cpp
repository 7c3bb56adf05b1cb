// SPDX-License-Identifier: MIT
// docs/api.md, C++: the calls that allocate report no memory with std::bad_alloc.
//   make_hazard_pointer()       "throws std::bad_alloc when no memory is left"
//   make_hazard_pointer(n)      each element is one make_hazard_pointer(): the same, and the
//                               ones it made before the failure go back (no leak, no crash)
//   srcu_domain()               "throws std::bad_alloc when it fails" (init_srcu_struct())
// Allocation fails on demand through tests/common/fail_alloc.h, in this thread only; not under
// the sanitizers, which interpose malloc themselves (the test then says it skipped).
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>
#include <grace/grace.hpp>

#include "fail_alloc.h"
#include "gtest_lite.h"

#ifdef GT_FAIL_ALLOC
// Runs f with every allocation of this thread failing; true if it threw std::bad_alloc.
template <class F> static bool throws_bad_alloc(F f)
{
	bool threw = false;
	fail_alloc = GT_FAIL_ALL;
	try {
		f();
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	fail_alloc = 0;
	return threw;
}
#endif

TEST(allocating_calls_throw_bad_alloc)
{
#ifdef GT_FAIL_ALLOC
	// Hold every hazard pointer the cache and the pool can give without memory, so that the
	// next one needs an allocation (a bounded number: the pool grows only on demand).
	std::vector<grace::hazard_pointer> held;
	held.reserve(1 << 16);
	bool ran_out = throws_bad_alloc([&] {
		for (int i = 0; i < (1 << 16); i++)
			held.push_back(grace::make_hazard_pointer());
	});
	CHECK(ran_out);
	for (auto &h : held)
		CHECK(!h.empty());
	std::size_t n = held.size();

	// The batch: fails as its element does, and what it made before is destroyed with the
	// vector during unwinding.
	CHECK(throws_bad_alloc([] {
		auto v = grace::make_hazard_pointer(4);
		(void)v;
	}));
	held.clear();
	CHECK(!grace::make_hazard_pointer().empty()); // memory back: succeeds again
	auto batch = grace::make_hazard_pointer(4);
	CHECK(batch.size() == 4);

	// An owning srcu domain allocates its per-CPU counters.
	CHECK(throws_bad_alloc([] {
		grace::srcu_domain d;
		(void)d;
	}));
	{
		grace::srcu_domain d; // memory back: constructs, and its destructor cleans up
		std::lock_guard<grace::srcu_domain> g(d);
	}
	std::printf("make_hazard_pointer() threw std::bad_alloc after %zu; make_hazard_pointer(4) "
		    "and srcu_domain() threw it too\n",
		    n);
#else
	std::printf("skipped: the sanitizers interpose malloc themselves\n");
#endif
}

GT_MAIN()
