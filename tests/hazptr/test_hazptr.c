/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers as a program uses them (<grace/hazptr.h>), also compiled as C++: protect,
 * try_protect, set, reset; retire into the default domain and into domains with a counting
 * free hook; barriers; and every hostile path of issue 34, each supported or reported by name
 * in debug builds:
 *   many_protections            more protections than the per-thread slots (supported)
 *   thread_exit_holding         a thread that exits holding a protection (supported: it stays
 *                               in force; debug builds report it, naming hazptr_protect)
 *   fork_with_protections       fork() while threads hold protections (supported: the child's
 *                               ghosts keep their objects, the forking thread's own hold)
 *   retire_protected            retiring an object the caller protects (supported: it waits)
 *   double_retire               reported in debug builds (naming hazptr_retire), abort
 *   null_paths                  NULL objects, NULL values, NULL domain and hazard pointer
 *   domain_destroy_outstanding  a domain destroyed with objects outstanding (supported: they
 *                               are freed first, waiting for the protection that holds one)
 *   protect_in_a_signal_handler a protection made by a handler that interrupts retires and
 *                               scans (supported: it holds)
 *   signal_retire (misuse)      a handler's retire inside a retire of its thread, or inside
 *                               fork() (hazptr_fork_signal): reported in debug builds
 * plus the misuse reports (a freed hazard pointer used, freed twice, a barrier that would wait
 * for its caller or runs from a retired object's function, a retire into a destroyed domain).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <grace/hazptr.h>
#include <grace/rcu.h>

#include "gtest_lite.h"
#define MC_WANT_FMT "grace: misuse: %s: "
#include "misuse_child.h"
#define EXPECT_MISUSE(fn, e, call, what) EXPECT_MISUSE_CHILD(fn, MC_##e, call, what)

struct obj {
	uint64_t magic; /* LIVE until the hook frees it */
	uint64_t v;
};
#define LIVE 0x6c6976656f626a31ull
#define DEAD 0xdeaddeaddeaddeadull

static uint64_t n_freed;

/* The counting hook of the tests' domains: poisons, then frees. */
static void counting_free(void *p)
{
	struct obj *o = (struct obj *)p;

	REQUIRE(o->magic == LIVE); /* freed once */
	o->magic = DEAD;
	free(o);
	__atomic_fetch_add(&n_freed, 1, __ATOMIC_RELEASE);
}

static uint64_t freed(void)
{
	return __atomic_load_n(&n_freed, __ATOMIC_ACQUIRE);
}

static struct obj *obj_new(uint64_t v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));

	REQUIRE(o);
	o->magic = LIVE;
	o->v = v;
	return o;
}

static struct grace_hazptr_domain *counting_domain(void)
{
	struct grace_hazptr_domain *d = grace_hazptr_domain_create();

	REQUIRE(d);
	REQUIRE(grace_hazptr_set_free_hook(d, counting_free) == 0);
	return d;
}

/* Retire n fresh objects into d: enough of them make the calling thread scan. */
static void churn(struct grace_hazptr_domain *d, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		hazptr_retire(d, obj_new(i));
}

TEST(protect_reset_free)
{
	struct obj *o = obj_new(7), *none = NULL;
	struct obj *src = o;
	struct grace_hazptr *h = hazptr_alloc();

	CHECK(h != NULL);
	CHECK(h->ptr == NULL);
	CHECK(hazptr_protect(h, &none) == NULL);
	CHECK(h->ptr == NULL);
	struct obj *p = hazptr_protect(h, &src);
	CHECK(p == o && p->v == 7);
	CHECK(h->ptr == (void *)o);
	hazptr_reset(h);
	CHECK(h->ptr == NULL);
	hazptr_set(h, o);
	CHECK(h->ptr == (void *)o);
	hazptr_set(h, NULL);
	CHECK(h->ptr == NULL);
	hazptr_free(h);
	/* The next allocation of this thread takes it back from the thread's cache. */
	struct grace_hazptr *h2 = hazptr_alloc();
	CHECK(h2 == h && h2->ptr == NULL);
	hazptr_free(h2);
	free(o);
}

TEST(try_protect)
{
	struct obj *a = obj_new(1), *b = obj_new(2);
	struct obj *src = a, *p = b; /* a stale value: try_protect must fail */
	struct grace_hazptr *h = hazptr_alloc();

	CHECK(!hazptr_try_protect(h, &p, &src));
	CHECK(p == a);         /* the current value */
	CHECK(h->ptr == NULL); /* reset on failure */
	CHECK(hazptr_try_protect(h, &p, &src));
	CHECK(p == a && h->ptr == (void *)a);
	hazptr_free(h);
	CHECK(h->ptr == NULL);
	free(a);
	free(b);
}

/* docs/api.md (hazptr_protect(), "Context"): legal in signal handlers (it touches h and src
 * only). A handler on a thread that retires and scans in a loop protects the object src holds
 * into a hazard pointer of its own, under a rain of signals every 100 us, so that many land
 * inside the thread's retires and scans. Then src is unlinked and its object retired: the
 * handler's last protection holds it through more scans, and it is freed once reset. */
static struct obj *hsig_src;
static struct grace_hazptr *hsig_h;
static int hsig_runs;

static void hsig_handler(int s)
{
	(void)s;
	struct obj *p = hazptr_protect(hsig_h, &hsig_src);
	if (p && p->magic == LIVE)
		__atomic_fetch_add(&hsig_runs, 1, __ATOMIC_RELAXED);
}

