/* SPDX-License-Identifier: MIT */
/*
 * free_rcu(), free_qsbr(), free_srcu(), their headless twins and the retires (rcu_retire(),
 * qsbr_retire(), srcu_retire()), in turn, with the library's free
 * replaced (grace__free_fn, engine/free.h) by a checker that counts every free, verifies that
 * it frees an object the test queued, poisons it and keeps it in a quarantine for a while, so
 * that a reader that still holds it finds the poison:
 *  - nothing is freed early: readers hold objects across sections (and sleep in them) while
 *    updaters replace and free_*() them, in every flavor, through every entry point;
 *  - nothing is lost: after free_*_barrier() every object queued before it has been freed;
 *    a thread that stops calling gets its objects freed without any barrier (the monitor);
 *    a thread that exits hands its objects to the engine (rcu_barrier() is enough then);
 *    at process exit everything left is freed (checked in an atexit handler that runs after
 *    the library's);
 *  - the per-thread bound holds while a reader stalls grace periods;
 *  - NULL does nothing; the engine path's offset encoding frees the right address; free_rcu
 *    inside a read-side section and from a callback; fork with objects cached.
 * Built as a unit test (internal hook); ctest also runs it with GRACE_FREE_WORKER=1 (every
 * free on the engine's worker) and with GRACE_NO_MEMBARRIER=1.
 */
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <grace/grace.h>
#include <grace/srcu.h>
#include <grace/internal/retire.h>

#include "engine/callback.h" /* grace__cb_fork_abandoned_total */
#include "engine/free.h"
#include "gtest_lite.h"

#define MAGIC_LIVE 0x4c495645u
#define MAGIC_DEAD 0xdeadbeefu
#define QUARANTINE 8192
#define OBJ_WORDS 6

struct obj {
	uint32_t magic;
	uint32_t seq;
	uint64_t payload[OBJ_WORDS];
	struct rcu_head rh;
};

/* An object whose rcu_head lies far from its start (engine path: offset encoding). */
struct far_obj {
	uint32_t magic;
	char pad[3000];
	struct rcu_head rh;
};

static uint64_t n_alloc, n_freed, n_bad;
/* bound_holds_while_a_reader_stalls: its flood's objects carry FLOOD_TAG in seq, and
 * g_stall_holds is set while its reader is inside the section that began before the flood
 * (set after the lock, cleared before the unlock). A flood object freed while it is set was
 * freed before a grace period ended: n_early. */
#define FLOOD_TAG 0x80000000u
static int g_stall_holds;
static uint64_t n_early;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static void *q_ring[QUARANTINE];
static unsigned long q_head;

/* The library frees an object: count it, poison it, quarantine it. In debug builds the
 * library has poisoned it with 0x6b bytes already: the start must then read 0x6b6b6b6b. */
static void checked_free(void *p)
{
	uint32_t m = *(uint32_t *)p;
	if (m != MAGIC_LIVE && m != 0x6b6b6b6bu) {
		__atomic_fetch_add(&n_bad, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "  checked_free(%p): not an object the test queued (magic %#x)\n",
			p, m);
	}
	/* Acquire: pairs with the reader's release clear of the flag before its unlock (a set
	 * flag read here means the reader had not reached its unlock yet). */
	if ((((const struct obj *)p)->seq & FLOOD_TAG) &&
	    __atomic_load_n(&g_stall_holds, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&n_early, 1, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)p, MAGIC_DEAD, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_freed, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&q_lock);
	void *victim = q_ring[q_head % QUARANTINE];
	q_ring[q_head % QUARANTINE] = p;
	q_head++;
	pthread_mutex_unlock(&q_lock);
	free(victim);
}

static void quarantine_drain(void)
{
	pthread_mutex_lock(&q_lock);
	for (int i = 0; i < QUARANTINE; i++) {
		free(q_ring[i]);
		q_ring[i] = NULL;
	}
	pthread_mutex_unlock(&q_lock);
}

static bool worker_mode(void)
{
	const char *w = getenv("GRACE_FREE_WORKER");
	return w && atoi(w) != 0;
}

static uint64_t freed(void)
{
	return __atomic_load_n(&n_freed, __ATOMIC_ACQUIRE);
}
static uint64_t allocated(void)
{
	return __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
}

