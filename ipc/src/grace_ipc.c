/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc: System V semaphore sets in one process, with a global-lock and an RCU
 * implementation (seed 000, section 4). API and error codes: grace_ipc.h. Design: ipc/README.md.
 *
 * Objects and locks
 *   ns->idr     RCU mode: grace's ID registry (include/grace/idr.h), ID -> struct ipc_set, read
 *               with grace_idr_lookup() under rcu_read_lock(), updated under ns->ulock (and the
 *               registry's own mutex); it grows its array while readers run (Fig. 13).
 *   ns->gids    global mode: the 2.5.42 ID array (ipc_ids.c), everything under ns->glock.
 *   set->lock   RCU mode only: the per-set lock (Fig. 9), guarding the values, the pending
 *               queue, refcnt and `deleted`. In global mode ns->glock plays its part.
 *   ns->ulock   RCU mode: creation, removal, the key table.
 *   Lock order: ulock -> set->lock -> (registry mutex) -> ns->drain_lock.
 *
 * Correctness of the RCU mode
 *  (a) Lookup (set_lock, Fig. 11). Inside rcu_read_lock() grace_idr_lookup() loads the array,
 *      the slot and its sequence: a stale ID whose slot holds a new set finds nothing (-EINVAL).
 *      The reader then takes set->lock and checks `deleted`. The set cannot be freed meanwhile:
 *      its free is queued with call_rcu() only after grace_idr_remove() unpublished it, so every
 *      reader that could have loaded the pointer is inside a read-side section that began
 *      before the grace period.
 *  (b) Removal (Fig. 10). Under ulock and set->lock: unpublish, set `deleted`, wake every
 *      sleeper with -EIDRM. A reader that found the set through the old pointer takes the lock
 *      after the remover released it, sees `deleted` (the lock orders the flag) and returns
 *      -EIDRM: no operation ever applies to a removed set.
 *  (c) Deferred free (Fig. 12). The set is freed by call_rcu() once it is unpublished and no
 *      sleeper holds it (refcnt == 0). The decision is taken under set->lock; call_rcu() is
 *      called after the lock is released, so the grace period also covers readers that are
 *      waiting for the lock at that moment.
 *  (d) Sleeping (the lead's rule: never sleep inside a read-side section). A semop that must
 *      block queues itself on the set, takes a reference (refcnt++, under the lock), and leaves
 *      its read-side section before it sleeps; the reference, not RCU, keeps the set (and the
 *      lock it sleeps on) alive until it has woken and released the lock. The last reference
 *      of a removed set queues its free, as in (c).
 *  (e) Array growth under readers (Fig. 13): grace_idr_alloc() publishes a larger copy with
 *      rcu_assign_pointer() and retires the old array with call_rcu(); a reader still indexing
 *      the old array sees every set that existed when it started, and sets removed since are
 *      caught by (b).
 *
 * Blocking semantics (as Linux's ipc/sem.c since 2.6): a sleeping semop is queued FIFO with
 * its operations; whoever changes values (semop, SETVAL, SETALL) re-runs the queue and
 * performs, on behalf of each sleeper, the operations that can now complete, then wakes only
 * that sleeper with the result. The sleeper never re-examines the values, so there is no
 * thundering herd, and the "all or nothing" rule holds for it too.
 */
#include "grace_ipc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <grace/idr.h>
#include <grace/rcu.h>

#include "ipc_ids.h"

#define DEF_SEMMSL 32000
#define DEF_SEMMNS 1024000000
#define DEF_SEMOPM 500
#define DEF_SEMMNI 32000
#define MAX_SEMMSL 65536 /* sem_num is an unsigned short */

#define KEYTAB_BITS 8
#define KEYTAB_SIZE (1u << KEYTAB_BITS)

#define Q_PENDING 1   /* waiter status until a waker or the remover decides */
#define WOULD_BLOCK 1 /* try_apply(): the caller must sleep */

/* A semop sleeping on a set: on its stack, linked on the set's pending queue. */
struct ipc_waiter {
	struct ipc_waiter *next, *prev;
	const struct grace_ipc_sembuf *sops;
	size_t nsops;
	size_t blocking; /* index of the operation that blocks (for GETNCNT/GETZCNT) */
	int status;      /* Q_PENDING, then 0 or -errno; written under the set's lock */
	bool alter;      /* does any operation change a value? */
	pthread_cond_t cv;
};

struct ipc_set {
	/* Guarded by lock (RCU mode) or ns->glock (global mode). */
	pthread_mutex_t lock;
	bool deleted;
	int refcnt; /* sleepers that hold the set across a sleep */
	struct ipc_waiter *qhead, *qtail;
	/* Immutable once published (initialised before grace_idr_replace() publishes the set). */
	int id;
	int key;
	int nsems;
	struct ipc_set *key_next; /* key table chain, under the update lock */
	struct rcu_head rcu;
	unsigned short sem[]; /* values, guarded like the head */
};

struct grace_ipc_ns {
	/* Read-only after creation. */
	enum grace_ipc_impl impl;
	struct grace_ipc_limits lim;
	/* RCU mode: the registry (its read-mostly part on a line of its own). */
	struct grace_idr idr GRACE_ALIGNED_CACHE;
	/* Global mode: the 2.5.42 array. */
	struct ipc_ids gids;
	/* Global mode: the one lock over lookup and operation (the paper's ipc_ids.ary lock). */
	pthread_mutex_t glock GRACE_ALIGNED_CACHE;
	/* RCU mode: the update lock. Both modes: what it guards. */
	pthread_mutex_t ulock GRACE_ALIGNED_CACHE;
	int used_sems;
	int nsets;
	int peak_slot; /* highest slot ever used (for ns_info in RCU mode) */
	struct ipc_set *keytab[KEYTAB_SIZE];
	/* Sleepers in the namespace, so that destroy can wait for them to leave. */
	pthread_mutex_t drain_lock;
	pthread_cond_t drain_cv;
	int nwaiters;
};

/*
 * Test hook (only in the grace_ipc_hooked build used by ipc/tests/test_ipc_window.c): called in
 * the RCU lookup after the set was found and before its lock is taken, i.e. inside the window
 * of Fig. 11 that the `deleted` flag exists for. Tests park a thread there to make the race
 * with removal deterministic.
 */
#ifdef GRACE_IPC_TEST_HOOKS
void (*grace_ipc__hook_after_lookup)(int semid);
#define HOOK_AFTER_LOOKUP(id)                             \
	do {                                              \
		if (grace_ipc__hook_after_lookup)         \
			grace_ipc__hook_after_lookup(id); \
	} while (0)
#else
#define HOOK_AFTER_LOOKUP(id) \
	do {                  \
	} while (0)
#endif

/* A set found and locked: the lock to release, and whether a read-side section is open. */
struct held {
	struct ipc_set *s;
	pthread_mutex_t *lk;
};

const char *grace_ipc_impl_name(enum grace_ipc_impl impl)
{
	switch (impl) {
	case GRACE_IPC_GLOBAL_LOCK:
		return "global";
	case GRACE_IPC_RCU:
		return "rcu";
	}
	return "?";
}

static inline bool is_rcu(const struct grace_ipc_ns *ns)
{
	return ns->impl == GRACE_IPC_RCU;
}

/* The lock that serialises creation and removal. */
static inline pthread_mutex_t *upd_lock(struct grace_ipc_ns *ns)
{
	return is_rcu(ns) ? &ns->ulock : &ns->glock;
}

static void *alloc_aligned(size_t size)
{
	size = (size + GRACE_CACHE_LINE - 1) & ~(size_t)(GRACE_CACHE_LINE - 1);
	void *p = aligned_alloc(GRACE_CACHE_LINE, size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* ---------------------------------------------------------------- namespace */

int grace_ipc_ns_create(enum grace_ipc_impl impl, const struct grace_ipc_limits *limits,
			struct grace_ipc_ns **out)
{
	struct grace_ipc_limits lim = { DEF_SEMMSL, DEF_SEMMNS, DEF_SEMOPM, DEF_SEMMNI };
	struct grace_ipc_ns *ns;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (impl != GRACE_IPC_GLOBAL_LOCK && impl != GRACE_IPC_RCU)
		return -EINVAL;
	if (limits) {
		if (limits->semmsl < 0 || limits->semmns < 0 || limits->semopm < 0 ||
		    limits->semmni < 0)
			return -EINVAL;
		if (limits->semmsl)
			lim.semmsl = limits->semmsl;
		if (limits->semmns)
			lim.semmns = limits->semmns;
		if (limits->semopm)
			lim.semopm = limits->semopm;
		if (limits->semmni)
			lim.semmni = limits->semmni;
	}
	if (lim.semmni > GRACE_IPC_IPCMNI || lim.semmsl > MAX_SEMMSL)
		return -EINVAL;
	ns = (struct grace_ipc_ns *)alloc_aligned(sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns->impl = impl;
	ns->lim = lim;
	ns->peak_slot = -1;
	if (impl == GRACE_IPC_RCU) {
		struct grace_idr_params p;
		int err;

		memset(&p, 0, sizeof(p));
		p.max_ids = (uint32_t)lim.semmni;
		p.init_size = (uint32_t)lim.semmni < IPC_IDS_INIT ? (uint32_t)lim.semmni
								  : IPC_IDS_INIT;
		err = grace_idr_init(&ns->idr, &p); /* call_rcu retires replaced arrays */
		if (err) {
			free(ns);
			return err;
		}
	} else if (ipc_ids_init(&ns->gids, (uint32_t)lim.semmni)) {
		free(ns);
		return -ENOMEM;
	}
	pthread_mutex_init(&ns->glock, NULL);
	pthread_mutex_init(&ns->ulock, NULL);
	pthread_mutex_init(&ns->drain_lock, NULL);
	pthread_cond_init(&ns->drain_cv, NULL);
	*out = ns;
	return 0;
}

static void set_free_now(struct ipc_set *s)
{
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void set_free_cb(struct rcu_head *head)
{
	set_free_now(grace_container_of(head, struct ipc_set, rcu));
}

static inline int id_slot(struct grace_ipc_ns *ns, int id)
{
	return is_rcu(ns) ? grace_idr_id_slot(&ns->idr, id)
			  : (int)((uint32_t)id & ns->gids.slot_mask);
}

/* ---------------------------------------------------------------- key table (update lock) */

static inline unsigned keyhash(int key)
{
	return ((uint32_t)key * 0x9e3779b1u) >> (32 - KEYTAB_BITS);
}

static struct ipc_set *key_find(struct grace_ipc_ns *ns, int key)
{
	struct ipc_set *s;

	for (s = ns->keytab[keyhash(key)]; s; s = s->key_next)
		if (s->key == key)
			return s;
	return NULL;
}

static void key_remove(struct grace_ipc_ns *ns, struct ipc_set *s)
{
	struct ipc_set **pp;

	if (s->key == GRACE_IPC_PRIVATE)
		return;
	for (pp = &ns->keytab[keyhash(s->key)]; *pp; pp = &(*pp)->key_next) {
		if (*pp == s) {
			*pp = s->key_next;
			return;
		}
	}
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
 * Apply sops to the set, all or nothing, in array order. Returns 0 (applied), WOULD_BLOCK with
 * *blk set (nothing applied; the caller may sleep), -EAGAIN (the operation that blocks has
 * IPC_NOWAIT) or -ERANGE (a value would pass SEMVMX). Same rules, same order of checks as
 * Linux's perform_atomic_semop(). Lock held.
 */
static int try_apply(struct ipc_set *s, const struct grace_ipc_sembuf *sops, size_t nsops,
		     size_t *blk)
{
	size_t i;
	int err;

	for (i = 0; i < nsops; i++) {
		const struct grace_ipc_sembuf *op = &sops[i];
		int v = s->sem[op->sem_num];

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
		s->sem[op->sem_num] = (unsigned short)v;
	}
	return 0;

would_block:
	*blk = i;
	err = (sops[i].sem_flg & GRACE_IPC_NOWAIT) ? -EAGAIN : WOULD_BLOCK;
undo:
	while (i-- > 0)
		s->sem[sops[i].sem_num] = (unsigned short)(s->sem[sops[i].sem_num] -
							   sops[i].sem_op);
	return err;
}

/* Values changed: complete every sleeper that can now proceed, oldest first. Lock held. */
static void update_queue(struct ipc_set *s)
{
	struct ipc_waiter *q, *next;

again:
	for (q = s->qhead; q; q = next) {
		size_t blk;
		int r;

		next = q->next;
		r = try_apply(s, q->sops, q->nsops, &blk);
		if (r == WOULD_BLOCK) {
			q->blocking = blk;
			continue;
		}
		q_complete(s, q, r);
		/* Its changes may let an earlier sleeper proceed: start over. */
		if (r == 0 && q->alter)
			goto again;
	}
}

/* ---------------------------------------------------------------- lookup (Fig. 11) */

/*
 * Find semid and lock its set. num: a semaphore index the caller will use (-1: none); if it is
 * out of range the call fails with num_err (checked before the lock, as Linux does). On success
 * the set is locked and, in RCU mode, the caller is inside a read-side section: release both
 * with set_unlock().
 */
static inline int set_lock(struct grace_ipc_ns *ns, int semid, int num, int num_err, struct held *h)
{
	struct ipc_set *s;

	if (semid < 0)
		return -EINVAL;
	if (!is_rcu(ns)) {
		/* 2.5.42: one lock over lookup and operation. */
		pthread_mutex_lock(&ns->glock);
		s = (struct ipc_set *)ipc_ids_find(&ns->gids, semid);
		if (!s) {
			pthread_mutex_unlock(&ns->glock);
			return -EINVAL;
		}
		if (num >= s->nsems) {
			pthread_mutex_unlock(&ns->glock);
			return num_err;
		}
		h->s = s;
		h->lk = &ns->glock;
		return 0;
	}
	rcu_read_lock();
	/* The registry checks the ID's sequence: a stale ID never finds the slot's new set. */
	s = (struct ipc_set *)grace_idr_lookup(&ns->idr, semid);
	if (!s) {
		rcu_read_unlock();
		return -EINVAL;
	}
	if (num >= s->nsems) {
		rcu_read_unlock();
		return num_err;
	}
	HOOK_AFTER_LOOKUP(semid);
	pthread_mutex_lock(&s->lock);
	/*
	 * The set may have been removed between the lookup and the lock (Fig. 11 lines 23-28). The
	 * flag is written under this lock by the remover, so the lock orders it; the memory is
	 * still valid because our read-side section began before the removal's call_rcu().
	 */
	if (s->deleted) {
		pthread_mutex_unlock(&s->lock);
		rcu_read_unlock();
		return -EIDRM;
	}
	h->s = s;
	h->lk = &s->lock;
	return 0;
}

static inline void set_unlock(struct grace_ipc_ns *ns, struct held *h)
{
	pthread_mutex_unlock(h->lk);
	if (is_rcu(ns))
		rcu_read_unlock();
}

/* ---------------------------------------------------------------- semget */

int grace_ipc_semget(struct grace_ipc_ns *ns, int key, int nsems, int semflg)
{
	pthread_mutex_t *lk;
	struct ipc_set *s;
	int id, ret;

	if (!ns || (semflg & ~(GRACE_IPC_CREAT | GRACE_IPC_EXCL | GRACE_IPC_MODE_MASK)))
		return -EINVAL;
	if (nsems < 0 || nsems > ns->lim.semmsl)
		return -EINVAL;
	lk = upd_lock(ns);
	pthread_mutex_lock(lk);
	if (key != GRACE_IPC_PRIVATE) {
		s = key_find(ns, key);
		if (s) {
			if ((semflg & GRACE_IPC_CREAT) && (semflg & GRACE_IPC_EXCL))
				ret = -EEXIST;
			else if (nsems > s->nsems)
				ret = -EINVAL;
			else
				ret = s->id;
			goto out;
		}
		if (!(semflg & GRACE_IPC_CREAT)) {
			ret = -ENOENT;
			goto out;
		}
	}
	/* A new set (Linux's newary() order of checks). */
	if (nsems == 0) {
		ret = -EINVAL;
		goto out;
	}
	if (ns->used_sems + nsems > ns->lim.semmns) {
		ret = -ENOSPC;
		goto out;
	}
	s = (struct ipc_set *)alloc_aligned(sizeof(*s) + (size_t)nsems * sizeof(s->sem[0]));
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	/* Reserve an ID (lookups find nothing there yet); may grow the array under readers. */
	id = is_rcu(ns) ? grace_idr_alloc(&ns->idr, NULL) : ipc_ids_alloc(&ns->gids, NULL);
	if (id < 0) {
		free(s);
		ret = id;
		goto out;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->id = id;
	s->key = key;
	s->nsems = nsems;
	if (key != GRACE_IPC_PRIVATE) {
		unsigned h = keyhash(key);

		s->key_next = ns->keytab[h];
		ns->keytab[h] = s;
	}
	ns->used_sems += nsems;
	ns->nsets++;
	if (id_slot(ns, id) > ns->peak_slot)
		ns->peak_slot = id_slot(ns, id);
	/*
	 * Publish the initialised set: grace_idr_replace() stores the pointer with release order,
	 * pairing with the acquire load in grace_idr_lookup(), so a reader that finds the set sees
	 * its lock, id, nsems and zeroed values.
	 */
	if (is_rcu(ns))
		(void)grace_idr_replace(&ns->idr, id, s, NULL);
	else
		ipc_ids_set(&ns->gids, id, s);
	ret = id;
out:
	pthread_mutex_unlock(lk);
	return ret;
}

/* ---------------------------------------------------------------- removal (Fig. 10) */

/* Unpublish s, mark it deleted, wake its sleepers with -EIDRM. Update lock and set lock held.
 * Returns true if the caller must free s (no sleeper holds it). */
static bool set_remove_locked(struct grace_ipc_ns *ns, struct ipc_set *s)
{
	/* Unpublish (Fig. 10 line 10): lookups that start now find nothing. */
	if (is_rcu(ns))
		(void)grace_idr_remove(&ns->idr, s->id);
	else
		ipc_ids_remove(&ns->gids, s->id);
	key_remove(ns, s);
	ns->used_sems -= s->nsems;
	ns->nsets--;
	s->deleted = true; /* readers check it under the set's lock (set_lock) */
	while (s->qhead)
		q_complete(s, s->qhead, -EIDRM);
	return s->refcnt == 0;
}

/* Free a removed set once no reader can reach it: after a grace period in RCU mode (Fig. 12),
 * at once in global mode (every reader holds the global lock, which the caller holds). Called
 * after the set's own lock has been released. */
static void set_retire(struct grace_ipc_ns *ns, struct ipc_set *s)
{
	if (is_rcu(ns))
		call_rcu(&s->rcu, set_free_cb);
	else
		set_free_now(s);
}

int grace_ipc_rmid(struct grace_ipc_ns *ns, int semid)
{
	pthread_mutex_t *lk;
	struct ipc_set *s;
	bool free_it;

	if (!ns || semid < 0)
		return -EINVAL;
	lk = upd_lock(ns);
	pthread_mutex_lock(lk);
	if (!is_rcu(ns)) {
		s = (struct ipc_set *)ipc_ids_find(&ns->gids, semid);
		if (!s) {
			pthread_mutex_unlock(lk);
			return -EINVAL;
		}
		if (set_remove_locked(ns, s))
			set_retire(ns, s); /* at once: every reader holds glock */
		pthread_mutex_unlock(lk);
		return 0;
	}
	/* ulock excludes other removers, so the set found cannot be deleted yet. */
	rcu_read_lock();
	s = (struct ipc_set *)grace_idr_lookup(&ns->idr, semid);
	if (!s) {
		rcu_read_unlock();
		pthread_mutex_unlock(lk);
		return -EINVAL;
	}
	pthread_mutex_lock(&s->lock);
	free_it = set_remove_locked(ns, s);
	pthread_mutex_unlock(&s->lock);
	rcu_read_unlock();
	if (free_it)
		set_retire(ns, s); /* call_rcu after the set's lock is released: see (c) */
	pthread_mutex_unlock(lk);
	return 0;
}

/* ---------------------------------------------------------------- semop */

static void waiters_add(struct grace_ipc_ns *ns, int d)
{
	pthread_mutex_lock(&ns->drain_lock);
	ns->nwaiters += d;
	if (ns->nwaiters == 0)
		pthread_cond_broadcast(&ns->drain_cv);
	pthread_mutex_unlock(&ns->drain_lock);
}

static int timespec_valid(const struct timespec *t)
{
	return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

/* Sleep on the set until a waker or the remover completes q, or the deadline passes. Set lock
 * held (h->lk) on entry and exit; in RCU mode the caller has left its read-side section. */
static void wait_queued(struct held *h, struct ipc_waiter *q, const struct timespec *deadline)
{
	while (q->status == Q_PENDING) {
		int rc;

		if (deadline)
			rc = pthread_cond_timedwait(&q->cv, h->lk, deadline);
		else
			rc = pthread_cond_wait(&q->cv, h->lk);
		if (rc == ETIMEDOUT && q->status == Q_PENDING) {
			q_unlink(h->s, q);
			q->status = -EAGAIN;
		}
	}
}

/*
 * The slow path of semop: queue, take a reference, leave the read-side section (rule (d) above),
 * sleep, then drop the reference (and retire the set if it was removed meanwhile and this was
 * the last reference). Set lock held on entry; released on return. Out of line so that the
 * common path stays small.
 */
static GRACE_NOINLINE int semop_sleep(struct grace_ipc_ns *ns, struct held *h,
				      const struct grace_ipc_sembuf *sops, size_t nsops, size_t blk,
				      bool alter, const struct timespec *deadline)
{
	struct ipc_waiter q;
	pthread_condattr_t ca;
	bool free_it;
	int ret;

	q.sops = sops;
	q.nsops = nsops;
	q.blocking = blk;
	q.status = Q_PENDING;
	q.alter = alter;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q.cv, &ca);
	pthread_condattr_destroy(&ca);
	q_append(h->s, &q);
	h->s->refcnt++;
	waiters_add(ns, 1);
	if (is_rcu(ns))
		rcu_read_unlock(); /* the reference keeps the set; the lock is still held */

	wait_queued(h, &q, deadline);

	ret = q.status;
	free_it = --h->s->refcnt == 0 && h->s->deleted;
	if (is_rcu(ns)) {
		pthread_mutex_unlock(h->lk);
		if (free_it)
			set_retire(ns, h->s); /* after the unlock: see (c) */
	} else {
		if (free_it)
			set_retire(ns, h->s); /* under the global lock */
		pthread_mutex_unlock(h->lk);
	}
	pthread_cond_destroy(&q.cv);
	waiters_add(ns, -1);
	return ret;
}

int grace_ipc_semtimedop(struct grace_ipc_ns *ns, int semid, const struct grace_ipc_sembuf *sops,
			 size_t nsops, const struct timespec *timeout)
{
	struct timespec deadline;
	struct held h;
	size_t i, blk = 0;
	int max = 0, ret;
	bool alter = false;

	/* Checks in the order of Linux's do_semtimedop() and __do_semtimedop() (since 5.x). */
	if (!ns)
		return -EINVAL;
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
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += timeout->tv_sec;
		deadline.tv_nsec += timeout->tv_nsec;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	for (i = 0; i < nsops; i++) {
		if (sops[i].sem_flg & ~GRACE_IPC_NOWAIT)
			return -EINVAL;
		if (sops[i].sem_num > max)
			max = sops[i].sem_num;
		if (sops[i].sem_op != 0)
			alter = true;
	}
	ret = set_lock(ns, semid, max, -EFBIG, &h);
	if (ret)
		return ret;
	ret = try_apply(h.s, sops, nsops, &blk);
	if (GRACE_LIKELY(ret != WOULD_BLOCK)) {
		if (ret == 0 && alter && h.s->qhead)
			update_queue(h.s);
		set_unlock(ns, &h);
		return ret;
	}
	return semop_sleep(ns, &h, sops, nsops, blk, alter, timeout ? &deadline : NULL);
}

int grace_ipc_semop(struct grace_ipc_ns *ns, int semid, const struct grace_ipc_sembuf *sops,
		    size_t nsops)
{
	return grace_ipc_semtimedop(ns, semid, sops, nsops, NULL);
}

/* ---------------------------------------------------------------- semctl */

int grace_ipc_getval(struct grace_ipc_ns *ns, int semid, int semnum)
{
	struct held h;
	int ret;

	if (!ns)
		return -EINVAL;
	if (semnum < 0)
		return -EINVAL;
	ret = set_lock(ns, semid, semnum, -EINVAL, &h);
	if (ret)
		return ret;
	ret = h.s->sem[semnum];
	set_unlock(ns, &h);
	return ret;
}

int grace_ipc_setval(struct grace_ipc_ns *ns, int semid, int semnum, int val)
{
	struct held h;
	int ret;

	if (!ns || semid < 0)
		return -EINVAL; /* ksys_semctl() checks semid first */
	if (val < 0 || val > GRACE_IPC_SEMVMX)
		return -ERANGE; /* before the lookup, as Linux's semctl_setval() */
	if (semnum < 0)
		return -EINVAL;
	ret = set_lock(ns, semid, semnum, -EINVAL, &h);
	if (ret)
		return ret;
	h.s->sem[semnum] = (unsigned short)val;
	if (h.s->qhead)
		update_queue(h.s);
	set_unlock(ns, &h);
	return 0;
}

int grace_ipc_getall(struct grace_ipc_ns *ns, int semid, unsigned short *vals, size_t cap)
{
	struct held h;
	int ret, n;

	if (!ns)
		return -EINVAL;
	ret = set_lock(ns, semid, -1, 0, &h);
	if (ret)
		return ret;
	n = h.s->nsems;
	if (cap < (size_t)n)
		ret = -EINVAL;
	else if (!vals)
		ret = -EFAULT;
	else {
		memcpy(vals, h.s->sem, (size_t)n * sizeof(vals[0]));
		ret = n;
	}
	set_unlock(ns, &h);
	return ret;
}

int grace_ipc_setall(struct grace_ipc_ns *ns, int semid, const unsigned short *vals, size_t n)
{
	struct held h;
	int ret;

	if (!ns)
		return -EINVAL;
	ret = set_lock(ns, semid, -1, 0, &h);
	if (ret)
		return ret;
	if (n != (size_t)h.s->nsems) {
		ret = -EINVAL;
	} else if (!vals) {
		ret = -EFAULT;
	} else {
		for (size_t i = 0; i < n; i++)
			if (vals[i] > GRACE_IPC_SEMVMX)
				ret = -ERANGE;
		if (ret == 0) {
			memcpy(h.s->sem, vals, n * sizeof(vals[0]));
			if (h.s->qhead)
				update_queue(h.s);
		}
	}
	set_unlock(ns, &h);
	return ret;
}

/* Sleepers whose blocking operation is on semnum: decrements (zero == false) or waits for
 * zero (zero == true), as Linux's count_semcnt(). */
static int count_sleepers(struct grace_ipc_ns *ns, int semid, int semnum, bool zero)
{
	struct ipc_waiter *q;
	struct held h;
	int ret, n = 0;

	if (!ns || semnum < 0)
		return -EINVAL;
	ret = set_lock(ns, semid, semnum, -EINVAL, &h);
	if (ret)
		return ret;
	for (q = h.s->qhead; q; q = q->next) {
		const struct grace_ipc_sembuf *op = &q->sops[q->blocking];

		if (op->sem_num == semnum && (zero ? op->sem_op == 0 : op->sem_op < 0))
			n++;
	}
	set_unlock(ns, &h);
	return n;
}

int grace_ipc_getncnt(struct grace_ipc_ns *ns, int semid, int semnum)
{
	return count_sleepers(ns, semid, semnum, false);
}

int grace_ipc_getzcnt(struct grace_ipc_ns *ns, int semid, int semnum)
{
	return count_sleepers(ns, semid, semnum, true);
}

int grace_ipc_stat(struct grace_ipc_ns *ns, int semid, struct grace_ipc_semid_ds *out)
{
	struct held h;
	int ret;

	if (!ns)
		return -EINVAL;
	ret = set_lock(ns, semid, -1, 0, &h);
	if (ret)
		return ret;
	if (!out) {
		ret = -EFAULT;
	} else {
		out->key = h.s->key;
		out->nsems = h.s->nsems;
	}
	set_unlock(ns, &h);
	return ret;
}

void grace_ipc_info(struct grace_ipc_ns *ns, struct grace_ipc_ns_info *out)
{
	pthread_mutex_t *lk = upd_lock(ns);

	pthread_mutex_lock(lk);
	out->impl = ns->impl;
	out->sets = ns->nsets;
	out->sems = ns->used_sems;
	if (is_rcu(ns)) {
		/* The registry starts at IPC_IDS_INIT slots and doubles when full (idr.h). */
		uint32_t size = (uint32_t)ns->lim.semmni < IPC_IDS_INIT ? (uint32_t)ns->lim.semmni
									: IPC_IDS_INIT;
		unsigned long grows = 0;

		while ((int)size <= ns->peak_slot) {
			size = size * 2 < (uint32_t)ns->lim.semmni ? size * 2
								   : (uint32_t)ns->lim.semmni;
			grows++;
		}
		out->ary_size = (int)size;
		out->grows = grows;
	} else {
		out->ary_size = (int)ns->gids.size;
		out->grows = ns->gids.grows;
	}
	pthread_mutex_unlock(lk);
}

/* ---------------------------------------------------------------- destroy */

void grace_ipc_ns_destroy(struct grace_ipc_ns *ns)
{
	pthread_mutex_t *lk;

	if (!ns)
		return;
	lk = upd_lock(ns);
	pthread_mutex_lock(lk);
	if (is_rcu(ns)) {
		struct ipc_set *s;
		uint32_t slot;
		int id;

		rcu_read_lock();
		grace_idr_for_each(&ns->idr, slot, id, s) {
			bool free_it;

			pthread_mutex_lock(&s->lock);
			free_it = set_remove_locked(ns, s);
			pthread_mutex_unlock(&s->lock);
			if (free_it)
				set_retire(ns, s); /* call_rcu: legal inside a read-side section */
		}
		rcu_read_unlock();
	} else {
		for (uint32_t i = 0; i < ns->gids.size; i++) {
			struct ipc_set *s = (struct ipc_set *)ns->gids.slot[i];

			if (s && set_remove_locked(ns, s))
				set_retire(ns, s);
		}
	}
	pthread_mutex_unlock(lk);
	/* Sleepers woken with -EIDRM still touch the namespace (global mode: its lock). */
	pthread_mutex_lock(&ns->drain_lock);
	while (ns->nwaiters > 0)
		pthread_cond_wait(&ns->drain_cv, &ns->drain_lock);
	pthread_mutex_unlock(&ns->drain_lock);
	/* Every set and replaced array queued with call_rcu() is freed before we return. */
	if (is_rcu(ns)) {
		rcu_barrier();
		grace_idr_destroy(&ns->idr);
	} else {
		ipc_ids_fini(&ns->gids);
	}
	pthread_mutex_destroy(&ns->glock);
	pthread_mutex_destroy(&ns->ulock);
	pthread_mutex_destroy(&ns->drain_lock);
	pthread_cond_destroy(&ns->drain_cv);
	free(ns);
}
