/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc semantics, run against both implementations: every error case of semget, semop,
 * semtimedop and semctl; all-or-nothing operations; blocking, wake-up, wake on remove; IDs
 * that stay invalid after their slot is reused; ID-array growth and shrink.
 * Compiled as C and as C++ (the header must work in both).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

static const enum grace_ipc_impl impls[2] = { GRACE_IPC_GLOBAL_LOCK, GRACE_IPC_RCU };

#define FOR_EACH_IMPL(ns, lim)                                                 \
	for (int impl_i_ = 0; impl_i_ < 2; impl_i_++)                          \
		for (struct grace_ipc_ns *ns = mk_ns(impls[impl_i_], lim); ns; \
		     grace_ipc_ns_destroy(ns), ns = NULL)

static struct grace_ipc_ns *mk_ns(enum grace_ipc_impl impl, const struct grace_ipc_limits *lim)
{
	struct grace_ipc_ns *ns = NULL;

	REQUIRE(grace_ipc_ns_create(impl, lim, &ns) == 0);
	REQUIRE(ns != NULL);
	printf("  impl %s\n", grace_ipc_impl_name(impl));
	return ns;
}

static struct grace_ipc_sembuf op(unsigned short num, short o, short flg)
{
	struct grace_ipc_sembuf b;

	b.sem_num = num;
	b.sem_op = o;
	b.sem_flg = flg;
	return b;
}

static int op1(struct grace_ipc_ns *ns, int id, unsigned short num, short o, short flg)
{
	struct grace_ipc_sembuf b = op(num, o, flg);

	return grace_ipc_semop(ns, id, &b, 1);
}

/* Wait (without a time limit that decides the outcome) until cnt() reports n sleepers. */
static int wait_count(struct grace_ipc_ns *ns, int id, int num, bool zero, int n)
{
	for (int i = 0; i < 60000; i++) { /* a safety net against a hang, not a timing check */
		int c = zero ? grace_ipc_getzcnt(ns, id, num) : grace_ipc_getncnt(ns, id, num);

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
	FOR_EACH_IMPL(ns, &lim)
	{
		int a, b, k;

		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 0, 0600) == -EINVAL);
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, -1, 0600) == -EINVAL);
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 9, 0600) == -EINVAL);
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0100000) == -EINVAL);
		CHECK(grace_ipc_semget(NULL, GRACE_IPC_PRIVATE, 1, 0) == -EINVAL);
		a = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 8, 0600);
		b = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 8, 0600);
		CHECK(a >= 0 && b >= 0 && a != b);
		/* semmns: 16 used, 5 more would be 21 > 20. */
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 5, 0) == -ENOSPC);
		/* Keys. */
		CHECK(grace_ipc_semget(ns, 1234, 2, 0600) == -ENOENT);
		k = grace_ipc_semget(ns, 1234, 2, GRACE_IPC_CREAT | 0600);
		CHECK(k >= 0);
		CHECK(grace_ipc_semget(ns, 1234, 2, 0) == k);
		CHECK(grace_ipc_semget(ns, 1234, 0, 0) == k);
		CHECK(grace_ipc_semget(ns, 1234, 1, GRACE_IPC_CREAT) == k);
		CHECK(grace_ipc_semget(ns, 1234, 3, 0) == -EINVAL);
		CHECK(grace_ipc_semget(ns, 1234, 1, GRACE_IPC_CREAT | GRACE_IPC_EXCL) == -EEXIST);
		/* EXCL alone does nothing (as in Linux). */
		CHECK(grace_ipc_semget(ns, 1234, 1, GRACE_IPC_EXCL) == k);
		/* Creating with nsems 0 on a missing key is EINVAL, not ENOENT. */
		CHECK(grace_ipc_semget(ns, 99, 0, GRACE_IPC_CREAT) == -EINVAL);
		/* semmni: three sets; a fourth fits, a fifth does not. */
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0) >= 0);
		CHECK(grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0) == -ENOSPC);
		/* Removing a keyed set frees its key. */
		CHECK(grace_ipc_rmid(ns, k) == 0);
		CHECK(grace_ipc_semget(ns, 1234, 2, 0) == -ENOENT);
		int k2 = grace_ipc_semget(ns, 1234, 2, GRACE_IPC_CREAT | GRACE_IPC_EXCL);
		CHECK(k2 >= 0 && k2 != k);
		struct grace_ipc_semid_ds ds;
		CHECK(grace_ipc_stat(ns, k2, &ds) == 0);
		CHECK(ds.key == 1234 && ds.nsems == 2);
		CHECK(grace_ipc_stat(ns, k2, NULL) == -EFAULT);
		CHECK(grace_ipc_stat(ns, k, &ds) == -EINVAL);
	}
}

