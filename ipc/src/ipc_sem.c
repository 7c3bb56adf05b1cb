/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc semaphore sets: semget, semop/semtimedop (with SEM_UNDO), semctl. The lookup,
 * removal and free are the core's (ipc_core.c, with the correctness argument (a)-(h)); this
 * file adds what is particular to sets.
 *
 * Blocking (as Linux's ipc/sem.c since 2.6): a sleeping semop is queued FIFO with its
 * operations; whoever changes values (semop, SETVAL, SETALL, an exit's adjustments) re-runs
 * the queue and performs, on behalf of each sleeper, the operations that can now complete,
 * then wakes only that sleeper with the result. The sleeper never re-examines the values, so
 * there is no thundering herd and the all-or-nothing rule holds for it too.
 *
 * SEM_UNDO: a record per (handle, set) holds one adjustment per semaphore, the opposite of the
 * SEM_UNDO operations the handle performed (limited to [-32768, 32767]: -ERANGE beyond). It is
 * created by the first semop with SEM_UNDO that finds the set, before that call's EFBIG and
 * permission checks (as Linux's find_alloc_undo()). It is
 * linked on the handle (p->lock) and on the set (the set's lock), and only ever used under the
 * set's lock, so no reader reaches it without a lock: removal frees the set's records at once.
 * SETVAL and SETALL clear the adjustments of what they set. Closing the handle applies its
 * records (grace_ipc__sem_exit): each value moves by its adjustment, clamped to
 * [0, GRACE_IPC_SEMVMX], as Linux's exit_sem() does.
 *
 * RCU-specific points beyond the core's argument:
 *  - nsems is immutable, so the EFBIG and semnum checks read it before the lock (a removed
 *    set's memory is still valid there: (a));
 *  - a sleeper's queue entry is on its stack and outlives the waker's signal because the
 *    waker holds the set's lock, which the sleeper must take again before it can return;
 *  - a sleeper's SEM_UNDO record is used by wakers under the set's lock; removal completes
 *    every sleeper with -EIDRM before it frees the records, in the same critical section.
 */
#include "ipc_internal.h"

#define Q_PENDING 1   /* waiter status until a waker or the remover decides */
#define WOULD_BLOCK 1 /* try_apply(): the caller must sleep */
#define SEMAEM GRACE_IPC_SEMVMX

/* Linux's compiled-in constants reported by IPC_INFO (include/uapi/linux/sem.h). */
#define SEMMNI_K 32000
#define SEMMSL_K 32000
#define SEMMNS_K (SEMMNI_K * SEMMSL_K)
#define SEMUSZ_K 20

struct sem_undo {
	struct sem_undo *pnext, *pprev; /* the handle's records, under p->lock */
	struct sem_undo *snext, *sprev; /* the set's records, under the set's lock */
	struct grace_ipc_proc *proc;
	int semid;
	short semadj[];
};

/* A semop sleeping on a set: on its stack, linked on the set's pending queue. */
struct ipc_waiter {
	struct ipc_waiter *next, *prev;
	const struct grace_ipc_sembuf *sops;
	size_t nsops;
	size_t blocking;       /* index of the operation that blocks (GETNCNT/GETZCNT) */
	struct sem_undo *undo; /* its SEM_UNDO record, or NULL */
	int pid;
	int status; /* Q_PENDING, then 0 or -errno; written under the set's lock */
	bool alter; /* does any operation change a value? */
	pthread_cond_t cv;
};

struct sem_slot {
	int val;
	int pid; /* of the last process that changed it (semop, SETVAL, SETALL, exit) */
};

struct ipc_set {
	struct ipc_obj obj; /* first: the core's head */
	/* Guarded like obj.deleted. */
	struct ipc_waiter *qhead, *qtail;
	struct sem_undo *undos;
	long long otime;
	/* Immutable once published. */
	int nsems;
	struct sem_slot sem[];
};

static inline struct ipc_set *to_set(struct ipc_obj *o)
{
	return (struct ipc_set *)o;
}

void grace_ipc__sem_free(struct ipc_obj *o)
{
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* ---------------------------------------------------------------- the pending queue */

static void q_append(struct ipc_set *s, struct ipc_waiter *q)
{
	q->next = NULL;
	q->prev = s->qtail;
	if (s->qtail)
		s->qtail->next = q;
	else
		s->qhead = q;
	s->qtail = q;
}

static void q_unlink(struct ipc_set *s, struct ipc_waiter *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else
		s->qhead = q->next;
	if (q->next)
		q->next->prev = q->prev;
	else
		s->qtail = q->prev;
	q->next = q->prev = NULL;
}

/* Hand the result to a sleeper; the caller holds the set's lock, which the sleeper must take
 * again before it can return, so its stack entry outlives the signal. */
static void q_complete(struct ipc_set *s, struct ipc_waiter *q, int status)
{
	q_unlink(s, q);
	q->status = status;
	pthread_cond_signal(&q->cv);
}

/*
 * Apply sops to the set, all or nothing, in array order, with their SEM_UNDO adjustments in
 * un. Returns 0 (applied; each semaphore named records pid), WOULD_BLOCK with *blk set
 * (nothing applied; the caller may sleep), -EAGAIN (the operation that blocks has IPC_NOWAIT)
 * or -ERANGE (a value would pass SEMVMX, or an adjustment leave its range). Same rules, same
 * order of checks as Linux's perform_atomic_semop(). Lock held.
 */
static int try_apply(struct ipc_set *s, const struct grace_ipc_sembuf *sops, size_t nsops,
		     struct sem_undo *un, int pid, size_t *blk)
{
	size_t i;
	int err;

	for (i = 0; i < nsops; i++) {
		const struct grace_ipc_sembuf *op = &sops[i];
		int v = s->sem[op->sem_num].val;

		if (op->sem_op == 0) {
			if (v != 0)
				goto would_block;
			continue;
		}
		v += op->sem_op;
		if (v < 0)
			goto would_block;
		if (v > GRACE_IPC_SEMVMX) {
			err = -ERANGE;
			goto undo;
		}
		if (op->sem_flg & GRACE_IPC_SEM_UNDO) {
			int adj = un->semadj[op->sem_num] - op->sem_op;

			if (adj < -SEMAEM - 1 || adj > SEMAEM) {
				err = -ERANGE;
				goto undo;
			}
			un->semadj[op->sem_num] = (short)adj;
		}
		s->sem[op->sem_num].val = v;
	}
	for (i = 0; i < nsops; i++)
		s->sem[sops[i].sem_num].pid = pid;
	return 0;

would_block:
	*blk = i;
	err = (sops[i].sem_flg & GRACE_IPC_NOWAIT) ? -EAGAIN : WOULD_BLOCK;
undo:
	while (i-- > 0) {
		const struct grace_ipc_sembuf *op = &sops[i];

		s->sem[op->sem_num].val -= op->sem_op;
		if (op->sem_flg & GRACE_IPC_SEM_UNDO)
			un->semadj[op->sem_num] = (short)(un->semadj[op->sem_num] + op->sem_op);
	}
	return err;
}

/* Values changed: complete every sleeper that can now proceed, oldest first. Returns whether
 * one completed successfully. Lock held. */
static bool update_queue(struct ipc_set *s)
{
	struct ipc_waiter *q, *next;
	bool done = false;

again:
	for (q = s->qhead; q; q = next) {
		size_t blk;
		int r;

		next = q->next;
		r = try_apply(s, q->sops, q->nsops, q->undo, q->pid, &blk);
		if (r == WOULD_BLOCK) {
			q->blocking = blk;
			continue;
		}
		q_complete(s, q, r);
		if (r == 0) {
			done = true;
			/* Its changes may let an earlier sleeper proceed: start over. */
			if (q->alter)
				goto again;
		}
	}
	return done;
}

/* ---------------------------------------------------------------- SEM_UNDO records */

/* The handle's record for set s, created if needed. Set lock held. */
static int undo_get(struct grace_ipc_proc *p, struct ipc_set *s, struct sem_undo **out)
{
	struct sem_undo *un;

	pthread_mutex_lock(&p->lock);
	for (un = p->undo; un; un = un->pnext)
		if (un->semid == s->obj.id)
			break;
	if (!un) {
		un = (struct sem_undo *)calloc(1, sizeof(*un) +
							  (size_t)s->nsems * sizeof(un->semadj[0]));
		if (!un) {
			pthread_mutex_unlock(&p->lock);
			return -ENOMEM;
		}
		un->proc = p;
		un->semid = s->obj.id;
		un->pnext = p->undo;
		if (p->undo)
			p->undo->pprev = un;
		p->undo = un;
		un->snext = s->undos;
		if (s->undos)
			s->undos->sprev = un;
		s->undos = un;
	}
	pthread_mutex_unlock(&p->lock);
	*out = un;
	return 0;
}

/* Unlink a record from its handle's list. un->proc->lock held. */
static void undo_unlink_proc(struct sem_undo *un)
{
	struct grace_ipc_proc *p = un->proc;

	if (un->pprev)
		un->pprev->pnext = un->pnext;
	else
		p->undo = un->pnext;
	if (un->pnext)
		un->pnext->pprev = un->pprev;
}

/* Unlink a record from its handle and its set. Set lock and un->proc->lock held. */
static void undo_unlink(struct ipc_set *s, struct sem_undo *un)
{
	undo_unlink_proc(un);
	if (un->sprev)
		un->sprev->snext = un->snext;
	else
		s->undos = un->snext;
	if (un->snext)
		un->snext->sprev = un->sprev;
}

/* SETVAL (num >= 0) or SETALL (num == -1): the adjustments of what was set are void. */
static void undo_clear(struct ipc_set *s, int num)
{
	for (struct sem_undo *un = s->undos; un; un = un->snext) {
		if (num >= 0)
			un->semadj[num] = 0;
		else
			memset(un->semadj, 0, (size_t)s->nsems * sizeof(un->semadj[0]));
	}
}

/* ---------------------------------------------------------------- semget */

struct semget_arg {
	int nsems;
};

static int sem_more_checks(struct ipc_obj *o, const void *arg)
{
	return ((const struct semget_arg *)arg)->nsems > to_set(o)->nsems ? -EINVAL : 0;
}

static int sem_create(struct grace_ipc_proc *p, const void *arg, int flg, struct ipc_obj **out)
{
	struct grace_ipc_ns *ns = p->ns;
	int nsems = ((const struct semget_arg *)arg)->nsems;
	struct ipc_set *s;

	(void)flg;
	/* Linux's newary() order of checks. */
	if (nsems == 0)
		return -EINVAL;
	if (ns->used_sems + nsems > ns->lim.semmns)
		return -ENOSPC;
	s = (struct ipc_set *)grace_ipc__alloc(sizeof(*s) + (size_t)nsems * sizeof(s->sem[0]));
	if (!s)
		return -ENOMEM;
	s->nsems = nsems;
	*out = &s->obj;
	return 0;
}

static void sem_abandon(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	(void)ns;
	grace_ipc__sem_free(o);
}

static void sem_created(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	ns->used_sems += to_set(o)->nsems;
}

static const struct ipc_get_ops sem_get_ops = {
	sem_more_checks,
	sem_create,
	sem_abandon,
	sem_created,
};

int grace_ipc_semget(struct grace_ipc_proc *p, int key, int nsems, int semflg)
{
	struct semget_arg a;

	if (!p)
		return -EINVAL;
	if (nsems < 0 || nsems > p->ns->lim.semmsl)
		return -EINVAL;
	a.nsems = nsems;
	return grace_ipc__get(p, IPC_T_SEM, key, semflg, &sem_get_ops, &a);
}

/* ---------------------------------------------------------------- removal (Fig. 10) */

/* Unpublish s, wake its sleepers with -EIDRM, free its SEM_UNDO records. Update path and set
 * lock held. Returns true if the caller must retire s (no sleeper holds it). */
static bool set_remove_locked(struct grace_ipc_ns *ns, struct ipc_set *s)
{
	grace_ipc__unpublish(ns, &s->obj);
	ns->used_sems -= s->nsems;
	while (s->qhead)
		q_complete(s, s->qhead, -EIDRM);
	while (s->undos) {
		struct sem_undo *un = s->undos; /* the head: pop it */
		struct grace_ipc_proc *up = un->proc;

		s->undos = un->snext;
		if (s->undos)
			s->undos->sprev = NULL;
		pthread_mutex_lock(&up->lock);
		undo_unlink_proc(un);
		pthread_mutex_unlock(&up->lock);
		free(un);
	}
	return s->obj.refcnt == 0;
}

static int sem_rmid_locked(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	bool retire;

	grace_ipc__upd_lock(ns, o);
	retire = set_remove_locked(ns, to_set(o));
	grace_ipc__upd_unlock(ns, o);
	if (retire)
		grace_ipc__retire(ns, o); /* RCU: call_rcu after the set's lock is released (c) */
	return 0;
}

void grace_ipc__sem_remove_all(struct grace_ipc_ns *ns)
{
	grace_ipc__upd_begin(ns, IPC_T_SEM);
	for (int idx = grace_ipc__max_index(ns, IPC_T_SEM); idx >= 0; idx--) {
		struct ipc_obj *o = grace_ipc__upd_at(ns, IPC_T_SEM, idx);

		if (o)
			sem_rmid_locked(ns, o);
	}
	grace_ipc__upd_end(ns, IPC_T_SEM);
}

/* ---------------------------------------------------------------- semop */

static int timespec_valid(const struct timespec *t)
{
	return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

#define TIME_T_MAX_ ((time_t)(((uintmax_t)1 << (sizeof(time_t) * 8 - 1)) - 1))

/* The CLOCK_MONOTONIC deadline of a relative timeout (valid). Returns false when it lies beyond
 * what time_t holds: no limit then, as Linux clamps such a timeout to its longest sleep. */
static bool deadline_of(const struct timespec *timeout, struct timespec *d)
{
	clock_gettime(CLOCK_MONOTONIC, d);
	/* now + timeout + 1 (a carry of the nanoseconds) must not pass TIME_T_MAX_. */
	if (timeout->tv_sec > TIME_T_MAX_ - 1 - d->tv_sec)
		return false;
	d->tv_sec += timeout->tv_sec;
	d->tv_nsec += timeout->tv_nsec;
	if (d->tv_nsec >= 1000000000L) {
		d->tv_sec++;
		d->tv_nsec -= 1000000000L;
	}
	return true;
}

/*
 * The slow path of semop: queue, sleep (the core leaves the read-side section and holds a
 * reference meanwhile: rule (d)), then drop the reference (and retire the set if it was
 * removed meanwhile and this was the last reference). Set lock held on entry; released on
 * return. Out of line so that the common path stays small.
 */
static GRACE_NOINLINE int semop_sleep(struct grace_ipc_proc *p, struct ipc_held *h,
				      const struct grace_ipc_sembuf *sops, size_t nsops, size_t blk,
				      bool alter, struct sem_undo *un,
				      const struct timespec *deadline)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_set *s = to_set(h->o);
	struct ipc_waiter q;
	pthread_condattr_t ca;
	int ret;

	q.sops = sops;
	q.nsops = nsops;
	q.blocking = blk;
	q.undo = un;
	q.pid = p->pid;
	q.status = Q_PENDING;
	q.alter = alter;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q.cv, &ca);
	pthread_condattr_destroy(&ca);
	q_append(s, &q);
	grace_ipc__waiters_add(ns, 1);
	while (q.status == Q_PENDING) {
		int rc = grace_ipc__sleep(ns, h, &q.cv, deadline);

		if (rc == ETIMEDOUT && q.status == Q_PENDING) {
			q_unlink(s, &q);
			q.status = -EAGAIN;
		}
	}
	ret = q.status;
	grace_ipc__unlock_put(ns, h);
	pthread_cond_destroy(&q.cv);
	grace_ipc__waiters_add(ns, -1);
	return ret;
}

/* What a semop's operations ask, scanned before the lookup. Only IPC_NOWAIT and SEM_UNDO mean
 * anything in sem_flg; Linux ignores other bits. */
struct sops_scan {
	int max;    /* the highest sem_num */
	bool alter; /* does any operation change a value? */
	bool undos; /* does any operation ask for SEM_UNDO? */
};

static void sops_scan(const struct grace_ipc_sembuf *sops, size_t nsops, struct sops_scan *sc)
{
	sc->max = 0;
	sc->alter = false;
	sc->undos = false;
	for (size_t i = 0; i < nsops; i++) {
		if (sops[i].sem_num > sc->max)
			sc->max = sops[i].sem_num;
		if (sops[i].sem_op != 0)
			sc->alter = true;
		if (sops[i].sem_flg & GRACE_IPC_SEM_UNDO)
			sc->undos = true;
	}
}

/*
 * Lock the set found for a semop with SEM_UNDO operations: 0 with the set locked and *un its
 * SEM_UNDO record, or -errno with nothing held.
 */
static int semop_lock_undo(struct grace_ipc_proc *p, struct ipc_held *h, const struct sops_scan *sc,
			   struct sem_undo **un)
{
	struct ipc_set *s = to_set(h->o);
	int ret;

	/*
	 * Linux's find_alloc_undo() comes before the EFBIG and permission checks: the record
	 * exists even when one of them fails, and the exit then visits the set (its adjustments
	 * are 0, but it sets sem_otime and re-runs the queue).
	 */
	ret = grace_ipc__lock(p, h, -1, 0);
	if (ret)
		return ret;
	ret = undo_get(p, s, un);
	if (!ret && sc->max >= s->nsems)
		ret = -EFBIG;
	if (!ret && grace_ipc__perms(cred_of(p), h->o, sc->alter ? S_IWUGO_ : S_IRUGO_))
		ret = -EACCES;
	if (ret) {
		grace_ipc__unlock(p->ns, h);
		return ret;
	}
	return 0;
}

/*
 * Lock the set found for a semop (Linux's __do_semtimedop() from the lookup to the permission
 * check): 0 with the set locked (*un: its SEM_UNDO record, if an operation asks for one), or
 * -errno with nothing held.
 */
static int semop_lock(struct grace_ipc_proc *p, struct ipc_held *h, const struct sops_scan *sc,
		      struct sem_undo **un)
{
	if (GRACE_UNLIKELY(sc->undos))
		return semop_lock_undo(p, h, sc, un);
	if (sc->max >= to_set(h->o)->nsems) { /* nsems is immutable: read before the lock */
		grace_ipc__drop(p->ns, h);
		return -EFBIG;
	}
	return grace_ipc__lock(p, h, sc->alter ? S_IWUGO_ : S_IRUGO_, 0);
}

/* The operations were applied: let the sleepers that can proceed now do so, record the time.
 * Lock held. */
static void semop_applied(struct ipc_set *s, bool alter)
{
	if (alter && s->qhead)
		update_queue(s);
	s->otime = grace_ipc__now();
}

int grace_ipc_semtimedop(struct grace_ipc_proc *p, int semid, const struct grace_ipc_sembuf *sops,
			 size_t nsops, const struct timespec *timeout)
{
	struct grace_ipc_ns *ns;
	struct timespec deadline;
	struct sem_undo *un = NULL;
	struct sops_scan sc;
	struct ipc_held h;
	size_t blk = 0;
	int ret;

	/* Checks in the order of Linux's do_semtimedop() and __do_semtimedop(). */
	if (!p)
		return -EINVAL;
	ns = p->ns;
	if (nsops > (size_t)ns->lim.semopm)
		return -E2BIG;
	if (nsops < 1)
		return -EINVAL;
	if (!sops)
		return -EFAULT;
	if (semid < 0)
		return -EINVAL;
	if (timeout) {
		if (!timespec_valid(timeout))
			return -EINVAL;
		if (!deadline_of(timeout, &deadline))
			timeout = NULL; /* beyond the clock's range: no limit */
	}
	sops_scan(sops, nsops, &sc);
	ret = grace_ipc__find(ns, IPC_T_SEM, semid, &h);
	if (ret)
		return ret;
	ret = semop_lock(p, &h, &sc, &un);
	if (ret)
		return ret;
	ret = try_apply(to_set(h.o), sops, nsops, un, p->pid, &blk);
	if (GRACE_LIKELY(ret != WOULD_BLOCK)) {
		if (ret == 0)
			semop_applied(to_set(h.o), sc.alter);
		grace_ipc__unlock(ns, &h);
		return ret;
	}
	return semop_sleep(p, &h, sops, nsops, blk, sc.alter, un, timeout ? &deadline : NULL);
}

int grace_ipc_semop(struct grace_ipc_proc *p, int semid, const struct grace_ipc_sembuf *sops,
		    size_t nsops)
{
	return grace_ipc_semtimedop(p, semid, sops, nsops, NULL);
}

/* ---------------------------------------------------------------- semctl */

/* Sleepers whose blocking operation is on semnum: decrements (zero == false) or waits for
 * zero (zero == true), as Linux's count_semcnt(). Lock held. */
static int count_sleepers(struct ipc_set *s, int semnum, bool zero)
{
	int n = 0;

	for (struct ipc_waiter *q = s->qhead; q; q = q->next) {
		const struct grace_ipc_sembuf *op = &q->sops[q->blocking];

		if (op->sem_num == semnum && (zero ? op->sem_op == 0 : op->sem_op < 0))
			n++;
	}
	return n;
}

static int sem_info(struct grace_ipc_proc *p, int cmd, struct grace_ipc_seminfo *out)
{
	struct grace_ipc_ns *ns = p->ns;
	struct grace_ipc_seminfo si;
	int max;

	memset(&si, 0, sizeof(si));
	si.semmni = ns->lim.semmni;
	si.semmns = ns->lim.semmns;
	si.semmsl = ns->lim.semmsl;
	si.semopm = ns->lim.semopm;
	si.semvmx = GRACE_IPC_SEMVMX;
	si.semmnu = SEMMNS_K;
	si.semmap = SEMMNS_K;
	si.semume = 500; /* SEMOPM's compiled-in value */
	grace_ipc__upd_begin(ns, IPC_T_SEM);
	if (cmd == GRACE_IPC_SEM_INFO) {
		si.semusz = ns->ids[IPC_T_SEM].in_use;
		si.semaem = ns->used_sems;
	} else {
		si.semusz = SEMUSZ_K;
		si.semaem = SEMAEM;
	}
	max = grace_ipc__max_index(ns, IPC_T_SEM);
	grace_ipc__upd_end(ns, IPC_T_SEM);
	if (!out)
		return -EFAULT;
	*out = si;
	return max < 0 ? 0 : max;
}

static int sem_stat(struct grace_ipc_proc *p, int semid, int cmd, struct grace_ipc_semid_ds *out)
{
	struct grace_ipc_semid_ds ds;
	struct ipc_held h;
	struct ipc_set *s;
	int ret = grace_ipc__stat_begin(p, IPC_T_SEM, semid, cmd, GRACE_IPC_SEM_STAT_ANY, &h);

	if (ret)
		return ret;
	s = to_set(h.o);
	memset(&ds, 0, sizeof(ds));
	grace_ipc__perm_out(p->ns, h.o, &ds.sem_perm);
	ds.sem_otime = s->otime;
	ds.sem_ctime = h.o->ctime;
	ds.sem_nsems = (unsigned long)s->nsems;
	return grace_ipc__stat_end(p->ns, &h, cmd, out, &ds, sizeof(ds));
}

/* GETALL, set locked. cap: the capacity of array (SIZE_MAX: the kernel's "nsems, trust me").
 * Returns nsems (semctl() reports 0) or -errno. */
static int sem_getall_locked(struct ipc_set *s, unsigned short *array, size_t cap)
{
	if (cap < (size_t)s->nsems)
		return -EINVAL; /* grace_ipc_getall(): the buffer is too small */
	if (!array)
		return -EFAULT;
	for (int i = 0; i < s->nsems; i++)
		array[i] = (unsigned short)s->sem[i].val;
	return s->nsems;
}

/* SETALL by pid, set locked. cap: the length of array (SIZE_MAX: as GETALL's). Returns 0 or
 * -errno. */
static int sem_setall_locked(struct ipc_set *s, int pid, const unsigned short *array, size_t cap)
{
	if (cap != SIZE_MAX && cap != (size_t)s->nsems)
		return -EINVAL; /* grace_ipc_setall(): not nsems values */
	if (!array)
		return -EFAULT;
	for (int i = 0; i < s->nsems; i++)
		if (array[i] > GRACE_IPC_SEMVMX)
			return -ERANGE;
	for (int i = 0; i < s->nsems; i++) {
		s->sem[i].val = array[i];
		s->sem[i].pid = pid;
	}
	undo_clear(s, -1);
	s->obj.ctime = grace_ipc__now();
	if (s->qhead && update_queue(s))
		s->otime = grace_ipc__now();
	return 0;
}

/* sem_main()'s commands by pid, set locked, semnum checked. */
static int sem_main_locked(struct ipc_set *s, int pid, int semnum, int cmd, unsigned short *array,
			   size_t cap)
{
	switch (cmd) {
	case GRACE_IPC_GETALL:
		return sem_getall_locked(s, array, cap);
	case GRACE_IPC_SETALL:
		return sem_setall_locked(s, pid, array, cap);
	case GRACE_IPC_GETVAL:
		return s->sem[semnum].val;
	case GRACE_IPC_GETPID:
		return s->sem[semnum].pid;
	case GRACE_IPC_GETNCNT:
		return count_sleepers(s, semnum, false);
	default: /* GETZCNT */
		return count_sleepers(s, semnum, true);
	}
}

/* GETVAL, GETPID, GETNCNT, GETZCNT, GETALL, SETALL (Linux's semctl_main()). cap: the capacity
 * of array (GETALL) or its length (SETALL); SIZE_MAX: the kernel's "nsems, trust me". */
static int sem_main(struct grace_ipc_proc *p, int semid, int semnum, int cmd, unsigned short *array,
		    size_t cap)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_held h;
	int ret, nsems, pre = 0;

	ret = grace_ipc__find(ns, IPC_T_SEM, semid, &h);
	if (ret)
		return ret;
	nsems = to_set(h.o)->nsems;
	if (cmd != GRACE_IPC_GETALL && cmd != GRACE_IPC_SETALL && (semnum < 0 || semnum >= nsems))
		pre = -EINVAL; /* after the permission check, before `deleted` */
	ret = grace_ipc__lock(p, &h, cmd == GRACE_IPC_SETALL ? S_IWUGO_ : S_IRUGO_, pre);
	if (ret)
		return ret;
	ret = sem_main_locked(to_set(h.o), p->pid, semnum, cmd, array, cap);
	grace_ipc__unlock(ns, &h);
	return ret;
}

static int sem_setval(struct grace_ipc_proc *p, int semid, int semnum, int val)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_held h;
	struct ipc_set *s;
	int ret;

	/* Linux's semctl_setval(): ERANGE before the lookup, semnum before the permission. */
	if (val > GRACE_IPC_SEMVMX || val < 0)
		return -ERANGE;
	ret = grace_ipc__find(ns, IPC_T_SEM, semid, &h);
	if (ret)
		return ret;
	s = to_set(h.o);
	if (semnum < 0 || semnum >= s->nsems) {
		grace_ipc__drop(ns, &h);
		return -EINVAL;
	}
	ret = grace_ipc__lock(p, &h, S_IWUGO_, 0);
	if (ret)
		return ret;
	undo_clear(s, semnum);
	s->sem[semnum].val = val;
	s->sem[semnum].pid = p->pid;
	h.o->ctime = grace_ipc__now();
	if (s->qhead && update_queue(s))
		s->otime = grace_ipc__now();
	grace_ipc__unlock(ns, &h);
	return 0;
}

/* IPC_SET and IPC_RMID (Linux's semctl_down()). */
static int sem_down(struct grace_ipc_proc *p, int semid, int cmd,
		    const struct grace_ipc_semid_ds *in)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o;
	int ret = grace_ipc__ctl_begin(p, IPC_T_SEM, semid, &o);

	if (ret)
		return ret;
	if (cmd == GRACE_IPC_RMID) {
		ret = sem_rmid_locked(ns, o);
	} else {
		grace_ipc__upd_lock(ns, o);
		ret = grace_ipc__perm_set(o, &in->sem_perm);
		if (ret == 0)
			o->ctime = grace_ipc__now();
		grace_ipc__upd_unlock(ns, o);
	}
	grace_ipc__upd_end(ns, IPC_T_SEM);
	return ret;
}

/* semctl's commands on the values (Linux's semctl_main() and semctl_setval()); -EINVAL for a
 * command that is none of them. */
static int sem_values(struct grace_ipc_proc *p, int semid, int semnum, int cmd,
		      union grace_ipc_semun arg)
{
	switch (cmd) {
	case GRACE_IPC_GETALL: {
		int ret = sem_main(p, semid, semnum, cmd, arg.array, SIZE_MAX);

		return ret > 0 ? 0 : ret;
	}
	case GRACE_IPC_GETVAL:
	case GRACE_IPC_GETPID:
	case GRACE_IPC_GETNCNT:
	case GRACE_IPC_GETZCNT:
	case GRACE_IPC_SETALL:
		return sem_main(p, semid, semnum, cmd, arg.array, SIZE_MAX);
	case GRACE_IPC_SETVAL:
		return sem_setval(p, semid, semnum, arg.val);
	default:
		return -EINVAL;
	}
}

int grace_ipc_semctl(struct grace_ipc_proc *p, int semid, int semnum, int cmd,
		     union grace_ipc_semun arg)
{
	if (!p || semid < 0)
		return -EINVAL;
	switch (cmd) {
	case GRACE_IPC_INFO:
	case GRACE_IPC_SEM_INFO:
		return sem_info(p, cmd, arg.info);
	case GRACE_IPC_STAT:
	case GRACE_IPC_SEM_STAT:
	case GRACE_IPC_SEM_STAT_ANY:
		return sem_stat(p, semid, cmd, arg.buf);
	case GRACE_IPC_SET:
		if (!arg.buf)
			return -EFAULT; /* copied in before anything else */
		return sem_down(p, semid, cmd, arg.buf);
	case GRACE_IPC_RMID:
		return sem_down(p, semid, cmd, NULL);
	default:
		return sem_values(p, semid, semnum, cmd, arg);
	}
}

int grace_ipc_getall(struct grace_ipc_proc *p, int semid, unsigned short *vals, size_t cap)
{
	if (!p || semid < 0)
		return -EINVAL;
	return sem_main(p, semid, 0, GRACE_IPC_GETALL, vals, cap);
}

int grace_ipc_setall(struct grace_ipc_proc *p, int semid, const unsigned short *vals, size_t n)
{
	if (!p || semid < 0)
		return -EINVAL;
	return sem_main(p, semid, 0, GRACE_IPC_SETALL, (unsigned short *)(uintptr_t)vals, n);
}

/* ---------------------------------------------------------------- exit (SEM_UNDO) */

/* Apply the adjustments of un, unlinked, to its set s by pid, clamped to [0, SEMVMX] as Linux's
 * exit_sem() does. Set lock held. */
static void undo_apply(struct ipc_set *s, struct sem_undo *un, int pid)
{
	for (int i = 0; i < s->nsems; i++) {
		int v;

		if (!un->semadj[i])
			continue;
		v = s->sem[i].val + un->semadj[i];
		s->sem[i].val = v < 0 ? 0 : v > GRACE_IPC_SEMVMX ? GRACE_IPC_SEMVMX : v;
		s->sem[i].pid = pid;
	}
	if (s->qhead)
		update_queue(s);
	s->otime = grace_ipc__now(); /* exit_sem() forces it */
}

void grace_ipc__sem_exit(struct grace_ipc_proc *p)
{
	struct grace_ipc_ns *ns = p->ns;

	for (;;) {
		struct sem_undo *un;
		struct ipc_held h;
		struct ipc_set *s;
		int semid;

		pthread_mutex_lock(&p->lock);
		un = p->undo;
		semid = un ? un->semid : -1;
		pthread_mutex_unlock(&p->lock);
		if (!un)
			return;
		if (grace_ipc__find(ns, IPC_T_SEM, semid, &h) != 0 ||
		    grace_ipc__lock(p, &h, -1, 0) != 0) {
			/* Removed meanwhile: its remover unlinks (or has unlinked) the record
			 * under the update path; wait for it by passing through that path. */
			grace_ipc__upd_begin(ns, IPC_T_SEM);
			grace_ipc__upd_end(ns, IPC_T_SEM);
			continue;
		}
		s = to_set(h.o);
		pthread_mutex_lock(&p->lock);
		for (un = p->undo; un && un->semid != semid; un = un->pnext)
			;
		if (un)
			undo_unlink(s, un);
		pthread_mutex_unlock(&p->lock);
		if (un)
			undo_apply(s, un, p->pid);
		grace_ipc__unlock(ns, &h);
		free(un);
	}
}