static struct obj *obj_new(uint32_t seq)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->seq = seq;
	for (int i = 0; i < OBJ_WORDS; i++)
		o->payload[i] = (uint64_t)seq * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	__atomic_store_n(&o->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED);
	return o;
}

static bool obj_ok(const struct obj *o)
{
	if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != MAGIC_LIVE)
		return false;
	for (int i = 0; i < OBJ_WORDS; i++)
		if (__atomic_load_n(&o->payload[i], __ATOMIC_RELAXED) !=
		    (uint64_t)o->seq * 0x9e3779b97f4a7c15ull + (uint64_t)i)
			return false;
	return true;
}

DEFINE_STATIC_SRCU(test_srcu);

/* At exit, after the library's own exit handlers (registered later, so run earlier): every
 * object queued and never freed by a barrier must have been freed by then. */
static uint64_t exit_expect_extra;
static void exit_check(void)
{
	uint64_t a = allocated(), f = freed();
	if (a != f) {
		struct grace_cb_stats r, q, s;
		grace_rcu_callback_stats(&r);
		grace_qsbr_callback_stats(&q);
		grace_srcu_callback_stats(&test_srcu, &s);
		printf("exit: %llu objects queued, %llu freed by the end of exit (callbacks "
		       "pending: rcu %llu, qsbr %llu, srcu %llu)\n0 passed, 1 failed\n",
		       (unsigned long long)a, (unsigned long long)f, (unsigned long long)r.pending,
		       (unsigned long long)q.pending, (unsigned long long)s.pending);
		fflush(stdout);
		_exit(1);
	}
	quarantine_drain();
	printf("exit: all %llu objects freed (%llu left for the exit path)\n",
	       (unsigned long long)a, (unsigned long long)exit_expect_extra);
	fflush(stdout);
}

__attribute__((constructor)) static void install_hook(void)
{
	grace__free_fn = checked_free;
	atexit(exit_check); /* before any library handler: runs after them */
}

/* ---- a flavor, as a table ---- */

struct fl {
	const char *name;
	struct grace_flavor_ops ops;
	bool qsbr;
	void (*retire)(void *ptr); /* rcu_retire() and its twins (not in struct grace_flavor_ops) */
};

static void retire_rcu(void *p)
{
	rcu_retire(p);
}
static void retire_qsbr(void *p)
{
	qsbr_retire(p);
}
static void retire_srcu(void *p)
{
	srcu_retire(&test_srcu, p);
}

/* The three ways to queue an object with no callback, in turn. */
static void queue_obj(const struct fl *f, struct obj *p, uint64_t n)
{
	const struct grace_flavor_ops *o = &f->ops;

	switch (n % 3) {
	case 0:
		o->free(o->ctx, p, &p->rh);
		break;
	case 1:
		o->free_headless(o->ctx, p);
		break;
	default:
		f->retire(p);
		break;
	}
}

static void fl_get(struct fl *f, int which)
{
	memset(f, 0, sizeof(*f));
	if (which == 0) {
		f->name = "rcu";
		f->ops = grace_flavor_rcu;
		f->retire = retire_rcu;
	} else if (which == 1) {
		f->name = "qsbr";
		f->ops = grace_flavor_qsbr;
		f->qsbr = true;
		f->retire = retire_qsbr;
	} else {
		f->name = "srcu";
		grace_flavor_ops_srcu(&f->ops, &test_srcu);
		f->retire = retire_srcu;
	}
}

/* ---- nothing freed early ---- */

struct race {
	struct fl *fl;
	struct obj *slot;
	int stop;
	uint64_t errors, sections, updates;
};