TEST(semop_errors)
{
	struct grace_ipc_limits lim;

	memset(&lim, 0, sizeof(lim));
	lim.semopm = 4;
	FOR_EACH_IMPL(ns, &lim)
	{
		struct grace_ipc_sembuf b[5];
		struct timespec ts;
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		for (int i = 0; i < 5; i++)
			b[i] = op(0, 1, 0);
		CHECK(grace_ipc_semop(ns, -1, b, 1) == -EINVAL);
		CHECK(grace_ipc_semop(ns, id, b, 0) == -EINVAL);
		CHECK(grace_ipc_semop(ns, -1, b, 0) == -EINVAL);
		CHECK(grace_ipc_semop(NULL, id, b, 1) == -EINVAL);
		CHECK(grace_ipc_semop(ns, id, b, 5) == -E2BIG);
		CHECK(grace_ipc_semop(ns, id + 1, b, 5) == -E2BIG); /* E2BIG before the lookup */
		CHECK(grace_ipc_semop(ns, -1, b, 5) == -E2BIG);     /* and before semid < 0 */
		CHECK(grace_ipc_semop(ns, -1, NULL, 1) == -EFAULT); /* EFAULT before semid < 0 */
		CHECK(grace_ipc_semop(ns, id, NULL, 1) == -EFAULT);
		CHECK(grace_ipc_semop(ns, id + 1, b, 1) == -EINVAL);     /* no such set */
		CHECK(grace_ipc_semop(ns, id + 32768, b, 1) == -EINVAL); /* other sequence */
		CHECK(op1(ns, id, 3, 1, 0) == -EFBIG);
		CHECK(op1(ns, id + 1, 3, 1, 0) == -EINVAL); /* EINVAL before EFBIG */
		CHECK(op1(ns, id, 0, 1, 0x1000 /* SEM_UNDO: not supported */) == -EINVAL);
		/* Nothing above changed a value. */
		CHECK(grace_ipc_getval(ns, id, 0) == 0);
		/* ERANGE at SEMVMX. */
		CHECK(grace_ipc_setval(ns, id, 1, GRACE_IPC_SEMVMX) == 0);
		CHECK(op1(ns, id, 1, 1, 0) == -ERANGE);
		CHECK(op1(ns, id, 1, 1, GRACE_IPC_NOWAIT) == -ERANGE);
		CHECK(grace_ipc_getval(ns, id, 1) == GRACE_IPC_SEMVMX);
		CHECK(op1(ns, id, 1, -GRACE_IPC_SEMVMX, 0) == 0);
		/* EAGAIN: decrement below zero, wait for zero on non-zero. */
		CHECK(op1(ns, id, 0, -1, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(ns, id, 0, 0, GRACE_IPC_NOWAIT) == 0);
		CHECK(op1(ns, id, 0, 2, 0) == 0);
		CHECK(op1(ns, id, 0, 0, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(ns, id, 0, -3, GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(op1(ns, id, 0, -2, GRACE_IPC_NOWAIT) == 0);
		/* semtimedop: a bad timeout is EINVAL; an expired one is EAGAIN. */
		ts.tv_sec = 0;
		ts.tv_nsec = 1000000000L;
		b[0] = op(0, -1, 0);
		CHECK(grace_ipc_semtimedop(ns, id, b, 1, &ts) == -EINVAL);
		ts.tv_sec = -1;
		ts.tv_nsec = 0;
		CHECK(grace_ipc_semtimedop(ns, id, b, 1, &ts) == -EINVAL);
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		CHECK(grace_ipc_semtimedop(ns, id, b, 1, &ts) == -EAGAIN);
		ts.tv_nsec = 20 * 1000 * 1000;
		CHECK(grace_ipc_semtimedop(ns, id, b, 1, &ts) == -EAGAIN);
		CHECK(grace_ipc_getncnt(ns, id, 0) == 0); /* the timed-out sleeper left the queue */
		b[0] = op(0, 1, 0);
		CHECK(grace_ipc_semtimedop(ns, id, b, 1, &ts) == 0);
		CHECK(grace_ipc_getval(ns, id, 0) == 1);
	}
}

TEST(semop_all_or_nothing)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct grace_ipc_sembuf b[4];
		unsigned short v[3];
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		/* The third operation would block (NOWAIT): the first two are not applied. */
		b[0] = op(0, 5, 0);
		b[1] = op(1, 3, 0);
		b[2] = op(2, -1, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(ns, id, b, 3) == -EAGAIN);
		CHECK(grace_ipc_getall(ns, id, v, 3) == 3);
		CHECK(v[0] == 0 && v[1] == 0 && v[2] == 0);
		/* The second would overflow: ERANGE, nothing applied. */
		CHECK(grace_ipc_setval(ns, id, 1, GRACE_IPC_SEMVMX - 2) == 0);
		b[2] = op(2, 1, 0);
		CHECK(grace_ipc_semop(ns, id, b, 3) == -ERANGE);
		CHECK(grace_ipc_getall(ns, id, v, 3) == 3);
		CHECK(v[0] == 0 && v[1] == GRACE_IPC_SEMVMX - 2 && v[2] == 0);
		/* Same semaphore several times: applied in order (+2, -1, -1, wait-for-zero). */
		CHECK(grace_ipc_setval(ns, id, 1, 0) == 0);
		b[0] = op(0, 2, 0);
		b[1] = op(0, -1, 0);
		b[2] = op(0, -1, 0);
		b[3] = op(0, 0, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(ns, id, b, 4) == 0);
		CHECK(grace_ipc_getval(ns, id, 0) == 0);
		/* -1 then +1 on a zero semaphore blocks (order matters). */
		b[0] = op(0, -1, GRACE_IPC_NOWAIT);
		b[1] = op(0, 1, 0);
		CHECK(grace_ipc_semop(ns, id, b, 2) == -EAGAIN);
		/* +1 then -1 succeeds. */
		b[0] = op(0, 1, 0);
		b[1] = op(0, -1, 0);
		CHECK(grace_ipc_semop(ns, id, b, 2) == 0);
		/* EAGAIN depends on the flag of the operation that blocks, not of the others. */
		b[0] = op(0, 0, GRACE_IPC_NOWAIT);
		b[1] = op(1, -1, GRACE_IPC_NOWAIT);
		CHECK(grace_ipc_semop(ns, id, b, 2) == -EAGAIN);
	}
}

TEST(semctl_errors)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		unsigned short v[4] = { 1, 2, 3, 4 };
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 3, 0600);

		CHECK(id >= 0);
		CHECK(grace_ipc_getval(ns, -1, 0) == -EINVAL);
		CHECK(grace_ipc_getval(ns, id + 1, 0) == -EINVAL);
		CHECK(grace_ipc_getval(ns, id, 3) == -EINVAL);
		CHECK(grace_ipc_getval(ns, id, -1) == -EINVAL);
		CHECK(grace_ipc_setval(ns, id, 0, -1) == -ERANGE);
		CHECK(grace_ipc_setval(ns, id, 0, GRACE_IPC_SEMVMX + 1) == -ERANGE);
		CHECK(grace_ipc_setval(ns, -1, 0, -1) == -EINVAL); /* semid < 0 first */
		CHECK(grace_ipc_setval(ns, id + 1, 0, -1) ==
		      -ERANGE); /* then ERANGE, before lookup */
		CHECK(grace_ipc_setval(ns, id + 1, 0, 1) == -EINVAL);
		CHECK(grace_ipc_setval(ns, id, 3, 1) == -EINVAL);
		CHECK(grace_ipc_setval(ns, id, 2, GRACE_IPC_SEMVMX) == 0);
		CHECK(grace_ipc_getval(ns, id, 2) == GRACE_IPC_SEMVMX);
		CHECK(grace_ipc_getall(ns, id, v, 2) == -EINVAL);
		CHECK(grace_ipc_getall(ns, id, NULL, 3) == -EFAULT);
		CHECK(grace_ipc_getall(ns, id + 1, v, 3) == -EINVAL);
		CHECK(grace_ipc_setall(ns, id, v, 4) == -EINVAL);
		CHECK(grace_ipc_setall(ns, id, NULL, 3) == -EFAULT);
		v[1] = GRACE_IPC_SEMVMX + 1;
		CHECK(grace_ipc_setall(ns, id, v, 3) == -ERANGE);
		CHECK(grace_ipc_getval(ns, id, 0) == 0); /* nothing set */
		v[1] = 2;
		CHECK(grace_ipc_setall(ns, id, v, 3) == 0);
		memset(v, 0, sizeof(v));
		CHECK(grace_ipc_getall(ns, id, v, 4) == 3);
		CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 0);
		CHECK(grace_ipc_getncnt(ns, id, 3) == -EINVAL);
		CHECK(grace_ipc_getzcnt(ns, id, -1) == -EINVAL);
		CHECK(grace_ipc_getncnt(ns, id, 0) == 0);
		CHECK(grace_ipc_rmid(ns, -1) == -EINVAL);
		CHECK(grace_ipc_rmid(ns, id + 1) == -EINVAL);
		CHECK(grace_ipc_rmid(ns, id) == 0);
		CHECK(grace_ipc_rmid(ns, id) == -EINVAL);
		/* Every call on a removed ID: EINVAL. */
		CHECK(grace_ipc_getval(ns, id, 0) == -EINVAL);
		CHECK(grace_ipc_setval(ns, id, 0, 1) == -EINVAL);
		CHECK(grace_ipc_getall(ns, id, v, 4) == -EINVAL);
		CHECK(grace_ipc_setall(ns, id, v, 3) == -EINVAL);
		CHECK(grace_ipc_getncnt(ns, id, 0) == -EINVAL);
		CHECK(grace_ipc_getzcnt(ns, id, 0) == -EINVAL);
		CHECK(op1(ns, id, 0, 1, 0) == -EINVAL);
	}
}

