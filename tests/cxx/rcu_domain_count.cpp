/* SPDX-License-Identifier: MIT */
/*
 * Instruction counts of a read-side region through each C++ route, for callgrind (the method
 * of bench/readside: every loop in its own 64-byte aligned function, an empty body that is a
 * compiler barrier, counted with valgrind --tool=callgrind --toggle-collect=<loop>):
 *   loop_c            rcu_read_lock(); rcu_read_unlock();            the C fast path
 *   loop_domain       rcu_default_domain().lock(); ... .unlock();
 *   loop_lock_guard   std::lock_guard<grace::rcu_domain>
 *   loop_scoped_lock  std::scoped_lock (C++17)
 *   loop_unique_lock  std::unique_lock<grace::rcu_domain>
 *   loop_qsbr_domain  std::lock_guard<grace::qsbr_domain>            (0 in release builds)
 *   loop_empty        the loop alone
 *   loop_draft_model  a model of the reader of the libc++ draft of <rcu> (llvm-project's
 *                     experimental implementation, 2025): per call a lookup of the thread's
 *                     state in a thread_local std::map keyed by the domain, a seq_cst fence in
 *                     lock and in unlock, and a lock-prefixed fetch_sub in unlock. Written here
 *                     from that description, for comparison only.
 * Usage: rcu_domain_count <loop> [iterations]   (check_instructions.sh drives it)
 */
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <grace/grace.hpp>

#define NOINLINE __attribute__((noinline, aligned(64)))
#define BODY() __asm__ __volatile__("" ::: "memory")

extern "C" {
NOINLINE uint64_t loop_empty(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		BODY();
	return n;
}
NOINLINE uint64_t loop_c(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		rcu_read_lock();
		BODY();
		rcu_read_unlock();
	}
	return n;
}
NOINLINE uint64_t loop_domain(uint64_t n)
{
	grace::rcu_domain &d = grace::rcu_default_domain();
	for (uint64_t i = 0; i < n; i++) {
		d.lock();
		BODY();
		d.unlock();
	}
	return n;
}
NOINLINE uint64_t loop_lock_guard(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		std::lock_guard<grace::rcu_domain> g(grace::rcu_default_domain());
		BODY();
	}
	return n;
}
NOINLINE uint64_t loop_scoped_lock(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		std::scoped_lock g(grace::rcu_default_domain());
		BODY();
	}
	return n;
}
NOINLINE uint64_t loop_unique_lock(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		std::unique_lock<grace::rcu_domain> g(grace::rcu_default_domain());
		BODY();
	}
	return n;
}
NOINLINE uint64_t loop_qsbr_domain(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		std::lock_guard<grace::qsbr_domain> g(grace::qsbr_default_domain());
		BODY();
	}
	return n;
}
}

/* ---- the model of the draft's reader ---- */
namespace draft_model
{
struct domain;
/* Per thread: the reader state of each domain, found by a map lookup on every call. */
static thread_local std::map<const domain *, uint16_t> states;
struct domain {
	std::atomic<uint16_t> phase{ 0 };
	std::atomic<bool> waiting{ false };
	uint16_t &state() { return states[this]; }
	void lock()
	{
		std::atomic_ref<uint16_t> s(state());
		if ((s.load(std::memory_order_relaxed) & 0x7fff) == 0) {
			s.store(uint16_t(phase.load(std::memory_order_relaxed) | 1),
				std::memory_order_relaxed);
			std::atomic_thread_fence(std::memory_order_seq_cst);
		} else {
			s.fetch_add(1, std::memory_order_relaxed);
		}
	}
	void unlock()
	{
		std::atomic_ref<uint16_t> s(state());
		std::atomic_thread_fence(std::memory_order_seq_cst);
		uint16_t old = s.fetch_sub(1, std::memory_order_relaxed);
		if ((old & 0x7fff) == 1 && waiting.load(std::memory_order_relaxed))
			waiting.store(false, std::memory_order_relaxed);
	}
};
static domain dom;
} // namespace draft_model

extern "C" NOINLINE uint64_t loop_draft_model(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		std::lock_guard<draft_model::domain> g(draft_model::dom);
		BODY();
	}
	return n;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		uint64_t (*fn)(uint64_t);
	} loops[] = {
		{ "loop_empty", loop_empty },
		{ "loop_c", loop_c },
		{ "loop_domain", loop_domain },
		{ "loop_lock_guard", loop_lock_guard },
		{ "loop_scoped_lock", loop_scoped_lock },
		{ "loop_unique_lock", loop_unique_lock },
		{ "loop_qsbr_domain", loop_qsbr_domain },
		{ "loop_draft_model", loop_draft_model },
	};
	if (argc < 2) {
		for (const auto &l : loops)
			std::printf("%s\n", l.name);
		return 0;
	}
	uint64_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 100000;
	/* Register outside the measured loops (the first section of a thread registers it, the
	 * first map lookup allocates). */
	rcu_read_lock();
	rcu_read_unlock();
	grace_qsbr_register_thread();
	loop_draft_model(1);
	for (const auto &l : loops) {
		if (std::strcmp(argv[1], l.name) == 0) {
			uint64_t r = l.fn(n);
			grace_qsbr_unregister_thread();
			return r == n ? 0 : 1;
		}
	}
	std::fprintf(stderr, "unknown loop %s\n", argv[1]);
	return 2;
}
