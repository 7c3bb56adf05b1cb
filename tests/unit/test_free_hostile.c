/* SPDX-License-Identifier: MIT */
/*
 * free_rcu() on hostile paths: fork() at the awkward moments, and a barrier that meets an owner
 * in the middle of its frees. Regressions of an independent review of src/engine/free.c, each
 * failing on the code it was filed against. ctest runs every test in its own process (the
 * test's name is the argument); the library's free is replaced by a counting hook (internal).
 *  - fork_counts_engine_frees: a worker invoking free_rcu() objects on the engine path
 *    (GRACE_FREE_WORKER=1) when the parent forks: the child resumes the batch from the worker's
 *    cursor, which did not count those objects, so the child's queued and invoked counts never
 *    met (pending > 0 after rcu_barrier(), exit waited its whole bound).
 *  - fork_while_waiting_at_bound: a thread waits at its per-thread bound when the parent forks;
 *    its cache stayed "waiting" for good in the child, whose monitor then re-queued itself at
 *    every grace period (thousands a second, in an idle child) and never freed the objects.
 *  - fork_during_barrier: free_rcu_barrier() in another thread, waiting for a grace period
 *    with every cache's blocks on its stack, when the parent forks: the child lost them.
 *  - barrier_meets_owner_frees: the owner took ready pointers out of its cache, let the cache
 *    go, then freed them; a free_rcu_barrier() in between returned before they were freed.
 *  - bound_gives_up_once: past the per-thread bound with a reader stuck, every call waited the
 *    whole bound (1 s each); as call_rcu() at its hard limit, one wait gives up and later calls
 *    queue until a grace period completes again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace/grace.h>

#include "engine/free.h"
#include "gtest_lite.h"

struct obj {
	long v[4];
	struct rcu_head rh;
};

static uint64_t n_alloc, n_freed;
static pthread_t held_thread; /* barrier_meets_owner_frees: the owner the hook holds */
static int hold_armed, hold_at, hold_release;

/* barrier_meets_owner_frees: hold the owner at its first free after the test arms the hook (a
 * preemption at that point), until released or 5 s. */
static void maybe_hold(void)
{
	if (__atomic_load_n(&hold_armed, __ATOMIC_ACQUIRE) &&
	    pthread_equal(pthread_self(), held_thread) &&
	    __atomic_exchange_n(&hold_armed, 0, __ATOMIC_ACQ_REL)) {
		__atomic_store_n(&hold_at, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 5000 && !__atomic_load_n(&hold_release, __ATOMIC_ACQUIRE); i++)
			gt_sleep_ms(1);
	}
}

static void counting_free(void *p)
{
	maybe_hold();
	free(p);
	__atomic_fetch_add(&n_freed, 1, __ATOMIC_RELEASE);
}

static struct obj *obj_new(void)
{
	struct obj *o = (struct obj *)calloc(1, sizeof(*o));
	REQUIRE(o);
	__atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED);
	return o;
}

static uint64_t freed(void)
{
	return __atomic_load_n(&n_freed, __ATOMIC_ACQUIRE);
}

static uint64_t allocated(void)
{
	return __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
}

/* Wait (at most limit_ms) until cond() holds. */
static bool wait_until(bool (*cond)(void), unsigned int limit_ms)
{
	for (unsigned int i = 0; i < limit_ms; i++) {
		if (cond())
			return true;
		gt_sleep_ms(1);
	}
	return cond();
}

static int child_status(pid_t pid)
{
	int st = 0;
	REQUIRE(pid > 0);
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- a reader that holds grace periods up ---- */

static int reader_phase; /* 1: inside its section; 2: told to leave */

static void *stuck_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&reader_phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&reader_phase, __ATOMIC_ACQUIRE) != 2)
		gt_sleep_ms(1);
	rcu_read_unlock();
	return NULL;
}

static void reader_start(pthread_t *r)
{
	REQUIRE(pthread_create(r, NULL, stuck_reader, NULL) == 0);
	while (__atomic_load_n(&reader_phase, __ATOMIC_ACQUIRE) != 1)
		gt_sleep_ms(1);
}

static void reader_stop(pthread_t r)
{
	__atomic_store_n(&reader_phase, 2, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
}

/* ---- fork while the worker invokes engine-path frees ---- */

static int flood_stop;

static void *flood(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&flood_stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < 4096; i++)
			free_rcu(obj_new(), rh);
		gt_sleep_ms(0);
	}
	return NULL;
}

static bool nothing_pending(void)
{
	struct grace_cb_stats st;
	grace_rcu_callback_stats(&st);
	return st.pending == 0;
}

