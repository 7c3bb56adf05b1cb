/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc under races, both implementations, each type: worker threads operate on objects
 * while churn threads remove and recreate them (growing the ID array as they go), and sleepers
 * block on objects until the objects are removed. Every thread is a process of its own (a
 * client handle), closed when it ends, so SEM_UNDO exits and detach-at-exit race with removals.
 *
 * Checked, per call:
 *  - every call either completes or fails with -EIDRM / -EINVAL (plus -EAGAIN / -ENOMSG where
 *    the call asked for NOWAIT or a timeout, -ERANGE for a semaphore operation at a limit); nothing else, no crash, no use after free
 *    (ASan/TSan builds), nothing leaked at the end (LSan);
 *  - semaphores: all-or-nothing under concurrency (workers change semaphores 0 and 1 together,
 *    some with SEM_UNDO, so every GETALL snapshot has sem[0] == sem[1]); a stale ID never
 *    reaches a set of another size; a sleeper on a semaphore nobody increments only returns
 *    when its set is removed;
 *  - message queues: a message received from queue ID q was sent to q (its text names q, with
 *    a checksum): a stale ID never reaches a newer queue, nothing leaks between queues;
 *  - segments: an attachment of segment ID s sees s in its first word (written by the creator
 *    before it published s), also while the segment is being removed: an attachment's memory
 *    stays valid until detached. Each worker leaves up to 16 attachments to its handle's close.
 * Usage: ipc_race [seconds per implementation and type]   (default 0.4)
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

#define HANDLES 8
#define WORKERS 3
#define CHURNERS 2
#define SLEEPERS 2
#define FILLER 200 /* extra objects created and removed by a churner: array growth */

enum { T_SEM, T_MSG, T_SHM };
static const char *const tname[3] = { "sem", "msg", "shm" };

static double g_seconds = 0.4;

