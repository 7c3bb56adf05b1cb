/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc message queues, run against both implementations: every error case of msgget,
 * msgsnd, msgrcv and msgctl; the msgtyp modes, MSG_EXCEPT, MSG_NOERROR, MSG_COPY; the
 * msg_qbytes limits; blocking sends and receives, the pipelined hand-over to a sleeping
 * receiver (and its -E2BIG), wake-ups by IPC_SET and -EIDRM by IPC_RMID and ns_destroy;
 * IPC_STAT/IPC_SET with permissions. The kernel-differential test (test_ipc_kernel.c) checks
 * the non-blocking behaviour against Linux itself. Compiled as C and as C++.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <grace_ipc.h>
#include "gtest_lite.h"
#include "ipc_test.h"

struct msg {
	long mtype;
	char text[64];
};

static int snd(struct grace_ipc_proc *p, int id, long type, const char *text, int flg)
{
	struct msg m;

	size_t n = strlen(text);

	m.mtype = type;
	memset(m.text, 0, sizeof(m.text));
	REQUIRE(n < sizeof(m.text));
	memcpy(m.text, text, n);
	return grace_ipc_msgsnd(p, id, &m, n, flg);
}

/* Receive into m (text NUL-terminated), buffer of sz bytes. */
static long rcv(struct grace_ipc_proc *p, int id, struct msg *m, size_t sz, long type, int flg)
{
	memset(m, 0, sizeof(*m));
	return (long)grace_ipc_msgrcv(p, id, m, sz, type, flg);
}

static int sleepers(struct grace_ipc_proc *p)
{
	struct grace_ipc_ns_info info;

	grace_ipc_info(grace_ipc_proc_ns(p), &info);
	return info.sleepers;
}

/* Wait (a safety net against a hang, not a timing check) until n threads sleep. */
static bool wait_sleepers(struct grace_ipc_proc *p, int n)
{
	for (int i = 0; i < 60000; i++) {
		if (sleepers(p) == n)
			return true;
		gt_sleep_ms(1);
	}
	return false;
}

static struct grace_ipc_msqid_ds qstat(struct grace_ipc_proc *p, int id)
{
	struct grace_ipc_msqid_ds ds;

	memset(&ds, 0, sizeof(ds));
	REQUIRE(grace_ipc_msgctl(p, id, GRACE_IPC_STAT, &ds) == 0);
	return ds;
}

static int set_qbytes(struct grace_ipc_proc *p, int id, unsigned long qbytes)
{
	struct grace_ipc_msqid_ds ds = qstat(p, id);

	ds.msg_qbytes = qbytes;
	return grace_ipc_msgctl(p, id, GRACE_IPC_SET, &ds);
}

TEST(msgget_errors)
{
	struct grace_ipc_limits lim;

	memset(&lim, 0, sizeof(lim));
	lim.msgmni = 3;
	FOR_EACH_IMPL(p, &lim)
	{
		int a = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600 | 0x10000000); /* ignored bit */
		int k;

		CHECK(a >= 0);
		CHECK(grace_ipc_msgget(NULL, GRACE_IPC_PRIVATE, 0) == -EINVAL);
		CHECK(grace_ipc_msgget(p, 5, 0600) == -ENOENT);
		k = grace_ipc_msgget(p, 5, GRACE_IPC_CREAT | 0600);
		CHECK(k >= 0 && k != a);
		CHECK(grace_ipc_msgget(p, 5, 0) == k);
		CHECK(grace_ipc_msgget(p, 5, GRACE_IPC_CREAT) == k);
		CHECK(grace_ipc_msgget(p, 5, GRACE_IPC_EXCL) == k);
		CHECK(grace_ipc_msgget(p, 5, GRACE_IPC_CREAT | GRACE_IPC_EXCL) == -EEXIST);
		CHECK(grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600) >= 0);
		CHECK(grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600) == -ENOSPC); /* msgmni 3 */
		CHECK(grace_ipc_msgget(p, 6, GRACE_IPC_CREAT) == -ENOSPC);
		CHECK(grace_ipc_msgctl(p, k, GRACE_IPC_RMID, NULL) == 0);
		CHECK(grace_ipc_msgget(p, 5, 0) == -ENOENT);
		CHECK(grace_ipc_msgctl(p, k, GRACE_IPC_RMID, NULL) == -EINVAL);
		struct grace_ipc_msqid_ds ds = qstat(p, a);
		CHECK(ds.msg_qbytes == 16384 && ds.msg_qnum == 0 && ds.msg_perm.mode == 0600);
		CHECK(ds.msg_stime == 0 && ds.msg_rtime == 0 && ds.msg_ctime > 0);
	}
}

