/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc semantics, run against both implementations: every error case of semget, semop,
 * semtimedop and semctl; all-or-nothing operations; blocking, wake-up, wake on remove; IDs
 * that stay invalid after their slot is reused; ID-array growth and shrink.
 * Compiled as C and as C++ (the header must work in both).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include <grace_ipc.h>
#include "gtest_lite.h"
#include "ipc_test.h"

static struct grace_ipc_sembuf op(unsigned short num, short o, short flg)
{
	struct grace_ipc_sembuf b;

	b.sem_num = num;
	b.sem_op = o;
	b.sem_flg = flg;
	return b;
}

static int op1(struct grace_ipc_proc *p, int id, unsigned short num, short o, short flg)
{
	struct grace_ipc_sembuf b = op(num, o, flg);

	return grace_ipc_semop(p, id, &b, 1);
}

/* Wait (without a time limit that decides the outcome) until cnt() reports n sleepers. */
static int wait_count(struct grace_ipc_proc *p, int id, int num, bool zero, int n)
{
	for (int i = 0; i < 60000; i++) { /* a safety net against a hang, not a timing check */
		int c = zero ? grace_ipc_getzcnt(p, id, num) : grace_ipc_getncnt(p, id, num);

		if (c == n)
			return 1;
		if (c < 0)
			return 0;
		gt_sleep_ms(1);
	}
	return 0;
}

TEST(ns_create_errors)
{
	struct grace_ipc_ns *ns = (struct grace_ipc_ns *)1;
	struct grace_ipc_limits lim;

	CHECK(grace_ipc_ns_create((enum grace_ipc_impl)7, NULL, &ns) == -EINVAL);
	CHECK(ns == NULL);
	CHECK(grace_ipc_ns_create(GRACE_IPC_RCU, NULL, NULL) == -EINVAL);
	memset(&lim, 0, sizeof(lim));
	lim.semmni = -1;
	CHECK(grace_ipc_ns_create(GRACE_IPC_RCU, &lim, &ns) == -EINVAL);
	lim.semmni = GRACE_IPC_IPCMNI + 1;
	CHECK(grace_ipc_ns_create(GRACE_IPC_GLOBAL_LOCK, &lim, &ns) == -EINVAL);
	lim.semmni = GRACE_IPC_IPCMNI;
	CHECK(grace_ipc_ns_create(GRACE_IPC_GLOBAL_LOCK, &lim, &ns) == 0);
	grace_ipc_ns_destroy(ns);
	grace_ipc_ns_destroy(NULL);
	/* Handles. */
	struct grace_ipc_proc *pr = (struct grace_ipc_proc *)1;
	struct grace_ipc_cred c;
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, NULL, &ns) == 0);
	CHECK(grace_ipc_proc_open(NULL, NULL, 0, &pr) == -EINVAL);
	CHECK(pr == NULL);
	CHECK(grace_ipc_proc_open(ns, NULL, -1, &pr) == -EINVAL);
	CHECK(grace_ipc_proc_open(ns, NULL, 0, NULL) == -EINVAL);
	memset(&c, 0, sizeof(c));
	c.ngroups = GRACE_IPC_NGROUPS_MAX + 1;
	CHECK(grace_ipc_proc_open(ns, &c, 0, &pr) == -EINVAL);
	CHECK(grace_ipc_proc_open(ns, NULL, 0, &pr) == 0); /* the caller's own credentials */
	CHECK(grace_ipc_proc_ns(pr) == ns);
	CHECK(grace_ipc_proc_setcred(pr, NULL) == -EINVAL);
	CHECK(grace_ipc_proc_setcred(pr, &c) == -EINVAL);
	CHECK(grace_ipc_cred_self(&c) == 0);
	CHECK(c.uid == (unsigned)geteuid() && c.gid == (unsigned)getegid());
	CHECK(grace_ipc_proc_setcred(pr, &c) == 0);
	grace_ipc_proc_close(NULL);
	grace_ipc_ns_destroy(ns); /* closes pr */
	CHECK(grace_ipc_cred_self(NULL) == -EINVAL);
	/* The kernel's limits, as the differential test uses them. */
	memset(&lim, 0, sizeof(lim));
	if (grace_ipc_limits_kernel(&lim) == 0) {
		CHECK(lim.semmsl > 0 && lim.msgmax > 0 && lim.shmmni > 0 && lim.shmmax > 0);
		CHECK(grace_ipc_ns_create(GRACE_IPC_GLOBAL_LOCK, &lim, &ns) == 0);
		grace_ipc_ns_destroy(ns);
	}
	CHECK(grace_ipc_limits_kernel(NULL) == -EINVAL);
	CHECK(strcmp(grace_ipc_impl_name(GRACE_IPC_RCU), "rcu") == 0);
	CHECK(strcmp(grace_ipc_impl_name(GRACE_IPC_GLOBAL_LOCK), "global") == 0);
}

