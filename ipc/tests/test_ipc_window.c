/* SPDX-License-Identifier: MIT */
/*
 * The race of seed 000, Fig. 11, made deterministic, for each type (semaphore sets, message
 * queues, segments): a thread is parked (by a test hook in the grace_ipc_hooked build) inside
 * the RCU lookup, after it found an object and before it takes the object's lock; meanwhile
 * the main thread removes the object, reuses its slot, grows the ID array.
 * Checked:
 *  - the parked call returns -EIDRM (the `deleted` flag, checked after locking) and never
 *    blocks on, or changes, a removed object or the new object in the reused slot;
 *  - the removed object is not freed while the parked reader may use it: a grace period
 *    started after the removal cannot complete while the reader is parked (polled
 *    grace-period API), and ASan sees no use after free;
 *  - replaced ID arrays and the removed object are freed once the reader leaves (LSan).
 * A hang (the parked thread sleeping on a removed object) is caught by a 30 s join limit.
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

extern void (*grace_ipc__hook_after_lookup)(int type, int id);

enum { T_SEM, T_MSG, T_SHM }; /* the library's type numbers */

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int type, target; /* park calls on this object only */
	bool parked, release;
} W = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, -1, false, false };

static void park_hook(int type, int id)
{
	pthread_mutex_lock(&W.m);
	if (type == W.type && id == W.target) {
		W.parked = true;
		pthread_cond_broadcast(&W.c);
		while (!W.release)
			pthread_cond_wait(&W.c, &W.m);
	}
	pthread_mutex_unlock(&W.m);
}

enum call {
	C_SEMOP,
	C_GETVAL,
	C_SETVAL,
	C_STAT, /* semaphores */
	C_MSGSND,
	C_MSGRCV,
	C_MSGSTAT, /* message queues */
	C_SHMAT,
	C_SHMSTAT,
	C_SHMLOCK, /* segments */
	C_NCALLS
};
static const int call_type[C_NCALLS] = { T_SEM, T_SEM, T_SEM, T_SEM, T_MSG,
					 T_MSG, T_MSG, T_SHM, T_SHM, T_SHM };

struct parked {
	struct grace_ipc_proc *p;
	int id;
	enum call call;
	long result;
	pthread_t th;
};

static void *parked_main(void *arg)
{
	struct parked *p = (struct parked *)arg;
	struct grace_ipc_sembuf b = { 0, -1, 0 }; /* would sleep: the value is 0 */
	struct grace_ipc_semid_ds ds;
	struct grace_ipc_msqid_ds mds;
	struct grace_ipc_shmid_ds sds;
	struct {
		long mtype;
		char text[8];
	} m = { 1, "x" };
	void *a = NULL;

	switch (p->call) {
	case C_SEMOP:
		p->result = grace_ipc_semop(p->p, p->id, &b, 1);
		break;
	case C_GETVAL:
		p->result = grace_ipc_getval(p->p, p->id, 0);
		break;
	case C_SETVAL:
		p->result = grace_ipc_setval(p->p, p->id, 0, 7);
		break;
	case C_STAT:
		p->result = grace_ipc_sem_stat(p->p, p->id, &ds);
		break;
	case C_MSGSND:
		p->result = grace_ipc_msgsnd(p->p, p->id, &m, 1, 0);
		break;
	case C_MSGRCV: /* would sleep: the queue is empty */
		p->result = (long)grace_ipc_msgrcv(p->p, p->id, &m, sizeof(m.text), 0, 0);
		break;
	case C_MSGSTAT:
		p->result = grace_ipc_msgctl(p->p, p->id, GRACE_IPC_STAT, &mds);
		break;
	case C_SHMAT:
		p->result = grace_ipc_shmat(p->p, p->id, NULL, 0, &a);
		break;
	case C_SHMSTAT:
		p->result = grace_ipc_shmctl(p->p, p->id, GRACE_IPC_STAT, &sds);
		break;
	default:
		p->result = grace_ipc_shmctl(p->p, p->id, GRACE_IPC_SHM_LOCK, NULL);
		break;
	}
	return NULL;
}

static void park(struct parked *p, struct grace_ipc_proc *proc, int id, enum call c)
{
	p->p = proc;
	p->id = id;
	p->call = c;
	p->result = 12345;
	pthread_mutex_lock(&W.m);
	W.type = call_type[c];
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

/* Per type: create, remove, and what the new object in the slot must still look like. */
static int create(struct grace_ipc_proc *p, int type)
{
	switch (type) {
	case T_SEM:
		return grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0600);
	case T_MSG:
		return grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
	default:
		return grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 4096, 0600);
	}
}

static int rmid(struct grace_ipc_proc *p, int type, int id)
{
	switch (type) {
	case T_SEM:
		return grace_ipc_sem_rmid(p, id);
	case T_MSG:
		return grace_ipc_msgctl(p, id, GRACE_IPC_RMID, NULL);
	default:
		return grace_ipc_shmctl(p, id, GRACE_IPC_RMID, NULL);
	}
}