static void *race_reader(void *arg)
{
	struct race *r = (struct race *)arg;
	const struct grace_flavor_ops *o = &r->fl->ops;
	uint64_t n = 0;

	if (r->fl->qsbr)
		o->register_thread();
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		int idx = o->read_lock(o->ctx);
		struct obj *p = rcu_dereference_raw(r->slot);
		if (p && !obj_ok(p))
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		/* Hold it across a delay (sometimes a sleep) inside the section. */
		if ((n & 255) == 0)
			gt_sleep_ms(1);
		else
			for (int i = 0; i < 200; i++)
				grace_cpu_relax();
		if (p && !obj_ok(p)) {
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
			fprintf(stderr, "  %s: object %p freed while a reader held it\n",
				r->fl->name, (void *)p);
		}
		o->read_unlock(o->ctx, idx);
		if (r->fl->qsbr)
			o->quiescent_state();
		n++;
	}
	if (r->fl->qsbr)
		o->unregister_thread();
	__atomic_fetch_add(&r->sections, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *race_updater(void *arg)
{
	struct race *r = (struct race *)arg;
	uint64_t n = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct obj *old = rcu_xchg_pointer(&r->slot, obj_new((uint32_t)n));
		if (old)
			queue_obj(r->fl, old, n);
		n++;
	}
	__atomic_fetch_add(&r->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

/* After the final barrier: every object queued since (a0, f0) was freed, none twice. */
static void check_all_freed(uint64_t a0, uint64_t f0)
{
	CHECK_MSG(freed() - f0 == allocated() - a0, "%llu queued, %llu freed after the barrier",
		  (unsigned long long)(allocated() - a0), (unsigned long long)(freed() - f0));
	CHECK(__atomic_load_n(&n_bad, __ATOMIC_RELAXED) == 0);
}

static void race_flavor(int which)
{
	struct fl fl;
	struct race r;
	pthread_t rd[3], up[2];
	uint64_t f0 = freed(), a0 = allocated();

	fl_get(&fl, which);
	memset(&r, 0, sizeof(r));
	r.fl = &fl;
	for (int i = 0; i < 3; i++)
		pthread_create(&rd[i], NULL, race_reader, &r);
	for (int i = 0; i < 2; i++)
		pthread_create(&up[i], NULL, race_updater, &r);
	gt_sleep_ms(700);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(up[i], NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(rd[i], NULL);
	struct obj *last = rcu_xchg_pointer(&r.slot, (struct obj *)NULL);
	fl.ops.free(fl.ops.ctx, last, &last->rh);
	fl.ops.free_barrier(fl.ops.ctx);
	printf("  %s: %llu updates, %llu reader sections, %llu errors\n", fl.name,
	       (unsigned long long)r.updates, (unsigned long long)r.sections,
	       (unsigned long long)r.errors);
	CHECK_MSG(r.errors == 0, "%llu objects freed under a reader", (unsigned long long)r.errors);
	CHECK(r.updates > 0 && r.sections > 0);
	check_all_freed(a0, f0);
}

TEST(not_freed_early_rcu)
{
	race_flavor(0);
}
TEST(not_freed_early_qsbr)
{
	race_flavor(1);
}
TEST(not_freed_early_srcu)
{
	race_flavor(2);
}

/* ---- other threads take caches while their owners call ---- */

/*
 * The owner's call takes no lock (engine/free.c, "Who touches a cache"): a barrier, fork and
 * the monitor take the cache from under owners that keep calling. Two updaters free in a
 * loop, pausing now and then for longer than the monitor's idle test (so it takes a cache
 * just as its owner comes back), while a third thread runs barriers and forks. A cache touched
 * by two threads at once loses pointers (counts differ after the final barrier) or frees one
 * twice (checked_free sees the poison: n_bad).
 */
struct steal_run {
	struct fl *fl;
	int stop;
	uint64_t calls, barriers, forks, bad_children;
};

static void *steal_updater(void *arg)
{
	struct steal_run *r = (struct steal_run *)arg;
	const struct grace_flavor_ops *o = &r->fl->ops;
	uint64_t n = 0;

	if (r->fl->qsbr)
		o->register_thread();
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct obj *p = obj_new((uint32_t)n);
		queue_obj(r->fl, p, n);
		if (r->fl->qsbr)
			o->quiescent_state();
		if ((++n & 4095) == 0) {
			if (r->fl->qsbr)
				o->thread_offline();
			gt_sleep_ms(3); /* idle: the monitor may take the cache */
			if (r->fl->qsbr)
				o->thread_online();
		}
	}
	if (r->fl->qsbr)
		o->unregister_thread();
	__atomic_fetch_add(&r->calls, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *steal_taker(void *arg)
{
	struct steal_run *r = (struct steal_run *)arg;
	const struct grace_flavor_ops *o = &r->fl->ops;

	for (unsigned int i = 0; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); i++) {
		o->free_barrier(o->ctx);
		r->barriers++;
		if (i % 8 == 0) {
			pid_t pid = fork(); /* prepare and release take every cache */
			/* The engine paused its workers before the caches' locks were taken: no
			 * callback was given up on (debug builds gave up on those blocked on the
			 * debug set's lock, and the child counted them as run unfinished). */
			if (pid == 0)
				_exit(grace__cb_fork_abandoned_total == 0 ? 0 : 1);
			int st = 0;
			if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0)
				r->bad_children++;
			r->forks++;
		}
	}
	return NULL;
}

static void steal_flavor(int which)
{
	struct fl fl;
	struct steal_run r;
	pthread_t up[2], tk;
	uint64_t f0 = freed(), a0 = allocated();

	fl_get(&fl, which);
	memset(&r, 0, sizeof(r));
	r.fl = &fl;
	for (int i = 0; i < 2; i++)
		pthread_create(&up[i], NULL, steal_updater, &r);
	pthread_create(&tk, NULL, steal_taker, &r);
	gt_sleep_ms(700);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(up[i], NULL);
	pthread_join(tk, NULL);
	fl.ops.free_barrier(fl.ops.ctx);
	printf("  %s: %llu calls, %llu barriers, %llu forks\n", fl.name,
	       (unsigned long long)r.calls, (unsigned long long)r.barriers,
	       (unsigned long long)r.forks);
	CHECK(r.calls > 0 && r.barriers > 0 && r.forks > 0 && r.bad_children == 0);
	check_all_freed(a0, f0);
}

TEST(taken_while_owners_call_rcu)
{
	steal_flavor(0);
}
TEST(taken_while_owners_call_qsbr)
{
	steal_flavor(1);
}

/* ---- counts, NULL, offsets ---- */

static void counts(int which)
{
	struct fl fl;
	uint64_t f0 = freed(), a0 = allocated();

	fl_get(&fl, which);
	const struct grace_flavor_ops *o = &fl.ops;
	for (int i = 0; i < 5000; i++) {
		struct obj *p = obj_new((uint32_t)i);
		queue_obj(&fl, p, (uint64_t)i);
	}
	o->free(o->ctx, NULL, NULL); /* NULL: nothing, whatever the head */
	o->free_headless(o->ctx, NULL);
	fl.retire(NULL);
	o->free_barrier(o->ctx);
	CHECK_MSG(freed() - f0 == allocated() - a0, "%s: %llu queued, %llu freed", fl.name,
		  (unsigned long long)(allocated() - a0), (unsigned long long)(freed() - f0));
	CHECK(__atomic_load_n(&n_bad, __ATOMIC_RELAXED) == 0);
}

TEST(barrier_frees_everything_rcu)
{
	counts(0);
}
TEST(barrier_frees_everything_qsbr)
{
	counts(1);
}
TEST(barrier_frees_everything_srcu)
{
	counts(2);
}

TEST(kernel_names_and_offsets)
{
	uint64_t f0 = freed();
	struct obj *p = NULL;
	struct far_obj *far;

	free_rcu(p, rh); /* NULL */
	free_qsbr(p, rh);
	free_srcu(&test_srcu, p, rh);
	free_srcu((struct srcu_struct *)NULL, p, rh); /* NULL ptr: ssp not even looked at */
	free_rcu_mightsleep(NULL);
	free_qsbr_mightsleep(NULL);
	free_srcu_mightsleep(&test_srcu, NULL);
	for (int i = 0; i < 100; i++) {
		free_rcu(obj_new(1), rh);
		free_qsbr(obj_new(2), rh);
		free_srcu(&test_srcu, obj_new(3), rh);
		free_rcu_mightsleep(obj_new(4));
		free_qsbr_mightsleep(obj_new(5));
		free_srcu_mightsleep(&test_srcu, obj_new(6));
		/* rcu_head 3000 bytes in: the engine path (srcu) must free the object's start. */
		far = (struct far_obj *)malloc(sizeof(*far));
		REQUIRE(far);
		far->magic = MAGIC_LIVE;
		__atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED);
		free_srcu(&test_srcu, far, rh);
		far = (struct far_obj *)malloc(sizeof(*far));
		REQUIRE(far);
		far->magic = MAGIC_LIVE;
		__atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED);
		free_rcu(far, rh);
	}
	free_rcu_barrier();
	free_qsbr_barrier();
	free_srcu_barrier(&test_srcu);
	CHECK_MSG(freed() - f0 == 800, "%llu of 800 freed", (unsigned long long)(freed() - f0));
	CHECK(__atomic_load_n(&n_bad, __ATOMIC_RELAXED) == 0);
}

