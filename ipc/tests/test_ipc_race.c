/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc under races, both implementations: worker threads operate on sets while churn
 * threads remove and recreate them (growing the ID array as they go), and sleepers block on sets
 * until the sets are removed.
 *
 * Checked, per call:
 *  - every operation either completes or fails with -EIDRM / -EINVAL (plus -EAGAIN where the
 *    call asked for NOWAIT or a timeout); nothing else, no crash, no use after free (ASan/TSan
 *    builds), nothing leaked at the end (LSan);
 *  - all-or-nothing under concurrency: workers only ever change semaphores 0 and 1 of a set
 *    together, so every GETALL snapshot has sem[0] == sem[1];
 *  - a sleeper that waits on a semaphore nobody increments returns only when its set is removed
 *    (-EIDRM), or finds the set already gone (-EINVAL) or never sees it blocked (-EIDRM).
 * Usage: ipc_race [seconds per implementation]   (default 0.4)
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

#define HANDLES 8
#define WORKERS 3
#define CHURNERS 2
#define SLEEPERS 2
#define FILLER 200 /* extra sets created and removed by a churner: array growth */

static double g_seconds = 0.4;

struct race {
	struct grace_ipc_ns *ns;
	int ids[HANDLES]; /* current ID per handle; read and written with atomics */
	int stop;
	/* outcome counters */
	unsigned long ok, eidrm, einval, eagain, bad;
	unsigned long creates, removes, sleeps_eidrm;
};

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void count(struct race *r, int ret, bool nowait)
{
	unsigned long *c;

	if (ret >= 0)
		c = &r->ok;
	else if (ret == -EIDRM)
		c = &r->eidrm;
	else if (ret == -EINVAL)
		c = &r->einval;
	else if (ret == -EAGAIN && nowait)
		c = &r->eagain;
	else {
		fprintf(stderr, "  unexpected result %d\n", ret);
		c = &r->bad;
	}
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static bool stopped(struct race *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

static void *worker(void *arg)
{
	struct race *r = (struct race *)arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;

	while (!stopped(r)) {
		int id = __atomic_load_n(&r->ids[rnd(&seed) % HANDLES], __ATOMIC_RELAXED);
		struct grace_ipc_sembuf b[2];
		unsigned short v[3];
		struct timespec ts = { 0, 200 * 1000 };
		int ret;

		switch (rnd(&seed) % 6) {
		case 0: /* both up, together */
			b[0].sem_num = 0, b[0].sem_op = 1, b[0].sem_flg = 0;
			b[1].sem_num = 1, b[1].sem_op = 1, b[1].sem_flg = 0;
			count(r, grace_ipc_semop(r->ns, id, b, 2), false);
			break;
		case 1: /* both down, together, without blocking */
			b[0].sem_num = 0, b[0].sem_op = -1, b[0].sem_flg = GRACE_IPC_NOWAIT;
			b[1].sem_num = 1, b[1].sem_op = -1, b[1].sem_flg = GRACE_IPC_NOWAIT;
			count(r, grace_ipc_semop(r->ns, id, b, 2), true);
			break;
		case 2: /* both down, sleeping at most 200 us */
			b[0].sem_num = 0, b[0].sem_op = -1, b[0].sem_flg = 0;
			b[1].sem_num = 1, b[1].sem_op = -1, b[1].sem_flg = 0;
			count(r, grace_ipc_semtimedop(r->ns, id, b, 2, &ts), true);
			break;
		case 3: /* atomic snapshot */
			ret = grace_ipc_getall(r->ns, id, v, 3);
			count(r, ret, false);
			if (ret >= 0 && ret != 3) {
				fprintf(stderr, "  id %d reached a set of %d\n", id, ret);
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
			if (ret == 3 && v[0] != v[1]) {
				fprintf(stderr, "  torn set %d: %u %u\n", id, v[0], v[1]);
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
			break;
		case 4:
			count(r, grace_ipc_getval(r->ns, id, (int)(rnd(&seed) % 3)), false);
			count(r, grace_ipc_getncnt(r->ns, id, 2), false);
			break;
		default: { /* an ID of a set with 3 semaphores must never reach a filler set (1) */
			struct grace_ipc_semid_ds ds;

			ret = grace_ipc_stat(r->ns, id, &ds);
			count(r, ret, false);
			if (ret == 0 && ds.nsems != 3) {
				fprintf(stderr, "  stale id %d reached a set of %d\n", id,
					ds.nsems);
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
			}
			break;
		}
		}
	}
	return NULL;
}

static void *churner(void *arg)
{
	struct race *r = (struct race *)arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;
	int filler[FILLER];
	int nfill = 0;

	while (!stopped(r)) {
		int k = (int)(rnd(&seed) % HANDLES);
		int old = __atomic_load_n(&r->ids[k], __ATOMIC_RELAXED);
		int ret = grace_ipc_rmid(r->ns, old);
		int id;

		count(r, ret, false); /* the other churner may have removed it first: EINVAL */
		if (ret == 0)
			__atomic_fetch_add(&r->removes, 1, __ATOMIC_RELAXED);
		id = grace_ipc_semget(r->ns, GRACE_IPC_PRIVATE, 3, 0600);
		REQUIRE(id >= 0);
		__atomic_fetch_add(&r->creates, 1, __ATOMIC_RELAXED);
		/* Publish the new ID unless the other churner replaced the handle meanwhile. */
		if (!__atomic_compare_exchange_n(&r->ids[k], &old, id, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			REQUIRE(grace_ipc_rmid(r->ns, id) == 0);
		/* Fill and empty the namespace now and then, so the ID array grows under the
		 * workers' lookups (the RCU registry never shrinks, so growth happens early; the
		 * refills still reuse slots under readers). */
		if (nfill < FILLER) {
			filler[nfill] = grace_ipc_semget(r->ns, GRACE_IPC_PRIVATE, 1, 0600);
			REQUIRE(filler[nfill] >= 0);
			nfill++;
		} else {
			while (nfill > 0)
				REQUIRE(grace_ipc_rmid(r->ns, filler[--nfill]) == 0);
		}
	}
	while (nfill > 0)
		REQUIRE(grace_ipc_rmid(r->ns, filler[--nfill]) == 0);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct race *r = (struct race *)arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;

	while (!stopped(r)) {
		int id = __atomic_load_n(&r->ids[rnd(&seed) % HANDLES], __ATOMIC_RELAXED);
		struct grace_ipc_sembuf b = { 2, -1, 0 }; /* nobody ever increments sem 2 */
		int ret = grace_ipc_semop(r->ns, id, &b, 1);

		if (ret == -EIDRM)
			__atomic_fetch_add(&r->sleeps_eidrm, 1, __ATOMIC_RELAXED);
		if (ret == 0) {
			fprintf(stderr, "  sleeper completed a decrement nobody allowed\n");
			__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		}
		count(r, ret, false);
	}
	return NULL;
}

static int run_race(enum grace_ipc_impl impl)
{
	struct race r;
	pthread_t w[WORKERS], c[CHURNERS], s[SLEEPERS];
	int i;

	memset(&r, 0, sizeof(r));
	REQUIRE(grace_ipc_ns_create(impl, NULL, &r.ns) == 0);
	for (i = 0; i < HANDLES; i++)
		r.ids[i] = grace_ipc_semget(r.ns, GRACE_IPC_PRIVATE, 3, 0600);
	for (i = 0; i < WORKERS; i++)
		REQUIRE(pthread_create(&w[i], NULL, worker, &r) == 0);
	for (i = 0; i < CHURNERS; i++)
		REQUIRE(pthread_create(&c[i], NULL, churner, &r) == 0);
	for (i = 0; i < SLEEPERS; i++)
		REQUIRE(pthread_create(&s[i], NULL, sleeper, &r) == 0);
	gt_sleep_ms((unsigned)(g_seconds * 1000));
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(c[i], NULL);
	/* Sleepers may still be blocked on live sets: removing every set wakes them. */
	for (i = 0; i < HANDLES; i++)
		(void)grace_ipc_rmid(r.ns, r.ids[i]);
	for (i = 0; i < SLEEPERS; i++)
		pthread_join(s[i], NULL);
	struct grace_ipc_ns_info info;
	grace_ipc_info(r.ns, &info);
	grace_ipc_ns_destroy(r.ns);
	printf("  %s: ok %lu eidrm %lu einval %lu eagain %lu; sets created %lu removed %lu; "
	       "sleepers woken by removal %lu; array %d slots after %lu grows; bad %lu\n",
	       grace_ipc_impl_name(impl), r.ok, r.eidrm, r.einval, r.eagain, r.creates, r.removes,
	       r.sleeps_eidrm, info.ary_size, info.grows, r.bad);
	if (r.bad || r.ok == 0 || r.removes == 0 || info.grows == 0 || info.sets != 0)
		return -1;
	return 0;
}

TEST(race_global_lock)
{
	CHECK(run_race(GRACE_IPC_GLOBAL_LOCK) == 0);
}

TEST(race_rcu)
{
	CHECK(run_race(GRACE_IPC_RCU) == 0);
}

int main(int argc, char **argv)
{
	const char *e = getenv("GRACE_IPC_RACE_SECONDS");

	if (e)
		g_seconds = atof(e);
	if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9') {
		g_seconds = atof(argv[1]);
		argc = 1;
	}
	return gt_main(argc, argv);
}