TEST(removed_id_stays_invalid_after_slot_reuse)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		static int old[3000];
		int first = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0);

		CHECK(first >= 0);
		old[0] = first;
		for (int i = 1; i < 3000; i++) {
			CHECK(grace_ipc_rmid(ns, old[i - 1]) == 0);
			old[i] = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0);
			CHECK(old[i] >= 0);
			/* The lowest free slot is reused: same slot, new sequence. */
			CHECK((old[i] & 0x7fff) == (first & 0x7fff));
			CHECK(old[i] != old[i - 1]);
		}
		int live = old[2999];
		for (int i = 0; i < 2999; i++) {
			CHECK_MSG(op1(ns, old[i], 0, 1, 0) == -EINVAL, "old id %d", old[i]);
			CHECK(grace_ipc_getval(ns, old[i], 0) == -EINVAL);
			CHECK(grace_ipc_rmid(ns, old[i]) == -EINVAL);
		}
		CHECK(op1(ns, live, 0, 1, 0) == 0);
		CHECK(grace_ipc_getval(ns, live, 0) == 1);
	}
}

TEST(array_grows_ids_survive)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		static int ids[1000], ids2[1000];
		struct grace_ipc_ns_info info;

		for (int i = 0; i < 1000; i++) {
			ids[i] = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 2, 0);
			CHECK(ids[i] >= 0);
			CHECK(grace_ipc_setval(ns, ids[i], 1, i % 30000) == 0);
		}
		grace_ipc_info(ns, &info);
		CHECK(info.sets == 1000 && info.sems == 2000);
		CHECK(info.ary_size == 1024);
		CHECK(info.grows == 6); /* 16 -> 32 -> ... -> 1024 */
		/* Every set is still reachable through the grown array, with its value. */
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_getval(ns, ids[i], 1) == i % 30000);
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_rmid(ns, ids[i]) == 0);
		grace_ipc_info(ns, &info);
		CHECK(info.sets == 0 && info.sems == 0);
		/* Refill: the same slots come back with new sequence numbers. */
		for (int i = 0; i < 1000; i++) {
			ids2[i] = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 2, 0);
			CHECK(ids2[i] >= 0 && ids2[i] != ids[i]);
		}
		for (int i = 0; i < 1000; i++)
			CHECK(grace_ipc_getval(ns, ids[i], 1) == -EINVAL);
		grace_ipc_info(ns, &info);
		CHECK(info.grows == 6);
		/* Destroy frees the sets that are left (LSan checks it in the ASan build). */
	}
}

