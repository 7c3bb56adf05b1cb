/* SPDX-License-Identifier: MIT */
/*
 * ipc_demo: producers and consumers, each a "process" (a grace_ipc client handle of its own),
 * sharing a bounded buffer the System V way, on both grace_ipc implementations:
 *
 *   a shared-memory segment  holds the ring (every thread attaches it at its own address)
 *   a semaphore set          guards it:  0 FREE   free slots (starts at RING)
 *                                        1 FULL   items in the ring (starts at 0)
 *                                        2 MUTEX  1 when the ring is free to touch
 *   a message queue          carries each consumer's count and sum back to the main thread
 *
 * A producer takes a free slot and the mutex in one atomic semop ({FREE,-1},{MUTEX,-1}), stores,
 * then gives back the mutex and adds an item ({MUTEX,+1},{FULL,+1}); consumers do the reverse.
 * When every item has been consumed, the consumers are asleep waiting for more: removing the
 * set wakes them with EIDRM, which is their signal to report and exit. The checksum proves
 * every item was consumed exactly once.
 *
 * Usage: ipc_demo [items]   (default 20000)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace_ipc.h>

#define RING 8
#define PRODUCERS 2
#define CONSUMERS 3
#define KEY_SEM 0x6d6f
#define KEY_SHM 0x6d70
#define KEY_MSG 0x6d71

enum { FREE, FULL, MUTEX };

struct ring {                /* lives in the segment */
	unsigned head, tail; /* guarded by the MUTEX semaphore */
	long item[RING];
};

struct report { /* a message: type 1 */
	long mtype;
	long consumed;
	long long sum;
};

struct demo {
	struct grace_ipc_ns *ns;
	long items_per_producer;
};

static void die(const char *who, const char *call, int err)
{
	fprintf(stderr, "ipc_demo: %s: %s: %s\n", who, call, strerror(-err));
	exit(1);
}

/* A thread's process: its own handle, the objects found by key, the ring attached. */
struct proc {
	struct grace_ipc_proc *p;
	int semid, msqid;
	struct ring *ring;
};

static void proc_start(struct demo *d, struct proc *pr, const char *who)
{
	void *addr;
	int err, shmid;

	err = grace_ipc_proc_open(d->ns, NULL, 0, &pr->p);
	if (err)
		die(who, "proc_open", err);
	pr->semid = grace_ipc_semget(pr->p, KEY_SEM, 3, 0);
	shmid = grace_ipc_shmget(pr->p, KEY_SHM, sizeof(struct ring), 0);
	pr->msqid = grace_ipc_msgget(pr->p, KEY_MSG, 0);
	if (pr->semid < 0 || shmid < 0 || pr->msqid < 0)
		die(who, "*get", pr->semid < 0 ? pr->semid : shmid < 0 ? shmid : pr->msqid);
	err = grace_ipc_shmat(pr->p, shmid, NULL, 0, &addr);
	if (err)
		die(who, "shmat", err);
	pr->ring = (struct ring *)addr;
}

static void proc_end(struct proc *pr)
{
	grace_ipc_shmdt(pr->p, pr->ring);
	grace_ipc_proc_close(pr->p);
}

static int sem2(struct proc *pr, int a, short oa, int b, short ob)
{
	struct grace_ipc_sembuf ops[2] = {
		{ (unsigned short)a, oa, 0 },
		{ (unsigned short)b, ob, 0 },
	};

	return grace_ipc_semop(pr->p, pr->semid, ops, 2);
}

static void *producer(void *arg)
{
	struct demo *d = (struct demo *)arg;
	struct proc pr;

	proc_start(d, &pr, "producer");
	for (long i = 1; i <= d->items_per_producer; i++) {
		int err = sem2(&pr, FREE, -1, MUTEX, -1);

		if (err)
			die("producer", "semop", err);
		pr.ring->item[pr.ring->head++ % RING] = i;
		err = sem2(&pr, MUTEX, 1, FULL, 1);
		if (err)
			die("producer", "semop", err);
	}
	proc_end(&pr);
	return NULL;
}