/* ---- contexts: inside a read-side section, from a callback ---- */

static uint64_t cb_ran;
static void cb_frees(struct rcu_head *h)
{
	free(h);
	/* From a callback: the engine path (free_rcu_mightsleep would be a misuse here: it may
	 * wait for a grace period). */
	for (int i = 0; i < 20; i++)
		free_rcu(obj_new(7), rh);
	__atomic_fetch_add(&cb_ran, 1, __ATOMIC_RELEASE);
}

TEST(free_in_section_and_from_callback)
{
	uint64_t f0 = freed();

	rcu_read_lock();
	for (int i = 0; i < 1000; i++)
		free_rcu(obj_new(9), rh); /* legal in a section: never waits here */
	rcu_read_unlock();
	cb_ran = 0;
	for (int i = 0; i < 10; i++)
		call_rcu((struct rcu_head *)malloc(sizeof(struct rcu_head)), cb_frees);
	rcu_barrier(); /* the callbacks ran (they queued on the engine path) */
	CHECK(__atomic_load_n(&cb_ran, __ATOMIC_ACQUIRE) == 10);
	free_rcu_barrier();
	CHECK_MSG(freed() - f0 == 1200, "%llu of 1200 freed", (unsigned long long)(freed() - f0));
}

/* ---- a thread that stops calling, a thread that exits ---- */