TEST(fork_counts_engine_frees)
{
	pthread_t th;
	int bad = 0;

#if defined(__SANITIZE_THREAD__)
	/* Forks while another thread allocates without pause: a TSan fork child can inherit the
	 * runtime's allocator lock held, and hangs (release, debug and ASan builds run it). */
	printf("  skipped under TSan\n");
	return;
#endif
	REQUIRE(getenv("GRACE_FREE_WORKER")); /* ctest sets GRACE_FREE_WORKER=1 */
	REQUIRE(pthread_create(&th, NULL, flood, NULL) == 0);
	gt_sleep_ms(20);
	for (int r = 0; r < 40; r++) {
		gt_sleep_ms(2 + (unsigned int)(r * 7) % 5);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			rcu_barrier();
			struct grace_cb_stats st;
			grace_rcu_callback_stats(&st);
			if (st.pending)
				printf("  child %d: %llu pending after rcu_barrier() (queued %llu, "
				       "invoked %llu)\n",
				       r, (unsigned long long)st.pending,
				       (unsigned long long)st.queued,
				       (unsigned long long)st.invoked);
			fflush(stdout);
			_exit(st.pending ? 1 : 0);
		}
		if (child_status(pid) != 0)
			bad++;
	}
	__atomic_store_n(&flood_stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	CHECK_MSG(bad == 0, "%d of 40 fork children had callbacks pending after rcu_barrier()",
		  bad);
	rcu_barrier();
	CHECK(nothing_pending());
}

/* ---- fork while a thread waits at its per-thread bound ---- */

static int freer_phase; /* 1: about to pass the bound */

static void *bound_freer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 65536 + 200; i++) {
		if (i == 65536)
			__atomic_store_n(&freer_phase, 1, __ATOMIC_RELEASE);
		free_rcu(obj_new(), rh);
	}
	return NULL;
}

static bool all_freed(void)
{
	return freed() == allocated();
}

TEST(fork_while_waiting_at_bound)
{
	pthread_t r, f;

	grace_set_stall_timeout_ms(10000); /* the freer waits at its bound for the whole test */
	reader_start(&r);
	REQUIRE(pthread_create(&f, NULL, bound_freer, NULL) == 0);
	while (!__atomic_load_n(&freer_phase, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	gt_sleep_ms(100); /* inside its bounded wait */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* The reader and the freer do not exist here: grace periods complete. With no
		 * barrier, the freer's cache (a ghost here) must be emptied by its monitor, and the
		 * monitor must then stop: nothing pending, every object freed. The engine's workers
		 * restart at the child's first call (a grace period requested here). */
		(void)start_poll_synchronize_rcu();
		bool quiet = wait_until(nothing_pending, 20000);
		bool done = all_freed();
		if (!quiet || !done) {
			struct grace_cb_stats cs;
			grace_rcu_callback_stats(&cs);
			printf("  child: %s; %llu of %llu objects freed; %llu callbacks pending, "
			       "%llu grace periods\n",
			       quiet ? "engine idle" : "callbacks still pending after 20 s",
			       (unsigned long long)freed(), (unsigned long long)allocated(),
			       (unsigned long long)cs.pending,
			       (unsigned long long)cs.grace_periods);
		}
		fflush(stdout);
		_exit(quiet && done ? 0 : 1);
	}
	reader_stop(r);
	pthread_join(f, NULL);
	int st = child_status(pid);
	CHECK_MSG(st == 0, "child status %d", st);
	free_rcu_barrier();
	CHECK(all_freed());
}

/* ---- fork during another thread's free_rcu_barrier() ---- */

#define NBAR 3000
static int barrier_in;

static void *bar_owner(void *arg)
{
	(void)arg;
	for (int i = 0; i < NBAR; i++)
		free_rcu(obj_new(), rh);
	/* Stays alive and idle: its cache keeps the objects until the barrier takes them. */
	__atomic_store_n(&barrier_in, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&barrier_in, __ATOMIC_ACQUIRE) != 3)
		gt_sleep_ms(1);
	return NULL;
}

static void *bar_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&barrier_in, 2, __ATOMIC_RELEASE);
	free_rcu_barrier(); /* takes the owner's blocks, then waits for the stuck reader */
	return NULL;
}

TEST(fork_during_barrier)
{
	pthread_t r, o, b;

	reader_start(&r);
	REQUIRE(pthread_create(&o, NULL, bar_owner, NULL) == 0);
	while (__atomic_load_n(&barrier_in, __ATOMIC_ACQUIRE) != 1)
		gt_sleep_ms(1);
	REQUIRE(pthread_create(&b, NULL, bar_thread, NULL) == 0);
	while (__atomic_load_n(&barrier_in, __ATOMIC_ACQUIRE) != 2)
		gt_sleep_ms(1);
	gt_sleep_ms(100); /* the barrier has taken the blocks and waits for the reader */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		free_rcu_barrier();
		uint64_t n = freed();
		if (n != allocated())
			printf("  child: %llu of %llu objects freed after free_rcu_barrier()\n",
			       (unsigned long long)n, (unsigned long long)allocated());
		fflush(stdout);
		_exit(n == allocated() ? 0 : 1);
	}
	int st = child_status(pid);
	reader_stop(r);
	pthread_join(b, NULL);
	__atomic_store_n(&barrier_in, 3, __ATOMIC_RELEASE);
	pthread_join(o, NULL);
	CHECK_MSG(st == 0, "child status %d", st);
	free_rcu_barrier();
	CHECK(all_freed());
}

