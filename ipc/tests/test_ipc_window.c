/* SPDX-License-Identifier: MIT */
/*
 * The race of seed 000, Fig. 11, made deterministic: a thread is parked (by a test hook in the
 * grace_ipc_hooked build) inside the RCU lookup, after it found a set and before it takes the
 * set's lock; meanwhile the main thread removes the set, reuses its slot, grows the ID array.
 * Checked:
 *  - the parked call returns -EIDRM (the `deleted` flag, checked after locking) and never
 *    blocks on, or changes, a removed set or the new set in the reused slot;
 *  - the removed set is not freed while the parked reader may use it: a grace period started
 *    after the removal cannot complete while the reader is parked (polled grace-period API),
 *    and ASan sees no use after free;
 *  - replaced ID arrays and the removed set are freed once the reader leaves (LSan).
 * A hang (the parked thread sleeping on a removed set) is caught by a 30 s join limit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <grace/rcu.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

extern void (*grace_ipc__hook_after_lookup)(int semid);

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int target; /* park calls on this ID only */
	bool parked, release;
} W = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, false, false };

static void park_hook(int semid)
{
	pthread_mutex_lock(&W.m);
	if (semid == W.target) {
		W.parked = true;
		pthread_cond_broadcast(&W.c);
		while (!W.release)
			pthread_cond_wait(&W.c, &W.m);
	}
	pthread_mutex_unlock(&W.m);
}

enum call { C_SEMOP, C_GETVAL, C_SETVAL, C_STAT };

struct parked {
	struct grace_ipc_ns *ns;
	int id;
	enum call call;
	int result;
	pthread_t th;
};

static void *parked_main(void *arg)
{
	struct parked *p = (struct parked *)arg;
	struct grace_ipc_sembuf b = { 0, -1, 0 }; /* would sleep: the value is 0 */
	struct grace_ipc_semid_ds ds;

	switch (p->call) {
	case C_SEMOP:
		p->result = grace_ipc_semop(p->ns, p->id, &b, 1);
		break;
	case C_GETVAL:
		p->result = grace_ipc_getval(p->ns, p->id, 0);
		break;
	case C_SETVAL:
		p->result = grace_ipc_setval(p->ns, p->id, 0, 7);
		break;
	case C_STAT:
		p->result = grace_ipc_stat(p->ns, p->id, &ds);
		break;
	}
	return NULL;
}

static void park(struct parked *p, struct grace_ipc_ns *ns, int id, enum call c)
{
	p->ns = ns;
	p->id = id;
	p->call = c;
	p->result = 12345;
	pthread_mutex_lock(&W.m);
	W.target = id;
	W.parked = false;
	W.release = false;
	pthread_mutex_unlock(&W.m);
	REQUIRE(pthread_create(&p->th, NULL, parked_main, p) == 0);
	pthread_mutex_lock(&W.m);
	while (!W.parked)
		pthread_cond_wait(&W.c, &W.m);
	pthread_mutex_unlock(&W.m);
}

/* Let the parked thread go; false if it does not finish (it hangs on a removed set). */
static bool unpark(struct parked *p)
{
	struct timespec dl;

	pthread_mutex_lock(&W.m);
	W.release = true;
	W.target = -1;
	pthread_cond_broadcast(&W.c);
	pthread_mutex_unlock(&W.m);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	return pthread_timedjoin_np(p->th, NULL, &dl) == 0;
}

TEST(remove_in_the_window_gives_eidrm)
{
	const enum call calls[4] = { C_SEMOP, C_GETVAL, C_SETVAL, C_STAT };

	grace_ipc__hook_after_lookup = park_hook;
	for (int i = 0; i < 4; i++) {
		struct grace_ipc_ns *ns;
		struct parked p;

		REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, NULL, &ns) == 0);
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0600);
		CHECK(id >= 0);
		park(&p, ns, id, calls[i]);
		CHECK(grace_ipc_rmid(ns, id) == 0); /* the parked thread holds no lock */
		/* A new set in the same slot: the parked call must not touch it. */
		int id2 = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0600);
		CHECK(id2 >= 0 && id2 != id);
		CHECK((id2 & 0x7fff) == (id & 0x7fff));
		CHECK(grace_ipc_setval(ns, id2, 0, 5) == 0);
		CHECK_MSG(unpark(&p), "call %d hangs on a removed set", i);
		CHECK_MSG(p.result == -EIDRM, "call %d returned %d", i, p.result);
		CHECK(grace_ipc_getval(ns, id2, 0) == 5);
		CHECK(grace_ipc_getncnt(ns, id2, 0) == 0);
		grace_ipc_ns_destroy(ns);
	}
	grace_ipc__hook_after_lookup = NULL;
}

TEST(removed_set_outlives_the_parked_reader)
{
	struct grace_ipc_ns *ns;
	struct grace_ipc_ns_info info;
	struct parked p;
	static int more[300];

	grace_ipc__hook_after_lookup = park_hook;
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, NULL, &ns) == 0);
	int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0600);
	park(&p, ns, id, C_SEMOP);
	CHECK(grace_ipc_rmid(ns, id) == 0);
	/* The removal queued the set's free; a grace period that starts now cannot end while the
	 * parked thread is inside its read-side section. */
	unsigned long cookie = start_poll_synchronize_rcu();
	for (int i = 0; i < 300; i++) { /* grow the ID array under the parked reader */
		more[i] = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0600);
		CHECK(more[i] >= 0);
	}
	grace_ipc_info(ns, &info);
	CHECK(info.grows >= 4);
	CHECK(!poll_state_synchronize_rcu(cookie));
	CHECK(unpark(&p));
	CHECK(p.result == -EIDRM);
	cond_synchronize_rcu(cookie); /* now it ends */
	CHECK(poll_state_synchronize_rcu(cookie));
	grace_ipc_ns_destroy(ns);
	grace_ipc__hook_after_lookup = NULL;
}

GT_MAIN()