struct idle_arg {
	int n;
	pthread_mutex_t m;
	pthread_cond_t cv;
	int go_on;
	int queued; /* the thread has queued its objects and waits */
};

/* The idle thread has queued n objects: say so, then stop calling but stay alive until told. */
static void idle_park(struct idle_arg *a, int n)
{
	pthread_mutex_lock(&a->m);
	a->n = n;
	a->queued = 1;
	pthread_cond_broadcast(&a->cv);
	while (!a->go_on)
		pthread_cond_wait(&a->cv, &a->m);
	pthread_mutex_unlock(&a->m);
}

/* No barrier: the monitor must take the idle thread's blocks. Liveness only: up to 20 s (a grace
 * period or two, normally). Then let the thread go and join it. Returns what was freed meanwhile
 * of the n objects queued since freed() was f0. */
static uint64_t idle_taken(struct idle_arg *a, pthread_t t, uint64_t f0, uint64_t n)
{
	uint64_t t0 = gt_now_ns();
	while (freed() - f0 < n && gt_now_ns() - t0 < 20000000000ull)
		gt_sleep_ms(1);
	uint64_t got = freed() - f0;
	pthread_mutex_lock(&a->m);
	a->go_on = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->m);
	pthread_join(t, NULL);
	return got;
}

static void *idle_thread(void *arg)
{
	struct idle_arg *a = (struct idle_arg *)arg;
	for (int i = 0; i < a->n; i++)
		free_rcu(obj_new((uint32_t)i), rh);
	idle_park(a, a->n);
	return NULL;
}