TEST(msgsnd_msgrcv_errors)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct msg m;
		char big[9000];

		memset(big, 0, sizeof(big));
		/* msgsnd: EFAULT first, then size, id, type, lookup. */
		CHECK(grace_ipc_msgsnd(p, -1, NULL, 1, 0) == -EFAULT);
		m.mtype = 1;
		CHECK(grace_ipc_msgsnd(p, id, &m, 8193, 0) == -EINVAL); /* msgmax 8192 */
		CHECK(grace_ipc_msgsnd(p, id, &m, (size_t)-1, 0) == -EINVAL);
		CHECK(grace_ipc_msgsnd(p, -1, &m, 1, 0) == -EINVAL);
		m.mtype = 0;
		CHECK(grace_ipc_msgsnd(p, id, &m, 1, 0) == -EINVAL);
		m.mtype = -5;
		CHECK(grace_ipc_msgsnd(p, id + 1, &m, 1, 0) == -EINVAL);
		m.mtype = 1;
		CHECK(grace_ipc_msgsnd(p, id + 1, &m, 1, 0) == -EINVAL); /* no such queue */
		memcpy(big, &m.mtype, sizeof(long));
		CHECK(grace_ipc_msgsnd(p, id, big, 8192, 0) == 0); /* exactly msgmax */
		CHECK(grace_ipc_msgsnd(NULL, id, &m, 1, 0) == -EINVAL);
		/* msgrcv: id and size first. */
		CHECK(rcv(p, -1, &m, 8, 0, 0) == -EINVAL);
		CHECK(grace_ipc_msgrcv(p, id, &m, (size_t)-1, 0, 0) == -EINVAL);
		CHECK(grace_ipc_msgrcv(p, id, NULL, 8, 0, 0) == -EFAULT);
		CHECK(rcv(p, id + 1, &m, 8, 0, 0) == -EINVAL);
		CHECK(rcv(p, id, &m, 8, 0, GRACE_IPC_NOWAIT) == -E2BIG); /* stays queued */
		CHECK(qstat(p, id).msg_qnum == 1);
		CHECK(grace_ipc_msgrcv(p, id, big, 8192, 0, 0) == 8192);
		CHECK(rcv(p, id, &m, 8, 0, GRACE_IPC_NOWAIT) == -ENOMSG);
		CHECK(rcv(p, id, &m, 8, 7, GRACE_IPC_NOWAIT) == -ENOMSG);
		/* A zero-length message. */
		m.mtype = 1;
		CHECK(grace_ipc_msgsnd(p, id, &m, 0, 0) == 0);
		CHECK(rcv(p, id, &m, 0, 0, 0) == 0 && m.mtype == 1);
		/* MSG_COPY needs IPC_NOWAIT and no MSG_EXCEPT. */
		CHECK(rcv(p, id, &m, 8, 0, GRACE_IPC_MSG_COPY) == -EINVAL);
		CHECK(rcv(p, id, &m, 8, 0,
			  GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT | GRACE_IPC_MSG_EXCEPT) == -EINVAL);
		CHECK(rcv(p, id, &m, 8, 0, GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT) == -ENOMSG);
	}
}

