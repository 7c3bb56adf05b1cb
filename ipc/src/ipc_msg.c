/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc message queues: msgget, msgsnd, msgrcv, msgctl, after Linux's ipc/msg.c (6.x). The
 * lookup, removal and free are the core's (ipc_core.c, correctness argument (a)-(h)); this file
 * adds what is particular to queues.
 *
 * Semantics kept from Linux:
 *  - a message fits when msg_cbytes + msgsz <= msg_qbytes and msg_qnum + 1 <= msg_qbytes;
 *  - pipelined send: a sender first offers its message to the sleeping receivers, oldest
 *    first; the first whose type matches takes it directly (it never enters the queue), and a
 *    matching receiver whose buffer is too small (no MSG_NOERROR) is woken with -E2BIG and
 *    the offer goes on to the next;
 *  - a receive wakes the sleeping senders whose messages now fit, and moves those that do not
 *    fit behind the others (FIFO among senders that fit); a woken sender checks again;
 *  - IPC_SET wakes every sleeping receiver to check its permission and search again, and
 *    every sender to check whether it fits under the new msg_qbytes;
 *  - IPC_RMID wakes every sleeper with -EIDRM.
 *
 * RCU-specific points beyond the core's argument: a sleeping sender or receiver holds a
 * reference (core (d)) and never re-reads the queue without its lock; a receiver's record
 * (on its stack) outlives the sender's hand-over because the sender holds the queue's lock,
 * which the receiver must take again before it returns; a message handed over or dequeued is
 * owned by the receiver alone, which copies it out after unlocking. Queued messages are freed
 * with the queue, after the grace period (they are reachable only through it).
 */
#include "ipc_internal.h"

#include <limits.h>

#define Q_PENDING 1

enum { SEARCH_ANY = 1, SEARCH_EQUAL, SEARCH_NOTEQUAL, SEARCH_LESSEQUAL, SEARCH_NUMBER };

/* Linux's compiled-in constants reported by IPC_INFO (include/uapi/linux/msg.h). */
#define MSGMNI_K 32000
#define MSGMNB_K 16384
#define MSGPOOL_K (MSGMNI_K * MSGMNB_K / 1024)
#define MSGTQL_K MSGMNB_K
#define MSGMAP_K MSGMNB_K
#define MSGSSZ_K 16
#define MSGSEG_K 0xffff /* (MSGPOOL * 1024) / MSGSSZ, capped at 0xffff */

struct ipc_msg {
	struct ipc_msg *next, *prev;
	long mtype;
	size_t size;
	char text[];
};

/* A msgrcv sleeping on a queue: on its stack. */
struct msg_receiver {
	struct msg_receiver *next, *prev;
	int mode;
	long type;
	size_t maxsize;
	int pid;
	struct ipc_msg *msg; /* handed over by a sender (status 0) */
	int status;          /* Q_PENDING, 0, -E2BIG, -EIDRM, -EAGAIN (IPC_SET: search again) */
	pthread_cond_t cv;
};

/* A msgsnd sleeping on a full queue: on its stack. */
struct msg_sender {
	struct msg_sender *next, *prev;
	size_t msgsz;
	bool linked;
	pthread_cond_t cv;
};

struct ipc_queue {
	struct ipc_obj obj; /* first: the core's head */
	/* Guarded like obj.deleted. */
	struct ipc_msg *mhead, *mtail;
	unsigned long cbytes, qnum, qbytes;
	int lspid, lrpid;
	long long stime, rtime;
	struct msg_receiver *rhead, *rtail;
	struct msg_sender *shead, *stail;
};

static inline struct ipc_queue *to_queue(struct ipc_obj *o)
{
	return (struct ipc_queue *)o;
}