TEST(protect_in_a_signal_handler)
{
	struct grace_hazptr_domain *d = counting_domain();
	struct obj *x = obj_new(42);
	struct sigaction sa, old;
	struct gt_rain rain;

	hsig_src = x;
	hsig_h = hazptr_alloc();
	REQUIRE(hsig_h != NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hsig_handler;
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 100) == 0);
	uint64_t f0 = freed();
	unsigned int rounds = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do { /* until 200 handlers ran, 20 s at most (a bound on the loop, not a check) */
		churn(d, 256);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (__atomic_load_n(&hsig_runs, __ATOMIC_RELAXED) < 200 &&
		 now.tv_sec - t0.tv_sec < 20);
	gt_rain_stop(&rain);
	REQUIRE(sigaction(SIGUSR1, &old, NULL) == 0);
	printf("  %d protections in the handler over %u rounds of 256 retires\n",
	       __atomic_load_n(&hsig_runs, __ATOMIC_RELAXED), rounds);
	CHECK(__atomic_load_n(&hsig_runs, __ATOMIC_RELAXED) >= 200);
	CHECK(hsig_h->ptr == (void *)x);
	/* Unlink x, retire it: the handler's protection holds it through more scans. */
	__atomic_store_n(&hsig_src, (struct obj *)NULL, __ATOMIC_RELEASE);
	uint64_t f1 = freed();
	hazptr_retire(d, x);
	churn(d, 4096);
	CHECK(x->magic == LIVE);
	CHECK(freed() - f1 >= 2048); /* the churn's objects did go */
	hazptr_reset(hsig_h);
	grace_hazptr_barrier(d);
	CHECK(freed() - f0 == (uint64_t)rounds * 256 + 4096 + 1); /* x too, once */
	hazptr_free(hsig_h);
	grace_hazptr_domain_destroy(d);
}

TEST(retire_protected)
{
	struct grace_hazptr_domain *d = counting_domain();
	struct obj *o = obj_new(42);
	struct obj *src = o;
	struct grace_hazptr *h = hazptr_alloc();
	uint64_t f0 = freed();

	CHECK(hazptr_protect(h, &src) == o);
	src = NULL; /* unlinked */
	hazptr_retire(d, o);
	churn(d, 4 * GRACE_HAZPTR_BATCH); /* several scans: o is kept by each */
	CHECK(o->magic == LIVE && o->v == 42);
	CHECK(freed() - f0 >= 2 * GRACE_HAZPTR_BATCH); /* the others went */
	hazptr_reset(h);
	hazptr_barrier(d);
	CHECK(freed() - f0 == 4 * GRACE_HAZPTR_BATCH + 1);
	hazptr_free(h);
	grace_hazptr_domain_destroy(d);
}

/* A thread scans once its batch holds its threshold: at least 32 slots (THR_LEAST) and at most
 * GRACE_HAZPTR_BATCH, however cheap or dear a membarrier is (docs/api.md, hazptr_retire). */
TEST(scans_come_every_32_to_batch_retires)
{
	struct grace_hazptr_stats a, b;
	const int n = 64 * GRACE_HAZPTR_BATCH;

	hazptr_barrier(NULL);
	grace_hazptr_get_stats(&a);
	for (int i = 0; i < n; i++)
		hazptr_retire(NULL, malloc(32));
	grace_hazptr_get_stats(&b);
	uint64_t scans = b.scans - a.scans;
	printf("  %d retires: %llu scans\n", n, (unsigned long long)scans);
	CHECK_MSG(scans >= (uint64_t)(n / GRACE_HAZPTR_BATCH) - 1,
		  "%llu scans for %d retires: fewer than one per GRACE_HAZPTR_BATCH",
		  (unsigned long long)scans, n);
	CHECK_MSG(scans <= (uint64_t)(n / 32), "%llu scans for %d retires: more than one per 32",
		  (unsigned long long)scans, n);
	hazptr_barrier(NULL);
}

TEST(default_domain_inline)
{
	struct grace_hazptr_stats a, b;

	grace_hazptr_get_stats(&a);
	for (int i = 0; i < 10 * GRACE_HAZPTR_BATCH; i++)
		hazptr_retire(NULL, malloc(32));
	hazptr_retire_fn(NULL, free, malloc(16));
	hazptr_barrier(NULL);
	grace_hazptr_get_stats(&b);
	CHECK(b.retired - a.retired == 10 * GRACE_HAZPTR_BATCH + 1);
	CHECK(b.reclaimed - a.reclaimed == 10 * GRACE_HAZPTR_BATCH + 1);
	CHECK(b.scans > a.scans);
	CHECK(b.records >= 1);
}

static int fn_runs;
static void fn_count(void *p)
{
	fn_runs++;
	free(p);
}

TEST(retire_fn_and_hook)
{
	struct grace_hazptr_domain *d = grace_hazptr_domain_create();

	CHECK(d != NULL);
	CHECK(grace_hazptr_set_free_hook(d, counting_free) == 0);
	CHECK(grace_hazptr_set_free_hook(d, counting_free) == 0); /* the same again */
	uint64_t f0 = freed();
	hazptr_retire(d, obj_new(1));
	CHECK(grace_hazptr_set_free_hook(d, NULL) == -EBUSY); /* fixed once used */
	hazptr_retire_fn(d, fn_count, malloc(8));
	hazptr_barrier(d);
	CHECK(freed() - f0 == 1);
	CHECK(fn_runs == 1);
	grace_hazptr_domain_destroy(d);
}

/* docs/api.md (hazptr_retire(), "Context"): from a retired object's function, the call only
 * queues; the free hook runs where such a function runs. A domain whose hook retires a second
 * object for each first one, and functions that retire one more object each: thousands of
 * them, so that most run inside the retiring thread's own calls (its frees and scans). Every
 * object reaches the hook or its function once. */
static struct grace_hazptr_domain *nest_dom;
static uint64_t nest_fn_runs;
static void nest_hook(void *p)
{
	struct obj *o = (struct obj *)p;
	if (o->v == 1)
		hazptr_retire(nest_dom, obj_new(2));
	counting_free(p);
}
static void nest_fn(void *p)
{
	nest_fn_runs++;
	free(p);
	hazptr_retire(nest_dom, obj_new(3));
}