TEST(semget_errors)
{
	struct grace_ipc_limits lim;

	memset(&lim, 0, sizeof(lim));
	lim.semmsl = 8;
	lim.semmni = 4;
	lim.semmns = 20;
	FOR_EACH_IMPL(p, &lim)
	{
		int a, b, k;

		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, 0, 0600) == -EINVAL);
		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, -1, 0600) == -EINVAL);
		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, 9, 0600) == -EINVAL);
		/* Unknown flag bits are ignored, as Linux does. */
		int u = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0100000 | 0x40000000 | 0600);
		CHECK(u >= 0);
		CHECK(grace_ipc_sem_rmid(p, u) == 0);
		CHECK(grace_ipc_semget(NULL, GRACE_IPC_PRIVATE, 1, 0) == -EINVAL);
		a = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 8, 0600);
		b = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 8, 0600);
		CHECK(a >= 0 && b >= 0 && a != b);
		/* semmns: 16 used, 5 more would be 21 > 20. */
		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, 5, 0) == -ENOSPC);
		/* Keys. */
		CHECK(grace_ipc_semget(p, 1234, 2, 0600) == -ENOENT);
		k = grace_ipc_semget(p, 1234, 2, GRACE_IPC_CREAT | 0600);
		CHECK(k >= 0);
		CHECK(grace_ipc_semget(p, 1234, 2, 0) == k);
		CHECK(grace_ipc_semget(p, 1234, 0, 0) == k);
		CHECK(grace_ipc_semget(p, 1234, 1, GRACE_IPC_CREAT) == k);
		CHECK(grace_ipc_semget(p, 1234, 3, 0) == -EINVAL);
		CHECK(grace_ipc_semget(p, 1234, 1, GRACE_IPC_CREAT | GRACE_IPC_EXCL) == -EEXIST);
		/* EXCL alone does nothing (as in Linux). */
		CHECK(grace_ipc_semget(p, 1234, 1, GRACE_IPC_EXCL) == k);
		/* Creating with nsems 0 on a missing key is EINVAL, not ENOENT. */
		CHECK(grace_ipc_semget(p, 99, 0, GRACE_IPC_CREAT) == -EINVAL);
		/* semmni: three sets; a fourth fits, a fifth does not. */
		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0) >= 0);
		CHECK(grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0) == -ENOSPC);
		/* Removing a keyed set frees its key. */
		CHECK(grace_ipc_sem_rmid(p, k) == 0);
		CHECK(grace_ipc_semget(p, 1234, 2, 0) == -ENOENT);
		int k2 = grace_ipc_semget(p, 1234, 2, GRACE_IPC_CREAT | GRACE_IPC_EXCL);
		CHECK(k2 >= 0 && k2 != k);
		struct grace_ipc_semid_ds ds;
		CHECK(grace_ipc_sem_stat(p, k2, &ds) == 0);
		CHECK(ds.sem_perm.key == 1234 && ds.sem_nsems == 2);
		CHECK(grace_ipc_sem_stat(p, k2, NULL) == -EFAULT);
		CHECK(grace_ipc_sem_stat(p, k, &ds) == -EINVAL);
	}
}

