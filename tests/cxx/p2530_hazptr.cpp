// SPDX-License-Identifier: MIT
// A program written from the draft standard's text of [saferecl.hp] (C++26 <hazard_pointer>,
// P2530) as a user would write it for std::, switched to grace by using-declarations: a
// hazard-protectable type with a custom deleter, readers that protect() the current object
// from a std::atomic<T *>, a writer that replaces it and retire()s the old one, and the
// holder's members: empty(), try_protect(), both reset_protection() overloads, swap(), moves,
// make_hazard_pointer(). Only the final check uses grace's own barrier (hazptr_barrier) to
// count the deleter's calls. Also grace's batch, make_hazard_pointer(n).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>
#include <grace/grace.hpp>

using grace::hazard_pointer;
using grace::hazard_pointer_obj_base;
using grace::make_hazard_pointer;

static std::atomic<long> deleted{ 0 };

struct Config;
struct ConfigDeleter {
	void operator()(Config *c) const noexcept;
};

// [saferecl.hp.general]: exactly one public non-virtual base hazard_pointer_obj_base<T, D>.
struct Config : hazard_pointer_obj_base<Config, ConfigDeleter> {
	long version;
	long payload;
	explicit Config(long v) : version(v), payload(v * 3) {}
};

void ConfigDeleter::operator()(Config *c) const noexcept
{
	c->payload = -1; // a reader that still used it would see this
	delete c;
	deleted.fetch_add(1, std::memory_order_relaxed);
}

// A type with the default deleter.
struct Node : hazard_pointer_obj_base<Node> {
	int key;
	explicit Node(int k) : key(k) {}
};

static std::atomic<Config *> current{ nullptr };
static std::atomic<bool> stop{ false };
static std::atomic<long> bad{ 0 }, reads{ 0 }, written{ 0 };

#define EXPECT(c)                                                                            \
	do {                                                                                 \
		if (!(c)) {                                                                  \
			std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c); \
			std::exit(1);                                                        \
		}                                                                            \
	} while (0)

static void reader()
{
	hazard_pointer h = make_hazard_pointer(); // owns an unassociated hazard pointer
	EXPECT(!h.empty());
	while (!stop.load(std::memory_order_relaxed)) {
		Config *c = h.protect(current); // Effects: load, try_protect until it succeeds
		if (c->payload != c->version * 3)
			bad.fetch_add(1, std::memory_order_relaxed);
		reads.fetch_add(1, std::memory_order_relaxed);
		h.reset_protection(); // nullptr_t overload, default argument
	}
}

static void writer()
{
	// 20000 versions, and on until the readers have read 1000 times: on a loaded machine
	// the writer could otherwise finish before any reader ran once.
	long v = 1;
	for (; v <= 20000 || reads.load(std::memory_order_relaxed) < 1000; v++) {
		Config *old = current.exchange(new Config(v));
		old->retire(); // D() by default: ConfigDeleter
	}
	written.store(v - 1);
}

int main()
{
	current.store(new Config(0));
	{
		std::vector<std::thread> ts;
		for (int i = 0; i < 3; i++)
			ts.emplace_back(reader);
		std::thread w(writer);
		w.join();
		stop.store(true);
		for (auto &t : ts)
			t.join();
	}
	EXPECT(bad.load() == 0);
	EXPECT(reads.load() > 0);

	// The holder's members, as [saferecl.hp.holder] specifies them.
	hazard_pointer e; // default-constructed: empty
	EXPECT(e.empty());
	hazard_pointer h = make_hazard_pointer();
	EXPECT(!h.empty());
	hazard_pointer m(std::move(h)); // move: the source becomes empty
	EXPECT(h.empty() && !m.empty());
	h = std::move(m);
	EXPECT(!h.empty() && m.empty());
	m.swap(h);
	EXPECT(h.empty() && !m.empty());
	swap(h, m); // the non-member swap
	EXPECT(!h.empty() && m.empty());

	// try_protect: true when src still holds ptr, else false with ptr updated.
	std::atomic<Node *> src{ new Node(1) };
	Node *p = src.load();
	EXPECT(h.try_protect(p, src) && p == src.load());
	Node *stale = new Node(2);
	Node *q = stale;
	EXPECT(!h.try_protect(q, src) && q == src.load());
	delete stale;
	// reset_protection(const T *): protect an object kept alive by other means.
	hazard_pointer h2 = make_hazard_pointer();
	h2.reset_protection(p);
	Node *n = src.exchange(nullptr);
	n->retire();           // protected by h2: not deleted yet
	h2.reset_protection(); // now it may be
	h.reset_protection(nullptr);

	// grace's batch: n hazard pointers at once.
	std::vector<hazard_pointer> many = make_hazard_pointer(10);
	EXPECT(many.size() == 10);
	for (auto &x : many)
		EXPECT(!x.empty());

	// Every retired Config was deleted once no hazard pointer held it (grace's barrier): the
	// versions the writer made (20000, more on a loaded machine) and the first one.
	current.exchange(nullptr)->retire();
	grace_hazptr_barrier(nullptr);
	if (deleted.load() != written.load() + 1)
		std::fprintf(stderr, "p2530_hazptr: %ld versions written, %ld objects deleted\n",
			     written.load(), deleted.load());
	EXPECT(written.load() >= 20000 && deleted.load() == written.load() + 1);
	std::printf("p2530_hazptr: %ld reads, %ld objects deleted\n", reads.load(), deleted.load());
	return 0;
}