/* ---------------------------------------------------------------- blocking */

struct sleeper {
	struct grace_ipc_ns *ns;
	int id;
	struct grace_ipc_sembuf ops[2];
	int nops;
	int result;
	pthread_t th;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = (struct sleeper *)arg;

	s->result = grace_ipc_semop(s->ns, s->id, s->ops, (size_t)s->nops);
	return NULL;
}

static void start_sleeper(struct sleeper *s, struct grace_ipc_ns *ns, int id,
			  struct grace_ipc_sembuf a, int nops, struct grace_ipc_sembuf b)
{
	s->ns = ns;
	s->id = id;
	s->ops[0] = a;
	s->ops[1] = b;
	s->nops = nops;
	s->result = 12345;
	REQUIRE(pthread_create(&s->th, NULL, sleeper_main, s) == 0);
}

TEST(blocked_decrement_wakes_on_increment)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct sleeper s;
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0);

		start_sleeper(&s, ns, id, op(0, -2, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, false, 1));
		CHECK(op1(ns, id, 0, 1, 0) == 0); /* not enough yet */
		CHECK(grace_ipc_getncnt(ns, id, 0) == 1);
		CHECK(grace_ipc_getval(ns, id, 0) == 1);
		CHECK(op1(ns, id, 0, 1, 0) == 0); /* now the sleeper's -2 is performed for it */
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(ns, id, 0) == 0);
		CHECK(grace_ipc_getncnt(ns, id, 0) == 0);
	}
}