TEST(semop_errors)
{
	struct grace_ipc_limits lim;

	memset(&lim, 0, sizeof(lim));
	lim.semopm = 4;
	FOR_EACH_IMPL(p, &lim)
	{
		struct grace_ipc_sembuf b[5];
		struct timespec ts;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		for (int i = 0; i < 5; i++)
			b[i] = op(0, 1, 0);
		CHECK(grace_ipc_semop(p, -1, b, 1) == -EINVAL);
		CHECK(grace_ipc_semop(p, id, b, 0) == -EINVAL);
		CHECK(grace_ipc_semop(p, -1, b, 0) == -EINVAL);
		CHECK(grace_ipc_semop(NULL, id, b, 1) == -EINVAL);
		CHECK(grace_ipc_semop(p, id, b, 5) == -E2BIG);
		CHECK(grace_ipc_semop(p, id + 1, b, 5) == -E2BIG); /* E2BIG before the lookup */
		CHECK(grace_ipc_semop(p, -1, b, 5) == -E2BIG);     /* and before semid < 0 */
		CHECK(grace_ipc_semop(p, -1, NULL, 1) == -EFAULT); /* EFAULT before semid < 0 */
		CHECK(grace_ipc_semop(p, id, NULL, 1) == -EFAULT);
		CHECK(grace_ipc_semop(p, id + 1, b, 1) == -EINVAL);     /* no such set */
		CHECK(grace_ipc_semop(p, id + 32768, b, 1) == -EINVAL); /* other sequence */
		CHECK(op1(p, id, 3, 1, 0) == -EFBIG);
		CHECK(op1(p, id + 1, 3, 1, 0) == -EINVAL); /* EINVAL before EFBIG */
		CHECK(op1(p, id, 0, 1, 0x2000 /* unknown: ignored, as Linux */) == 0);
		CHECK(op1(p, id, 0, -1, 0x2000 | GRACE_IPC_NOWAIT) == 0);
		/* Nothing above changed a value. */
		CHECK(grace_ipc_getval(p, id, 0) == 0);
		/* ERANGE at SEMVMX. */
		CHECK(grace_ipc_setval(p, id, 1, GRACE_IPC_SEMVMX) == 0);
		CHECK(op1(p, id, 1, 1, 0) == -ERANGE);
		CHECK(op1(p, id, 1, 1, GRACE_IPC_NOWAIT) == -ERANGE);
		CHECK(grace_ipc_getval(p, id, 1) == GRACE_IPC_SEMVMX);
		CHECK(op1(p, id, 1, -GRACE_IPC_SEMVMX, 0) == 0);
		/* EAGAIN: decrement below zero, wait for zero on non-zero. */
		CHECK(op1(p, id, 0, -1, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(p, id, 0, 0, GRACE_IPC_NOWAIT) == 0);
		CHECK(op1(p, id, 0, 2, 0) == 0);
		CHECK(op1(p, id, 0, 0, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(p, id, 0, -3, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(p, id, 0, -2, GRACE_IPC_NOWAIT) == 0);
		/* semtimedop: a bad timeout is EINVAL; an expired one is EAGAIN. */
		ts.tv_sec = 0;
		ts.tv_nsec = 1000000000L;
		b[0] = op(0, -1, 0);
		CHECK(grace_ipc_semtimedop(p, id, b, 1, &ts) == -EINVAL);
		ts.tv_sec = -1;
		ts.tv_nsec = 0;
		CHECK(grace_ipc_semtimedop(p, id, b, 1, &ts) == -EINVAL);
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		CHECK(grace_ipc_semtimedop(p, id, b, 1, &ts) == -EAGAIN);
		ts.tv_nsec = 20 * 1000 * 1000;
		CHECK(grace_ipc_semtimedop(p, id, b, 1, &ts) == -EAGAIN);
		CHECK(grace_ipc_getncnt(p, id, 0) == 0); /* the timed-out sleeper left the queue */
		b[0] = op(0, 1, 0);
		CHECK(grace_ipc_semtimedop(p, id, b, 1, &ts) == 0);
		CHECK(grace_ipc_getval(p, id, 0) == 1);
	}
}

TEST(semop_all_or_nothing)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct grace_ipc_sembuf b[4];
		unsigned short v[3];
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		/* The third operation would block (NOWAIT): the first two are not applied. */
		b[0] = op(0, 5, 0);
		b[1] = op(1, 3, 0);
		b[2] = op(2, -1, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(p, id, b, 3) == -EAGAIN);
		CHECK(grace_ipc_getall(p, id, v, 3) == 3);
		CHECK(v[0] == 0 && v[1] == 0 && v[2] == 0);
		/* The second would overflow: ERANGE, nothing applied. */
		CHECK(grace_ipc_setval(p, id, 1, GRACE_IPC_SEMVMX - 2) == 0);
		b[2] = op(2, 1, 0);
		CHECK(grace_ipc_semop(p, id, b, 3) == -ERANGE);
		CHECK(grace_ipc_getall(p, id, v, 3) == 3);
		CHECK(v[0] == 0 && v[1] == GRACE_IPC_SEMVMX - 2 && v[2] == 0);
		/* Same semaphore several times: applied in order (+2, -1, -1, wait-for-zero). */
		CHECK(grace_ipc_setval(p, id, 1, 0) == 0);
		b[0] = op(0, 2, 0);
		b[1] = op(0, -1, 0);
		b[2] = op(0, -1, 0);
		b[3] = op(0, 0, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(p, id, b, 4) == 0);
		CHECK(grace_ipc_getval(p, id, 0) == 0);
		/* -1 then +1 on a zero semaphore blocks (order matters). */
		b[0] = op(0, -1, GRACE_IPC_NOWAIT);
		b[1] = op(0, 1, 0);
		CHECK(grace_ipc_semop(p, id, b, 2) == -EAGAIN);
		/* +1 then -1 succeeds. */
		b[0] = op(0, 1, 0);
		b[1] = op(0, -1, 0);
		CHECK(grace_ipc_semop(p, id, b, 2) == 0);
		/* EAGAIN depends on the flag of the operation that blocks, not of the others. */
		b[0] = op(0, 0, GRACE_IPC_NOWAIT);
		b[1] = op(1, -1, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(p, id, b, 2) == -EAGAIN);
	}
}

TEST(semctl_errors)
{
	FOR_EACH_IMPL(p, NULL)
	{
		unsigned short v[4] = { 1, 2, 3, 4 };
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		CHECK(grace_ipc_getval(p, -1, 0) == -EINVAL);
		CHECK(grace_ipc_getval(p, id + 1, 0) == -EINVAL);
		CHECK(grace_ipc_getval(p, id, 3) == -EINVAL);
		CHECK(grace_ipc_getval(p, id, -1) == -EINVAL);
		CHECK(grace_ipc_setval(p, id, 0, -1) == -ERANGE);
		CHECK(grace_ipc_setval(p, id, 0, GRACE_IPC_SEMVMX + 1) == -ERANGE);
		CHECK(grace_ipc_setval(p, -1, 0, -1) == -EINVAL); /* semid < 0 first */
		CHECK(grace_ipc_setval(p, id + 1, 0, -1) ==
		      -ERANGE); /* then ERANGE, before lookup */
		CHECK(grace_ipc_setval(p, id + 1, 0, 1) == -EINVAL);
		CHECK(grace_ipc_setval(p, id, 3, 1) == -EINVAL);
		CHECK(grace_ipc_setval(p, id, 2, GRACE_IPC_SEMVMX) == 0);
		CHECK(grace_ipc_getval(p, id, 2) == GRACE_IPC_SEMVMX);
		CHECK(grace_ipc_getall(p, id, v, 2) == -EINVAL);
		CHECK(grace_ipc_getall(p, id, NULL, 3) == -EFAULT);
		CHECK(grace_ipc_getall(p, id + 1, v, 3) == -EINVAL);
		CHECK(grace_ipc_setall(p, id, v, 4) == -EINVAL);
		CHECK(grace_ipc_setall(p, id, NULL, 3) == -EFAULT);
		v[1] = GRACE_IPC_SEMVMX + 1;
		CHECK(grace_ipc_setall(p, id, v, 3) == -ERANGE);
		CHECK(grace_ipc_getval(p, id, 0) == 0); /* nothing set */
		v[1] = 2;
		CHECK(grace_ipc_setall(p, id, v, 3) == 0);
		memset(v, 0, sizeof(v));
		CHECK(grace_ipc_getall(p, id, v, 4) == 3);
		CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 0);
		CHECK(grace_ipc_getncnt(p, id, 3) == -EINVAL);
		CHECK(grace_ipc_getzcnt(p, id, -1) == -EINVAL);
		CHECK(grace_ipc_getncnt(p, id, 0) == 0);
		CHECK(grace_ipc_sem_rmid(p, -1) == -EINVAL);
		CHECK(grace_ipc_sem_rmid(p, id + 1) == -EINVAL);
		CHECK(grace_ipc_sem_rmid(p, id) == 0);
		CHECK(grace_ipc_sem_rmid(p, id) == -EINVAL);
		/* Every call on a removed ID: EINVAL. */
		CHECK(grace_ipc_getval(p, id, 0) == -EINVAL);
		CHECK(grace_ipc_setval(p, id, 0, 1) == -EINVAL);
		CHECK(grace_ipc_getall(p, id, v, 4) == -EINVAL);
		CHECK(grace_ipc_setall(p, id, v, 3) == -EINVAL);
		CHECK(grace_ipc_getncnt(p, id, 0) == -EINVAL);
		CHECK(grace_ipc_getzcnt(p, id, 0) == -EINVAL);
		CHECK(op1(p, id, 0, 1, 0) == -EINVAL);
	}
}

