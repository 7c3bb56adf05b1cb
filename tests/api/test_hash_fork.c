/* SPDX-License-Identifier: MIT */
/*
 * grace_hash and fork() (regression tests from an independent review of src/ds/hash.c): a child
 * forked while another thread updates or resizes a table gets a table it can use, resize and
 * destroy. Each fork's child runs under a watchdog, so a hang fails the case instead of stalling
 * the program.
 *  - fork_during_sync_resize: another thread loops in grace_hash_resize(); the child inherited
 *    `resizing` set with no thread to clear it (grace_hash_resize()/destroy() looped for ever).
 *  - fork_during_inline_auto_resize: another thread adds and deletes across the automatic-resize
 *    limits (small table: resizes run in the updating thread); the child inherited a stripe lock
 *    held (its first add on that stripe never returned), or a background step queued that its
 *    resize's wait (synchronize only) never ran.
 *  - fork_during_background_resize: the same with a table past the inline limit, so the steps
 *    run as flavor callbacks: the child's wait must get its engine to run the inherited step.
 *  - child_without_engine_call: as above, but the child's first table call is the resize (no
 *    update before it that would restart the child's callback workers).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace/grace.h>
#include <grace/hash.h>
#include "gtest_lite.h"
#include "hash_obj.h"

static struct obj *obj_new(uint64_t k)
{
	struct obj *o = (struct obj *)calloc(1, sizeof(*o));
	REQUIRE(o);
	o->key = k;
	return o;
}

#define BASE_KEYS 2000u

static struct grace_hash *fork_ht;
static int fork_stop;
static int fork_rounds;
static uint64_t churn_n; /* keys the churner adds and deletes per round */

static struct grace_hash *make_table(unsigned flags)
{
	struct grace_hash_params p;
	memset(&p, 0, sizeof(p));
	p.hash = hash_key;
	p.match = match_key;
	p.free = obj_free;
	p.init_buckets = 64;
	p.min_buckets = 8;
	p.flags = flags;
	struct grace_hash *ht = grace_hash_create(&p);
	REQUIRE(ht);
	for (uint64_t k = 0; k < BASE_KEYS; k++) {
		struct obj *o = obj_new(k);
		REQUIRE(grace_hash_add(ht, &o->hn, &o->key) == 0);
	}
	return ht;
}

static bool stopping(void)
{
	return __atomic_load_n(&fork_stop, __ATOMIC_RELAXED) != 0;
}

static void round_done(void)
{
	__atomic_fetch_add(&fork_rounds, 1, __ATOMIC_RELAXED);
}

static void *sync_resizer(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !stopping(); i++) {
		REQUIRE(grace_hash_resize(fork_ht, (i & 1) ? 8 : 8192) == 0);
		round_done();
	}
	return NULL;
}

/* Grow past the load limit and shrink below it again: each crossing starts a resize. */
static void *auto_churner(void *arg)
{
	(void)arg;
	while (!stopping()) {
		for (uint64_t k = 100000; k < 100000 + churn_n; k++) {
			struct obj *o = obj_new(k);
			REQUIRE(grace_hash_add(fork_ht, &o->hn, &o->key) == 0);
		}
		for (uint64_t k = 100000; k < 100000 + churn_n; k++)
			REQUIRE(grace_hash_del_key(fork_ht, &k) == 0);
		round_done();
	}
	return NULL;
}

static bool child_updates_first = true;

/* In the child: the base keys are all there; the table takes updates, resizes, destroys. */
static void child_uses_table(void)
{
	if (child_updates_first) {
		for (uint64_t k = 200000; k < 200000 + 512; k++) {
			struct obj *o = obj_new(k);
			REQUIRE(grace_hash_add(fork_ht, &o->hn, &o->key) == 0);
		}
	}
	REQUIRE(grace_hash_resize(fork_ht, 256) == 0);
	REQUIRE(grace_hash_buckets(fork_ht) == 256);
	rcu_read_lock();
	for (uint64_t k = 0; k < BASE_KEYS; k++)
		REQUIRE(grace_hash_lookup(fork_ht, &k) != NULL);
	rcu_read_unlock();
	for (uint64_t k = 200000; k < 200000 + 64; k++) {
		struct obj *o = obj_new(k + 1000);
		REQUIRE(grace_hash_add(fork_ht, &o->hn, &o->key) == 0);
	}
	REQUIRE(grace_hash_resize(fork_ht, 4096) == 0);
	struct grace_hash_stats st;
	grace_hash_get_stats(fork_ht, &st);
	REQUIRE(!st.resizing && st.buckets == 4096);
	grace_hash_destroy(fork_ht);
}

/* Run the child under a watchdog; 0 if it exited 0. */
static int run_watched(unsigned secs)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(secs);
		child_uses_table();
		_exit(0);
	}
	int st = 0;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	if (WIFSIGNALED(st))
		fprintf(stderr, "  child killed by signal %d%s\n", WTERMSIG(st),
			WTERMSIG(st) == SIGALRM ? " (watchdog: hang)" : "");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* Fork `forks` times while worker runs; returns the number of the first failed fork (0: none). */
static int fork_while(void *(*worker)(void *), unsigned flags, unsigned forks)
{
	pthread_t th;
	int bad = 0;

	fork_ht = make_table(flags);
	fork_stop = 0;
	fork_rounds = 0;
	REQUIRE(pthread_create(&th, NULL, worker, NULL) == 0);
	while (__atomic_load_n(&fork_rounds, __ATOMIC_RELAXED) == 0)
		gt_sleep_ms(1);
	for (unsigned i = 0; i < forks && !bad; i++) {
		if (run_watched(10) != 0)
			bad = (int)i + 1;
		gt_sleep_ms(2);
	}
	__atomic_store_n(&fork_stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	grace_hash_destroy(fork_ht);
	if (bad)
		fprintf(stderr, "  the child of fork %d failed\n", bad);
	return bad;
}

TEST(fork_during_sync_resize)
{
	CHECK(fork_while(sync_resizer, 0, 20) == 0);
}

TEST(fork_during_inline_auto_resize)
{
	churn_n = 3000; /* the table stays under the inline-resize limit */
	CHECK(fork_while(auto_churner, GRACE_HASH_AUTO_RESIZE, 40) == 0);
}

TEST(fork_during_background_resize)
{
	churn_n = 40000; /* grows past the inline limit: steps run as callbacks */
	CHECK(fork_while(auto_churner, GRACE_HASH_AUTO_RESIZE, 20) == 0);
}

TEST(child_without_engine_call)
{
	churn_n = 40000;
	child_updates_first = false;
	CHECK(fork_while(auto_churner, GRACE_HASH_AUTO_RESIZE, 20) == 0);
	child_updates_first = true;
}

GT_MAIN()
