/* SPDX-License-Identifier: MIT */
/*
 * ipc_demo: a bounded buffer guarded by one System V-style semaphore set, run on both grace_ipc
 * implementations.
 *
 *   semaphore 0  FREE   free slots in the ring (starts at RING)
 *   semaphore 1  FULL   items in the ring (starts at 0)
 *   semaphore 2  MUTEX  1 when the ring is free to touch
 *
 * A producer takes a free slot and the mutex in one atomic semop ({FREE,-1},{MUTEX,-1}), stores,
 * then gives back the mutex and adds an item ({MUTEX,+1},{FULL,+1}); consumers do the reverse.
 * When every item has been consumed, the consumers are asleep waiting for more: removing the set
 * wakes them with EIDRM, which is their signal to exit. The checksum proves every item was
 * consumed exactly once.
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

enum { FREE, FULL, MUTEX };

struct demo {
	struct grace_ipc_ns *ns;
	int semid;
	long items_per_producer;
	long ring[RING];
	unsigned head, tail;    /* guarded by the MUTEX semaphore */
	long long consumed_sum; /* guarded by the MUTEX semaphore */
	long consumed;          /* guarded by the MUTEX semaphore */
};

static int sem2(struct demo *d, int a, short oa, int b, short ob)
{
	struct grace_ipc_sembuf ops[2] = {
		{ (unsigned short)a, oa, 0 },
		{ (unsigned short)b, ob, 0 },
	};

	return grace_ipc_semop(d->ns, d->semid, ops, 2);
}

static void *producer(void *arg)
{
	struct demo *d = (struct demo *)arg;

	for (long i = 1; i <= d->items_per_producer; i++) {
		int err = sem2(d, FREE, -1, MUTEX, -1);

		if (err) {
			fprintf(stderr, "producer: semop: %s\n", strerror(-err));
			exit(1);
		}
		d->ring[d->head++ % RING] = i;
		err = sem2(d, MUTEX, 1, FULL, 1);
		if (err) {
			fprintf(stderr, "producer: semop: %s\n", strerror(-err));
			exit(1);
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct demo *d = (struct demo *)arg;

	for (;;) {
		int err = sem2(d, FULL, -1, MUTEX, -1);

		if (err == -EIDRM || err == -EINVAL)
			return NULL; /* the set was removed: no more items */
		if (err) {
			fprintf(stderr, "consumer: semop: %s\n", strerror(-err));
			exit(1);
		}
		d->consumed_sum += d->ring[d->tail++ % RING];
		d->consumed++;
		err = sem2(d, MUTEX, 1, FREE, 1);
		if (err) {
			fprintf(stderr, "consumer: semop: %s\n", strerror(-err));
			exit(1);
		}
	}
}

static int run(enum grace_ipc_impl impl, long items)
{
	struct demo d;
	pthread_t p[PRODUCERS], c[CONSUMERS];
	unsigned short init[3] = { RING, 0, 1 };
	long long want;
	int err, i;

	memset(&d, 0, sizeof(d));
	d.items_per_producer = items / PRODUCERS;
	err = grace_ipc_ns_create(impl, NULL, &d.ns);
	if (err)
		return err;
	d.semid = grace_ipc_semget(d.ns, 0x6d6f, 3, GRACE_IPC_CREAT | GRACE_IPC_EXCL | 0600);
	if (d.semid < 0)
		return d.semid;
	err = grace_ipc_setall(d.ns, d.semid, init, 3);
	if (err)
		return err;
	for (i = 0; i < CONSUMERS; i++)
		pthread_create(&c[i], NULL, consumer, &d);
	for (i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, &d);
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	/* Wait until the ring is drained: FULL stays 0 and all consumers sleep on it. */
	while (grace_ipc_getncnt(d.ns, d.semid, FULL) != CONSUMERS)
		sched_yield();
	err = grace_ipc_rmid(d.ns, d.semid); /* wakes the consumers with EIDRM */
	if (err)
		return err;
	for (i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	grace_ipc_ns_destroy(d.ns);

	want = (long long)PRODUCERS * d.items_per_producer * (d.items_per_producer + 1) / 2;
	printf("%-6s %ld items consumed, checksum %lld (expected %lld): %s\n",
	       grace_ipc_impl_name(impl), d.consumed, d.consumed_sum, want,
	       d.consumed_sum == want ? "ok" : "WRONG");
	return d.consumed_sum == want ? 0 : -EPROTO;
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