TEST(removed_id_stays_invalid_after_slot_reuse)
{
	FOR_EACH_IMPL(p, NULL)
	{
		static int old[3000];
		int first = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);

		CHECK(first >= 0);
		old[0] = first;
		for (int i = 1; i < 3000; i++) {
			CHECK(grace_ipc_sem_rmid(p, old[i - 1]) == 0);
			old[i] = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);
			CHECK(old[i] >= 0);
			/* The lowest free slot is reused: same slot, new sequence. */
			CHECK((old[i] & 0x7fff) == (first & 0x7fff));
			CHECK(old[i] != old[i - 1]);
		}
		int live = old[2999];
		for (int i = 0; i < 2999; i++) {
			CHECK_MSG(op1(p, old[i], 0, 1, 0) == -EINVAL, "old id %d", old[i]);
			CHECK(grace_ipc_getval(p, old[i], 0) == -EINVAL);
			CHECK(grace_ipc_sem_rmid(p, old[i]) == -EINVAL);
		}
		CHECK(op1(p, live, 0, 1, 0) == 0);
		CHECK(grace_ipc_getval(p, live, 0) == 1);
	}
}

TEST(array_grows_ids_survive)
{
	FOR_EACH_IMPL(p, NULL)
	{
		static int ids[1000], ids2[1000];
		struct grace_ipc_ns_info info;

		for (int i = 0; i < 1000; i++) {
			ids[i] = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0);
			CHECK(ids[i] >= 0);
			CHECK(grace_ipc_setval(p, ids[i], 1, i % 30000) == 0);
		}
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.sem.objects == 1000 && info.sems == 2000);
		CHECK(info.sem.ary_size == 1024);
		CHECK(info.sem.grows == 6); /* 16 -> 32 -> ... -> 1024 */
		/* Every set is still reachable through the grown array, with its value. */
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_getval(p, ids[i], 1) == i % 30000);
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_sem_rmid(p, ids[i]) == 0);
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.sem.objects == 0 && info.sems == 0);
		/* Refill: the same slots come back with new sequence numbers. */
		for (int i = 0; i < 1000; i++) {
			ids2[i] = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0);
			CHECK(ids2[i] >= 0 && ids2[i] != ids[i]);
		}
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_getval(p, ids[i], 1) == -EINVAL);
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.sem.grows == 6);
		/* Destroy frees the sets that are left (LSan checks it in the ASan build). */
	}
}

/* ---------------------------------------------------------------- blocking */

struct sleeper {
	struct grace_ipc_proc *p;
	int id;
	struct grace_ipc_sembuf ops[2];
	int nops;
	int result;
	pthread_t th;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = (struct sleeper *)arg;

	s->result = grace_ipc_semop(s->p, s->id, s->ops, (size_t)s->nops);
	return NULL;
}

static void start_sleeper(struct sleeper *s, struct grace_ipc_proc *p, int id,
			  struct grace_ipc_sembuf a, int nops, struct grace_ipc_sembuf b)
{
	s->p = p;
	s->id = id;
	s->ops[0] = a;
	s->ops[1] = b;
	s->nops = nops;
	s->result = 12345;
	REQUIRE(pthread_create(&s->th, NULL, sleeper_main, s) == 0);
}

TEST(blocked_decrement_wakes_on_increment)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct sleeper s;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);

		start_sleeper(&s, p, id, op(0, -2, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, false, 1));
		CHECK(op1(p, id, 0, 1, 0) == 0); /* not enough yet */
		CHECK(grace_ipc_getncnt(p, id, 0) == 1);
		CHECK(grace_ipc_getval(p, id, 0) == 1);
		CHECK(op1(p, id, 0, 1, 0) == 0); /* now the sleeper's -2 is performed for it */
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(p, id, 0) == 0);
		CHECK(grace_ipc_getncnt(p, id, 0) == 0);
	}
}