TEST(msgrcv_types_and_flags)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct msg m;

		/* Queue: 3 "c", 1 "a", 2 "b", 1 "d", 5 "long text" */
		CHECK(snd(p, id, 3, "c", 0) == 0);
		CHECK(snd(p, id, 1, "a", 0) == 0);
		CHECK(snd(p, id, 2, "b", 0) == 0);
		CHECK(snd(p, id, 1, "d", 0) == 0);
		CHECK(snd(p, id, 5, "long text", 0) == 0);
		struct grace_ipc_msqid_ds ds = qstat(p, id);
		CHECK(ds.msg_qnum == 5 && ds.msg_cbytes == 13 && ds.msg_lspid == 4242);
		CHECK(ds.msg_stime > 0 && ds.msg_lrpid == 0);
		/* MSG_COPY: the n-th message (from 0), left queued; needs the room for it. */
		CHECK(rcv(p, id, &m, 64, 2, GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT) == 1);
		CHECK(m.mtype == 2 && strcmp(m.text, "b") == 0);
		CHECK(rcv(p, id, &m, 64, 5, GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT) == -ENOMSG);
		CHECK(rcv(p, id, &m, 64, -1, GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT) == -ENOMSG);
		CHECK(rcv(p, id, &m, 4, 4, GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT) == -E2BIG);
		CHECK(rcv(p, id, &m, 4, 4,
			  GRACE_IPC_MSG_COPY | GRACE_IPC_NOWAIT | GRACE_IPC_MSG_NOERROR) ==
		      -EINVAL);
		CHECK(qstat(p, id).msg_qnum == 5);
		/* msgtyp < 0: the lowest type <= 2, the first of them. */
		CHECK(rcv(p, id, &m, 64, -2, 0) == 1 && m.mtype == 1 && strcmp(m.text, "a") == 0);
		/* MSG_EXCEPT: the first whose type is not 3. */
		CHECK(rcv(p, id, &m, 64, 3, GRACE_IPC_MSG_EXCEPT) == 1 && strcmp(m.text, "b") == 0);
		/* msgtyp > 0: the first of that type. */
		CHECK(rcv(p, id, &m, 64, 1, 0) == 1 && strcmp(m.text, "d") == 0);
		CHECK(rcv(p, id, &m, 64, 1, GRACE_IPC_NOWAIT) == -ENOMSG);
		/* MSG_NOERROR truncates. */
		CHECK(rcv(p, id, &m, 4, 5, GRACE_IPC_MSG_NOERROR) == 4);
		CHECK(m.mtype == 5 && strcmp(m.text, "long") == 0);
		/* LONG_MIN: every type qualifies. */
		CHECK(rcv(p, id, &m, 64, LONG_MIN, 0) == 1 && strcmp(m.text, "c") == 0);
		ds = qstat(p, id);
		CHECK(ds.msg_qnum == 0 && ds.msg_cbytes == 0 && ds.msg_lrpid == 4242 &&
		      ds.msg_rtime > 0);
	}
}

TEST(msg_qbytes_limits)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct grace_ipc_proc *user = other(p, 1000, 1000, 0, 31);
		struct msg m;

		/* Bytes: 10 fit, 11 do not. */
		CHECK(set_qbytes(p, id, 10) == 0);
		CHECK(snd(p, id, 1, "0123456", GRACE_IPC_NOWAIT) == 0);
		CHECK(snd(p, id, 1, "0123", GRACE_IPC_NOWAIT) == -EAGAIN);
		CHECK(snd(p, id, 1, "012", GRACE_IPC_NOWAIT) == 0);
		/* Messages: at most qbytes of them, even empty ones. */
		CHECK(rcv(p, id, &m, 64, 0, 0) == 7);
		CHECK(rcv(p, id, &m, 64, 0, 0) == 3);
		CHECK(set_qbytes(p, id, 2) == 0);
		CHECK(snd(p, id, 1, "", GRACE_IPC_NOWAIT) == 0);
		CHECK(snd(p, id, 1, "", GRACE_IPC_NOWAIT) == 0);
		CHECK(snd(p, id, 1, "", GRACE_IPC_NOWAIT) == -EAGAIN);
		/* Raising msg_qbytes above msgmnb takes CAP_SYS_RESOURCE. */
		struct grace_ipc_msqid_ds ds = qstat(p, id);
		ds.msg_perm.uid = 1000;
		ds.msg_qbytes = 16384;
		CHECK(grace_ipc_msgctl(p, id, GRACE_IPC_SET, &ds) == 0); /* user owns it now */
		ds.msg_qbytes = 16385;
		CHECK(grace_ipc_msgctl(user, id, GRACE_IPC_SET, &ds) == -EPERM);
		CHECK(grace_ipc_msgctl(p, id, GRACE_IPC_SET, &ds) == 0);
		CHECK(qstat(p, id).msg_qbytes == 16385);
		ds.msg_qbytes = 0; /* allowed: nothing fits any more */
		CHECK(grace_ipc_msgctl(user, id, GRACE_IPC_SET, &ds) == 0);
		CHECK(snd(p, id, 1, "", GRACE_IPC_NOWAIT) == -EAGAIN);
		grace_ipc_proc_close(user);
	}
}

