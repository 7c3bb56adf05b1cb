/* SPDX-License-Identifier: MIT */
/*
 * srcu API: sleeping readers delay synchronize_srcu, domains never wait on each other, lock on
 * one CPU and unlock on another, polled grace periods, call_srcu/srcu_barrier, the poison stress
 * test, cleanup with readers or callbacks pending, and the debug-build misuse checks.
 * Registered several times (tests/api/srcu.cmake): the fast path (rseq + membarrier), the atomic
 * fallback (GRACE_NO_RSEQ=1), the fence fallback (GRACE_NO_MEMBARRIER=1) and grace's own rseq
 * registration (glibc's disabled). EXPECT_SRCU_MODE names the mode each run must see.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, sched_getcpu */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <grace/diag.h>
#include <grace/srcu.h>
#include <grace/rcu.h>
#include "gtest_lite.h"

static int pin_to(unsigned int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void unpin(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (unsigned int i = 0; i < 1024; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int debug_build(void)
{
	return GRACE__DEBUG;
}

DEFINE_SRCU(static_dom);
DEFINE_STATIC_SRCU(static_dom2);

TEST(mode_is_as_expected)
{
	const char *want = getenv("EXPECT_SRCU_MODE");
	const char *mode = grace_srcu_mode();
	printf("  srcu mode: %s (rseq: %s, ordering: %s)\n", mode, grace_rseq_mode(),
	       grace_membarrier_mode());
	if (want)
		CHECK_MSG(strcmp(mode, want) == 0, "mode %s, expected %s", mode, want);
}

TEST(lock_unlock_nesting_and_counts)
{
	struct srcu_struct d;
	CHECK(init_srcu_struct(&d) == 0);
	CHECK(grace_srcu_readers_active(&d) == 0);
	int a = srcu_read_lock(&d);
	int b = srcu_read_lock(&d);
	CHECK(a == 0 || a == 1);
	CHECK(b == a);
	CHECK(grace_srcu_readers_active(&d) == 2);
	srcu_read_unlock(&d, b);
	CHECK(grace_srcu_readers_active(&d) == 1);
	srcu_read_unlock(&d, a);
	CHECK(grace_srcu_readers_active(&d) == 0);
	synchronize_srcu(&d);
	/* After a grace period the index new readers use has flipped. */
	int c = srcu_read_lock(&d);
	CHECK(c != a);
	srcu_read_unlock(&d, c);
	cleanup_srcu_struct(&d);
}

TEST(define_srcu_sets_itself_up)
{
	int i = srcu_read_lock(&static_dom);
	srcu_read_unlock(&static_dom, i);
	synchronize_srcu(&static_dom);
	synchronize_srcu(&static_dom2); /* first use is an update: also fine */
	i = srcu_read_lock(&static_dom2);
	CHECK(grace_srcu_readers_active(&static_dom2) == 1);
	srcu_read_unlock(&static_dom2, i);
	cleanup_srcu_struct(&static_dom2);
	/* A cleaned-up DEFINE_SRCU domain sets itself up again. */
	i = srcu_read_lock(&static_dom2);
	srcu_read_unlock(&static_dom2, i);
	synchronize_srcu(&static_dom2);
	cleanup_srcu_struct(&static_dom2);
}

static void *lazy_racer(void *arg)
{
	struct srcu_struct *d = (struct srcu_struct *)arg;
	for (int k = 0; k < 1000; k++) {
		int i = srcu_read_lock(d);
		srcu_read_unlock(d, i);
	}
	return NULL;
}

TEST(define_srcu_first_use_race)
{
	static DEFINE_SRCU(racy);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, lazy_racer, &racy);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(grace_srcu_readers_active(&racy) == 0);
	synchronize_srcu(&racy);
	cleanup_srcu_struct(&racy);
}

/* ---- sleeping readers ---- */

struct holder {
	struct srcu_struct *d;
	int phase; /* 0 start, 1 in section, 2 release requested, 3 done */
	int sync_done;
	int migrate; /* lock on CPU 0, unlock on CPU 1 */
	int lock_cpu, unlock_cpu;
};

static void *hold_section(void *arg)
{
	struct holder *h = (struct holder *)arg;
	if (h->migrate)
		pin_to(0);
	int idx = srcu_read_lock(h->d);
	h->lock_cpu = sched_getcpu();
	__atomic_store_n(&h->phase, 1, __ATOMIC_SEQ_CST);
	if (h->migrate)
		pin_to(1);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) != 2)
		gt_sleep_ms(1); /* sleeping inside the section */
	/* A synchronize_srcu that started while we were inside must not have returned. */
	REQUIRE(!__atomic_load_n(&h->sync_done, __ATOMIC_SEQ_CST));
	h->unlock_cpu = sched_getcpu();
	srcu_read_unlock(h->d, idx);
	__atomic_store_n(&h->phase, 3, __ATOMIC_SEQ_CST);
	unpin();
	return NULL;
}