TEST(blocked_wait_for_zero_and_setval_wake)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct sleeper z, d;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0);

		CHECK(grace_ipc_setval(p, id, 0, 2) == 0);
		start_sleeper(&z, p, id, op(0, 0, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, true, 1));
		start_sleeper(&d, p, id, op(1, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 1, false, 1));
		CHECK(op1(p, id, 0, -1, 0) == 0);
		CHECK(grace_ipc_getzcnt(p, id, 0) == 1);
		CHECK(grace_ipc_setval(p, id, 0, 0) == 0); /* SETVAL wakes the zero waiter */
		pthread_join(z.th, NULL);
		CHECK(z.result == 0);
		unsigned short v[2] = { 0, 1 };
		CHECK(grace_ipc_setall(p, id, v, 2) == 0); /* SETALL wakes the decrement */
		pthread_join(d.th, NULL);
		CHECK(d.result == 0);
		CHECK(grace_ipc_getval(p, id, 1) == 0);
	}
}

TEST(blocked_multi_op_is_atomic)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct sleeper s;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0);

		start_sleeper(&s, p, id, op(0, -1, 0), 2, op(1, -1, 0));
		CHECK(wait_count(p, id, 0, false, 1)); /* blocked on its first operation */
		CHECK(op1(p, id, 0, 1, 0) == 0);
		/* Now blocked on the second; the first must not have been taken. */
		CHECK(wait_count(p, id, 1, false, 1));
		CHECK(grace_ipc_getval(p, id, 0) == 1);
		CHECK(grace_ipc_getncnt(p, id, 0) == 0);
		CHECK(op1(p, id, 1, 1, 0) == 0);
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(p, id, 0) == 0 && grace_ipc_getval(p, id, 1) == 0);
	}
}

struct timed_sleeper {
	struct grace_ipc_proc *p;
	int id;
	struct timespec ts;
	int result;
	pthread_t th;
};

static void *timed_sleeper_main(void *arg)
{
	struct timed_sleeper *s = (struct timed_sleeper *)arg;
	struct grace_ipc_sembuf b = op(0, -1, 0);

	__atomic_store_n(&s->result, grace_ipc_semtimedop(s->p, s->id, &b, 1, &s->ts),
			 __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A valid timeout too long for the clock (tv_sec near LONG_MAX) means "no limit" on Linux (the
 * kernel clamps it to the longest sleep it has): the call sleeps until the value allows it. The
 * deadline used to be now + timeout, which overflowed (undefined; in practice a deadline in the
 * past), so the call returned -EAGAIN at once.
 */
TEST(semtimedop_huge_timeout_sleeps)
{
	FOR_EACH_IMPL(p, NULL)
	{
		static const time_t secs[3] = { LONG_MAX, LONG_MAX - 1, LONG_MAX / 2 + 1 };

		for (int k = 0; k < 3; k++) {
			struct timed_sleeper s;
			int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);
			int slept = 0;

			s.p = p;
			s.id = id;
			s.ts.tv_sec = secs[k];
			s.ts.tv_nsec = 999999999L;
			s.result = 12345;
			REQUIRE(pthread_create(&s.th, NULL, timed_sleeper_main, &s) == 0);
			/* Until it sleeps, or returns (the fault): no time limit decides. */
			for (int i = 0; i < 60000; i++) {
				if (grace_ipc_getncnt(p, id, 0) == 1) {
					slept = 1;
					break;
				}
				if (__atomic_load_n(&s.result, __ATOMIC_ACQUIRE) != 12345)
					break;
				gt_sleep_ms(1);
			}
			if (slept)
				CHECK(op1(p, id, 0, 1, 0) == 0);
			pthread_join(s.th, NULL);
			CHECK_MSG(slept && s.result == 0, "tv_sec %lld: slept %d, result %d",
				  (long long)secs[k], slept, s.result);
			CHECK(grace_ipc_getval(p, id, 0) == 0);
		}
	}
}

TEST(blocked_sleepers_wake_with_eidrm_on_remove)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct sleeper s[6];
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0);

		CHECK(grace_ipc_setval(p, id, 1, 1) == 0);
		for (int i = 0; i < 3; i++)
			start_sleeper(&s[i], p, id, op(0, -1, 0), 1, op(0, 0, 0));
		for (int i = 3; i < 6; i++)
			start_sleeper(&s[i], p, id, op(1, 0, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, false, 3));
		CHECK(wait_count(p, id, 1, true, 3));
		CHECK(grace_ipc_sem_rmid(p, id) == 0);
		for (int i = 0; i < 6; i++) {
			pthread_join(s[i].th, NULL);
			CHECK_MSG(s[i].result == -EIDRM, "sleeper %d got %d", i, s[i].result);
		}
		CHECK(op1(p, id, 0, 1, 0) == -EINVAL);
	}
}

TEST(destroy_wakes_sleepers)
{
	for (int i = 0; i < 2; i++) {
		struct grace_ipc_proc *p = mk_proc(impls[i], NULL, NULL);
		struct grace_ipc_ns *ns = grace_ipc_proc_ns(p);
		struct sleeper s[3];
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);

		for (int k = 0; k < 3; k++)
			start_sleeper(&s[k], p, id, op(0, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, false, 3));
		grace_ipc_ns_destroy(ns); /* returns once the sleepers have left */
		for (int k = 0; k < 3; k++) {
			pthread_join(s[k].th, NULL);
			CHECK(s[k].result == -EIDRM);
		}
	}
}