void grace_ipc__msg_free(struct ipc_obj *o)
{
	struct ipc_queue *q = to_queue(o);

	while (q->mhead) {
		struct ipc_msg *m = q->mhead;

		q->mhead = m->next;
		free(m);
	}
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* ---------------------------------------------------------------- lists (queue lock held) */

#define DLIST_APPEND(head, tail, e)         \
	do {                                \
		(e)->next = NULL;           \
		(e)->prev = (tail);         \
		if (tail)                   \
			(tail)->next = (e); \
		else                        \
			(head) = (e);       \
		(tail) = (e);               \
	} while (0)

#define DLIST_UNLINK(head, tail, e)                  \
	do {                                         \
		if ((e)->prev)                       \
			(e)->prev->next = (e)->next; \
		else                                 \
			(head) = (e)->next;          \
		if ((e)->next)                       \
			(e)->next->prev = (e)->prev; \
		else                                 \
			(tail) = (e)->prev;          \
		(e)->next = (e)->prev = NULL;        \
	} while (0)

static inline bool msg_fits(const struct ipc_queue *q, size_t msgsz)
{
	return msgsz + q->cbytes <= q->qbytes && 1 + q->qnum <= q->qbytes;
}

static void receiver_complete(struct ipc_queue *q, struct msg_receiver *r, int status)
{
	DLIST_UNLINK(q->rhead, q->rtail, r);
	r->status = status;
	pthread_cond_signal(&r->cv);
}

static void sender_wake(struct ipc_queue *q, struct msg_sender *s)
{
	DLIST_UNLINK(q->shead, q->stail, s);
	s->linked = false;
	pthread_cond_signal(&s->cv);
}

/* Linux's ss_wakeup(): wake the senders whose message fits now; move the others to the tail,
 * stopping when the first one moved comes round again. kill: wake them all (removal). */
static void senders_wake(struct ipc_queue *q, bool kill)
{
	struct msg_sender *s, *next, *stop = NULL;

	for (s = q->shead; s; s = next) {
		next = s->next;
		if (!kill) {
			if (s == stop)
				break;
			if (!msg_fits(q, s->msgsz)) {
				if (!stop)
					stop = s;
				if (s != q->stail) {
					DLIST_UNLINK(q->shead, q->stail, s);
					DLIST_APPEND(q->shead, q->stail, s);
				}
				if (!next)
					break;
				continue;
			}
		}
		sender_wake(q, s);
	}
}

static void receivers_complete_all(struct ipc_queue *q, int status)
{
	while (q->rhead)
		receiver_complete(q, q->rhead, status);
}

static int testmsg(const struct ipc_msg *m, long type, int mode)
{
	switch (mode) {
	case SEARCH_ANY:
	case SEARCH_NUMBER:
		return 1;
	case SEARCH_LESSEQUAL:
		return m->mtype <= type;
	case SEARCH_EQUAL:
		return m->mtype == type;
	case SEARCH_NOTEQUAL:
		return m->mtype != type;
	default:
		return 0;
	}
}

/* Offer m to the sleeping receivers (Linux's pipelined_send()). Returns true if one took it. */
static bool pipelined_send(struct ipc_queue *q, struct ipc_msg *m)
{
	struct msg_receiver *r, *next;

	for (r = q->rhead; r; r = next) {
		next = r->next;
		if (!testmsg(m, r->type, r->mode))
			continue;
		if (r->maxsize < m->size) {
			receiver_complete(q, r, -E2BIG);
			continue;
		}
		q->lrpid = r->pid;
		q->rtime = grace_ipc__now();
		r->msg = m;
		receiver_complete(q, r, 0);
		return true;
	}
	return false;
}

/* Linux's find_msg(): *type narrows as SEARCH_LESSEQUAL finds lower types. */
static struct ipc_msg *find_msg(struct ipc_queue *q, long *type, int mode)
{
	struct ipc_msg *m, *found = NULL;
	long count = 0;

	for (m = q->mhead; m; m = m->next) {
		if (!testmsg(m, *type, mode))
			continue;
		if (mode == SEARCH_LESSEQUAL && m->mtype != 1) {
			*type = m->mtype - 1;
			found = m;
		} else if (mode == SEARCH_NUMBER) {
			if (*type == count)
				return m;
		} else {
			return m;
		}
		count++;
	}
	return found;
}

static int convert_mode(long *type, int flg)
{
	if (flg & GRACE_IPC_MSG_COPY)
		return SEARCH_NUMBER;
	if (*type == 0)
		return SEARCH_ANY;
	if (*type < 0) {
		*type = *type == LONG_MIN ? LONG_MAX : -*type;
		return SEARCH_LESSEQUAL;
	}
	if (flg & GRACE_IPC_MSG_EXCEPT)
		return SEARCH_NOTEQUAL;
	return SEARCH_EQUAL;
}

/* ---------------------------------------------------------------- msgget */

static int msg_create(struct grace_ipc_proc *p, const void *arg, int flg, struct ipc_obj **out)
{
	struct ipc_queue *q = (struct ipc_queue *)grace_ipc__alloc(sizeof(*q));

	(void)arg;
	(void)flg;
	if (!q)
		return -ENOMEM;
	q->qbytes = (unsigned long)p->ns->lim.msgmnb;
	*out = &q->obj;
	return 0;
}

static void msg_abandon(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	(void)ns;
	grace_ipc__msg_free(o);
}

static void msg_created(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	(void)ns;
	(void)o;
}

static const struct ipc_get_ops msg_get_ops = {
	NULL,
	msg_create,
	msg_abandon,
	msg_created,
};

int grace_ipc_msgget(struct grace_ipc_proc *p, int key, int msgflg)
{
	if (!p)
		return -EINVAL;
	return grace_ipc__get(p, IPC_T_MSG, key, msgflg, &msg_get_ops, NULL);
}

/* ---------------------------------------------------------------- removal */

/* Linux's freeque(): unpublish, wake every sleeper with -EIDRM. Update path and queue lock
 * held. Returns true if the caller must retire q. */
static bool queue_remove_locked(struct grace_ipc_ns *ns, struct ipc_queue *q)
{
	grace_ipc__unpublish(ns, &q->obj);
	receivers_complete_all(q, -EIDRM);
	senders_wake(q, true);
	grace_fetch_sub(&ns->msg_hdrs, (long)q->qnum, __ATOMIC_RELAXED); /* statistics */
	grace_fetch_sub(&ns->msg_bytes, (long)q->cbytes, __ATOMIC_RELAXED);
	return q->obj.refcnt == 0;
}

static void msg_rmid_locked(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	bool retire;

	grace_ipc__upd_lock(ns, o);
	retire = queue_remove_locked(ns, to_queue(o));
	grace_ipc__upd_unlock(ns, o);
	if (retire)
		grace_ipc__retire(ns, o); /* RCU: after the queue's lock is released (c) */
}

void grace_ipc__msg_remove_all(struct grace_ipc_ns *ns)
{
	grace_ipc__upd_begin(ns, IPC_T_MSG);
	for (int idx = grace_ipc__max_index(ns, IPC_T_MSG); idx >= 0; idx--) {
		struct ipc_obj *o = grace_ipc__upd_at(ns, IPC_T_MSG, idx);

		if (o)
			msg_rmid_locked(ns, o);
	}
	grace_ipc__upd_end(ns, IPC_T_MSG);
}

/* ---------------------------------------------------------------- msgsnd */

/* The first sleep of a msgsnd or msgrcv: its condition variable (on CLOCK_MONOTONIC), and one
 * more sleeper for destroy's drain. */
static void sleeper_enter(struct grace_ipc_ns *ns, pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	grace_ipc__waiters_add(ns, 1);
}

/* After the last sleep, the queue unlocked (grace_ipc__unlock_put()): undo sleeper_enter(). */
static void sleeper_leave(struct grace_ipc_ns *ns, pthread_cond_t *cv)
{
	pthread_cond_destroy(cv);
	grace_ipc__waiters_add(ns, -1);
}

/*
 * The checks of Linux's ksys_msgsnd() and do_msgsnd() before the lookup, in their order, then
 * the message copied in: 0 with *out, or -errno.
 */
static int msg_load(struct grace_ipc_ns *ns, int msqid, const void *msgp, size_t msgsz,
		    struct ipc_msg **out)
{
	struct ipc_msg *m;
	long mtype;

	if (!msgp)
		return -EFAULT; /* get_user(mtype) comes first */
	memcpy(&mtype, msgp, sizeof(mtype));
	if (msgsz > (size_t)ns->lim.msgmax || (ssize_t)msgsz < 0 || msqid < 0)
		return -EINVAL;
	if (mtype < 1)
		return -EINVAL;
	m = (struct ipc_msg *)malloc(sizeof(*m) + msgsz);
	if (!m)
		return -ENOMEM;
	m->mtype = mtype;
	m->size = msgsz;
	memcpy(m->text, (const char *)msgp + sizeof(long), msgsz);
	*out = m;
	return 0;
}

/*
 * Wait until a message of msgsz bytes fits in the queue (Linux's do_msgsnd() loop). Queue
 * locked, and again on return: 0 (it fits), or -EAGAIN (IPC_NOWAIT), -EIDRM, -EACCES. s: the
 * sender's record; *slept: whether sleeper_enter() was called for it.
 */
static int sender_wait_room(struct grace_ipc_proc *p, struct ipc_held *h, struct msg_sender *s,
			    size_t msgsz, int msgflg, bool *slept)
{
	struct ipc_queue *q = to_queue(h->o);

	while (!msg_fits(q, msgsz)) {
		if (msgflg & GRACE_IPC_NOWAIT)
			return -EAGAIN;
		/* Queue full: sleep until a receive (or IPC_SET) makes room, or removal. */
		if (!*slept) {
			sleeper_enter(p->ns, &s->cv);
			*slept = true;
		}
		s->msgsz = msgsz;
		s->linked = true;
		DLIST_APPEND(q->shead, q->stail, s);
		do
			grace_ipc__sleep(p->ns, h, &s->cv, NULL);
		while (s->linked && !h->o->deleted);
		if (s->linked)
			DLIST_UNLINK(q->shead, q->stail, s);
		if (h->o->deleted)
			return -EIDRM;
		/* Linux checks the permission again on every pass. */
		if (grace_ipc__perms(cred_of(p), h->o, S_IWUGO_))
			return -EACCES;
	}
	return 0;
}

/* The message fits: hand it to a sleeping receiver, or queue it. Queue locked. */
static void msg_deliver(struct grace_ipc_ns *ns, struct ipc_queue *q, int pid, struct ipc_msg *m)
{
	q->lspid = pid;
	q->stime = grace_ipc__now();
	if (pipelined_send(q, m))
		return;
	/* Nobody is waiting for it: queue it. */
	DLIST_APPEND(q->mhead, q->mtail, m);
	q->cbytes += m->size;
	q->qnum++;
	grace_fetch_add(&ns->msg_hdrs, 1, __ATOMIC_RELAXED); /* statistics */
	grace_fetch_add(&ns->msg_bytes, (long)m->size, __ATOMIC_RELAXED);
}

int grace_ipc_msgsnd(struct grace_ipc_proc *p, int msqid, const void *msgp, size_t msgsz,
		     int msgflg)
{
	struct grace_ipc_ns *ns;
	struct msg_sender s;
	struct ipc_held h;
	struct ipc_msg *m;
	bool slept = false;
	int ret;

	/* Checks in the order of Linux's ksys_msgsnd() and do_msgsnd(). */
	if (!p)
		return -EINVAL;
	ns = p->ns;
	ret = msg_load(ns, msqid, msgp, msgsz, &m);
	if (ret)
		return ret;
	ret = grace_ipc__find(ns, IPC_T_MSG, msqid, &h);
	if (ret) {
		free(m);
		return ret;
	}
	ret = grace_ipc__lock(p, &h, S_IWUGO_, 0);
	if (ret) {
		free(m);
		return ret;
	}
	ret = sender_wait_room(p, &h, &s, msgsz, msgflg, &slept);
	if (ret == 0) {
		msg_deliver(ns, to_queue(h.o), p->pid, m);
		m = NULL;
	}
	grace_ipc__unlock_put(ns, &h);
	if (slept)
		sleeper_leave(ns, &s.cv);
	free(m);
	return ret;
}

/* ---------------------------------------------------------------- msgrcv */

#define SEARCH_AGAIN 2 /* receiver_wait(): IPC_SET woke it, search the queue again */

/* What a msgrcv asks, once its arguments are checked (msgrcv_check()). */
struct msg_request {
	void *msgp;
	size_t msgsz;
	long type; /* as convert_mode() leaves it; find_msg() narrows it */
	int mode;
	int flg;
	size_t copy_cap; /* MSG_COPY: min(msgsz, msgmax) */
};

/* The checks of Linux's do_msgrcv() before the lookup, in its order; sets rq's mode and
 * copy_cap. 0 or -errno. */
static int msgrcv_check(struct grace_ipc_ns *ns, int msqid, struct msg_request *rq)
{
	if (msqid < 0 || (ssize_t)rq->msgsz < 0)
		return -EINVAL;
	rq->copy_cap = 0;
	if (rq->flg & GRACE_IPC_MSG_COPY) {
		if ((rq->flg & GRACE_IPC_MSG_EXCEPT) || !(rq->flg & GRACE_IPC_NOWAIT))
			return -EINVAL;
		rq->copy_cap = rq->msgsz < (size_t)ns->lim.msgmax ? rq->msgsz
								  : (size_t)ns->lim.msgmax;
	}
	if (!rq->msgp)
		return -EFAULT; /* before anything is taken off the queue (see README) */
	rq->mode = convert_mode(&rq->type, rq->flg);
	return 0;
}

/* Copy m out to msgp (mtype, then at most msgsz bytes of text). Returns the bytes of text. */
static ssize_t msg_copy_out(void *msgp, size_t msgsz, const struct ipc_msg *m)
{
	size_t n = msgsz < m->size ? msgsz : m->size;

	memcpy(msgp, &m->mtype, sizeof(long));
	memcpy((char *)msgp + sizeof(long), m->text, n);
	return (ssize_t)n;
}

/* Take m off the queue for the receiver pid, and wake the senders that fit now. Queue locked. */
static void msg_take(struct grace_ipc_ns *ns, struct ipc_queue *q, int pid, struct ipc_msg *m)
{
	DLIST_UNLINK(q->mhead, q->mtail, m);
	q->qnum--;
	q->rtime = grace_ipc__now();
	q->lrpid = pid;
	q->cbytes -= m->size;
	grace_fetch_sub(&ns->msg_hdrs, 1, __ATOMIC_RELAXED); /* statistics */
	grace_fetch_sub(&ns->msg_bytes, (long)m->size, __ATOMIC_RELAXED);
	senders_wake(q, false);
}

/*
 * find_msg() found m. Queue locked: -E2BIG (too large without MSG_NOERROR), a MSG_COPY copied
 * out (its size, or -EINVAL), or 0 with m taken off the queue into *got.
 */
static ssize_t msg_found(struct grace_ipc_proc *p, struct ipc_queue *q, struct ipc_msg *m,
			 const struct msg_request *rq, struct ipc_msg **got)
{
	if (rq->msgsz < m->size && !(rq->flg & GRACE_IPC_MSG_NOERROR))
		return -E2BIG; /* it stays queued */
	if (rq->flg & GRACE_IPC_MSG_COPY) {
		/* Linux's copy_msg(): the copy holds min(msgsz, msgmax) bytes. */
		if (m->size > rq->copy_cap)
			return -EINVAL;
		return msg_copy_out(rq->msgp, rq->msgsz, m);
	}
	msg_take(p->ns, q, p->pid, m);
	*got = m;
	return 0;
}

/*
 * No message: sleep until a sender hands one over, or removal, or IPC_SET. Queue locked, and
 * again on return: 0 with the message handed over in *got, SEARCH_AGAIN (IPC_SET), or -E2BIG,
 * -EIDRM, -EACCES.
 */
static int receiver_wait(struct grace_ipc_proc *p, struct ipc_held *h, struct msg_receiver *r,
			 const struct msg_request *rq, struct ipc_msg **got)
{
	struct ipc_queue *q = to_queue(h->o);

	r->mode = rq->mode;
	r->type = rq->type;
	r->maxsize = (rq->flg & GRACE_IPC_MSG_NOERROR) ? (size_t)INT_MAX : rq->msgsz;
	r->pid = p->pid;
	r->msg = NULL;
	r->status = Q_PENDING;
	DLIST_APPEND(q->rhead, q->rtail, r);
	while (r->status == Q_PENDING)
		grace_ipc__sleep(p->ns, h, &r->cv, NULL);
	if (r->status == 0) {
		*got = r->msg;
		return 0;
	}
	if (r->status != -EAGAIN)
		return r->status; /* -E2BIG or -EIDRM */
	/* IPC_SET: check the permission again, then search again (Linux's loop). */
	if (grace_ipc__perms(cred_of(p), h->o, S_IRUGO_))
		return -EACCES;
	if (h->o->deleted)
		return -EIDRM;
	return SEARCH_AGAIN;
}

/*
 * Search the queue, and sleep while nothing matches (Linux's do_msgrcv() loop). Queue locked,
 * and again on return: 0 with the message taken in *got, a MSG_COPY's size, or -errno. r: the
 * receiver's record; *slept: whether sleeper_enter() was called for it.
 */
static ssize_t msg_receive_locked(struct grace_ipc_proc *p, struct ipc_held *h,
				  struct msg_request *rq, struct msg_receiver *r, bool *slept,
				  struct ipc_msg **got)
{
	struct ipc_queue *q = to_queue(h->o);
	ssize_t ret;

	for (;;) {
		struct ipc_msg *m = find_msg(q, &rq->type, rq->mode);

		if (m)
			return msg_found(p, q, m, rq, got);
		if (rq->flg & GRACE_IPC_NOWAIT)
			return -ENOMSG;
		if (!*slept) {
			sleeper_enter(p->ns, &r->cv);
			*slept = true;
		}
		ret = receiver_wait(p, h, r, rq, got);
		if (ret != SEARCH_AGAIN)
			return ret;
	}
}

ssize_t grace_ipc_msgrcv(struct grace_ipc_proc *p, int msqid, void *msgp, size_t msgsz, long msgtyp,
			 int msgflg)
{
	struct grace_ipc_ns *ns;
	struct msg_request rq;
	struct msg_receiver r;
	struct ipc_held h;
	struct ipc_msg *got = NULL;
	bool slept = false;
	ssize_t ret;

	/* Checks in the order of Linux's do_msgrcv(). */
	if (!p)
		return -EINVAL;
	ns = p->ns;
	rq.msgp = msgp;
	rq.msgsz = msgsz;
	rq.type = msgtyp;
	rq.flg = msgflg;
	ret = msgrcv_check(ns, msqid, &rq);
	if (ret)
		return ret;
	ret = grace_ipc__find(ns, IPC_T_MSG, msqid, &h);
	if (ret)
		return ret;
	ret = grace_ipc__lock(p, &h, S_IRUGO_, 0);
	if (ret)
		return ret;
	ret = msg_receive_locked(p, &h, &rq, &r, &slept, &got);
	grace_ipc__unlock_put(ns, &h);
	if (slept)
		sleeper_leave(ns, &r.cv);
	if (got) {
		/* Owned by this receiver alone: copied out after unlocking (header comment). */
		ret = msg_copy_out(msgp, msgsz, got);
		free(got);
	}
	return ret;
}

/* ---------------------------------------------------------------- msgctl */

static int msg_info(struct grace_ipc_proc *p, int cmd, struct grace_ipc_msginfo *out)
{
	struct grace_ipc_ns *ns = p->ns;
	struct grace_ipc_msginfo mi;
	int max;

	memset(&mi, 0, sizeof(mi));
	mi.msgmni = ns->lim.msgmni;
	mi.msgmax = ns->lim.msgmax;
	mi.msgmnb = ns->lim.msgmnb;
	mi.msgssz = MSGSSZ_K;
	mi.msgseg = MSGSEG_K;
	grace_ipc__upd_begin(ns, IPC_T_MSG);
	if (cmd == GRACE_IPC_MSG_INFO)
		mi.msgpool = ns->ids[IPC_T_MSG].in_use;
	max = grace_ipc__max_index(ns, IPC_T_MSG);
	grace_ipc__upd_end(ns, IPC_T_MSG);
	if (cmd == GRACE_IPC_MSG_INFO) {
		long hdrs = grace_load_relaxed(&ns->msg_hdrs);
		long bytes = grace_load_relaxed(&ns->msg_bytes);

		mi.msgmap = hdrs > INT_MAX ? INT_MAX : (int)hdrs;
		mi.msgtql = bytes > INT_MAX ? INT_MAX : (int)bytes;
	} else {
		mi.msgmap = MSGMAP_K;
		mi.msgpool = MSGPOOL_K;
		mi.msgtql = MSGTQL_K;
	}
	if (!out)
		return -EFAULT;
	*out = mi;
	return max < 0 ? 0 : max;
}

static int msg_stat(struct grace_ipc_proc *p, int msqid, int cmd, struct grace_ipc_msqid_ds *out)
{
	struct grace_ipc_msqid_ds ds;
	struct ipc_held h;
	struct ipc_queue *q;
	int ret = grace_ipc__stat_begin(p, IPC_T_MSG, msqid, cmd, GRACE_IPC_MSG_STAT_ANY, &h);

	if (ret)
		return ret;
	q = to_queue(h.o);
	memset(&ds, 0, sizeof(ds));
	grace_ipc__perm_out(p->ns, h.o, &ds.msg_perm);
	ds.msg_stime = q->stime;
	ds.msg_rtime = q->rtime;
	ds.msg_ctime = h.o->ctime;
	ds.msg_cbytes = q->cbytes;
	ds.msg_qnum = q->qnum;
	ds.msg_qbytes = q->qbytes;
	ds.msg_lspid = q->lspid;
	ds.msg_lrpid = q->lrpid;
	return grace_ipc__stat_end(p->ns, &h, cmd, out, &ds, sizeof(ds));
}

/* IPC_SET and IPC_RMID (Linux's msgctl_down()). */
static int msg_down(struct grace_ipc_proc *p, int msqid, int cmd,
		    const struct grace_ipc_msqid_ds *in)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o;
	int ret = grace_ipc__ctl_begin(p, IPC_T_MSG, msqid, &o);

	if (ret)
		return ret;
	if (cmd == GRACE_IPC_RMID) {
		msg_rmid_locked(ns, o);
	} else {
		/* The kernel passes msg_qbytes on as an int. */
		int qbytes = (int)in->msg_qbytes;
		struct ipc_queue *q = to_queue(o);

		if (qbytes > ns->lim.msgmnb && !(cred_of(p)->caps & GRACE_IPC_CAP_SYS_RESOURCE)) {
			ret = -EPERM;
		} else {
			grace_ipc__upd_lock(ns, o);
			ret = grace_ipc__perm_set(o, &in->msg_perm);
			if (ret == 0) {
				q->qbytes = (unsigned long)(long)qbytes;
				o->ctime = grace_ipc__now();
				/* Sleeping receivers may have lost the permission; sleeping
				 * senders may fit now. */
				receivers_complete_all(q, -EAGAIN);
				senders_wake(q, false);
			}
			grace_ipc__upd_unlock(ns, o);
		}
	}
	grace_ipc__upd_end(ns, IPC_T_MSG);
	return ret;
}

int grace_ipc_msgctl(struct grace_ipc_proc *p, int msqid, int cmd, struct grace_ipc_msqid_ds *buf)
{
	if (!p || msqid < 0 || cmd < 0)
		return -EINVAL;
	switch (cmd) {
	case GRACE_IPC_INFO:
	case GRACE_IPC_MSG_INFO:
		return msg_info(p, cmd, (struct grace_ipc_msginfo *)(void *)buf);
	case GRACE_IPC_STAT:
	case GRACE_IPC_MSG_STAT:
	case GRACE_IPC_MSG_STAT_ANY:
		return msg_stat(p, msqid, cmd, buf);
	case GRACE_IPC_SET:
		if (!buf)
			return -EFAULT; /* copied in before anything else */
		return msg_down(p, msqid, cmd, buf);
	case GRACE_IPC_RMID:
		return msg_down(p, msqid, cmd, NULL);
	default:
		return -EINVAL;
	}
}