TEST(msgctl_stat_set_info_permissions)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct grace_ipc_proc *own = other(p, 1000, 100, 0, 41);
		struct grace_ipc_proc *grp = other(p, 2000, 100, 0, 42);
		struct grace_ipc_proc *oth = other(p, 3000, 300, 0, 43);
		int id = grace_ipc_msgget(own, 9, GRACE_IPC_CREAT | 0620);
		struct grace_ipc_msqid_ds ds;
		struct grace_ipc_msginfo mi;
		struct msg m;

		CHECK(id >= 0);
		/* Group may write, not read; others nothing; the owner reads and writes. */
		CHECK(snd(grp, id, 1, "x", 0) == 0);
		CHECK(rcv(grp, id, &m, 64, 0, GRACE_IPC_NOWAIT) == -EACCES);
		CHECK(snd(oth, id, 1, "x", 0) == -EACCES);
		CHECK(grace_ipc_msgctl(grp, id, GRACE_IPC_STAT, &ds) == -EACCES);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_STAT, &ds) == 0);
		CHECK(ds.msg_perm.uid == 1000 && ds.msg_perm.cgid == 100 && ds.msg_lspid == 42);
		CHECK(grace_ipc_msgget(grp, 9, 0400) == -EACCES);
		CHECK(grace_ipc_msgget(grp, 9, 0200) == id);
		/* MSG_STAT takes an index and returns the ID; MSG_STAT_ANY skips the read check. */
		CHECK(grace_ipc_msgctl(oth, id & 0x7fff, GRACE_IPC_MSG_STAT, &ds) == -EACCES);
		CHECK(grace_ipc_msgctl(oth, id & 0x7fff, GRACE_IPC_MSG_STAT_ANY, &ds) == id);
		CHECK(grace_ipc_msgctl(own, (id & 0x7fff) + 3, GRACE_IPC_MSG_STAT, &ds) == -EINVAL);
		/* IPC_SET / IPC_RMID: owner, creator or CAP_SYS_ADMIN. */
		ds.msg_perm.mode = 0666;
		CHECK(grace_ipc_msgctl(oth, id, GRACE_IPC_SET, &ds) == -EPERM);
		CHECK(grace_ipc_msgctl(oth, id, GRACE_IPC_RMID, NULL) == -EPERM);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_SET, NULL) == -EFAULT);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_SET, &ds) == 0);
		CHECK(rcv(oth, id, &m, 64, 0, GRACE_IPC_NOWAIT) == 1);
		ds.msg_perm.gid = (unsigned)-1;
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_SET, &ds) == -EINVAL);
		/* Commands. */
		CHECK(grace_ipc_msgctl(own, id, 99, &ds) == -EINVAL);
		CHECK(grace_ipc_msgctl(own, id, -1, &ds) == -EINVAL);
		CHECK(grace_ipc_msgctl(own, -1, GRACE_IPC_STAT, &ds) == -EINVAL);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_STAT, NULL) == -EFAULT);
		CHECK(grace_ipc_msgctl(own, 0, GRACE_IPC_INFO,
				       (struct grace_ipc_msqid_ds *)(void *)&mi) == (id & 0x7fff));
		CHECK(mi.msgmax == 8192 && mi.msgmnb == 16384 && mi.msgmni == 32000);
		CHECK(mi.msgssz == 16 && mi.msgseg == 0xffff && mi.msgpool == 512000);
		CHECK(snd(own, id, 1, "abc", 0) == 0);
		CHECK(grace_ipc_msgctl(own, 0, GRACE_IPC_MSG_INFO,
				       (struct grace_ipc_msqid_ds *)(void *)&mi) == (id & 0x7fff));
		CHECK(mi.msgpool == 1 && mi.msgmap == 1 && mi.msgtql == 3);
		CHECK(grace_ipc_msgctl(own, 0, GRACE_IPC_MSG_INFO, NULL) == -EFAULT);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_RMID, NULL) == 0);
		CHECK(grace_ipc_msgctl(own, id, GRACE_IPC_STAT, &ds) == -EINVAL);
		CHECK(snd(own, id, 1, "x", 0) == -EINVAL);
	}
}