TEST(fifo_handoff)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct sleeper a, b;
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0);

		/* a wants 2, queued first; b wants 1. Adding 1 completes b (a cannot proceed), then
		 * adding 2 completes a. */
		start_sleeper(&a, p, id, op(0, -2, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, false, 1));
		start_sleeper(&b, p, id, op(0, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id, 0, false, 2));
		CHECK(op1(p, id, 0, 1, 0) == 0);
		pthread_join(b.th, NULL);
		CHECK(b.result == 0);
		CHECK(grace_ipc_getncnt(p, id, 0) == 1);
		CHECK(op1(p, id, 0, 2, 0) == 0);
		pthread_join(a.th, NULL);
		CHECK(a.result == 0);
		CHECK(grace_ipc_getval(p, id, 0) == 0);
	}
}

/* ---------------------------------------------------------------- SEM_UNDO */

TEST(sem_undo_applied_at_close)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 3, 0600);
		struct grace_ipc_proc *a = other(p, 0, 0, GRACE_IPC_CAP_ALL, 100);
		struct grace_ipc_semid_ds ds;

		CHECK(id >= 0);
		/* +2 with undo, then -1 with undo on another semaphore: -2 and +1 at exit. */
		CHECK(grace_ipc_setval(p, id, 1, 5) == 0);
		CHECK(op1(a, id, 0, 2, GRACE_IPC_SEM_UNDO) == 0);
		CHECK(op1(a, id, 1, -1, GRACE_IPC_SEM_UNDO) == 0);
		CHECK(op1(a, id, 2, 3, 0) == 0); /* no undo */
		CHECK(grace_ipc_getval(p, id, 0) == 2 && grace_ipc_getval(p, id, 1) == 4);
		CHECK(grace_ipc_getpid(p, id, 0) == 100);
		CHECK(grace_ipc_setval(p, id, 0, 7) == 0); /* before the exit: pid 4242 */
		CHECK(op1(a, id, 0, 1, GRACE_IPC_SEM_UNDO) ==
		      0); /* SETVAL cleared the +2's record */
		grace_ipc_proc_close(a);
		CHECK(grace_ipc_getval(p, id, 0) == 7); /* 8 - 1 */
		CHECK(grace_ipc_getval(p, id, 1) == 5); /* 4 + 1 */
		CHECK(grace_ipc_getval(p, id, 2) == 3);
		CHECK(grace_ipc_getpid(p, id, 0) == 100); /* the exit's adjustment */
		CHECK(grace_ipc_getpid(p, id, 2) == 100); /* the semop's */
		CHECK(grace_ipc_sem_stat(p, id, &ds) == 0 && ds.sem_otime != 0);
	}
}

TEST(sem_undo_clamps_and_range)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 2, 0600);
		struct grace_ipc_proc *a = other(p, 0, 0, 0, 101);

		/* Lower clamp: +3 (adjust -3), someone takes 2, exit: 1 - 3 -> 0. */
		CHECK(op1(a, id, 0, 3, GRACE_IPC_SEM_UNDO) == 0);
		CHECK(op1(p, id, 0, -2, 0) == 0);
		/* Upper clamp: -1 at SEMVMX (adjust +1), someone adds 1 back, exit: 32768 -> 32767. */
		CHECK(grace_ipc_setval(p, id, 1, GRACE_IPC_SEMVMX) == 0);
		CHECK(op1(a, id, 1, -1, GRACE_IPC_SEM_UNDO) == 0);
		CHECK(op1(p, id, 1, 1, 0) == 0);
		grace_ipc_proc_close(a);
		CHECK(grace_ipc_getval(p, id, 0) == 0);
		CHECK(grace_ipc_getval(p, id, 1) == GRACE_IPC_SEMVMX);

		/* The adjustment must stay in [-32768, 32767]: -ERANGE, nothing applied. */
		a = other(p, 0, 0, 0, 102);
		CHECK(grace_ipc_setval(p, id, 0, 0) == 0);
		CHECK(op1(a, id, 0, GRACE_IPC_SEMVMX, GRACE_IPC_SEM_UNDO) == 0); /* adjust -32767 */
		CHECK(op1(p, id, 0, -GRACE_IPC_SEMVMX, 0) == 0);
		CHECK(op1(a, id, 0, 1, GRACE_IPC_SEM_UNDO) == 0); /* adjust -32768: allowed */
		CHECK(op1(a, id, 0, 1, GRACE_IPC_SEM_UNDO) == -ERANGE);
		CHECK(op1(a, id, 0, 1, GRACE_IPC_SEM_UNDO | GRACE_IPC_NOWAIT) == -ERANGE);
		CHECK(grace_ipc_getval(p, id, 0) == 1);
		struct grace_ipc_sembuf b[2] = { op(1, -1, 0), op(0, 1, GRACE_IPC_SEM_UNDO) };
		CHECK(grace_ipc_semop(a, id, b, 2) == -ERANGE); /* all or nothing */
		CHECK(grace_ipc_getval(p, id, 1) == GRACE_IPC_SEMVMX);
		grace_ipc_proc_close(a);
		CHECK(grace_ipc_getval(p, id, 0) == 0); /* 1 - 32768, clamped */
	}
}