/* The new object was not touched by the parked call. */
static bool untouched(struct grace_ipc_proc *p, int type, int id)
{
	struct grace_ipc_msqid_ds mds;
	struct grace_ipc_shmid_ds sds;

	switch (type) {
	case T_SEM:
		return grace_ipc_getval(p, id, 0) == 5 && grace_ipc_getncnt(p, id, 0) == 0 &&
		       grace_ipc_getpid(p, id, 0) == 4242;
	case T_MSG:
		return grace_ipc_msgctl(p, id, GRACE_IPC_STAT, &mds) == 0 && mds.msg_qnum == 0 &&
		       mds.msg_lspid == 0 && mds.msg_lrpid == 0;
	default:
		return grace_ipc_shmctl(p, id, GRACE_IPC_STAT, &sds) == 0 && sds.shm_nattch == 0 &&
		       sds.shm_lpid == 0 && sds.shm_perm.mode == 0600;
	}
}

static struct grace_ipc_proc *mk(struct grace_ipc_ns **ns, int pid)
{
	struct grace_ipc_proc *p;
	struct grace_ipc_cred c;

	memset(&c, 0, sizeof(c));
	c.caps = GRACE_IPC_CAP_ALL;
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, NULL, ns) == 0);
	REQUIRE(grace_ipc_proc_open(*ns, &c, pid, &p) == 0);
	return p;
}

/* Let the parked thread go; false if it does not finish (it hangs on a removed set). */
static bool unpark(struct parked *p)
{
	struct timespec dl;

	pthread_mutex_lock(&W.m);
	W.release = true;
	W.target = -1;
	W.type = -1;
	pthread_cond_broadcast(&W.c);
	pthread_mutex_unlock(&W.m);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	return pthread_timedjoin_np(p->th, NULL, &dl) == 0;
}

TEST(remove_in_the_window_gives_eidrm)
{
	grace_ipc__hook_after_lookup = park_hook;
	for (int i = 0; i < C_NCALLS; i++) {
		int type = call_type[i];
		struct grace_ipc_ns *ns;
		struct grace_ipc_proc *p = mk(&ns, 4242);
		struct grace_ipc_proc *q;
		struct grace_ipc_cred c;
		struct parked pk;

		memset(&c, 0, sizeof(c));
		c.caps = GRACE_IPC_CAP_ALL;
		REQUIRE(grace_ipc_proc_open(ns, &c, 99, &q) == 0); /* the parked process */
		int id = create(p, type);
		CHECK(id >= 0);
		park(&pk, q, id, (enum call)i);
		CHECK(rmid(p, type, id) == 0); /* the parked thread holds no lock */
		/* A new object in the same slot: the parked call must not touch it. */
		int id2 = create(p, type);
		CHECK(id2 >= 0 && id2 != id);
		CHECK((id2 & 0x7fff) == (id & 0x7fff));
		if (type == T_SEM)
			CHECK(grace_ipc_setval(p, id2, 0, 5) == 0);
		CHECK_MSG(unpark(&pk), "call %d hangs on a removed object", i);
		CHECK_MSG(pk.result == -EIDRM, "call %d returned %ld", i, pk.result);
		CHECK_MSG(untouched(p, type, id2), "call %d touched the new object", i);
		grace_ipc_ns_destroy(ns);
	}
	grace_ipc__hook_after_lookup = NULL;
}

TEST(removed_object_outlives_the_parked_reader)
{
	const enum call calls[3] = { C_SEMOP, C_MSGRCV, C_SHMAT };

	grace_ipc__hook_after_lookup = park_hook;
	for (int i = 0; i < 3; i++) {
		int type = call_type[calls[i]];
		struct grace_ipc_ns *ns;
		struct grace_ipc_ns_info info;
		struct grace_ipc_proc *p = mk(&ns, 4242);
		struct parked pk;
		static int more[300];

		int id = create(p, type);
		park(&pk, p, id, calls[i]);
		CHECK(rmid(p, type, id) == 0);
		/* The removal queued the object's free; a grace period that starts now cannot end
		 * while the parked thread is inside its read-side section. */
		unsigned long cookie = start_poll_synchronize_rcu();
		for (int k = 0; k < 300; k++) { /* grow the ID array under the parked reader */
			more[k] = create(p, type);
			CHECK(more[k] >= 0);
		}
		grace_ipc_info(ns, &info);
		CHECK((type == T_SEM   ? info.sem.grows
		       : type == T_MSG ? info.msg.grows
				       : info.shm.grows) >= 4);
		CHECK(!poll_state_synchronize_rcu(cookie));
		CHECK(unpark(&pk));
		CHECK(pk.result == -EIDRM);
		cond_synchronize_rcu(cookie); /* now it ends */
		CHECK(poll_state_synchronize_rcu(cookie));
		grace_ipc_ns_destroy(ns);
	}
	grace_ipc__hook_after_lookup = NULL;
}

GT_MAIN()