/* ---------------------------------------------------------------- blocking */

struct rthread {
	struct grace_ipc_proc *p;
	int id;
	size_t sz;
	long type;
	int flg;
	long result;
	struct msg m;
	pthread_t th;
};

static void *rthread_main(void *arg)
{
	struct rthread *r = (struct rthread *)arg;

	r->result = rcv(r->p, r->id, &r->m, r->sz, r->type, r->flg);
	return NULL;
}

static void *sthread_main(void *arg)
{
	struct rthread *r = (struct rthread *)arg;

	r->result = snd(r->p, r->id, r->type, r->m.text, r->flg);
	return NULL;
}

static void start_rcv(struct rthread *r, struct grace_ipc_proc *p, int id, size_t sz, long type,
		      int flg)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->id = id;
	r->sz = sz;
	r->type = type;
	r->flg = flg;
	r->result = 12345;
	REQUIRE(pthread_create(&r->th, NULL, rthread_main, r) == 0);
}

static void start_snd(struct rthread *r, struct grace_ipc_proc *p, int id, long type,
		      const char *text)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->id = id;
	r->type = type;
	REQUIRE(strlen(text) < sizeof(r->m.text));
	memcpy(r->m.text, text, strlen(text));
	r->result = 12345;
	REQUIRE(pthread_create(&r->th, NULL, sthread_main, r) == 0);
}

TEST(msg_blocking_receive_pipelined)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct grace_ipc_proc *r1p = other(p, 0, 0, 0, 51), *r2p = other(p, 0, 0, 0, 52);
		struct rthread r1, r2, r3;

		/* Two receivers, for types 1 and 2; a message of type 2 goes straight to the
		 * second one (it never enters the queue), the first keeps sleeping. */
		start_rcv(&r1, r1p, id, 64, 1, 0);
		start_rcv(&r2, r2p, id, 64, 2, 0);
		CHECK(wait_sleepers(p, 2));
		CHECK(snd(p, id, 2, "two", 0) == 0);
		pthread_join(r2.th, NULL);
		CHECK(r2.result == 3 && r2.m.mtype == 2 && strcmp(r2.m.text, "two") == 0);
		struct grace_ipc_msqid_ds ds = qstat(p, id);
		CHECK(ds.msg_qnum == 0 && ds.msg_lrpid == 52 && ds.msg_lspid == 4242);
		/* Receivers are offered messages oldest first. */
		CHECK(snd(p, id, 1, "one", 0) == 0);
		pthread_join(r1.th, NULL);
		CHECK(r1.result == 3 && strcmp(r1.m.text, "one") == 0);
		/* A receiver whose buffer is too small is woken with E2BIG; the message is offered
		 * to the next matching receiver (or queued). */
		start_rcv(&r3, r2p, id, 2, 0, 0);
		CHECK(wait_sleepers(p, 1));
		start_rcv(&r1, r1p, id, 64, 0, 0);
		CHECK(wait_sleepers(p, 2));
		CHECK(snd(p, id, 1, "long", 0) == 0);
		pthread_join(r3.th, NULL);
		pthread_join(r1.th, NULL);
		CHECK(r3.result == -E2BIG);
		CHECK(r1.result == 4 && strcmp(r1.m.text, "long") == 0);
		CHECK(qstat(p, id).msg_lrpid == 51);
		start_rcv(&r3, r2p, id, 2, 0, 0);
		CHECK(wait_sleepers(p, 1));
		CHECK(snd(p, id, 1, "long", 0) == 0);
		pthread_join(r3.th, NULL);
		CHECK(r3.result == -E2BIG);
		CHECK(qstat(p, id).msg_qnum == 1); /* nobody took it: queued */
		CHECK(rcv(p, id, &r3.m, 64, 0, 0) == 4);
		/* With MSG_NOERROR the sleeper takes it, truncated. */
		start_rcv(&r3, r2p, id, 2, 0, GRACE_IPC_MSG_NOERROR);
		CHECK(wait_sleepers(p, 1));
		CHECK(snd(p, id, 1, "long", 0) == 0);
		pthread_join(r3.th, NULL);
		CHECK(r3.result == 2 && strcmp(r3.m.text, "lo") == 0);
		CHECK(qstat(p, id).msg_qnum == 0);
		grace_ipc_proc_close(r1p);
		grace_ipc_proc_close(r2p);
	}
}