TEST(sem_undo_survives_removal_and_wakes_at_exit)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0600);
		int id2 = grace_ipc_semget(p, GRACE_IPC_PRIVATE, 1, 0600);
		struct grace_ipc_proc *a = other(p, 0, 0, 0, 103);
		struct sleeper s;

		/* A removed set's records are freed with it; the exit skips them. */
		CHECK(op1(a, id, 0, 1, GRACE_IPC_SEM_UNDO) == 0);
		CHECK(grace_ipc_sem_rmid(p, id) == 0);
		/* An exit's adjustment wakes a sleeper it lets proceed. */
		CHECK(grace_ipc_setval(p, id2, 0, 1) == 0);
		CHECK(op1(a, id2, 0, -1, GRACE_IPC_SEM_UNDO) == 0);
		start_sleeper(&s, p, id2, op(0, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(p, id2, 0, false, 1));
		grace_ipc_proc_close(a);
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(p, id2, 0) == 0);
		/* A sleeper with SEM_UNDO: its adjustment is recorded when a waker performs it. */
		a = other(p, 0, 0, 0, 104);
		start_sleeper(&s, a, id2, op(0, -1, GRACE_IPC_SEM_UNDO), 1, op(0, 0, 0));
		CHECK(wait_count(p, id2, 0, false, 1));
		CHECK(op1(p, id2, 0, 1, 0) == 0);
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(p, id2, 0) == 0);
		CHECK(grace_ipc_getpid(p, id2, 0) == 104); /* performed for the sleeper */
		grace_ipc_proc_close(a);
		CHECK(grace_ipc_getval(p, id2, 0) == 1);
	}
}

/* ---------------------------------------------------------------- IPC_STAT, IPC_SET, GETPID */

TEST(sem_stat_set_and_getpid)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct grace_ipc_proc *own = other(p, 1000, 100, 0, 11);
		struct grace_ipc_proc *stranger = other(p, 2000, 200, 0, 12);
		struct grace_ipc_proc *admin = other(p, 3000, 300, GRACE_IPC_CAP_SYS_ADMIN, 13);
		struct grace_ipc_semid_ds ds, in;
		union grace_ipc_semun a;
		struct grace_ipc_seminfo si;
		int id = grace_ipc_semget(own, 77, 2, GRACE_IPC_CREAT | 0640 | 0100000);

		CHECK(id >= 0);
		CHECK(grace_ipc_sem_stat(own, id, &ds) == 0);
		CHECK(ds.sem_perm.key == 77 && ds.sem_perm.uid == 1000 && ds.sem_perm.cuid == 1000);
		CHECK(ds.sem_perm.gid == 100 && ds.sem_perm.cgid == 100);
		CHECK(ds.sem_perm.mode == 0640 && ds.sem_nsems == 2);
		CHECK(ds.sem_otime == 0 && ds.sem_ctime > 0);
		CHECK(grace_ipc_getpid(own, id, 1) == 0);
		CHECK(op1(own, id, 1, 1, 0) == 0);
		CHECK(grace_ipc_getpid(own, id, 1) == 11 && grace_ipc_getpid(own, id, 0) == 0);
		CHECK(grace_ipc_getpid(own, id, 2) == -EINVAL);
		CHECK(grace_ipc_sem_stat(own, id, &ds) == 0 && ds.sem_otime > 0);
		CHECK(grace_ipc_setval(p, id, 0, 3) == 0);
		CHECK(grace_ipc_getpid(own, id, 0) == 4242);

		/* IPC_SET: owner or creator or CAP_SYS_ADMIN, else EPERM. */
		in = ds;
		in.sem_perm.uid = 2000;
		in.sem_perm.gid = 222;
		in.sem_perm.mode = 0604 | 01000; /* only the permission bits are taken */
		a.buf = &in;
		CHECK(grace_ipc_semctl(stranger, id, 0, GRACE_IPC_SET, a) == -EPERM);
		CHECK(grace_ipc_semctl(own, id, 0, GRACE_IPC_SET, a) == 0);
		CHECK(grace_ipc_sem_stat(p, id, &ds) == 0);
		CHECK(ds.sem_perm.uid == 2000 && ds.sem_perm.gid == 222 &&
		      ds.sem_perm.mode == 0604);
		CHECK(ds.sem_perm.cuid == 1000 && ds.sem_perm.cgid == 100);
		/* Now the stranger owns it; the creator still may. */
		in.sem_perm.mode = 0666;
		CHECK(grace_ipc_semctl(stranger, id, 0, GRACE_IPC_SET, a) == 0);
		CHECK(grace_ipc_semctl(own, id, 0, GRACE_IPC_SET, a) == 0);
		in.sem_perm.uid = (unsigned)-1;
		CHECK(grace_ipc_semctl(own, id, 0, GRACE_IPC_SET, a) == -EINVAL);
		in.sem_perm.uid = 5;
		in.sem_perm.gid = (unsigned)-1;
		CHECK(grace_ipc_semctl(admin, id, 0, GRACE_IPC_SET, a) == -EINVAL);
		in.sem_perm.gid = 5;
		CHECK(grace_ipc_semctl(admin, id, 0, GRACE_IPC_SET, a) == 0);
		a.buf = NULL;
		CHECK(grace_ipc_semctl(admin, id, 0, GRACE_IPC_SET, a) == -EFAULT);
		CHECK(grace_ipc_semctl(admin, id + 1, 0, GRACE_IPC_SET, a) == -EFAULT);
		CHECK(grace_ipc_semctl(admin, -1, 0, GRACE_IPC_SET, a) == -EINVAL);
		CHECK(grace_ipc_semctl(admin, id, 0, 99, a) == -EINVAL);
		CHECK(grace_ipc_semctl(admin, id, 0, -1, a) == -EINVAL);

		/* SEM_STAT takes an index and returns the ID; SEM_STAT_ANY skips the read check. */
		a.buf = &ds;
		in.sem_perm.mode = 0;
		a.buf = &in;
		CHECK(grace_ipc_semctl(admin, id, 0, GRACE_IPC_SET, a) == 0);
		a.buf = &ds;
		CHECK(grace_ipc_semctl(stranger, id & 0x7fff, 0, GRACE_IPC_SEM_STAT, a) == -EACCES);
		CHECK(grace_ipc_semctl(stranger, id & 0x7fff, 0, GRACE_IPC_SEM_STAT_ANY, a) == id);
		CHECK(grace_ipc_semctl(p, id & 0x7fff, 0, GRACE_IPC_SEM_STAT, a) == id);
		CHECK(grace_ipc_semctl(p, (id & 0x7fff) + 1, 0, GRACE_IPC_SEM_STAT, a) == -EINVAL);
		CHECK(grace_ipc_semctl(stranger, id, 0, GRACE_IPC_STAT, a) == -EACCES);
		a.buf = NULL;
		CHECK(grace_ipc_semctl(p, id, 0, GRACE_IPC_STAT, a) == -EFAULT);

		/* IPC_INFO / SEM_INFO: the limits, and the highest index in use. */
		a.info = &si;
		CHECK(grace_ipc_semctl(p, 0, 0, GRACE_IPC_INFO, a) == (id & 0x7fff));
		CHECK(si.semmsl == 32000 && si.semopm == 500 && si.semvmx == 32767 &&
		      si.semusz == 20);
		CHECK(grace_ipc_semctl(p, 0, 0, GRACE_IPC_SEM_INFO, a) == (id & 0x7fff));
		CHECK(si.semusz == 1 && si.semaem == 2);
		a.info = NULL;
		CHECK(grace_ipc_semctl(p, 0, 0, GRACE_IPC_SEM_INFO, a) == -EFAULT);

		/* IPC_RMID: same rule. */
		CHECK(grace_ipc_sem_rmid(stranger, id) == -EPERM);
		CHECK(grace_ipc_sem_rmid(own, id) == 0);
		grace_ipc_proc_close(own);
		grace_ipc_proc_close(stranger);
		/* admin is closed by ns_destroy */
	}
}