TEST(blocked_wait_for_zero_and_setval_wake)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct sleeper z, d;
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 2, 0);

		CHECK(grace_ipc_setval(ns, id, 0, 2) == 0);
		start_sleeper(&z, ns, id, op(0, 0, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, true, 1));
		start_sleeper(&d, ns, id, op(1, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 1, false, 1));
		CHECK(op1(ns, id, 0, -1, 0) == 0);
		CHECK(grace_ipc_getzcnt(ns, id, 0) == 1);
		CHECK(grace_ipc_setval(ns, id, 0, 0) == 0); /* SETVAL wakes the zero waiter */
		pthread_join(z.th, NULL);
		CHECK(z.result == 0);
		unsigned short v[2] = { 0, 1 };
		CHECK(grace_ipc_setall(ns, id, v, 2) == 0); /* SETALL wakes the decrement */
		pthread_join(d.th, NULL);
		CHECK(d.result == 0);
		CHECK(grace_ipc_getval(ns, id, 1) == 0);
	}
}

TEST(blocked_multi_op_is_atomic)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct sleeper s;
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 2, 0);

		start_sleeper(&s, ns, id, op(0, -1, 0), 2, op(1, -1, 0));
		CHECK(wait_count(ns, id, 0, false, 1)); /* blocked on its first operation */
		CHECK(op1(ns, id, 0, 1, 0) == 0);
		/* Now blocked on the second; the first must not have been taken. */
		CHECK(wait_count(ns, id, 1, false, 1));
		CHECK(grace_ipc_getval(ns, id, 0) == 1);
		CHECK(grace_ipc_getncnt(ns, id, 0) == 0);
		CHECK(op1(ns, id, 1, 1, 0) == 0);
		pthread_join(s.th, NULL);
		CHECK(s.result == 0);
		CHECK(grace_ipc_getval(ns, id, 0) == 0 && grace_ipc_getval(ns, id, 1) == 0);
	}
}