TEST(msg_blocking_send)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct rthread s1, s2;
		struct msg m;

		CHECK(set_qbytes(p, id, 8) == 0);
		CHECK(snd(p, id, 1, "123456", 0) == 0);
		start_snd(&s1, p, id, 1, "abcd");
		CHECK(wait_sleepers(p, 1));
		start_snd(&s2, p, id, 2, "z"); /* fits (7 bytes): no FIFO among new senders */
		pthread_join(s2.th, NULL);
		CHECK(s2.result == 0);
		/* A receive makes room: the sleeping sender wakes, checks again, fits. */
		CHECK(rcv(p, id, &m, 64, 1, 0) == 6);
		pthread_join(s1.th, NULL);
		CHECK(s1.result == 0);
		CHECK(qstat(p, id).msg_qnum == 2);
		/* IPC_SET raising msg_qbytes wakes a sender that now fits. */
		start_snd(&s1, p, id, 1, "0123456789");
		CHECK(wait_sleepers(p, 1));
		CHECK(set_qbytes(p, id, 100) == 0);
		pthread_join(s1.th, NULL);
		CHECK(s1.result == 0);
		CHECK(qstat(p, id).msg_qnum == 3);
	}
}

TEST(msg_sleepers_wake_with_eidrm_and_on_ipc_set)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0666);
		struct grace_ipc_proc *u = other(p, 1000, 1000, 0, 61);
		struct rthread r1, r2, s1;

		/* IPC_SET that takes away the read permission: the sleeping receiver checks
		 * again and fails with EACCES; one that keeps it goes back to sleep. */
		start_rcv(&r1, u, id, 64, 0, 0);
		start_rcv(&r2, p, id, 64, 0, 0);
		CHECK(wait_sleepers(p, 2));
		struct grace_ipc_msqid_ds ds = qstat(p, id);
		ds.msg_perm.mode = 0600;
		CHECK(grace_ipc_msgctl(p, id, GRACE_IPC_SET, &ds) == 0);
		pthread_join(r1.th, NULL);
		CHECK(r1.result == -EACCES);
		CHECK(wait_sleepers(p, 1));
		/* Removal wakes sleeping receivers and senders with EIDRM. */
		CHECK(set_qbytes(p, id, 0) == 0);
		start_snd(&s1, p, id, 1, "x");
		CHECK(wait_sleepers(p, 2));
		CHECK(grace_ipc_msgctl(p, id, GRACE_IPC_RMID, NULL) == 0);
		pthread_join(r2.th, NULL);
		pthread_join(s1.th, NULL);
		CHECK(r2.result == -EIDRM);
		CHECK(s1.result == -EIDRM);
		grace_ipc_proc_close(u);
	}
}

TEST(msg_destroy_wakes_sleepers)
{
	for (int i = 0; i < 2; i++) {
		struct grace_ipc_proc *p = mk_proc(impls[i], NULL, NULL);
		int id = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		struct rthread r, s;

		CHECK(set_qbytes(p, id, 1) == 0);
		CHECK(snd(p, id, 1, "", 0) == 0);
		start_snd(&s, p, id, 1, "");
		int id2 = grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
		start_rcv(&r, p, id2, 64, 0, 0);
		CHECK(wait_sleepers(p, 2));
		grace_ipc_ns_destroy(grace_ipc_proc_ns(p)); /* returns once the sleepers left */
		pthread_join(r.th, NULL);
		pthread_join(s.th, NULL);
		CHECK(r.result == -EIDRM && s.result == -EIDRM);
	}
}

GT_MAIN()
