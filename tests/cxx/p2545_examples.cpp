/* SPDX-License-Identifier: MIT */
/*
 * The examples of P2545R4 ("Read-Copy Update (RCU)") and of the C++26 wording ([saferecl.rcu])
 * as a program written for std::rcu would hold them, switched to grace by using-declarations:
 * the include and the using-declarations below are the only lines that name grace. Each
 * example runs with concurrent readers and checks what it reads and what it frees.
 *
 *   wording, [saferecl.rcu.domain.general] Example 1   std::scoped_lock<rcu_domain> on the default domain
 *   paper: synchronous reclamation                     exchange, rcu_synchronize(), delete
 *   paper: rcu_obj_base                                exchange, old->retire()
 *   paper: rcu_retire                                  a std::string not derived from anything
 *   paper: custom deleter                              rcu_retire(p, deleter)
 *   paper: shutdown                                    rcu_barrier() before the program ends
 * Built as C++20 (std::jthread, as the paper's examples) and as C++17 (std::thread).
 */
#include <atomic>
#include <cstdio>
#include <cstdlib>
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

#if __cplusplus >= 202002L
using reader_thread = std::jthread;
#else
struct reader_thread : std::thread {
	using std::thread::thread;
	reader_thread(reader_thread &&) = default;
	~reader_thread()
	{
		if (joinable())
			join();
	}
};
#endif

static int failures;
#define EXPECT(c)                                                                            \
	do {                                                                                 \
		if (!(c)) {                                                                  \
			std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                          \
		}                                                                            \
	} while (0)

static std::atomic<int> live(0);
static const int readers = 2, updates = 2000;

/* ---- wording Example 1 ---- */
static void example_scoped_lock()
{
	std::scoped_lock<rcu_domain> rlock(rcu_default_domain());
	EXPECT(grace_rcu_read_ongoing());
}

/* ---- paper: synchronous reclamation ---- */
struct Data {
	int m1, m2;
	Data(int a, int b) : m1(a), m2(b) { live++; }
	~Data()
	{
		m1 = m2 = -1; /* a reader that sees this read freed memory */
		live--;
	}
};
static std::atomic<Data *> data;

static void sync_reader(const std::atomic<bool> *stop)
{
	while (!stop->load()) {
		std::scoped_lock l(rcu_default_domain());
		Data *p = data.load(std::memory_order_acquire);
		EXPECT(p->m2 == p->m1 + 1);
	}
}

static void example_synchronous()
{
	data.store(new Data{ 0, 1 });
	std::atomic<bool> stop(false);
	{
		std::vector<reader_thread> rs;
		for (int i = 0; i < readers; i++)
			rs.emplace_back(sync_reader, &stop);
		for (int i = 1; i <= updates / 10; i++) {
			Data *newdata = new Data{ i, i + 1 };
			Data *olddata = data.exchange(newdata, std::memory_order_acq_rel);
			rcu_synchronize();
			delete olddata;
		}
		stop.store(true);
	}
	delete data.exchange(nullptr);
	EXPECT(live.load() == 0);
}

/* ---- paper: rcu_obj_base ---- */
struct Node : rcu_obj_base<Node> {
	int m1, m2;
	Node(int a, int b) : m1(a), m2(b) { live++; }
	~Node()
	{
		m1 = m2 = -1;
		live--;
	}
};
static std::atomic<Node *> node;

static void obj_reader(const std::atomic<bool> *stop)
{
	while (!stop->load()) {
		std::scoped_lock l(rcu_default_domain());
		Node *p = node.load(std::memory_order_acquire);
		EXPECT(p->m2 == p->m1 + 1);
	}
}

static void example_obj_base()
{
	node.store(new Node{ 0, 1 });
	std::atomic<bool> stop(false);
	{
		std::vector<reader_thread> rs;
		for (int i = 0; i < readers; i++)
			rs.emplace_back(obj_reader, &stop);
		for (int i = 1; i <= updates; i++) {
			Node *old = node.exchange(new Node{ i, i + 1 }, std::memory_order_acq_rel);
			old->retire();
		}
		stop.store(true);
	}
	node.exchange(nullptr)->retire();
	rcu_barrier(); /* shutdown: every retired object is deleted on return */
	EXPECT(live.load() == 0);
}

/* ---- paper: rcu_retire of an object of any type ---- */
static std::atomic<std::string *> name;

static void print_name(const std::atomic<bool> *stop)
{
	while (!stop->load()) {
		std::scoped_lock rdlock(rcu_default_domain());
		std::string *s = name.load(std::memory_order_acquire);
		EXPECT(s->size() == 8 && s->compare(0, 4, "name") == 0);
	}
}

static void set_name(int i)
{
	char buf[16];
	std::snprintf(buf, sizeof(buf), "name%04d", i % 10000);
	std::string *s = new std::string(buf);
	rcu_retire(name.exchange(s, std::memory_order_acq_rel));
}

static void example_rcu_retire()
{
	name.store(new std::string("name0000"));
	std::atomic<bool> stop(false);
	{
		std::vector<reader_thread> rs;
		for (int i = 0; i < readers; i++)
			rs.emplace_back(print_name, &stop);
		for (int i = 1; i <= updates; i++)
			set_name(i);
		stop.store(true);
	}
	rcu_retire(name.exchange(nullptr));
	rcu_barrier();
}

/* ---- paper: a deleter of the program's own ---- */
static std::atomic<int> pooled(0);
struct to_pool {
	void operator()(Data *p) const
	{
		pooled++;
		delete p;
	}
};

static void example_custom_deleter()
{
	for (int i = 0; i < 100; i++)
		rcu_retire(new Data{ i, i + 1 }, to_pool{});
	rcu_retire(new Data{ 0, 1 }, to_pool{}, rcu_default_domain());
	rcu_barrier(rcu_default_domain());
	EXPECT(pooled.load() == 101);
	EXPECT(live.load() == 0);
}

/* Unqualified names inside a namespace whose using-declarations hide the C functions. */
namespace app
{
using grace::rcu_barrier;
using grace::rcu_synchronize;
static void shutdown()
{
	rcu_synchronize();
	rcu_barrier(); /* grace::rcu_barrier<rcu_domain>() */
}
} // namespace app

int main()
{
	example_scoped_lock();
	example_synchronous();
	example_obj_base();
	example_rcu_retire();
	example_custom_deleter();
	app::shutdown();
	rcu_barrier(); /* at global scope: the C function of <grace/rcu.h>, same effect */
	std::printf("p2545 examples: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