TEST(blocked_sleepers_wake_with_eidrm_on_remove)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct sleeper s[6];
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 2, 0);

		CHECK(grace_ipc_setval(ns, id, 1, 1) == 0);
		for (int i = 0; i < 3; i++)
			start_sleeper(&s[i], ns, id, op(0, -1, 0), 1, op(0, 0, 0));
		for (int i = 3; i < 6; i++)
			start_sleeper(&s[i], ns, id, op(1, 0, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, false, 3));
		CHECK(wait_count(ns, id, 1, true, 3));
		CHECK(grace_ipc_rmid(ns, id) == 0);
		for (int i = 0; i < 6; i++) {
			pthread_join(s[i].th, NULL);
			CHECK_MSG(s[i].result == -EIDRM, "sleeper %d got %d", i, s[i].result);
		}
		CHECK(op1(ns, id, 0, 1, 0) == -EINVAL);
	}
}

TEST(destroy_wakes_sleepers)
{
	for (int i = 0; i < 2; i++) {
		struct grace_ipc_ns *ns = mk_ns(impls[i], NULL);
		struct sleeper s[3];
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0);

		for (int k = 0; k < 3; k++)
			start_sleeper(&s[k], ns, id, op(0, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, false, 3));
		grace_ipc_ns_destroy(ns); /* returns once the sleepers have left */
		for (int k = 0; k < 3; k++) {
			pthread_join(s[k].th, NULL);
			CHECK(s[k].result == -EIDRM);
		}
	}
}

TEST(fifo_handoff)
{
	FOR_EACH_IMPL(ns, NULL)
	{
		struct sleeper a, b;
		int id = grace_ipc_semget(ns, GRACE_IPC_PRIVATE, 1, 0);

		/* a wants 2, queued first; b wants 1. Adding 1 completes b (a cannot proceed), then
		 * adding 2 completes a. */
		start_sleeper(&a, ns, id, op(0, -2, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, false, 1));
		start_sleeper(&b, ns, id, op(0, -1, 0), 1, op(0, 0, 0));
		CHECK(wait_count(ns, id, 0, false, 2));
		CHECK(op1(ns, id, 0, 1, 0) == 0);
		pthread_join(b.th, NULL);
		CHECK(b.result == 0);
		CHECK(grace_ipc_getncnt(ns, id, 0) == 1);
		CHECK(op1(ns, id, 0, 2, 0) == 0);
		pthread_join(a.th, NULL);
		CHECK(a.result == 0);
		CHECK(grace_ipc_getval(ns, id, 0) == 0);
	}
}

GT_MAIN()
