/* SPDX-License-Identifier: MIT */
/*
 * Poison stress test: readers dereference a pointer that updaters replace and retire after a
 * grace period; a retired object is poisoned, then recycled (generation bumped) a while later.
 * A reader that sees poison, or an object whose generation changes during its section, held it
 * across a grace period: failure.
 * Usage: stress FLAVOR(rcu|qsbr) THREADS SECONDS   (updaters = THREADS/4, at least 1)
 */
#include <pthread.h>
#include <grace/grace.h>
#include "gtest_lite.h"

#define LIVE 0x11fe11fe11fe11feull
#define POISON 0xdeaddeaddeaddeadull
#define POOL 256

struct obj {
	uint64_t magic;
	uint64_t gen;
	uint64_t pad[6];
};

static struct obj pool[POOL];
static struct obj *retired[POOL]; /* FIFO of poisoned objects, oldest reused first */
static unsigned int r_head, r_tail;
static pthread_mutex_t upd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj *cur;
static int qsbr_mode, stop;
static unsigned long failures, sections, updates;

static void *reader(void *arg)
{
	unsigned long n = 0, bad = 0;
	(void)arg;
	if (qsbr_mode)
		qsbr_register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (qsbr_mode)
			qsbr_read_lock();
		else
			rcu_read_lock();
		struct obj *p = rcu_dereference(cur);
		uint64_t m1 = p->magic, g1 = p->gen;
		for (volatile int i = 0; i < (int)(n & 63); i++) {
		}
		uint64_t m2 = p->magic, g2 = p->gen;
		if (qsbr_mode) {
			qsbr_read_unlock();
			qsbr_quiescent_state();
		} else {
			rcu_read_unlock();
		}
		if (m1 != LIVE || m2 != LIVE || g1 != g2)
			bad++;
		n++;
	}
	if (qsbr_mode)
		qsbr_unregister_thread();
	__atomic_fetch_add(&failures, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sections, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *updater(void *arg)
{
	unsigned long n = 0;
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&upd_lock);
		struct obj *p = retired[r_head++ % POOL]; /* oldest poisoned object */
		p->gen++;
		p->magic = LIVE;
		struct obj *old = rcu_xchg_pointer(&cur, p);
		pthread_mutex_unlock(&upd_lock);
		if (qsbr_mode)
			(n & 7) ? synchronize_qsbr() : synchronize_qsbr_expedited();
		else
			(n & 7) ? synchronize_rcu() : synchronize_rcu_expedited();
		/* No reader can hold old any more: poison it, then queue it for reuse. */
		old->magic = POISON;
		pthread_mutex_lock(&upd_lock);
		retired[r_tail++ % POOL] = old;
		pthread_mutex_unlock(&upd_lock);
		n++;
	}
	__atomic_fetch_add(&updates, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *flavor = argc > 1 ? argv[1] : "rcu";
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	double secs = argc > 3 ? atof(argv[3]) : 2.0;
	int nupd = threads / 4 > 0 ? threads / 4 : 1;
	int nrd = threads - nupd > 0 ? threads - nupd : 1;
	pthread_t t[64];

	qsbr_mode = strcmp(flavor, "qsbr") == 0;
	for (int i = 0; i < POOL; i++) {
		pool[i].magic = POISON;
		retired[i] = &pool[i];
	}
	r_tail = POOL;
	struct obj *first = retired[r_head++];
	first->magic = LIVE;
	rcu_assign_pointer(cur, first);
	for (int i = 0; i < nrd && i < 48; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < nupd; i++)
		pthread_create(&t[48 + i], NULL, updater, NULL);
	gt_sleep_ms((unsigned)(secs * 1000));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nrd && i < 48; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < nupd; i++)
		pthread_join(t[48 + i], NULL);
	printf("stress %s: %d readers, %d updaters, %.1f s: %lu sections, %lu grace periods waited, "
	       "%lu failures\n",
	       flavor, nrd, nupd, secs, sections, updates, failures);
	if (updates == 0 || sections == 0) {
		printf("0 passed, 1 failed (no progress)\n");
		return 1;
	}
	printf(failures ? "0 passed, 1 failed\n" : "1 passed, 0 failed\n");
	return failures ? 1 : 0;
}