TEST(a_retired_objects_function_and_the_hook_may_retire_more)
{
	nest_dom = grace_hazptr_domain_create();
	CHECK(nest_dom != NULL);
	CHECK(grace_hazptr_set_free_hook(nest_dom, nest_hook) == 0);
	uint64_t f0 = freed();
	for (int i = 0; i < 5000; i++) {
		hazptr_retire(nest_dom, obj_new(1));
		hazptr_retire_fn(nest_dom, nest_fn, malloc(8));
	}
	/* A barrier waits for what was retired before it: a function or hook it runs retires
	 * after, which the next one covers (chains here are two deep). */
	for (int k = 0; k < 3; k++)
		hazptr_barrier(nest_dom);
	CHECK_MSG(nest_fn_runs == 5000, "%llu of 5000 functions ran",
		  (unsigned long long)nest_fn_runs);
	CHECK_MSG(freed() - f0 == 15000, "%llu of 15000 objects reached the hook",
		  (unsigned long long)(freed() - f0));
	grace_hazptr_domain_destroy(nest_dom);
}

TEST(null_paths)
{
	struct grace_hazptr_domain *d = counting_domain();
	struct grace_hazptr *h = hazptr_alloc();
	void *nothing = NULL;

	hazptr_free(NULL);
	hazptr_retire(NULL, NULL);
	hazptr_retire(d, NULL);
	hazptr_retire_fn(d, fn_count, NULL); /* fn not called */
	CHECK(grace_hazptr_protect(h, &nothing) == NULL);
	hazptr_set(h, NULL);
	hazptr_reset(h);
	grace_hazptr_retire_srcu(NULL, NULL, NULL);
	hazptr_barrier(d);
	hazptr_barrier(NULL);
	grace_hazptr_domain_destroy(NULL);
	grace_hazptr_domain_destroy(d);
	hazptr_free(h);
}

/* docs/api.md (hazptr_retire(), "Memory bound"): never blocks, also with no memory left. A new
 * thread whose every allocation fails retires an object into a counting domain: with no memory
 * for its batch the object goes to the orphan list, where a barrier frees it; with no room
 * there either (the list of a process that never needed it) it is never freed and the first
 * loss is reported. Either way the call returns, and the object is freed once or reported lost.
 * The allocations fail through tests/common/fail_alloc.h (the calling thread's malloc() and
 * its kin fail while fail_alloc is set; not under the sanitizers). */
#include "fail_alloc.h"

static struct grace_hazptr_domain *oom_dom;
static void *retire_without_memory(void *arg)
{
#ifdef GT_FAIL_ALLOC
	fail_alloc = GT_FAIL_ALL;
	hazptr_retire(oom_dom, arg);
	fail_alloc = 0;
#endif
	return NULL;
}

static __attribute__((unused)) void no_memory_child(void *arg)
{
	pthread_t t;
	(void)arg;
	alarm(20);
	oom_dom = counting_domain();
	uint64_t f0 = freed();
	REQUIRE(pthread_create(&t, NULL, retire_without_memory, obj_new(1)) == 0);
	pthread_join(t, NULL);
	hazptr_barrier(oom_dom);
	fprintf(stderr, "child: returned, %llu freed\n", (unsigned long long)(freed() - f0));
}