TEST(idle_thread_cache_is_taken)
{
	struct idle_arg a = { 300, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	pthread_t t;
	uint64_t f0 = freed();

	pthread_create(&t, NULL, idle_thread, &a);
	uint64_t got = idle_taken(&a, t, f0, 300);
	CHECK_MSG(got == 300, "an idle thread's objects: %llu of 300 freed without a barrier",
		  (unsigned long long)got);
}

/* The call that seals a block starts the next one, empty, from the spare (engine/free.c,
 * cache_put()). A thread that stops calling right then leaves a cache whose cur holds nothing:
 * the monitor must still take its blocks, make the empty cur the spare again, and the thread's
 * exit must free both. Where the window is open (release builds with membarrier), the thread
 * stops at the first call after which it is open on an empty block; elsewhere (the debug and
 * ASan builds among them) after the count, so the leak check of this path is valgrind's, run by
 * hand on the release build (valgrind --leak-check=full unit_free <this case>). */
static void *seal_then_idle(void *arg)
{
	struct idle_arg *a = (struct idle_arg *)arg;
	int i = 0;

	for (; i < a->n; i++) {
		free_rcu(obj_new((uint32_t)i), rh);
		struct grace__retire *t = grace__memb_retire;
		if (i >= 200 && t && __atomic_load_n(&t->lim, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&t->n, __ATOMIC_RELAXED) == 0) {
			i++;
			break;
		}
	}
	idle_park(a, i);
	return NULL;
}

TEST(idle_right_after_a_seal_hands_everything_over)
{
	struct idle_arg a = { 20000, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	pthread_t t;
	uint64_t f0 = freed();

	pthread_create(&t, NULL, seal_then_idle, &a);
	pthread_mutex_lock(&a.m);
	while (!a.queued)
		pthread_cond_wait(&a.cv, &a.m);
	pthread_mutex_unlock(&a.m);
	uint64_t got = idle_taken(&a, t, f0, (uint64_t)a.n);
	printf("  stopped after %d objects; %llu freed without a barrier\n", a.n,
	       (unsigned long long)got);
	CHECK_MSG(got == (uint64_t)a.n,
		  "an idle thread's objects: %llu of %d freed without a barrier",
		  (unsigned long long)got, a.n);
}

static void *exiting_thread(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		if (i & 1)
			free_rcu(obj_new((uint32_t)i), rh);
		else
			free_qsbr_mightsleep(obj_new((uint32_t)i));
	}
	return NULL; /* exits with its caches full */
}

TEST(exiting_thread_hands_over)
{
	pthread_t t[4];
	uint64_t f0 = freed();

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, exiting_thread, (void *)5000L);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* The exited threads' objects are callbacks of the engine now: the plain barriers do. */
	rcu_barrier();
	qsbr_barrier();
	CHECK_MSG(freed() - f0 == 20000, "%llu of 20000 freed after the exits and barriers",
		  (unsigned long long)(freed() - f0));
}

/* ---- the per-thread bound, with a reader that stalls grace periods ---- */

struct bound_arg {
	int hold;
	uint64_t max_pending;       /* over the whole flood */
	uint64_t max_pending_early; /* while the first bounded wait may still last (< 0.9 s) */
	uint64_t queued;
};

static void *stalling_reader(void *arg)
{
	struct bound_arg *b = (struct bound_arg *)arg;
	rcu_read_lock();
	__atomic_store_n(&g_stall_holds, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&b->hold, 1, __ATOMIC_RELEASE);
	gt_sleep_ms(2500);
	__atomic_store_n(&g_stall_holds, 0, __ATOMIC_RELEASE);
	rcu_read_unlock();
	return NULL;
}

static void *flooder(void *arg)
{
	struct bound_arg *b = (struct bound_arg *)arg;
	uint64_t f0 = freed(), a0 = allocated(), t0 = gt_now_ns();
	for (int i = 0; i < 100000; i++) {
		free_rcu(obj_new((uint32_t)i | FLOOD_TAG), rh);
		uint64_t pend = (allocated() - a0) - (freed() - f0);
		if (pend > b->max_pending)
			b->max_pending = pend;
		if (gt_now_ns() - t0 < 900000000ull && pend > b->max_pending_early)
			b->max_pending_early = pend;
	}
	b->queued = allocated() - a0;
	return NULL;
}