/* ---------------------------------------------------------------- permissions */

TEST(sem_permissions)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct grace_ipc_proc *own = other(p, 1000, 100, 0, 21);
		struct grace_ipc_proc *grp = other(p, 2000, 100, 0, 22);
		struct grace_ipc_proc *oth = other(p, 3000, 300, 0, 23);
		struct grace_ipc_proc *cap = other(p, 4000, 400, GRACE_IPC_CAP_IPC_OWNER, 24);
		struct grace_ipc_semid_ds ds;
		unsigned short v[2] = { 0, 0 };
		int id = grace_ipc_semget(own, 88, 2, GRACE_IPC_CREAT | 0640);

		CHECK(id >= 0);
		/* Owner rw; group r; others nothing. */
		CHECK(op1(own, id, 0, 1, 0) == 0);
		CHECK(op1(grp, id, 0, 1, 0) == -EACCES);          /* alter: write */
		CHECK(op1(grp, id, 1, 0, GRACE_IPC_NOWAIT) == 0); /* wait-for-zero: read */
		CHECK(op1(oth, id, 1, 0, GRACE_IPC_NOWAIT) == -EACCES);
		CHECK(op1(cap, id, 0, 1, 0) == 0); /* CAP_IPC_OWNER */
		CHECK(grace_ipc_getval(grp, id, 0) == 2);
		CHECK(grace_ipc_getval(oth, id, 0) == -EACCES);
		CHECK(grace_ipc_getval(oth, id, 5) == -EACCES); /* before the semnum check */
		CHECK(grace_ipc_setval(grp, id, 0, 1) == -EACCES);
		CHECK(grace_ipc_setval(grp, id, 5, 1) == -EINVAL); /* semnum first for SETVAL */
		CHECK(grace_ipc_getall(grp, id, v, 2) == 2);
		CHECK(grace_ipc_setall(grp, id, v, 2) == -EACCES);
		CHECK(grace_ipc_getall(oth, id, v, 2) == -EACCES);
		CHECK(grace_ipc_getncnt(oth, id, 0) == -EACCES);
		CHECK(grace_ipc_sem_stat(oth, id, &ds) == -EACCES);
		CHECK(grace_ipc_sem_stat(grp, id, &ds) == 0);
		/* semget of the key asks for the mode bits in its flags. */
		CHECK(grace_ipc_semget(oth, 88, 0, 0) == id);
		CHECK(grace_ipc_semget(oth, 88, 0, 0400) == -EACCES);
		CHECK(grace_ipc_semget(grp, 88, 0, 0440) == id);
		CHECK(grace_ipc_semget(grp, 88, 0, 0200) == -EACCES);
		CHECK(grace_ipc_semget(grp, 88, 3, 0200) == -EINVAL); /* nsems is checked first */
		CHECK(grace_ipc_semget(oth, 88, 0, GRACE_IPC_CREAT | GRACE_IPC_EXCL) == -EEXIST);
		/* A supplementary group counts; so does a change of credentials. */
		struct grace_ipc_cred c;
		memset(&c, 0, sizeof(c));
		c.uid = 3000;
		c.gid = 300;
		c.ngroups = 2;
		c.groups[0] = 7;
		c.groups[1] = 100;
		CHECK(grace_ipc_proc_setcred(oth, &c) == 0);
		CHECK(grace_ipc_getval(oth, id, 0) == 2);
		c.uid = 1000;
		c.ngroups = 0;
		CHECK(grace_ipc_proc_setcred(oth, &c) == 0);
		CHECK(op1(oth, id, 0, 1, 0) == 0); /* now the owner */
	}
}

GT_MAIN()