static void *do_sync(void *arg)
{
	struct holder *h = (struct holder *)arg;
	synchronize_srcu(h->d);
	__atomic_store_n(&h->sync_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void run_holder(struct holder *h)
{
	pthread_t r, s;
	pthread_create(&r, NULL, hold_section, h);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	pthread_create(&s, NULL, do_sync, h);
	gt_sleep_ms(150); /* past the spin phase: the updater sleeps on the futex */
	int early = __atomic_load_n(&h->sync_done, __ATOMIC_SEQ_CST);
	__atomic_store_n(&h->phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(s, NULL); /* the reader's unlock must wake it */
	pthread_join(r, NULL);
	REQUIRE(!early);
}

TEST(sleeping_reader_delays_synchronize)
{
	struct srcu_struct d;
	CHECK(init_srcu_struct(&d) == 0);
	struct holder h;
	memset(&h, 0, sizeof(h));
	h.d = &d;
	run_holder(&h);
	CHECK(h.sync_done);
	CHECK(grace_srcu_readers_active(&d) == 0);
	cleanup_srcu_struct(&d);
}

TEST(lock_on_cpu0_migrate_unlock_on_cpu1)
{
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	if (!CPU_ISSET(0, &set) || !CPU_ISSET(1, &set)) {
		printf("  skipped: needs CPUs 0 and 1\n");
		return;
	}
	struct srcu_struct d;
	CHECK(init_srcu_struct(&d) == 0);
	struct holder h;
	memset(&h, 0, sizeof(h));
	h.d = &d;
	h.migrate = 1;
	run_holder(&h);
	printf("  locked on CPU %d, unlocked on CPU %d\n", h.lock_cpu, h.unlock_cpu);
	CHECK(h.lock_cpu == 0 && h.unlock_cpu == 1);
	CHECK(h.sync_done);
	if (d.fast) {
		/* The rseq counters moved on the CPUs the reader ran on. */
		uint64_t l0 = d.fast[0].lock[0] + d.fast[0].lock[1];
		uint64_t u1 = d.fast[1].unlock[0] + d.fast[1].unlock[1];
		CHECK(l0 >= 1 && u1 >= 1);
	}
	CHECK(grace_srcu_readers_active(&d) == 0);
	synchronize_srcu(&d); /* balanced across CPUs: no wait */
	cleanup_srcu_struct(&d);
}

/*
 * The reader the first of the two waits exists for: it loaded idx before a grace period's flip
 * and incremented the old index's counter after that grace period had checked it (so it was new
 * for that grace period). It is now inside a section on the index new readers do not use, and the
 * NEXT grace period must wait for it. The gap between the load and the increment is a few
 * instructions in srcu_read_lock(); this test widens it by doing the reader's steps by hand on
 * the domain's atomic counters (fast mode only: it needs the counters' address).
 */
static void *sync_flag(void *arg)
{
	struct holder *h = (struct holder *)arg;
	synchronize_srcu(h->d);
	__atomic_store_n(&h->sync_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(straggler_on_inactive_index_is_waited_for)
{
	struct srcu_struct d;
	CHECK(init_srcu_struct(&d) == 0);
	if (!d.fast) {
		cleanup_srcu_struct(&d);
		printf("  skipped: needs the fast mode (counters visible)\n");
		return;
	}
	unsigned int i = __atomic_load_n(&d.idx, __ATOMIC_RELAXED) & 1u; /* reader loads idx */
	synchronize_srcu(&d); /* a whole grace period passes: flips to !i */
	CHECK((__atomic_load_n(&d.idx, __ATOMIC_RELAXED) & 1u) != i);
	__atomic_fetch_add(&d.fast[0].alock[i], 1, __ATOMIC_SEQ_CST); /* ... then increments */
	struct holder h;
	memset(&h, 0, sizeof(h));
	h.d = &d;
	pthread_t s;
	pthread_create(&s, NULL, sync_flag, &h);
	gt_sleep_ms(100);
	int early = __atomic_load_n(&h.sync_done, __ATOMIC_SEQ_CST);
	/* The reader leaves: what srcu_read_unlock(&d, i) does on the atomic counters. */
	__atomic_fetch_add(&d.fast[0].aunlock[i], 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&d.waiting, __ATOMIC_SEQ_CST) & (1u << i))
		grace__srcu_unlock_wake(&d);
	pthread_join(s, NULL);
	CHECK_MSG(!early, "synchronize_srcu returned while a reader on the inactive index "
			  "was inside");
	CHECK(h.sync_done);
	cleanup_srcu_struct(&d);
}

/* ---- stall reports ---- */

struct stall_seen {
	int n;
	int flavor_ok;
	uint64_t ns;
};

static void on_stall(const struct grace_stall_info *info, void *arg)
{
	struct stall_seen *s = (struct stall_seen *)arg;
	if (strcmp(info->flavor, "srcu") == 0)
		__atomic_store_n(&s->flavor_ok, 1, __ATOMIC_SEQ_CST);
	s->ns = info->duration_ns;
	__atomic_fetch_add(&s->n, 1, __ATOMIC_SEQ_CST);
}

TEST(stalled_reader_is_reported)
{
	struct srcu_struct d;
	struct stall_seen seen;
	memset(&seen, 0, sizeof(seen));
	CHECK(init_srcu_struct(&d) == 0);
	unsigned int old = grace_get_stall_timeout_ms();
	grace_set_stall_timeout_ms(50);
	grace_set_stall_handler(on_stall, &seen);
	struct holder h;
	memset(&h, 0, sizeof(h));
	h.d = &d;
	pthread_t r, s;
	pthread_create(&r, NULL, hold_section, &h);
	while (__atomic_load_n(&h.phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	pthread_create(&s, NULL, do_sync, &h);
	/* The updater sleeps until the report is due, reports once, and keeps waiting. */
	uint64_t t0 = gt_now_ns();
	while (!__atomic_load_n(&seen.n, __ATOMIC_SEQ_CST) && gt_now_ns() - t0 < 10000000000ull)
		gt_sleep_ms(5);
	gt_sleep_ms(100);
	int sync_early = __atomic_load_n(&h.sync_done, __ATOMIC_SEQ_CST);
	__atomic_store_n(&h.phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	grace_set_stall_handler(NULL, NULL);
	grace_set_stall_timeout_ms(old);
	printf("  %d report(s), after %.1f ms\n", seen.n, (double)seen.ns / 1e6);
	CHECK(seen.n == 1); /* once per stall */
	CHECK(seen.flavor_ok);
	CHECK(seen.ns >= 50000000ull);
	CHECK(!sync_early);
	cleanup_srcu_struct(&d);
}

/* ---- independent domains ---- */

struct two {
	struct srcu_struct a, b;
	int stop;
	int b_syncs;
	int a_synced;
};

static void *hold_a(void *arg)
{
	struct two *t = (struct two *)arg;
	int idx = srcu_read_lock(&t->a);
	while (!__atomic_load_n(&t->stop, __ATOMIC_SEQ_CST))
		gt_sleep_ms(2);
	srcu_read_unlock(&t->a, idx);
	return NULL;
}

static void *sync_a(void *arg)
{
	struct two *t = (struct two *)arg;
	synchronize_srcu(&t->a);
	__atomic_store_n(&t->a_synced, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(two_domains_never_wait_on_each_other)
{
	struct two t;
	memset(&t, 0, sizeof(t));
	CHECK(init_srcu_struct(&t.a) == 0);
	CHECK(init_srcu_struct(&t.b) == 0);
	pthread_t r, s;
	pthread_create(&r, NULL, hold_a, &t);
	while (grace_srcu_readers_active(&t.a) == 0)
		gt_sleep_ms(1);
	pthread_create(&s, NULL, sync_a, &t); /* blocked on a's reader */
	/* Domain b: readers and grace periods proceed while a is held and a's updater waits;
	 * sections of b inside a section of a are fine too. */
	for (int i = 0; i < 50; i++) {
		int ia = srcu_read_lock(&t.a);
		int ib = srcu_read_lock(&t.b);
		srcu_read_unlock(&t.b, ib);
		synchronize_srcu(&t.b); /* inside a's section: a different domain */
		srcu_read_unlock(&t.a, ia);
		t.b_syncs++;
	}
	synchronize_srcu_expedited(&t.b);
	int a_early = __atomic_load_n(&t.a_synced, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(r, NULL);
	pthread_join(s, NULL);
	CHECK(t.b_syncs == 50);
	CHECK(!a_early);
	CHECK(t.a_synced);
	cleanup_srcu_struct(&t.a);
	cleanup_srcu_struct(&t.b);
}

/* ---- polled grace periods ---- */

TEST(polled_grace_periods)
{
	struct srcu_struct d;
	CHECK(init_srcu_struct(&d) == 0);
	unsigned long c0 = get_state_synchronize_srcu(&d);
	CHECK(!poll_state_synchronize_srcu(&d, c0));
	synchronize_srcu(&d);
	CHECK(poll_state_synchronize_srcu(&d, c0));

	/* A cookie taken inside a section does not complete while the section runs. */
	int idx = srcu_read_lock(&d);
	unsigned long c1 = start_poll_synchronize_srcu(&d);
	gt_sleep_ms(30);
	CHECK(!poll_state_synchronize_srcu(&d, c1));
	srcu_read_unlock(&d, idx);
	/* start_poll made sure the grace period runs: it completes without anyone waiting. */
	uint64_t t0 = gt_now_ns();
	while (!poll_state_synchronize_srcu(&d, c1) && gt_now_ns() - t0 < 10000000000ull)
		gt_sleep_ms(1);
	CHECK(poll_state_synchronize_srcu(&d, c1));
	cond_synchronize_srcu(&d, c1); /* already done: returns at once */
	unsigned long c2 = get_state_synchronize_srcu(&d);
	cond_synchronize_srcu(&d, c2);
	CHECK(poll_state_synchronize_srcu(&d, c2));
	cleanup_srcu_struct(&d);
}

/* ---- call_srcu ---- */

struct cbobj {
	struct rcu_head rh;
	int *counter;
};

static void cb_count(struct rcu_head *h)
{
	struct cbobj *o = container_of(h, struct cbobj, rh);
	__atomic_fetch_add(o->counter, 1, __ATOMIC_RELAXED);
	free(o);
}

TEST(call_srcu_and_barrier)
{
	struct srcu_struct d;
	int n = 0;
	CHECK(init_srcu_struct(&d) == 0);
	for (int i = 0; i < 1000; i++) {
		struct cbobj *o = (struct cbobj *)malloc(sizeof(*o));
		o->counter = &n;
		int idx = srcu_read_lock(&d); /* call_srcu is legal inside a section */
		call_srcu(&d, &o->rh, cb_count);
		srcu_read_unlock(&d, idx);
	}
	srcu_barrier(&d);
	CHECK(__atomic_load_n(&n, __ATOMIC_RELAXED) == 1000);
	struct grace_cb_stats st;
	/* The engine publishes its counts after each invocation batch: they may trail the
	 * barrier by a moment. */
	uint64_t t0 = gt_now_ns();
	do
		grace_srcu_callback_stats(&d, &st);
	while (st.pending != 0 && gt_now_ns() - t0 < 5000000000ull && (gt_sleep_ms(1), 1));
	CHECK_MSG(st.queued == 1000 && st.invoked == 1000 && st.pending == 0,
		  "queued %llu invoked %llu pending %llu", (unsigned long long)st.queued,
		  (unsigned long long)st.invoked, (unsigned long long)st.pending);
	cleanup_srcu_struct(&d);
}

struct delayed {
	struct rcu_head rh;
	struct srcu_struct *d;
	int reader_done;
	int ran_early;
	int ran;
};

static void cb_check_order(struct rcu_head *h)
{
	struct delayed *x = container_of(h, struct delayed, rh);
	if (!__atomic_load_n(&x->reader_done, __ATOMIC_SEQ_CST))
		__atomic_store_n(&x->ran_early, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&x->ran, 1, __ATOMIC_SEQ_CST);
}

TEST(call_srcu_waits_for_sleeping_reader)
{
	struct srcu_struct d;
	struct delayed x;
	memset(&x, 0, sizeof(x));
	CHECK(init_srcu_struct(&d) == 0);
	int idx = srcu_read_lock(&d);
	call_srcu(&d, &x.rh, cb_check_order);
	gt_sleep_ms(100);
	CHECK(!__atomic_load_n(&x.ran, __ATOMIC_SEQ_CST));
	__atomic_store_n(&x.reader_done, 1, __ATOMIC_SEQ_CST);
	srcu_read_unlock(&d, idx);
	srcu_barrier(&d);
	CHECK(x.ran && !x.ran_early);
	cleanup_srcu_struct(&d);
}

/* ---- the poison stress test ---- */

#define MAGIC_LIVE 0x600dcafeu
#define MAGIC_DEAD 0xdeadbeefu

struct pobj {
	struct rcu_head rh;
	unsigned int magic;
	unsigned long gen;
	struct pobj *qnext;
};

/* Retired objects are poisoned and kept (not freed) until the end of the run, so that malloc
 * cannot hand the memory back as a live object and hide a reader that still uses it. */
static struct pobj *quarantine;

static void retire(struct pobj *o)
{
	o->magic = MAGIC_DEAD; /* any reader still holding it would see this */
	struct pobj *old = __atomic_load_n(&quarantine, __ATOMIC_RELAXED);
	do
		o->qnext = old;
	while (!__atomic_compare_exchange_n(&quarantine, &old, o, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

static void free_quarantine(void)
{
	struct pobj *o = __atomic_exchange_n(&quarantine, (struct pobj *)NULL, __ATOMIC_ACQUIRE);
	while (o) {
		struct pobj *n = o->qnext;
		free(o);
		o = n;
	}
}

struct stress {
	struct srcu_struct d;
	struct pobj *cur;
	int stop;
	unsigned long reads, bad, sleeps;
	unsigned long freed_cb;
};

static void poison_free(struct rcu_head *h)
{
	retire(container_of(h, struct pobj, rh));
}

static void *stress_reader(void *arg)
{
	struct stress *s = (struct stress *)arg;
	unsigned long n = 0, bad = 0, sleeps = 0;
	unsigned int seed = (unsigned int)(uintptr_t)&n;
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		int idx = srcu_read_lock(&s->d);
		struct pobj *p = srcu_dereference(s->cur, &s->d);
		if (p->magic != MAGIC_LIVE)
			bad++;
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 512 == 0) {
			/* Sleep inside the section: the object must stay alive. */
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
			sleeps++;
		} else if ((seed >> 16) % 64 == 0) {
			sched_yield();
		}
		if (p->magic != MAGIC_LIVE)
			bad++;
		srcu_read_unlock(&s->d, idx);
		n++;
	}
	__atomic_fetch_add(&s->reads, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bad, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sleeps, sleeps, __ATOMIC_RELAXED);
	return NULL;
}

static struct pobj *new_obj(unsigned long gen)
{
	struct pobj *o = (struct pobj *)malloc(sizeof(*o));
	o->magic = MAGIC_LIVE;
	o->gen = gen;
	return o;
}

static void *stress_sync_updater(void *arg)
{
	struct stress *s = (struct stress *)arg;
	for (unsigned long g = 1; !__atomic_load_n(&s->stop, __ATOMIC_RELAXED); g++) {
		struct pobj *o = new_obj(g);
		struct pobj *old = rcu_xchg_pointer(&s->cur, o);
		if (g & 1)
			synchronize_srcu(&s->d);
		else
			synchronize_srcu_expedited(&s->d);
		retire(old);
	}
	return NULL;
}

static void *stress_cb_updater(void *arg)
{
	struct stress *s = (struct stress *)arg;
	for (unsigned long g = 1; !__atomic_load_n(&s->stop, __ATOMIC_RELAXED); g++) {
		struct pobj *o = new_obj(g);
		struct pobj *old = rcu_xchg_pointer(&s->cur, o);
		call_srcu(&s->d, &old->rh, poison_free);
		if ((g & 255) == 0)
			srcu_barrier(&s->d);
		if ((g & 15) == 0)
			sched_yield();
	}
	return NULL;
}

TEST(poison_stress)
{
	enum { NR = 4 };
	struct stress *s = (struct stress *)calloc(1, sizeof(*s));
	pthread_t r[NR], u[2];
	const char *e = getenv("SRCU_STRESS_MS");
	long ms = e ? atol(e) : 1000;
	CHECK(init_srcu_struct(&s->d) == 0);
	s->cur = new_obj(0);
	for (int i = 0; i < NR; i++)
		pthread_create(&r[i], NULL, stress_reader, s);
	pthread_create(&u[0], NULL, stress_sync_updater, s);
	pthread_create(&u[1], NULL, stress_cb_updater, s);
	gt_sleep_ms((unsigned int)ms);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < NR; i++)
		pthread_join(r[i], NULL);
	pthread_join(u[0], NULL);
	pthread_join(u[1], NULL);
	srcu_barrier(&s->d);
	struct grace_cb_stats st;
	grace_srcu_callback_stats(&s->d, &st);
	printf("  %lu reads (%lu slept inside), %llu grace periods, %llu callbacks, %lu bad\n",
	       s->reads, s->sleeps, (unsigned long long)st.grace_periods,
	       (unsigned long long)st.invoked, s->bad);
	free(s->cur);
	free_quarantine();
	CHECK(s->bad == 0);
	CHECK(s->reads > 0 && st.grace_periods > 0 && st.invoked > 0);
	cleanup_srcu_struct(&s->d);
	free(s);
}

/* ---- cleanup misuse ---- */

static void cleanup_with_reader(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	init_srcu_struct(&d);
	int idx = srcu_read_lock(&d);
	cleanup_srcu_struct(&d); /* reported, not freed (aborts in debug builds) */
	srcu_read_unlock(&d, idx);
	synchronize_srcu(&d); /* still usable */
	cleanup_srcu_struct(&d);
	fprintf(stderr, "survived\n");
}

TEST(cleanup_with_readers_is_reported)
{
	char out[2048];
	int st = gt_run_child(cleanup_with_reader, NULL, out, sizeof(out));
	CHECK_MSG(strstr(out, "cleanup_srcu_struct") && strstr(out, "1 reader is still inside"),
		  "stderr: %s", out);
	if (debug_build())
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "survived"),
			  "status %d, stderr: %s", st, out);
}

static void nop_cb(struct rcu_head *h)
{
	(void)h;
}

struct pend {
	struct srcu_struct d;
	struct rcu_head h;
	int phase;
};

static void *pend_reader(void *arg)
{
	struct pend *p = (struct pend *)arg;
	int idx = srcu_read_lock(&p->d);
	__atomic_store_n(&p->phase, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&p->phase, __ATOMIC_SEQ_CST) != 2)
		gt_sleep_ms(1);
	srcu_read_unlock(&p->d, idx);
	return NULL;
}

static void cleanup_pending_cb_child(void *arg)
{
	(void)arg;
	static struct pend p;
	pthread_t t;
	init_srcu_struct(&p.d);
	pthread_create(&t, NULL, pend_reader, &p);
	while (__atomic_load_n(&p.phase, __ATOMIC_SEQ_CST) != 1)
		gt_sleep_ms(1);
	call_srcu(&p.d, &p.h, nop_cb); /* held back by the reader: certainly pending */
	cleanup_srcu_struct(&p.d);     /* reported, not freed (aborts in debug builds) */
	__atomic_store_n(&p.phase, 2, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	srcu_barrier(&p.d);
	cleanup_srcu_struct(&p.d);
	fprintf(stderr, "survived\n");
}

TEST(cleanup_with_callbacks_is_reported)
{
	char out[2048];
	if (GRACE__TSAN_MODE) {
		/* The child starts threads, which TSan refuses after a multi-threaded fork. */
		printf("  skipped under TSan\n");
		return;
	}
	int st = gt_run_child(cleanup_pending_cb_child, NULL, out, sizeof(out));
	CHECK_MSG(strstr(out, "cleanup_srcu_struct") && strstr(out, "callback") &&
			  strstr(out, "srcu_barrier") && strstr(out, "not freed"),
		  "stderr: %s", out);
	if (debug_build())
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "survived"),
			  "status %d, stderr: %s", st, out);
}

/* ---- misuse ---- */

static void unlock_bad_index(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	init_srcu_struct(&d);
	srcu_read_unlock(&d, 7);
}

/* docs/api.md (init_srcu_struct(), "Returns": -EINVAL for a NULL ssp; grace_srcu_set_policy()
 * and grace_srcu_set_callback_limits(): 0, or -EINVAL for what grace_rcu_set_policy() and
 * grace_rcu_set_callback_limits() refuse, for the callbacks of ssp only). */
/* docs/api.md, struct grace_cb_stats: queued, invoked, pending = queued - invoked "at the time
 * of the call", grace_periods, waits, workers, worker_cpu_ns, read from a fresh domain whose
 * BATCH period (10 s) holds 100 callbacks pending until the barrier runs them. */
static unsigned long stats_ran;
static void stats_cb(struct rcu_head *h)
{
	__atomic_fetch_add(&stats_ran, 1, __ATOMIC_RELAXED);
	free(h);
}
TEST(callback_stats_count_what_they_say)
{
	static struct srcu_struct d;
	struct grace_cb_stats st;

	REQUIRE(init_srcu_struct(&d) == 0);
	REQUIRE(grace_srcu_set_policy(&d, GRACE_POLICY_BATCH, 10000000) == 0);
	grace_srcu_callback_stats(&d, &st);
	CHECK(st.queued == 0 && st.invoked == 0 && st.pending == 0 && st.waits == 0);
	for (int i = 0; i < 100; i++)
		call_srcu(&d, (struct rcu_head *)calloc(1, sizeof(struct rcu_head)), stats_cb);
	grace_srcu_callback_stats(&d, &st);
	CHECK_MSG(st.queued == 100 && st.invoked == 0 && st.pending == 100,
		  "queued %llu invoked %llu pending %llu", (unsigned long long)st.queued,
		  (unsigned long long)st.invoked, (unsigned long long)st.pending);
	CHECK(st.workers >= 1); /* the first call_srcu() started one */
	uint64_t gps = st.grace_periods;
	srcu_barrier(&d);
	grace_srcu_callback_stats(&d, &st);
	CHECK(stats_ran == 100);
	CHECK_MSG(st.queued == 100 && st.invoked == 100 && st.pending == 0,
		  "queued %llu invoked %llu pending %llu", (unsigned long long)st.queued,
		  (unsigned long long)st.invoked, (unsigned long long)st.pending);
	CHECK(st.grace_periods > gps);
	CHECK(st.worker_cpu_ns > 0);
	CHECK(st.waits == 0);
	cleanup_srcu_struct(&d);
}

TEST(init_policy_and_limits_validate)
{
	static struct srcu_struct dom;

	CHECK(init_srcu_struct(NULL) == -EINVAL);
	REQUIRE(init_srcu_struct(&dom) == 0);
	CHECK(grace_srcu_set_policy(&dom, (enum grace_gp_policy)7, 0) == -EINVAL);
	CHECK(grace_srcu_set_policy(&dom, GRACE_POLICY_BATCH, 0) == -EINVAL);
	CHECK(grace_srcu_set_policy(&dom, GRACE_POLICY_LAZY, 10000001) == -EINVAL);
	CHECK(grace_srcu_set_policy(&dom, GRACE_POLICY_ADAPTIVE, 10000001) == -EINVAL);
	CHECK(grace_srcu_set_policy(&dom, GRACE_POLICY_BATCH, 1000) == 0);
	CHECK(grace_srcu_set_callback_limits(&dom, 10, 5) == -EINVAL);
	CHECK(grace_srcu_set_callback_limits(&dom, 0, 5) == -EINVAL);
	CHECK(grace_srcu_set_callback_limits(&dom, 100, 1000) == 0);
	CHECK(grace_srcu_set_policy(&dom, GRACE_POLICY_ADAPTIVE, 0) == 0);
	srcu_barrier(&dom);
	cleanup_srcu_struct(&dom);
}

TEST(unlock_with_bad_index_aborts)
{
	char out[2048];
	int st = gt_run_child(unlock_bad_index, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "srcu_read_unlock") && strstr(out, "index 7"), "stderr: %s", out);
}

static void use_uninitialised(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	memset(&d, 0, sizeof(d));
	synchronize_srcu(&d);
}

TEST(uninitialised_domain_is_reported)
{
	char out[2048];
	int st = gt_run_child(use_uninitialised, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "synchronize_srcu") && strstr(out, "not initialised"), "stderr: %s",
		  out);
}

static void sync_inside_own_section(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	init_srcu_struct(&d);
	int idx = srcu_read_lock(&d);
	synchronize_srcu(&d);
	srcu_read_unlock(&d, idx);
}

static void unlock_wrong_index(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	init_srcu_struct(&d);
	int idx = srcu_read_lock(&d);
	srcu_read_unlock(&d, !idx);
}

static int *volatile shared_ptr;

static void deref_outside(void *arg)
{
	(void)arg;
	struct srcu_struct d;
	init_srcu_struct(&d);
	int *p = srcu_dereference(shared_ptr, &d);
	fprintf(stderr, "loaded %p\n", (void *)p);
}

static void deref_other_domain_and_rcu(void *arg)
{
	(void)arg;
	struct srcu_struct a, b;
	int x = 1;
	init_srcu_struct(&a);
	init_srcu_struct(&b);
	shared_ptr = &x;
	int idx = srcu_read_lock(&a);
	int *p = rcu_dereference(shared_ptr); /* any read-side section satisfies rcu_dereference */
	int *q = srcu_dereference(shared_ptr, &a);
	fprintf(stderr, "fine %d %d\n", *p, *q);
	int *r = srcu_dereference(shared_ptr, &b); /* a section of a does not protect b */
	fprintf(stderr, "loaded %p\n", (void *)r);
	srcu_read_unlock(&a, idx);
}

TEST(debug_checks)
{
	char out[2048];
	int st;
	if (!debug_build()) {
		printf("  skipped: release build (the checks are debug-build only)\n");
		return;
	}
	st = gt_run_child(sync_inside_own_section, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "synchronize_srcu") && strstr(out, "deadlock"), "stderr: %s", out);
	st = gt_run_child(unlock_wrong_index, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "srcu_read_unlock") && strstr(out, "does not match"), "stderr: %s",
		  out);
	st = gt_run_child(deref_outside, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "srcu_dereference") && strstr(out, "outside"), "stderr: %s", out);
	st = gt_run_child(deref_other_domain_and_rcu, NULL, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK_MSG(strstr(out, "fine 1 1") && strstr(out, "srcu_dereference") &&
			  !strstr(out, "loaded"),
		  "stderr: %s", out);
}

GT_MAIN()