TEST(bound_holds_while_a_reader_stalls)
{
	struct bound_arg b = { 0, 0, 0, 0 };
	pthread_t r, w;
	unsigned int old = grace_get_stall_timeout_ms();
	/* GRACE_FREE_WORKER=1: every object is a callback of the engine, bounded by its limits
	 * (hard x CPUs, + 32 per queuing thread); made small here. */
	bool worker = worker_mode();
	/* While the reader stalls: 65536 in the thread's cache (+ the block being sealed) until a
	 * bounded wait gives up; then, as call_rcu() at its hard limit, calls queue without waiting
	 * until a grace period completes (the flood's 100000 stay under the bound below). When it
	 * ends, the monitor may have handed a cache's worth to the engine (waiting one more grace
	 * period) as the thread refills it. */
	uint64_t bound = 2 * 65536 + 1024;

	if (worker) {
		long ncpu = sysconf(_SC_NPROCESSORS_CONF);
		CHECK(grace_rcu_set_callback_limits(1000, 10000) == 0);
		bound = 10000ull * (uint64_t)(ncpu > 0 ? ncpu : 1) + 1024;
	}
	grace_set_stall_timeout_ms(1000); /* the bounded wait lasts at least 1 s */
	pthread_create(&r, NULL, stalling_reader, &b);
	while (!__atomic_load_n(&b.hold, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	pthread_create(&w, NULL, flooder, &b);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	grace_set_stall_timeout_ms(old);
	if (worker)
		grace_rcu_set_callback_limits(10000, 100000);
	free_rcu_barrier();
	printf("  %llu queued, at most %llu waiting at once (bound %llu)\n",
	       (unsigned long long)b.queued, (unsigned long long)b.max_pending,
	       (unsigned long long)bound);
	/* Past the bound, a call waits for the oldest block's grace period at most the stall
	 * timeout and then frees what has ended: nothing the stalled reader may hold. */
	CHECK_MSG(__atomic_load_n(&n_early, __ATOMIC_RELAXED) == 0,
		  "%llu objects of the flood freed while the reader that began before it held its "
		  "section",
		  (unsigned long long)__atomic_load_n(&n_early, __ATOMIC_RELAXED));
	if (!worker) {
		CHECK_MSG(b.max_pending <= bound, "%llu objects waited at once",
			  (unsigned long long)b.max_pending);
		return;
	}
	/* The engine's rule (call_rcu() past the hard limit, api.md): a call waits for progress
	 * for at most the stall timeout, and once a wait has given up (with a warning) calls queue
	 * without waiting until a callback runs again. So the bound holds until the wait gives
	 * up, and the program is told when it stops holding. */
	CHECK_MSG(b.max_pending_early <= bound, "%llu objects waited at once within 0.9 s",
		  (unsigned long long)b.max_pending_early);
}

/* ---- fork with objects cached ---- */

TEST(fork_with_cached_objects)
{
	uint64_t f0 = freed(), a0 = allocated();

	for (int i = 0; i < 500; i++)
		free_rcu(obj_new((uint32_t)i), rh);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* The child inherits the cache: more frees, a barrier, all freed. */
		for (int i = 0; i < 500; i++)
			free_rcu(obj_new((uint32_t)i), rh);
		free_rcu_barrier();
		/* GRACE_FREE_WORKER=1 too: the child resumes the batch a worker was invoking when
		 * the parent forked, from the callback after the last one started. A callback fork
		 * stopped waiting for (a worker blocked in it, or preempted past 2 s: the child
		 * warned) counts as run here: with every free on the engine path that is one object
		 * each; a monitor's pass frees many. */
		uint64_t nf = freed() - f0, na = allocated() - a0;
		uint64_t lost = grace__cb_fork_abandoned_total;
		bool ok = nf == na || (nf < na && lost && (!worker_mode() || na - nf <= lost));
		if (!ok)
			fprintf(stderr,
				"  child: %llu queued, %llu freed after the barrier (%llu "
				"callbacks counted as run unfinished)\n",
				(unsigned long long)na, (unsigned long long)nf,
				(unsigned long long)lost);
		_exit(ok ? 0 : 1);
	}
	REQUIRE(pid > 0);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	free_rcu_barrier();
	CHECK(freed() - f0 == allocated() - a0);
}

/* Last: leave objects queued in this thread's cache and in an idle thread's cache, and exit:
 * exit_check() verifies the library freed them all. */
static struct idle_arg exit_idle = { 200, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
				     0 };
TEST(zz_exit_with_objects_cached)
{
	pthread_t t;
	pthread_create(&t, NULL, idle_thread, &exit_idle);
	pthread_detach(t); /* still blocked in idle_thread at exit */
	/* Its objects are queued before the exit begins (a thread that queues while the process
	 * exits may queue after the library's exit drain: those are not freed). */
	for (;;) {
		pthread_mutex_lock(&exit_idle.m);
		int q = exit_idle.queued;
		pthread_mutex_unlock(&exit_idle.m);
		if (q)
			break;
		gt_sleep_ms(1);
	}
	for (int i = 0; i < 200; i++) {
		free_rcu(obj_new((uint32_t)i), rh);
		free_qsbr(obj_new((uint32_t)i), rh);
		free_srcu(&test_srcu, obj_new((uint32_t)i), rh);
	}
	exit_expect_extra = allocated() - freed();
	CHECK(true);
}

GT_MAIN()