/* docs/api.md: "grace_hazptr_domain_create() returns NULL when no memory is left." */
TEST(domain_create_without_memory_returns_null)
{
#ifdef GT_FAIL_ALLOC
	fail_alloc = GT_FAIL_ALL;
	struct grace_hazptr_domain *d = grace_hazptr_domain_create();
	fail_alloc = 0;
	CHECK(d == NULL);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* docs/api.md (hazptr_alloc(), "Returns"): NULL when no memory is left. With every allocation
 * failing, the thread takes what its cache and the pool still hold (a bounded number, however
 * many earlier cases left there) and then gets NULL, not a crash or a hang; every one it got is
 * a usable hazard pointer, and with memory back hazptr_alloc() succeeds again. */
TEST(alloc_without_memory_returns_null)
{
#ifdef GT_FAIL_ALLOC
	enum { MAX = 1 << 16 };
	static struct grace_hazptr *got[MAX];
	struct obj *o = obj_new(7);
	size_t n = 0;
	struct grace_hazptr *h = NULL;

	unsigned long failed = fail_alloc_count;
	fail_alloc = GT_FAIL_ALL;
	while (n < MAX && (h = hazptr_alloc()) != NULL)
		got[n++] = h;
	fail_alloc = 0;
	CHECK_MSG(h == NULL, "hazptr_alloc() did not return NULL after %zu records", n);
	CHECK_MSG(fail_alloc_count > failed, "no allocation was refused: the test did not run out");
	for (size_t i = 0; i < n; i++) { /* each one it handed out protects */
		hazptr_set(got[i], o);
		CHECK(got[i]->ptr == o);
		hazptr_reset(got[i]);
	}
	for (size_t i = 0; i < n; i++)
		hazptr_free(got[i]);
	h = hazptr_alloc();
	CHECK(h != NULL);
	hazptr_free(h);
	free(o);
	printf("  %zu from the cache and the pool, then NULL\n", n);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

TEST(retire_without_memory_returns_and_frees_or_says_so)
{
#ifdef GT_FAIL_ALLOC
	char out[4096];
	int st = gt_run_child(no_memory_child, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child did not return (status %#x): %s", st, out);
	bool lost = strstr(out, "hazptr_retire: out of memory") != NULL;
	CHECK_MSG(strstr(out, lost ? "child: returned, 0 freed" : "child: returned, 1 freed"),
		  "the object was neither freed once nor reported lost: %s", out);
	printf("  %s\n",
	       lost ? "reported lost (no room in the orphan list)" : "freed from the orphan list");
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* docs/api.md (grace_hazptr_retire_srcu()): "a domain other than the default takes a 16-byte
 * carrier (with no memory for it, the object is never freed and the first loss is reported)",
 * and the call never waits. In a child: two objects retired with malloc() failing; both calls
 * return, one report names the call, and after both barriers none was freed (the one retired
 * once memory is back is). */
static __attribute__((unused)) void srcu_carrier_oom_child(void *arg)
{
	static struct srcu_struct ss;
	(void)arg;
	alarm(20);
	REQUIRE(init_srcu_struct(&ss) == 0);
	oom_dom = counting_domain();
	struct obj *a = obj_new(1), *b = obj_new(2), *c = obj_new(3);
	uint64_t f0 = freed();
#ifdef GT_FAIL_ALLOC
	fail_alloc = GT_FAIL_MALLOC;
	grace_hazptr_retire_srcu(oom_dom, &ss, a);
	grace_hazptr_retire_srcu(oom_dom, &ss, b);
	fail_alloc = 0;
#endif
	srcu_barrier(&ss);
	hazptr_barrier(oom_dom);
	fprintf(stderr, "child: without memory %llu freed\n", (unsigned long long)(freed() - f0));
	grace_hazptr_retire_srcu(oom_dom, &ss, c);
	srcu_barrier(&ss);
	hazptr_barrier(oom_dom);
	fprintf(stderr, "child: with memory %llu freed\n", (unsigned long long)(freed() - f0));
	free(a); /* the test's own copies: reported lost, never freed by the library */
	free(b);
	cleanup_srcu_struct(&ss);
}

TEST(retire_srcu_without_memory_loses_once_and_says_so)
{
#ifdef GT_FAIL_ALLOC
	char out[4096];
	int st = gt_run_child(srcu_carrier_oom_child, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %#x): %s", st,
		  out);
	const char *r = strstr(out, "grace_hazptr_retire_srcu: out of memory");
	CHECK_MSG(r != NULL, "no report of the loss: %s", out);
	CHECK_MSG(!r || !strstr(r + 1, "grace_hazptr_retire_srcu: out of memory"),
		  "the loss was reported twice: %s", out);
	CHECK_MSG(strstr(out, "child: without memory 0 freed"), "a lost object was freed: %s", out);
	CHECK_MSG(strstr(out, "child: with memory 1 freed"),
		  "the object retired with memory back was not freed: %s", out);
#else
	printf("  skipped: the sanitizers interpose malloc themselves\n");
#endif
}

/* docs/api.md (hazptr_retire()): "A thread that exits scans once more and frees what is
 * unprotected; the rest ... wait in one orphan list that every scan rescans." A thread retires
 * ten objects (too few for a scan of its own), one protected by this thread, and exits: by the
 * time pthread_join() returns, nine are freed with no barrier; the tenth is freed once its
 * protection ends and a barrier rescans the orphans. */
static struct grace_hazptr_domain *texit_dom;
static struct obj *texit_held;
static void *texit_retirer(void *arg)
{
	(void)arg;
	hazptr_retire(texit_dom, texit_held);
	for (int i = 0; i < 9; i++)
		hazptr_retire(texit_dom, obj_new((uint64_t)i));
	return NULL;
}
TEST(thread_exit_frees_what_is_unprotected)
{
	pthread_t t;
	texit_dom = counting_domain();
	texit_held = obj_new(77);
	struct obj *src = texit_held;
	struct grace_hazptr *h = hazptr_alloc();
	REQUIRE(h && hazptr_protect(h, &src) == texit_held);
	uint64_t f0 = freed();
	REQUIRE(pthread_create(&t, NULL, texit_retirer, NULL) == 0);
	pthread_join(t, NULL);
	CHECK_MSG(freed() - f0 == 9, "%llu of 9 unprotected objects freed by the thread's exit",
		  (unsigned long long)(freed() - f0));
	CHECK(texit_held->magic == LIVE && texit_held->v == 77);
	hazptr_reset(h);
	hazptr_free(h);
	hazptr_barrier(texit_dom);
	CHECK(freed() - f0 == 10);
	grace_hazptr_domain_destroy(texit_dom);
}

/* docs/api.md (hazptr_retire()): "At process exit every object no hazard pointer holds is
 * freed." A child retires 10 objects into a domain whose hook writes a marker per free (too
 * few for a scan before exit), one of them protected by a hazard pointer the child still holds,
 * in its main thread and in a thread that is still running, and calls exit(): the parent
 * reads nine frees of unprotected objects, and not the protected one's (markers in the child's
 * stderr, which a sanitizer's own report may share). */
static void exit_free(void *p)
{
	struct obj *o = (struct obj *)p;
	const char *c = o->v == 999 ? "<held freed>" : "<freed>";
	ssize_t w = write(2, c, strlen(c));
	(void)w;
	free(o);
}
static struct grace_hazptr_domain *exit_dom;
static void *exit_retirer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		hazptr_retire(exit_dom, obj_new((uint64_t)i));
	for (;;)
		pause(); /* still running at exit */
	return NULL;
}
static void process_exit_child(void *arg)
{
	pthread_t t;
	(void)arg;
	alarm(20);
	exit_dom = grace_hazptr_domain_create();
	REQUIRE(exit_dom && grace_hazptr_set_free_hook(exit_dom, exit_free) == 0);
	struct obj *held = obj_new(999), *src = held;
	struct grace_hazptr *h = hazptr_alloc();
	REQUIRE(h && hazptr_protect(h, &src) == held);
	hazptr_retire(exit_dom, held);
	for (int i = 0; i < 5; i++)
		hazptr_retire(exit_dom, obj_new((uint64_t)i));
	REQUIRE(pthread_create(&t, NULL, exit_retirer, NULL) == 0);
	usleep(100 * 1000);
	exit(0); /* h still protects `held` */
}
TEST(process_exit_frees_every_unprotected_object)
{
	char out[4096];
	int st = gt_run_child(process_exit_child, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %#x): %s", st,
		  out);
	int f = 0, p = 0;
	for (const char *c = out; (c = strstr(c, "<freed>")) != NULL; c++)
		f++;
	for (const char *c = out; (c = strstr(c, "<held freed>")) != NULL; c++)
		p++;
	CHECK_MSG(f == 9, "%d of the 9 unprotected objects freed at exit: %s", f, out);
	CHECK_MSG(p == 0, "the protected object was freed at exit: %s", out);
}

/* docs/api.md (hazptr_barrier(), "Context"): it blocks for as long as a protection of one of
 * its objects lasts, and after the stall timeout says so once, naming the call. In a child (its
 * stderr is read): a thread protects an object for 700 ms, the stall timeout is 100 ms, the
 * caller retires the object and waits in the barrier, which returns once the protection ends
 * and the object is freed. */
static struct obj *stall_src;
static int stall_held;

static void *stall_protector(void *arg)
{
	(void)arg;
	struct grace_hazptr *h = hazptr_alloc();
	REQUIRE(h != NULL);
	REQUIRE(hazptr_protect(h, &stall_src) != NULL);
	__atomic_store_n(&stall_held, 1, __ATOMIC_RELEASE);
	usleep(700000);
	hazptr_free(h); /* ends the protection */
	return NULL;
}

static void barrier_stall_child(void *arg)
{
	(void)arg;
	struct grace_hazptr_domain *d = counting_domain();
	pthread_t t;

	alarm(20);
	grace_set_stall_timeout_ms(100);
	stall_src = obj_new(5);
	REQUIRE(pthread_create(&t, NULL, stall_protector, NULL) == 0);
	while (!__atomic_load_n(&stall_held, __ATOMIC_ACQUIRE))
		usleep(1000);
	struct obj *x = stall_src;
	__atomic_store_n(&stall_src, (struct obj *)NULL, __ATOMIC_RELEASE); /* unlinked */
	uint64_t f0 = freed();
	hazptr_retire(d, x);
	hazptr_barrier(d);
	fprintf(stderr, "child: barrier returned, %llu freed\n",
		(unsigned long long)(freed() - f0));
	pthread_join(t, NULL);
	grace_hazptr_domain_destroy(d);
}

TEST(barrier_says_once_that_it_waits_past_the_stall_timeout)
{
	char out[4096];
	int st = gt_run_child(barrier_stall_child, NULL, out, sizeof(out));

	printf("  child status %#x: %.300s\n", st, out);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x: %s", st, out);
	CHECK_MSG(strstr(out, "child: barrier returned, 1 freed"), "%s", out);
	const char *w = strstr(out, "hazptr_barrier: has waited");
	CHECK_MSG(w != NULL, "no warning naming hazptr_barrier: %s", out);
	CHECK_MSG(w && !strstr(w + 1, "hazptr_barrier: has waited"), "warned twice: %s", out);
}

/* More protections than the per-thread slots (8): the pool provides them. */
TEST(many_protections)
{
	enum { N = 100 };
	struct grace_hazptr_domain *d = counting_domain();
	struct grace_hazptr *h[N];
	struct obj *o[N], *src;
	struct grace_hazptr_stats st;
	uint64_t f0 = freed();

	for (int i = 0; i < N; i++) {
		h[i] = hazptr_alloc();
		CHECK(h[i] != NULL);
		o[i] = obj_new((uint64_t)i);
		src = o[i];
		CHECK(hazptr_protect(h[i], &src) == o[i]);
		hazptr_retire(d, o[i]);
	}
	grace_hazptr_get_stats(&st);
	CHECK(st.records >= N);
	churn(d, 4 * GRACE_HAZPTR_BATCH);
	for (int i = 0; i < N; i++)
		CHECK(o[i]->magic == LIVE && o[i]->v == (uint64_t)i);
	for (int i = 0; i < N; i++)
		hazptr_free(h[i]);
	hazptr_barrier(d);
	CHECK(freed() - f0 == N + 4 * GRACE_HAZPTR_BATCH);
	grace_hazptr_domain_destroy(d);
}

/* ---- a domain destroyed with objects outstanding ---- */

static struct obj *volatile held_obj;
static struct grace_hazptr *volatile held_hp;
static int hold_go, hold_release;

static void *holder(void *arg)
{
	struct obj *src = (struct obj *)arg;
	struct grace_hazptr *h = hazptr_alloc();

	REQUIRE(hazptr_protect(h, &src) == arg);
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hold_release, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	REQUIRE(((struct obj *)arg)->magic == LIVE);
	hazptr_free(h);
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	gt_sleep_ms(50);
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(domain_destroy_outstanding)
{
	struct grace_hazptr_domain *d = counting_domain();
	struct obj *o = obj_new(5);
	pthread_t t, r;
	uint64_t f0 = freed();

	hold_go = hold_release = 0;
	CHECK(pthread_create(&t, NULL, holder, o) == 0);
	while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	hazptr_retire(d, o);
	for (int i = 0; i < 50; i++)
		hazptr_retire(d, obj_new((uint64_t)i));
	CHECK(pthread_create(&r, NULL, releaser, NULL) == 0);
	grace_hazptr_domain_destroy(d); /* waits for the holder, then frees all 51 */
	CHECK(freed() - f0 == 51);
	pthread_join(t, NULL);
	pthread_join(r, NULL);
}

/* ---- readers and an updater ---- */

static struct obj *volatile shared;
static int stop_readers;
static uint64_t reads, bad_reads;

static void *reader(void *arg)
{
	struct grace_hazptr *h = hazptr_alloc();
	uint64_t n = 0, bad = 0;

	(void)arg;
	REQUIRE(h);
	while (!__atomic_load_n(&stop_readers, __ATOMIC_RELAXED)) {
		struct obj *p = (struct obj *)grace_hazptr_protect(h, (const void *)&shared);
		if (p) {
			if (p->magic != LIVE)
				bad++;
			for (int i = 0; i < 20; i++)
				__asm__ __volatile__("" ::: "memory");
			if (p->magic != LIVE)
				bad++;
		}
		hazptr_reset(h);
		n++;
	}
	hazptr_free(h);
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bad_reads, bad, __ATOMIC_RELAXED);
	return NULL;
}

TEST(readers_and_updater)
{
	struct grace_hazptr_domain *d = counting_domain();
	pthread_t t[3];
	uint64_t f0 = freed(), updates = 0, t0;

	shared = obj_new(0);
	stop_readers = 0;
	for (int i = 0; i < 3; i++)
		CHECK(pthread_create(&t[i], NULL, reader, NULL) == 0);
	t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 500000000ull) {
		struct obj *n = obj_new(++updates);
		struct obj *old = rcu_xchg_pointer(&shared, n);
		hazptr_retire(d, old);
	}
	__atomic_store_n(&stop_readers, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	hazptr_retire(d, shared);
	shared = NULL;
	hazptr_barrier(d);
	printf("  %llu updates, %llu reads\n", (unsigned long long)updates,
	       (unsigned long long)reads);
	CHECK(bad_reads == 0);
	CHECK(freed() - f0 == updates + 1);
	grace_hazptr_domain_destroy(d);
}

/* ---- a thread that exits holding a protection ---- */

static void *exit_holding(void *arg)
{
	struct obj *src = (struct obj *)arg;
	struct grace_hazptr *h = hazptr_alloc();

	REQUIRE(hazptr_protect(h, &src) == arg);
	held_hp = h; /* handed out; never reset by this thread */
	return NULL;
}

static void exit_holding_child(void)
{
	pthread_t t;
	struct obj *o = obj_new(9);

	pthread_create(&t, NULL, exit_holding, o);
	pthread_join(t, NULL); /* debug builds: reported at the thread's exit, abort */
}

TEST(thread_exit_holding)
{
	if (MC_DEBUG_BUILD) {
		EXPECT_MISUSE(exit_holding_child, DEBUG_ONLY, "hazptr_protect",
			      "thread exits holding a protection");
		return;
	}
	/* Release builds: supported, the protection stays in force after the exit. */
	struct grace_hazptr_domain *d = counting_domain();
	struct obj *o = obj_new(9);
	pthread_t t;
	uint64_t f0 = freed();

	CHECK(pthread_create(&t, NULL, exit_holding, o) == 0);
	pthread_join(t, NULL);
	hazptr_retire(d, o);
	churn(d, 4 * GRACE_HAZPTR_BATCH);
	CHECK(o->magic == LIVE && o->v == 9);
	hazptr_reset(held_hp); /* whoever holds the hazard pointer ends it */
	hazptr_free(held_hp);
	hazptr_barrier(d);
	CHECK(freed() - f0 == 4 * GRACE_HAZPTR_BATCH + 1);
	grace_hazptr_domain_destroy(d);
}

/* ---- fork with protections held ---- */

static void *fork_holder(void *arg)
{
	struct obj *src = (struct obj *)arg;
	struct grace_hazptr *h = hazptr_alloc();

	REQUIRE(hazptr_protect(h, &src) == arg);
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hold_release, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	hazptr_free(h);
	return NULL;
}

TEST(fork_with_protections)
{
	struct grace_hazptr_domain *d = counting_domain();
	struct obj *a = obj_new(1), *b = obj_new(2), *src = b;
	struct grace_hazptr *hb = hazptr_alloc();
	pthread_t t;
	int st = 0;
	uint64_t f0 = freed();

	hold_go = hold_release = 0;
	CHECK(pthread_create(&t, NULL, fork_holder, a) == 0); /* another thread protects a */
	while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	CHECK(hazptr_protect(hb, &src) == b); /* this thread protects b */
	hazptr_retire(d, a);
	hazptr_retire(d, b);
	churn(d, GRACE_HAZPTR_BATCH / 2); /* some waiting in this thread's batch at the fork */
	pid_t pid = fork();
	if (pid == 0) {
		/* The child: a's holder is a ghost, its protection stays; b is ours. */
		churn(d, 4 * GRACE_HAZPTR_BATCH);
		if (a->magic != LIVE || b->magic != LIVE)
			_exit(3);
		hazptr_reset(hb);
		churn(d, 4 * GRACE_HAZPTR_BATCH);
		if (a->magic != LIVE)
			_exit(4);
		/* b: now unprotected, freed by a scan or at the latest by exit; a stays. */
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The parent goes on: both protections hold here too. */
	churn(d, 4 * GRACE_HAZPTR_BATCH);
	CHECK(a->magic == LIVE && b->magic == LIVE);
	hazptr_free(hb);
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	hazptr_barrier(d);
	CHECK(freed() - f0 == 2 + GRACE_HAZPTR_BATCH / 2 + 4 * GRACE_HAZPTR_BATCH);
	grace_hazptr_domain_destroy(d);
}

/* ---- misuse ---- */

static void double_retire(void)
{
	void *p = malloc(8);

	hazptr_retire(NULL, p);
	hazptr_retire(NULL, p);
	hazptr_barrier(NULL);
}

static void use_after_free(void)
{
	struct grace_hazptr *h = hazptr_alloc();
	void *x = &h, *src = x;

	hazptr_free(h);
	(void)grace_hazptr_protect(h, &src);
}

static void free_twice(void)
{
	struct grace_hazptr *h = hazptr_alloc();

	hazptr_free(h);
	grace_hazptr_free(h);
}

static void barrier_own_protection(void)
{
	struct grace_hazptr_domain *d = grace_hazptr_domain_create();
	struct grace_hazptr *h = hazptr_alloc();
	void *o = malloc(8), *src = o;

	(void)grace_hazptr_protect(h, &src);
	hazptr_retire(d, o);
	hazptr_barrier(d); /* would wait for itself */
}

static void barrier_in_fn(void *p)
{
	free(p);
	hazptr_barrier(NULL);
}

static void barrier_from_fn(void)
{
	hazptr_retire_fn(NULL, barrier_in_fn, malloc(8));
	hazptr_barrier(NULL);
}

static void retire_destroyed(void)
{
	struct grace_hazptr_domain *d = grace_hazptr_domain_create();

	grace_hazptr_domain_destroy(d);
	hazptr_retire(d, malloc(8));
}

/* docs/api.md (hazptr_retire(), "Signals"): a signal handler that retires while the interrupted
 * code of the same thread is inside a retire is reported by a debug library, naming the call,
 * and aborts. The thread retires objects from a pool made beforehand (a handler that interrupts
 * malloc() must not call it) while another thread signals it every 100 us, and the handler
 * retires too: a signal between two calls is legal, one inside a call's work must end the child
 * with the report, not a deadlock (the child's alarm). */
enum { SIG_POOL = 100000 };
static void *sig_pool[SIG_POOL];
static int sig_used;

static void *sig_take(void)
{
	int i = __atomic_fetch_add(&sig_used, 1, __ATOMIC_RELAXED);
	return i < SIG_POOL ? sig_pool[i] : NULL;
}

static void sig_retire_handler(int s)
{
	(void)s;
	hazptr_retire(NULL, sig_take()); /* NULL (pool spent): nothing */
}

static __attribute__((unused)) void *obj16(void)
{
	void *p = malloc(16);
	REQUIRE(p);
	return p;
}

static void retire_one(void *p)
{
	hazptr_retire(NULL, p);
}

/* Retire fresh objects (make's) for 10 s in batches of n (gt_retire_batches()). */
static __attribute__((unused)) void retire_batches(void *(*make)(void), int n)
{
	gt_retire_batches(make, n, retire_one, SIGUSR1, 10000000000ull);
}

static __attribute__((unused)) void signal_retire(void)
{
	struct gt_rain rain;

	for (int i = 0; i < SIG_POOL; i++)
		sig_pool[i] = malloc(16);
	hazptr_retire(NULL, sig_take()); /* the thread's cache, before any signal */
	gt_on_signal(SIGUSR1, sig_retire_handler, SA_RESTART);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 100) == 0);
	/* A release library sees a handler only inside the out-of-line work of a call, a small
	 * part of the time: the loop retires fresh objects until the report (10 s at most). The
	 * pool is the handler's. */
	retire_batches(obj16, 1024);
	gt_rain_stop(&rain);
}

/* The rain children's start: their alarm (a deadlock ends in SIGALRM), the handler's pool, the
 * thread's cache made before any signal, and handler on SIGUSR1. */
static __attribute__((unused)) void rain_setup(void (*handler)(int), unsigned int alarm_s)
{
	alarm(alarm_s);
	__atomic_store_n(&sig_used, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 1000; i++)
		sig_pool[i] = malloc(16);
	hazptr_retire(NULL, malloc(16));
	gt_on_signal(SIGUSR1, handler, SA_RESTART);
}

/* Every build, while hazptr_barrier() holds the thread's own cache (docs/api.md,
 * hazptr_retire(), "Signals"): a handler's retire there would wait for that cache forever. The
 * thread calls hazptr_barrier() in a loop with its cache refilled in between, the signal
 * blocked but for the barrier; the handler retires only while a thread has marked the cache
 * to take it (its `steal`, <grace/internal/retire.h>: the barrier's span from its mark to its
 * release, never inside this thread's malloc() or free()). Once a signal lands where the
 * barrier holds the cache (its entries, at most the cache's bound, take a few microseconds to
 * hand over: a 25 us rain hits it within seconds, 20 s at most), the handler's call is
 * reported; unchecked, it waits until the alarm. */
static void held_retire_handler(int s)
{
	(void)s;
	struct grace__retire *t = grace__hazptr_retire_tls;
	if (t && __atomic_load_n(&t->steal, __ATOMIC_RELAXED))
		hazptr_retire(NULL, sig_take());
}

static __attribute__((unused)) void signal_retire_barrier_own(void)
{
	struct gt_rain rain;
	sigset_t set;

	rain_setup(held_retire_handler, 45);
	set = gt_block_signal(SIGUSR1);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 25) == 0);
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < 20000000000ull) {
		for (int i = 0; i < 1000; i++)
			hazptr_retire(NULL, malloc(16));
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		hazptr_barrier(NULL);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	gt_rain_stop(&rain);
}

/* Every build, inside the thread's frees of ready objects (docs/api.md, hazptr_retire(),
 * "Signals"): only an entry's function or the free hook lets a handler's retire nest. The
 * objects are 8 KB, past a 4 KB mmap threshold (mallopt()), so that each free() is a munmap()
 * of some microseconds and the thread's calls spend most of their time in their frees; they
 * are allocated in batches with the signal blocked. The handler retires only while the thread
 * is inside a call (its cache's `busy`, <grace/internal/retire.h>) and must not come back: one
 * that returns, nested beside the call's work, makes the child say so and exit. */
static void frees_retire_handler(int s)
{
	(void)s;
	struct grace__retire *t = grace__hazptr_retire_tls;
	if (!t || !__atomic_load_n(&t->busy, __ATOMIC_RELAXED))
		return; /* between two calls: legal, and not the case */
	hazptr_retire(NULL, sig_take());
	gt_handler_came_back();
}

static __attribute__((unused)) void *obj8k(void)
{
	void *p = malloc(8192);
	REQUIRE(p);
	return p;
}

static __attribute__((unused)) void signal_retire_frees(void)
{
	struct gt_rain rain;

	/* glibc; ASan's allocator refuses it, and its frees are then cheap: every report still
	 * counts, only the frees are a smaller part of the calls. */
	(void)mallopt(M_MMAP_THRESHOLD, 4096);
	rain_setup(frees_retire_handler, 30);
	REQUIRE(gt_rain_start(&rain, SIGUSR1, 50) == 0);
	retire_batches(obj8k, 256);
	gt_rain_stop(&rain);
}

/* The window of the inline append itself: a few instructions between its store of busy and
 * its release store, which no signal rain hits reliably. The child makes that state by hand,
 * as the interrupted append leaves it (busy 1, the window opened by earlier calls), and raises
 * the signal there: the handler's hazptr_retire() must be reported, not append beside it. */
static __attribute__((unused)) void signal_retire_inline_window(void)
{
	for (int i = 0; i < 4; i++)
		sig_pool[i] = malloc(16);
	for (int i = 0; i < 3; i++)
		hazptr_retire(NULL, malloc(16)); /* the thread's cache, its window opened */
	gt_on_signal(SIGUSR1, sig_retire_handler, 0);
	struct grace__retire *t = grace__hazptr_retire_tls;
	REQUIRE(t != NULL);
	__atomic_store_n(&t->busy, 1u, __ATOMIC_RELAXED); /* the interrupted append's store */
	raise(SIGUSR1);
	__atomic_store_n(&t->busy, 0u, __ATOMIC_RELEASE);
}

/* The same promise while the thread is inside fork(), whose handlers hold every retire cache
 * and the library's locks, or inside hazptr_barrier(), which takes every retire cache (its own
 * among them) and the orphan list's lock (docs/api.md, hazptr_retire(), "Signals"). Run as
 * hazptr_fork_signal (GRACE_TEST_PAUSE=fork:1000000: a debug library stops the last prepare
 * handler for 1 s) and hazptr_barrier_signal (GRACE_TEST_PAUSE=hazptr_barrier:1000000: it stops
 * the barrier for 1 s holding a cache). A thread with a cache makes the call; once it sleeps in
 * it, the child signals it and the handler retires: reported, not a deadlock. Its first sleep
 * is the pause (in fork(), the prepare handlers' wait for a worker between two callbacks may
 * come first: inside the span too). Skipped elsewhere. */
static int span_tid, span_made, span_go;

static void *span_thread(void *arg)
{
	bool in_fork = arg != NULL;

	hazptr_retire(NULL, sig_take()); /* the thread's cache, before the call */
	__atomic_store_n(&span_made, 1, __ATOMIC_RELEASE);
	while (!in_fork && !__atomic_load_n(&span_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	__atomic_store_n(&span_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (in_fork)
		gt_fork_and_wait();
	else
		hazptr_barrier(NULL);
	return NULL;
}

/* The barrier's case: a cache newer than the thread's, which the barrier takes first (the
 * newest heads the list), so that its pause holds another thread's cache; its hold of the
 * thread's own every build reports anyway (signal_retire_barrier_own()). */
static void *span_other(void *arg)
{
	(void)arg;
	hazptr_retire(NULL, malloc(16));
	__atomic_store_n(&span_go, 1, __ATOMIC_RELEASE);
	for (;;)
		pause(); /* the child ends with the report */
	return NULL;
}

static void signal_retire_in(void *in_fork)
{
	pthread_t t, u;
	int tid;

	for (int i = 0; i < 4; i++)
		sig_pool[i] = malloc(16);
	gt_on_signal(SIGUSR1, sig_retire_handler, SA_RESTART);
	REQUIRE(pthread_create(&t, NULL, span_thread, in_fork) == 0);
	if (!in_fork) {
		while (!__atomic_load_n(&span_made, __ATOMIC_ACQUIRE))
			usleep(1000);
		REQUIRE(pthread_create(&u, NULL, span_other, NULL) == 0);
	}
	while (!(tid = __atomic_load_n(&span_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	while (!gt_thread_sleeps(tid))
		usleep(1000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
}

static void signal_retire_in_fork(void)
{
	signal_retire_in(&span_tid);
}

static void signal_retire_in_barrier(void)
{
	signal_retire_in(NULL);
}

/* Skipped unless the ctest entry named by ctest sets GRACE_TEST_PAUSE to site. */
static bool paused_at(const char *site, const char *ctest)
{
	const char *e = getenv("GRACE_TEST_PAUSE");
	if (e && strstr(e, site))
		return true;
	printf("  skipped: run as %s (GRACE_TEST_PAUSE=%s...)\n", ctest, site);
	return false;
}

TEST(a_handler_retiring_inside_fork_is_reported)
{
	if (paused_at("fork:", "hazptr_fork_signal"))
		EXPECT_MISUSE(signal_retire_in_fork, DEBUG_HANG, "hazptr_retire",
			      "not async-signal-safe");
}

TEST(a_handler_retiring_inside_a_barrier_is_reported)
{
	if (paused_at("hazptr_barrier:", "hazptr_barrier_signal"))
		EXPECT_MISUSE(signal_retire_in_barrier, DEBUG_HANG, "hazptr_retire",
			      "not async-signal-safe");
}

TEST(misuse)
{
	EXPECT_MISUSE(double_retire, DEBUG_UB, "hazptr_retire", "retired twice");
	EXPECT_MISUSE(use_after_free, DEBUG_ONLY, "hazptr_protect", "not held");
	EXPECT_MISUSE(free_twice, DEBUG_UB, "hazptr_free", "not held");
	EXPECT_MISUSE(barrier_own_protection, DEBUG_HANG, "hazptr_barrier",
		      "the calling thread protects");
	EXPECT_MISUSE(barrier_from_fn, FATAL, "hazptr_barrier", "retired object's function");
	EXPECT_MISUSE(retire_destroyed, DEBUG_UB, "hazptr_retire", "was destroyed");
#ifdef __SANITIZE_THREAD__
	/* TSan reports any free() in a signal handler, which a handler's legal retire between
	 * two calls may make (its library is a release one: the call itself is checked only). */
	printf("  signal_retire: skipped under TSan\n");
#else
	EXPECT_MISUSE(signal_retire, FATAL, "hazptr_retire", "not async-signal-safe");
	EXPECT_MISUSE(signal_retire_inline_window, FATAL, "hazptr_retire", "not async-signal-safe");
	EXPECT_MISUSE(signal_retire_barrier_own, FATAL, "hazptr_retire", "not async-signal-safe");
	/* Three children: about one in 14 first lands in a scan (its membarrier), which is
	 * reported whatever the frees do (28 of 30 single runs caught a flag over the frees). */
	for (int i = 0; i < 3; i++)
		EXPECT_MISUSE(signal_retire_frees, FATAL, "hazptr_retire", "not async-signal-safe");
#endif
}

GT_MAIN()