/* ---- a barrier against an owner between taking ready pointers and freeing them ---- */

#define NWIN 20000
#define WIN_SLOTS 65536 /* power of 2, > 2 x NWIN */
static int win_queued;
/* Object address -> index + 1, open addressing: debug builds poison an object before its free,
 * so the index cannot live in it. Filled by the owner before each free_rcu(); read by the hook
 * after the object's grace period. */
static struct obj *win_key[WIN_SLOTS];
static int win_val[WIN_SLOTS];
static uint8_t win_freed[NWIN];

static unsigned int win_slot(const void *p)
{
	return (unsigned int)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 48) & (WIN_SLOTS - 1);
}

static void *win_owner(void *arg)
{
	(void)arg;
	held_thread = pthread_self();
	for (int i = 0; i < NWIN; i++) {
		struct obj *o = obj_new();
		unsigned int k = win_slot(o);
		while (__atomic_load_n(&win_key[k], __ATOMIC_RELAXED))
			k = (k + 1) & (WIN_SLOTS - 1);
		__atomic_store_n(&win_val[k], i + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&win_key[k], o, __ATOMIC_RELEASE);
		free_rcu(o, rh);
		__atomic_store_n(&win_queued, i + 1, __ATOMIC_RELEASE);
		if (i == NWIN / 2) {
			/* Ready pointers build up; the hook then holds this thread at its next
			 * free of one of them. */
			synchronize_rcu();
			synchronize_rcu();
			__atomic_store_n(&hold_armed, 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	gt_sleep_ms(200); /* the barrier below is under way by then */
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void win_free(void *p)
{
	maybe_hold(); /* held before the object counts as freed */
	for (unsigned int k = win_slot(p);; k = (k + 1) & (WIN_SLOTS - 1)) {
		struct obj *o = __atomic_load_n(&win_key[k], __ATOMIC_ACQUIRE);
		if (!o)
			break;
		if (o == p) {
			int v = __atomic_load_n(&win_val[k], __ATOMIC_RELAXED);
			__atomic_store_n(&win_freed[v - 1], 1, __ATOMIC_RELEASE);
			__atomic_fetch_add(&n_freed, 1, __ATOMIC_RELEASE);
			return; /* freed at the end of the test: no address is reused before */
		}
	}
	counting_free(p);
}

TEST(barrier_meets_owner_frees)
{
	pthread_t o, rel;
	int missing = 0;

	grace__free_fn = win_free;
	REQUIRE(pthread_create(&o, NULL, win_owner, NULL) == 0);
	while (!__atomic_load_n(&hold_at, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	/* The owner is held inside a call: every object whose call returned was queued before
	 * the barrier below, and must be freed when it returns. */
	int q = __atomic_load_n(&win_queued, __ATOMIC_ACQUIRE);
	REQUIRE(pthread_create(&rel, NULL, releaser, NULL) == 0);
	free_rcu_barrier();
	for (int i = 0; i < q; i++)
		if (!__atomic_load_n(&win_freed[i], __ATOMIC_ACQUIRE))
			missing++;
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	pthread_join(rel, NULL);
	pthread_join(o, NULL);
	free_rcu_barrier();
	for (unsigned int k = 0; k < WIN_SLOTS; k++)
		free(win_key[k]); /* every test object, freed by the hook or not */
	CHECK_MSG(missing == 0,
		  "free_rcu_barrier() returned with %d of the %d objects queued "
		  "before it not freed",
		  missing, q);
	CHECK(all_freed());
}

/* ---- past the per-thread bound with a reader stuck: one wait, not one per call ---- */

static int bound_calls_done;

static void *bound_caller(void *arg)
{
	(void)arg;
	/* 65536 fill the cache; each of the next calls is past the bound. With one wait that
	 * gives up after 1 s, they all finish while the reader is still stuck; with a wait per
	 * call, 2000 of them would take over half an hour. */
	for (int i = 0; i < 65536 + 2000; i++)
		free_rcu(obj_new(), rh);
	__atomic_store_n(&bound_calls_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool bound_done(void)
{
	return __atomic_load_n(&bound_calls_done, __ATOMIC_ACQUIRE) != 0;
}

TEST(bound_gives_up_once)
{
	pthread_t r, c;

	grace_set_stall_timeout_ms(1000); /* a bounded wait lasts 1 s */
	reader_start(&r);
	REQUIRE(pthread_create(&c, NULL, bound_caller, NULL) == 0);
	/* The reader stays in its section until the calls are done, or 60 s. */
	bool done = wait_until(bound_done, 60000);
	reader_stop(r);
	pthread_join(c, NULL);
	CHECK_MSG(done, "2000 calls past the bound did not finish in 60 s with a reader stuck");
	free_rcu_barrier();
	CHECK(all_freed());
}

/* Installed before main(): the hook must be in place before the first free_rcu(). */
__attribute__((constructor)) static void install_hook(void)
{
	grace__free_fn = counting_free;
}

GT_MAIN()