struct race {
	struct grace_ipc_ns *ns;
	int type;
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

static void bump(unsigned long *c)
{
	grace_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void count(struct race *r, long ret, bool nowait)
{
	if (ret >= 0)
		bump(&r->ok);
	else if (ret == -EIDRM)
		bump(&r->eidrm);
	else if (ret == -EINVAL)
		bump(&r->einval);
	else if ((ret == -EAGAIN || ret == -ENOMSG || ret == -ERANGE) && nowait)
		bump(&r->eagain); /* ERANGE: a value or a SEM_UNDO adjustment at its limit */
	else {
		fprintf(stderr, "  %s: unexpected result %ld\n", tname[r->type], ret);
		bump(&r->bad);
	}
}

static bool stopped(struct race *r)
{
	return grace_load_acquire(&r->stop);
}

static int pick_id(struct race *r, unsigned *seed)
{
	return grace_load_relaxed(&r->ids[rnd(seed) % HANDLES]);
}

static struct grace_ipc_proc *open_proc(struct race *r, int pid)
{
	struct grace_ipc_proc *p;
	struct grace_ipc_cred c;

	memset(&c, 0, sizeof(c));
	c.caps = GRACE_IPC_CAP_ALL;
	REQUIRE(grace_ipc_proc_open(r->ns, &c, pid, &p) == 0);
	return p;
}

/* ---------------------------------------------------------------- per type: create */

static int create(struct race *r, struct grace_ipc_proc *p, bool filler)
{
	switch (r->type) {
	case T_SEM:
		return grace_ipc_semget(p, GRACE_IPC_PRIVATE, filler ? 1 : 3, 0600);
	case T_MSG:
		return grace_ipc_msgget(p, GRACE_IPC_PRIVATE, 0600);
	default: {
		int id = grace_ipc_shmget(p, GRACE_IPC_PRIVATE, filler ? 100 : 8192, 0600);
		void *a;

		/* The creator stamps the ID into the first word before publishing it. */
		if (id >= 0 && !filler) {
			REQUIRE(grace_ipc_shmat(p, id, NULL, 0, &a) == 0);
			grace_store_relaxed((int *)a, id);
			REQUIRE(grace_ipc_shmdt(p, a) == 0);
		}
		return id;
	}
	}
}

static int rmid(struct race *r, struct grace_ipc_proc *p, int id)
{
	switch (r->type) {
	case T_SEM:
		return grace_ipc_sem_rmid(p, id);
	case T_MSG:
		return grace_ipc_msgctl(p, id, GRACE_IPC_RMID, NULL);
	default:
		return grace_ipc_shmctl(p, id, GRACE_IPC_RMID, NULL);
	}
}

/* ---------------------------------------------------------------- per type: work */

static void sem_work(struct race *r, struct grace_ipc_proc *p, unsigned *seed)
{
	int id = pick_id(r, seed);
	short undo = (rnd(seed) % 4 == 0) ? GRACE_IPC_SEM_UNDO : 0;
	struct grace_ipc_sembuf b[2];
	struct grace_ipc_semid_ds ds;
	unsigned short v[3];
	struct timespec ts = { 0, 200 * 1000 };
	int ret;

	switch (rnd(seed) % 7) {
	case 0: /* both up, together */
		b[0].sem_num = 0, b[0].sem_op = 1, b[0].sem_flg = undo;
		b[1].sem_num = 1, b[1].sem_op = 1, b[1].sem_flg = undo;
		count(r, grace_ipc_semop(p, id, b, 2), true);
		break;
	case 1: /* both down, together, without blocking */
		b[0].sem_num = 0, b[0].sem_op = -1, b[0].sem_flg = (short)(GRACE_IPC_NOWAIT | undo);
		b[1].sem_num = 1, b[1].sem_op = -1, b[1].sem_flg = (short)(GRACE_IPC_NOWAIT | undo);
		count(r, grace_ipc_semop(p, id, b, 2), true);
		break;
	case 2: /* both down, sleeping at most 200 us */
		b[0].sem_num = 0, b[0].sem_op = -1, b[0].sem_flg = 0;
		b[1].sem_num = 1, b[1].sem_op = -1, b[1].sem_flg = 0;
		count(r, grace_ipc_semtimedop(p, id, b, 2, &ts), true);
		break;
	case 3: /* atomic snapshot */
		ret = grace_ipc_getall(p, id, v, 3);
		count(r, ret, false);
		if (ret >= 0 && ret != 3) {
			fprintf(stderr, "  id %d reached a set of %d\n", id, ret);
			bump(&r->bad);
		}
		if (ret == 3 && v[0] != v[1]) {
			fprintf(stderr, "  torn set %d: %u %u\n", id, v[0], v[1]);
			bump(&r->bad);
		}
		break;
	case 4:
		count(r, grace_ipc_getval(p, id, (int)(rnd(seed) % 3)), false);
		count(r, grace_ipc_getncnt(p, id, 2), false);
		count(r, grace_ipc_getpid(p, id, 0), false);
		break;
	case 5: { /* IPC_SET to the same owner and mode */
		ret = grace_ipc_sem_stat(p, id, &ds);
		count(r, ret, false);
		if (ret == 0) {
			union grace_ipc_semun a;

			a.buf = &ds;
			count(r, grace_ipc_semctl(p, id, 0, GRACE_IPC_SET, a), false);
		}
		break;
	}
	default: /* an ID of a set with 3 semaphores must never reach a filler set (1) */
		ret = grace_ipc_sem_stat(p, id, &ds);
		count(r, ret, false);
		if (ret == 0 && ds.sem_nsems != 3) {
			fprintf(stderr, "  stale id %d reached a set of %lu\n", id, ds.sem_nsems);
			bump(&r->bad);
		}
		break;
	}
}

struct rmsg {
	long mtype;
	int qid;
	unsigned seq;
	unsigned sum; /* qid * 2654435761 + seq */
};

static void msg_work(struct race *r, struct grace_ipc_proc *p, unsigned *seed)
{
	int id = pick_id(r, seed);
	struct grace_ipc_msqid_ds ds;
	struct rmsg m;
	long n;

	switch (rnd(seed) % 5) {
	case 0:
	case 1: /* send, naming the queue */
		m.mtype = 1 + (long)(rnd(seed) % 3);
		m.qid = id;
		m.seq = rnd(seed);
		m.sum = (unsigned)id * 2654435761u + m.seq;
		count(r, grace_ipc_msgsnd(p, id, &m, sizeof(m) - sizeof(long), GRACE_IPC_NOWAIT),
		      true);
		break;
	case 2:
	case 3: /* receive, any of the modes */
	{
		long type = (long)(rnd(seed) % 5) - 2;
		int flg = GRACE_IPC_NOWAIT | (rnd(seed) % 4 == 0 ? GRACE_IPC_MSG_EXCEPT : 0);

		memset(&m, 0, sizeof(m));
		n = (long)grace_ipc_msgrcv(p, id, &m, sizeof(m) - sizeof(long), type, flg);
		count(r, n, true);
		if (n >= 0 && (n != (long)(sizeof(m) - sizeof(long)) || m.qid != id ||
			       m.sum != (unsigned)m.qid * 2654435761u + m.seq)) {
			fprintf(stderr, "  queue %d gave a message of queue %d (%ld bytes)\n", id,
				m.qid, n);
			bump(&r->bad);
		}
		break;
	}
	default: /* IPC_STAT, and IPC_SET: the same permissions, msg_qbytes toggled */
		n = grace_ipc_msgctl(p, id, GRACE_IPC_STAT, &ds);
		count(r, n, false);
		if (n == 0) {
			ds.msg_qbytes = ds.msg_qbytes == 16384 ? 64 : 16384;
			count(r, grace_ipc_msgctl(p, id, GRACE_IPC_SET, &ds), false);
		}
		break;
	}
}

/* A worker's attachments left open for its handle's close: at most KEEP, the oldest detached
 * first (else they would pile up to vm.max_map_count over a long run). */
#define KEEP 16
struct kept {
	void *a[KEEP];
	unsigned n;
};

static void shm_work(struct race *r, struct grace_ipc_proc *p, unsigned *seed, struct kept *k)
{
	int id = pick_id(r, seed);
	struct grace_ipc_shmid_ds ds;
	void *a = NULL;
	int ret;

	if (rnd(seed) % 3 == 0) {
		ret = grace_ipc_shmctl(p, id, GRACE_IPC_STAT, &ds);
		count(r, ret, false);
		if (ret == 0 && ds.shm_segsz != 8192) {
			fprintf(stderr, "  stale id %d reached a segment of %zu\n", id,
				ds.shm_segsz);
			bump(&r->bad);
		}
		return;
	}
	ret = grace_ipc_shmat(p, id, NULL, 0, &a);
	count(r, ret, false);
	if (ret)
		return;
	/* The segment may be removed now: the attachment keeps its pages. */
	if (grace_load_relaxed((int *)a) != id) {
		fprintf(stderr, "  id %d attached a segment stamped %d\n", id, *(int *)a);
		bump(&r->bad);
	}
	grace_fetch_add((int *)a + 1 + (int)(rnd(seed) % 100), 1, __ATOMIC_RELAXED);
	if (rnd(seed) % 2) {
		count(r, grace_ipc_shmdt(p, a), false);
		return;
	}
	/* Keep it for the handle's close; detach the oldest kept one if there are too many. */
	if (k->n >= KEEP)
		count(r, grace_ipc_shmdt(p, k->a[k->n % KEEP]), false);
	k->a[k->n++ % KEEP] = a;
}

/* ---------------------------------------------------------------- threads */

struct thr {
	struct race *r;
	int no;
	pthread_t th;
};

static void *worker(void *arg)
{
	struct thr *t = (struct thr *)arg;
	struct race *r = t->r;
	struct grace_ipc_proc *p = open_proc(r, 1000 + t->no);
	unsigned seed = (unsigned)(uintptr_t)&seed ^ (unsigned)t->no;
	struct kept k;

	k.n = 0;
	while (!stopped(r)) {
		if (r->type == T_SEM)
			sem_work(r, p, &seed);
		else if (r->type == T_MSG)
			msg_work(r, p, &seed);
		else
			shm_work(r, p, &seed, &k);
	}
	grace_ipc_proc_close(p); /* SEM_UNDO adjustments, detaches: racing with removals */
	return NULL;
}

static void *churner(void *arg)
{
	struct thr *t = (struct thr *)arg;
	struct race *r = t->r;
	struct grace_ipc_proc *p = open_proc(r, 2000 + t->no);
	unsigned seed = (unsigned)(uintptr_t)&seed ^ (unsigned)t->no;
	int filler[FILLER];
	int nfill = 0;

	while (!stopped(r)) {
		int k = (int)(rnd(&seed) % HANDLES);
		int old = grace_load_relaxed(&r->ids[k]);
		int ret = rmid(r, p, old);
		int id;

		count(r, ret, false); /* the other churner may have removed it first: EINVAL */
		if (ret == 0)
			bump(&r->removes);
		id = create(r, p, false);
		REQUIRE(id >= 0);
		bump(&r->creates);
		/* Publish the new ID unless the other churner replaced the handle meanwhile. */
		if (!grace_cmpxchg(&r->ids[k], &old, id, __ATOMIC_RELAXED))
			REQUIRE(rmid(r, p, id) == 0);
		/* Fill and empty the namespace now and then, so the ID array grows under the
		 * workers' lookups (the RCU registry never shrinks, so growth happens early; the
		 * refills still reuse slots under readers). */
		if (nfill < FILLER) {
			filler[nfill] = create(r, p, true);
			REQUIRE(filler[nfill] >= 0);
			nfill++;
		} else {
			while (nfill > 0)
				REQUIRE(rmid(r, p, filler[--nfill]) == 0);
		}
	}
	while (nfill > 0)
		REQUIRE(rmid(r, p, filler[--nfill]) == 0);
	grace_ipc_proc_close(p);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct thr *t = (struct thr *)arg;
	struct race *r = t->r;
	struct grace_ipc_proc *p = open_proc(r, 3000 + t->no);
	unsigned seed = (unsigned)(uintptr_t)&seed ^ (unsigned)t->no;

	while (!stopped(r)) {
		int id = pick_id(r, &seed);
		long ret;

		if (r->type == T_SEM) {
			struct grace_ipc_sembuf b = { 2, -1, 0 }; /* nobody increments sem 2 */

			ret = grace_ipc_semop(p, id, &b, 1);
		} else {
			struct rmsg m;

			/* Nobody sends type 99. */
			ret = (long)grace_ipc_msgrcv(p, id, &m, sizeof(m) - sizeof(long), 99, 0);
		}
		if (ret == -EIDRM)
			bump(&r->sleeps_eidrm);
		if (ret >= 0) {
			fprintf(stderr, "  sleeper completed an operation nobody allowed\n");
			bump(&r->bad);
		}
		count(r, ret, false);
	}
	grace_ipc_proc_close(p);
	return NULL;
}

static int run_race(enum grace_ipc_impl impl, int type)
{
	struct race r;
	struct thr w[WORKERS], c[CHURNERS], s[SLEEPERS];
	struct grace_ipc_ns_info info;
	struct grace_ipc_proc *p;
	int i, nsleep = type == T_SHM ? 0 : SLEEPERS;

	memset(&r, 0, sizeof(r));
	r.type = type;
	REQUIRE(grace_ipc_ns_create(impl, NULL, &r.ns) == 0);
	p = open_proc(&r, 1);
	for (i = 0; i < HANDLES; i++)
		r.ids[i] = create(&r, p, false);
	for (i = 0; i < WORKERS; i++) {
		w[i].r = &r;
		w[i].no = i;
		REQUIRE(pthread_create(&w[i].th, NULL, worker, &w[i]) == 0);
	}
	for (i = 0; i < CHURNERS; i++) {
		c[i].r = &r;
		c[i].no = i;
		REQUIRE(pthread_create(&c[i].th, NULL, churner, &c[i]) == 0);
	}
	for (i = 0; i < nsleep; i++) {
		s[i].r = &r;
		s[i].no = i;
		REQUIRE(pthread_create(&s[i].th, NULL, sleeper, &s[i]) == 0);
	}
	gt_sleep_ms((unsigned)(g_seconds * 1000));
	grace_store_release(&r.stop, 1);
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i].th, NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(c[i].th, NULL);
	/* Sleepers may still be blocked on live objects: removing every one wakes them. */
	for (i = 0; i < HANDLES; i++)
		(void)rmid(&r, p, r.ids[i]);
	for (i = 0; i < nsleep; i++)
		pthread_join(s[i].th, NULL);
	grace_ipc_info(r.ns, &info);
	grace_ipc_proc_close(p);
	grace_ipc_ns_destroy(r.ns);
	struct grace_ipc_ids_info *ti = type == T_SEM   ? &info.sem
					: type == T_MSG ? &info.msg
							: &info.shm;
	printf("  %s %s: ok %lu eidrm %lu einval %lu eagain %lu; created %lu removed %lu; "
	       "sleepers woken by removal %lu; array %d slots after %lu grows; bad %lu\n",
	       grace_ipc_impl_name(impl), tname[type], r.ok, r.eidrm, r.einval, r.eagain, r.creates,
	       r.removes, r.sleeps_eidrm, ti->ary_size, ti->grows, r.bad);
	if (r.bad || r.ok == 0 || r.removes == 0 || ti->grows == 0 || ti->objects != 0)
		return -1;
	return 0;
}

TEST(race_sem)
{
	CHECK(run_race(GRACE_IPC_GLOBAL_LOCK, T_SEM) == 0);
	CHECK(run_race(GRACE_IPC_RCU, T_SEM) == 0);
}

TEST(race_msg)
{
	CHECK(run_race(GRACE_IPC_GLOBAL_LOCK, T_MSG) == 0);
	CHECK(run_race(GRACE_IPC_RCU, T_MSG) == 0);
}

TEST(race_shm)
{
	CHECK(run_race(GRACE_IPC_GLOBAL_LOCK, T_SHM) == 0);
	CHECK(run_race(GRACE_IPC_RCU, T_SHM) == 0);
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
