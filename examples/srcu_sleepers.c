/* SPDX-License-Identifier: MIT */
/*
 * srcu: readers that sleep inside their read-side sections, and independent domains.
 *
 * Readers of the default flavor or QSBR should not block inside a section: every grace period
 * of the process waits for them meanwhile. srcu readers may: a section of domain d delays only
 * the grace periods of d. Here
 *   - the "storage" domain protects a backend descriptor that readers use across slow I/O (they
 *     sleep while holding it); the updater swaps the backend and frees the old one after
 *     synchronize_srcu(&storage) or call_srcu(&storage, ...);
 *   - the "stats" domain protects an unrelated settings object; its updater keeps completing
 *     grace periods while a storage reader is parked inside its section, because domains are
 *     independent (a global RCU would wait for that reader).
 * srcu readers need no registration; srcu_read_lock() returns an index that srcu_read_unlock()
 * takes back.
 *
 * Build against an installed grace:
 *   cc -O2 srcu_sleepers.c $(pkg-config --cflags --libs grace) -pthread -o srcu_sleepers
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <grace/srcu.h>

struct backend {
	int id;
	int live; /* 1 while published or possibly in use; 0 once freed (poison) */
	struct rcu_head rcu;
};
struct stats_cfg {
	int interval;
};

DEFINE_STATIC_SRCU(storage);
DEFINE_STATIC_SRCU(stats);
static struct backend *backend; /* protected by storage */
static struct stats_cfg *cfg;   /* protected by stats */
static int stop;

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

/* A reader that holds the backend across a (simulated) slow I/O operation. */
static void *io_reader(void *arg)
{
	unsigned long ops = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int idx = srcu_read_lock(&storage);
		struct backend *b = srcu_dereference(backend, &storage);
		sleep_us(500); /* blocking inside the section: fine for srcu */
		if (!b->live) {
			fprintf(stderr, "io_reader: backend %d freed while in use\n", b->id);
			abort();
		}
		srcu_read_unlock(&storage, idx);
		ops++;
	}
	return (void *)ops;
}

/* A reader parked inside a storage section until main says so. */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int parked, release_parked;

static void *parked_reader(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(&storage);
	pthread_mutex_lock(&park_lock);
	parked = 1;
	pthread_cond_broadcast(&park_cond);
	while (!release_parked)
		pthread_cond_wait(&park_cond, &park_lock); /* sleeps inside the section */
	pthread_mutex_unlock(&park_lock);
	srcu_read_unlock(&storage, idx);
	return NULL;
}

static struct backend *backend_new(int id)
{
	struct backend *b = malloc(sizeof(*b));
	if (!b)
		abort();
	b->id = id;
	b->live = 1;
	return b;
}

static void backend_free_cb(struct rcu_head *h)
{
	struct backend *b = container_of(h, struct backend, rcu);
	b->live = 0;
	free(b);
}

int main(void)
{
	pthread_t io[2], park;
	unsigned long ops = 0;

	RCU_INIT_POINTER(backend, backend_new(0));
	cfg = calloc(1, sizeof(*cfg));
	for (int i = 0; i < 2; i++)
		pthread_create(&io[i], NULL, io_reader, NULL);

	/* Swap backends under sleeping readers: every wait covers their whole slow operation. */
	for (int id = 1; id <= 20; id++) {
		struct backend *old = rcu_dereference_protected(backend, 1 /* only main updates */);
		rcu_assign_pointer(backend, backend_new(id));
		if (id % 2) {
			synchronize_srcu(&storage); /* waits for the readers' sleeps to finish */
			old->live = 0;
			free(old);
		} else {
			call_srcu(&storage, &old->rcu, backend_free_cb);
		}
	}

	/* Independence: park a storage reader, then run stats grace periods meanwhile. */
	pthread_create(&park, NULL, parked_reader, NULL);
	pthread_mutex_lock(&park_lock);
	while (!parked)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	for (int i = 1; i <= 50; i++) {
		struct stats_cfg *n = malloc(sizeof(*n)), *old = rcu_dereference_protected(cfg, 1);
		n->interval = i;
		rcu_assign_pointer(cfg, n);
		synchronize_srcu(&stats); /* does not wait for the parked storage reader */
		free(old);
	}
	printf("srcu_sleepers: 50 stats grace periods completed while a storage reader slept in "
	       "its section (%lu storage readers active)\n",
	       grace_srcu_readers_active(&storage));
	pthread_mutex_lock(&park_lock);
	release_parked = 1;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	pthread_join(park, NULL);

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		void *n;
		pthread_join(io[i], &n);
		ops += (unsigned long)n;
	}
	printf("srcu_sleepers: %lu sleeping reads across 20 backend swaps (srcu mode %s)\n", ops,
	       grace_srcu_mode());

	srcu_barrier(&storage); /* the call_srcu() callbacks have run */
	free(rcu_dereference_protected(backend, 1));
	free(cfg);
	cleanup_srcu_struct(&storage);
	cleanup_srcu_struct(&stats);
	return 0;
}