static void *consumer(void *arg)
{
	struct demo *d = (struct demo *)arg;
	struct report rep = { 1, 0, 0 };
	struct proc pr;
	int err;

	proc_start(d, &pr, "consumer");
	for (;;) {
		err = sem2(&pr, FULL, -1, MUTEX, -1);
		if (err == -EIDRM || err == -EINVAL)
			break; /* the set was removed: no more items */
		if (err)
			die("consumer", "semop", err);
		rep.sum += pr.ring->item[pr.ring->tail++ % RING];
		rep.consumed++;
		err = sem2(&pr, MUTEX, 1, FREE, 1);
		if (err)
			die("consumer", "semop", err);
	}
	err = grace_ipc_msgsnd(pr.p, pr.msqid, &rep, sizeof(rep) - sizeof(long), 0);
	if (err)
		die("consumer", "msgsnd", err);
	proc_end(&pr);
	return NULL;
}

static int run(enum grace_ipc_impl impl, long items)
{
	struct demo d;
	struct grace_ipc_proc *me;
	pthread_t p[PRODUCERS], c[CONSUMERS];
	unsigned short init[3] = { RING, 0, 1 };
	long long want, sum = 0;
	long consumed = 0;
	int err, i, semid, shmid, msqid;

	memset(&d, 0, sizeof(d));
	d.items_per_producer = items / PRODUCERS;
	err = grace_ipc_ns_create(impl, NULL, &d.ns);
	if (err)
		return err;
	err = grace_ipc_proc_open(d.ns, NULL, 0, &me);
	if (err)
		return err;
	semid = grace_ipc_semget(me, KEY_SEM, 3, GRACE_IPC_CREAT | GRACE_IPC_EXCL | 0600);
	shmid = grace_ipc_shmget(me, KEY_SHM, sizeof(struct ring),
				 GRACE_IPC_CREAT | GRACE_IPC_EXCL | 0600);
	msqid = grace_ipc_msgget(me, KEY_MSG, GRACE_IPC_CREAT | GRACE_IPC_EXCL | 0600);
	if (semid < 0 || shmid < 0 || msqid < 0)
		return semid < 0 ? semid : shmid < 0 ? shmid : msqid;
	err = grace_ipc_setall(me, semid, init, 3);
	if (err)
		return err;
	for (i = 0; i < CONSUMERS; i++)
		pthread_create(&c[i], NULL, consumer, &d);
	for (i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, &d);
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	/* Wait until the ring is drained: FULL stays 0 and all consumers sleep on it. */
	while (grace_ipc_getncnt(me, semid, FULL) != CONSUMERS)
		sched_yield();
	err = grace_ipc_sem_rmid(me, semid); /* wakes the consumers with EIDRM */
	if (err)
		return err;
	for (i = 0; i < CONSUMERS; i++) { /* one report per consumer */
		struct report rep;
		ssize_t n = grace_ipc_msgrcv(me, msqid, &rep, sizeof(rep) - sizeof(long), 1, 0);

		if (n != (ssize_t)(sizeof(rep) - sizeof(long)))
			return n < 0 ? (int)n : -EPROTO;
		consumed += rep.consumed;
		sum += rep.sum;
	}
	for (i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	grace_ipc_msgctl(me, msqid, GRACE_IPC_RMID, NULL);
	grace_ipc_shmctl(me, shmid, GRACE_IPC_RMID, NULL); /* unattached now: destroyed */
	grace_ipc_proc_close(me);
	grace_ipc_ns_destroy(d.ns);

	want = (long long)PRODUCERS * d.items_per_producer * (d.items_per_producer + 1) / 2;
	printf("%-6s %ld items consumed, checksum %lld (expected %lld): %s\n",
	       grace_ipc_impl_name(impl), consumed, sum, want, sum == want ? "ok" : "WRONG");
	return sum == want ? 0 : -EPROTO;
}

int main(int argc, char **argv)
{
	long items = argc > 1 ? atol(argv[1]) : 20000;
	int err;

	if (items < PRODUCERS)
		items = PRODUCERS;
	err = run(GRACE_IPC_GLOBAL_LOCK, items);
	if (!err)
		err = run(GRACE_IPC_RCU, items);
	if (err) {
		fprintf(stderr, "ipc_demo: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
