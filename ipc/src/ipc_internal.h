/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc internals shared by ipc_core.c (namespace, handles, credentials, IDs, the lookup of
 * Fig. 11, removal and deferred free), ipc_sem.c, ipc_msg.c and ipc_shm.c. Not installed.
 *
 * Objects and locks, per type t (semaphore sets, message queues, shared-memory segments):
 *   ids[t].idr    RCU mode: grace's ID registry, ID -> struct ipc_obj, read with
 *                 grace_idr_lookup() under rcu_read_lock(), updated under ids[t].ulock (and
 *                 the registry's own mutex); it grows its array while readers run (Fig. 13).
 *   ids[t].ary    global mode: the 2.5.42 array (ipc_ary.c), everything under ids[t].glock.
 *   o->lock       RCU mode only: the per-object lock (Fig. 9), guarding the object's state
 *                 and its `deleted` flag. In global mode ids[t].glock plays its part.
 *   ids[t].ulock  RCU mode: creation, removal, the key table, the type's counters.
 *   p->lock       a handle's SEM_UNDO records and attachment list.
 *   Lock order: ids[t].ulock -> o->lock -> p->lock -> (registry mutex) -> ns->drain_lock.
 *   Global mode: ids[t].glock -> p->lock -> ns->drain_lock.
 *   The correctness argument of the RCU mode is at the top of ipc_core.c.
 */
#ifndef GRACE_IPC_INTERNAL_H
#define GRACE_IPC_INTERNAL_H

#include "grace_ipc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/arch/atomic.h>
#include <grace/idr.h>
#include <grace/rcu.h>

#include "ipc_ary.h"

enum ipc_type { IPC_T_SEM = 0, IPC_T_MSG = 1, IPC_T_SHM = 2, IPC_NTYPES = 3 };

#define KEYTAB_BITS 8
#define KEYTAB_SIZE (1u << KEYTAB_BITS)

#define S_IRUGO_ 0444 /* the kernel's S_IRUGO: read permission asked of ipcperms */
#define S_IWUGO_ 0222
#define S_IXUGO_ 0111

/* The head of every object: Linux's kern_ipc_perm. Allocated cache-line aligned. */
struct ipc_obj {
	/* Guarded by lock (RCU mode) or ids[type].glock (global mode). */
	pthread_mutex_t lock;
	bool deleted; /* unpublished: operations that find it return -EIDRM */
	int refcnt;   /* holders across an unlock (sleepers): they keep the memory, see (d) */
	int key;      /* changed (shm IPC_RMID) under the update lock and the object lock */
	unsigned int uid, gid, mode;
	long long ctime;
	/* Immutable once published. */
	int id;
	unsigned int cuid, cgid;
	enum ipc_type type;
	struct ipc_obj *key_next; /* key table chain, under the update lock */
	struct rcu_head rcu;
};

/* One type's IDs. The registry's read-mostly part, glock and ulock sit on separate lines. */
struct ipc_ids {
	struct grace_idr idr GRACE_ALIGNED_CACHE; /* RCU mode */
	struct ipc_ary ary;                       /* global mode */
	pthread_mutex_t glock GRACE_ALIGNED_CACHE;
	pthread_mutex_t ulock GRACE_ALIGNED_CACHE;
	int mni;            /* read-only after creation */
	uint32_t slot_bits; /* read-only: IDs are seq << slot_bits | slot (ipc_slot_bits(mni)) */
	int in_use;         /* update lock */
	int peak_slot;      /* update lock: highest slot ever used (ns_info in RCU mode) */
	struct ipc_obj *keytab[KEYTAB_SIZE]; /* update lock */
};

struct grace_ipc_ns {
	/* Read-only after creation. */
	enum grace_ipc_impl impl;
	struct grace_ipc_limits lim;
	size_t page;
	struct ipc_ids ids[IPC_NTYPES];
	/* Type counters, under that type's update lock. */
	int used_sems;
	unsigned long shm_tot; /* pages */
	/* Changed by msgsnd/msgrcv under queue locks: atomics (relaxed: statistics only). */
	long msg_hdrs GRACE_ALIGNED_CACHE;
	long msg_bytes;
	/* Sleepers in the namespace, so that destroy can wait for them to leave. */
	pthread_mutex_t drain_lock GRACE_ALIGNED_CACHE;
	pthread_cond_t drain_cv;
	int nwaiters;
	/* Open handles. */
	pthread_mutex_t proc_lock;
	struct grace_ipc_proc *procs;
	int nprocs;
};

/* Credentials are replaced as a whole (grace_ipc_proc_setcred) and read without a lock. */
struct ipc_cred_box {
	struct grace_ipc_cred c;
	struct rcu_head rcu;
};

struct sem_undo;
struct shm_attach;

struct grace_ipc_proc {
	struct grace_ipc_ns *ns;
	/*
	 * RCU mode: RCU-protected (read with cred_of() inside a read-side section, replaced with
	 * rcu_assign_pointer(), the old box freed by call_rcu()). Global mode: replaced while
	 * holding every type's glock, read while holding one.
	 */
	struct ipc_cred_box *cred;
	int pid;
	pthread_mutex_t lock;
	struct sem_undo *undo;              /* SEM_UNDO records (ipc_sem.c), under lock */
	struct shm_attach *attach;          /* attachments (ipc_shm.c), under lock */
	struct grace_ipc_proc *next, *prev; /* ns->procs, under ns->proc_lock */
};

/* An object found, and the locks held on it: see grace_ipc__find() and friends. */
struct ipc_held {
	struct ipc_obj *o;
	pthread_mutex_t *lk; /* the lock that guards o: o->lock (RCU) or the type's glock */
};

static inline bool ipc_is_rcu(const struct grace_ipc_ns *ns)
{
	return ns->impl == GRACE_IPC_RCU;
}

/* The lock that serialises creation and removal of type t. */
static inline pthread_mutex_t *ipc_upd_lock(struct grace_ipc_ns *ns, enum ipc_type t)
{
	return ipc_is_rcu(ns) ? &ns->ids[t].ulock : &ns->ids[t].glock;
}

/*
 * The caller's credentials. RCU mode: inside a read-side section (the box is freed by
 * call_rcu() after a replacement); the load pairs with rcu_assign_pointer() in setcred.
 * Global mode: holding one of the namespace's glocks (a replacement holds all of them, so the
 * lock orders the box's contents and a relaxed load suffices).
 */
static inline const struct grace_ipc_cred *cred_of(struct grace_ipc_proc *p)
{
	if (ipc_is_rcu(p->ns))
		return &rcu_dereference(p->cred)->c;
	return &rcu_dereference_protected(p->cred, 1)->c;
}

/* Seconds since the Epoch for the *time fields (time(2) is a vDSO load, no system call). */
static inline long long grace_ipc__now(void)
{
	return (long long)time(NULL);
}

static inline bool ipc_in_group(const struct grace_ipc_cred *c, unsigned int g)
{
	if (c->gid == g)
		return true;
	for (unsigned int i = 0; i < c->ngroups; i++)
		if (c->groups[i] == g)
			return true;
	return false;
}

/* ipcperms(): 0 if cred may access o as flag asks, -EACCES otherwise. Only the low nine bits
 * of flag ask for anything (the kernel's shifts and its `& 0007` see no other bit). */
static inline int grace_ipc__perms(const struct grace_ipc_cred *c, const struct ipc_obj *o,
				   int flag)
{
	unsigned int f = (unsigned int)flag & 0777;
	unsigned int requested = (f >> 6) | (f >> 3) | f;
	unsigned int granted = o->mode;

	if (c->uid == o->cuid || c->uid == o->uid)
		granted >>= 6;
	else if (ipc_in_group(c, o->cgid) || ipc_in_group(c, o->gid))
		granted >>= 3;
	if (GRACE_UNLIKELY((requested & ~granted & 07) && !(c->caps & GRACE_IPC_CAP_IPC_OWNER)))
		return -EACCES;
	return 0;
}

/* The owner test of IPC_SET, IPC_RMID (with cap) and SHM_LOCK: euid is the owner or creator. */
bool grace_ipc__owner(const struct grace_ipc_cred *c, const struct ipc_obj *o);

/* ---- the operation path (Fig. 11): inline, it is every call's fast path ---- */

/* Test hook (grace_ipc_hooked build only): after the lookup, before the object's lock. */
#ifdef GRACE_IPC_TEST_HOOKS
extern void (*grace_ipc__hook_after_lookup)(int type, int id);
#define IPC_HOOK_AFTER_LOOKUP(t, id)                             \
	do {                                                     \
		if (grace_ipc__hook_after_lookup)                \
			grace_ipc__hook_after_lookup((t), (id)); \
	} while (0)
#else
#define IPC_HOOK_AFTER_LOOKUP(t, id) \
	do {                         \
	} while (0)
#endif

/* Find id: RCU mode enters a read-side section, global mode takes the glock. 0 with h filled
 * (o found, not locked yet), or -EINVAL with nothing held. */
static inline int grace_ipc__find(struct grace_ipc_ns *ns, enum ipc_type t, int id,
				  struct ipc_held *h)
{
	struct ipc_ids *ids = &ns->ids[t];
	struct ipc_obj *o;

	h->o = NULL;
	h->lk = NULL;
	if (GRACE_UNLIKELY(id < 0))
		return -EINVAL;
	if (!ipc_is_rcu(ns)) {
		/* 2.5.42: one lock over lookup and operation. */
		pthread_mutex_lock(&ids->glock);
		o = (struct ipc_obj *)ipc_ary_find(&ids->ary, id);
		if (!o) {
			pthread_mutex_unlock(&ids->glock);
			return -EINVAL;
		}
		h->o = o;
		h->lk = &ids->glock;
		return 0;
	}
	rcu_read_lock();
	/* The registry checks the ID's sequence: a stale ID never finds the slot's new object. */
	o = (struct ipc_obj *)grace_idr_lookup(&ids->idr, id);
	if (!o) {
		rcu_read_unlock();
		return -EINVAL;
	}
	h->o = o;
	h->lk = &o->lock;
	return 0;
}

/* As grace_ipc__find() for the object in slot idx, whatever its sequence (*_STAT commands);
 * *id receives its ID. */
int grace_ipc__find_index(struct grace_ipc_ns *ns, enum ipc_type t, int idx, struct ipc_held *h,
			  int *id);

/*
 * The prologue of the *_STAT commands of every type: IPC_STAT finds id as an ID, the others
 * (SEM_STAT, MSG_STAT, SHM_STAT and any_cmd, their _ANY form) as an index; then the object is
 * locked as grace_ipc__lock() does, asking read permission unless cmd is any_cmd. 0 with the
 * object locked, or -errno with nothing held.
 */
int grace_ipc__stat_begin(struct grace_ipc_proc *p, enum ipc_type t, int id, int cmd, int any_cmd,
			  struct ipc_held *h);
/* Their epilogue: unlock, then copy the size bytes of ds out (the kernel copies out last).
 * Returns -EFAULT (out NULL), 0 (IPC_STAT) or the object's ID. */
int grace_ipc__stat_end(struct grace_ipc_ns *ns, struct ipc_held *h, int cmd, void *out,
			const void *ds, size_t size);

/* Leave without having locked the object found. */
static inline void grace_ipc__drop(struct grace_ipc_ns *ns, struct ipc_held *h)
{
	if (ipc_is_rcu(ns))
		rcu_read_unlock();
	else
		pthread_mutex_unlock(h->lk);
}

/* Release the object's lock and the read-side section (or the glock). */
static inline void grace_ipc__unlock(struct grace_ipc_ns *ns, struct ipc_held *h)
{
	pthread_mutex_unlock(h->lk);
	if (ipc_is_rcu(ns))
		rcu_read_unlock();
}

/*
 * Lock the object found, then check permission (acc: mode bits; -1 none), then report pre
 * (an error the caller found in immutable fields that the kernel reports after the
 * permission check; 0 none), then check `deleted`: 0 (locked), or -EACCES, pre, -EIDRM with
 * nothing held.
 */
static inline int grace_ipc__lock(struct grace_ipc_proc *p, struct ipc_held *h, int acc, int pre)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o = h->o;

	if (ipc_is_rcu(ns)) {
		IPC_HOOK_AFTER_LOOKUP(o->type, o->id);
		pthread_mutex_lock(&o->lock);
	}
	/* Permission before `deleted`, as the kernel checks it before taking the lock. */
	if (acc >= 0 && grace_ipc__perms(cred_of(p), o, acc)) {
		grace_ipc__unlock(ns, h);
		return -EACCES;
	}
	if (GRACE_UNLIKELY(pre)) {
		grace_ipc__unlock(ns, h);
		return pre;
	}
	/*
	 * The object may have been removed between the lookup and the lock (Fig. 11 lines
	 * 23-28). The flag is written under this lock by the remover, so the lock orders it; the
	 * memory is still valid because our read-side section began before the removal's
	 * call_rcu().
	 */
	if (GRACE_UNLIKELY(o->deleted)) {
		grace_ipc__unlock(ns, h);
		return -EIDRM;
	}
	return 0;
}

/*
 * Sleep on cv, the object locked, until woken (or the deadline: returns ETIMEDOUT). RCU mode:
 * takes a reference and leaves the read-side section first, enters it again after (rule (d));
 * the reference keeps the object while the call sleeps. On return the object is locked and
 * held as before. Returns the pthread result.
 */
int grace_ipc__sleep(struct grace_ipc_ns *ns, struct ipc_held *h, pthread_cond_t *cv,
		     const struct timespec *deadline);
/* After the last grace_ipc__sleep(): unlock, and retire the object if it was removed while
 * the caller held the last reference. */
void grace_ipc__unlock_put(struct grace_ipc_ns *ns, struct ipc_held *h);

/* ---- the update path ---- */

/* Enter: the type's update lock (and, RCU mode, a read-side section for the credentials). */
void grace_ipc__upd_begin(struct grace_ipc_ns *ns, enum ipc_type t);
void grace_ipc__upd_end(struct grace_ipc_ns *ns, enum ipc_type t);
/* Inside the update path: the object of id, or NULL. */
struct ipc_obj *grace_ipc__upd_find(struct grace_ipc_ns *ns, enum ipc_type t, int id);
/* Inside the update path: the object in slot idx, or NULL (teardown loops). */
struct ipc_obj *grace_ipc__upd_at(struct grace_ipc_ns *ns, enum ipc_type t, int idx);
/* Inside the update path: lock / unlock an object (RCU mode: its lock; global: nothing). */
void grace_ipc__upd_lock(struct grace_ipc_ns *ns, struct ipc_obj *o);
void grace_ipc__upd_unlock(struct grace_ipc_ns *ns, struct ipc_obj *o);
/* IPC_SET and IPC_RMID: enter the update path, find id (-EINVAL), check owner or creator or
 * GRACE_IPC_CAP_SYS_ADMIN (-EPERM). On success the update path is held and *o found. */
int grace_ipc__ctl_begin(struct grace_ipc_proc *p, enum ipc_type t, int id, struct ipc_obj **o);

/* Creation (ipcget): what the type adds. */
struct ipc_get_ops {
	/* An existing object of the key: the type's check (-EINVAL), object locked. */
	int (*more_checks)(struct ipc_obj *o, const void *arg);
	/* Allocate and initialise a new object (type part), or -errno. Update path held. */
	int (*create)(struct grace_ipc_proc *p, const void *arg, int flg, struct ipc_obj **out);
	/* The ID allocation failed: free what create made. */
	void (*abandon)(struct grace_ipc_ns *ns, struct ipc_obj *o);
	/* Published: account for it (type counters). Update path held. */
	void (*created)(struct grace_ipc_ns *ns, struct ipc_obj *o);
};
/* ipcget(): the key's object (checks: EEXIST, more_checks, EACCES) or a new one (ENOENT
 * without CREAT). Returns the ID or -errno. */
int grace_ipc__get(struct grace_ipc_proc *p, enum ipc_type t, int key, int flg,
		   const struct ipc_get_ops *ops, const void *arg);
/* Initialise the head of a new object (lock, owner from cred, mode, ctime). */
void grace_ipc__obj_init(struct ipc_obj *o, enum ipc_type t, const struct grace_ipc_cred *c,
			 int key, int flg);
/* Allocate zeroed, cache-line aligned memory for an object. */
void *grace_ipc__alloc(size_t size);

/* Removal (Fig. 10), update path and object lock held: unpublish the ID, drop the key,
 * in_use--, deleted = true. The type wakes its sleepers and frees what it must. */
void grace_ipc__unpublish(struct grace_ipc_ns *ns, struct ipc_obj *o);
/* Drop the key of an object that stays published (a removed, attached segment). */
void grace_ipc__key_drop(struct grace_ipc_ns *ns, struct ipc_obj *o);
/* Free a removed object once no reader can reach it: call_rcu() in RCU mode (Fig. 12), at
 * once in global mode. Called after the object's lock is released (RCU mode). */
void grace_ipc__retire(struct grace_ipc_ns *ns, struct ipc_obj *o);

/* ID helpers. */
int grace_ipc__seq_of(struct grace_ipc_ns *ns, enum ipc_type t, int id);
int grace_ipc__max_index(struct grace_ipc_ns *ns, enum ipc_type t); /* update path held */
void grace_ipc__perm_out(struct grace_ipc_ns *ns, const struct ipc_obj *o,
			 struct grace_ipc_perm *out);
/* IPC_SET's ipc_update_perm(): -EINVAL for uid or gid (unsigned) -1. Object locked. */
int grace_ipc__perm_set(struct ipc_obj *o, const struct grace_ipc_perm *in);

/* Sleepers, for destroy's drain. */
void grace_ipc__waiters_add(struct grace_ipc_ns *ns, int d);

/* ---- per type: frees, exits and teardown (ipc_sem.c, ipc_msg.c, ipc_shm.c) ---- */
void grace_ipc__sem_free(struct ipc_obj *o);
void grace_ipc__msg_free(struct ipc_obj *o);
void grace_ipc__shm_free(struct ipc_obj *o);
/* Remove every object of the type (destroy; takes the update path itself). */
void grace_ipc__sem_remove_all(struct grace_ipc_ns *ns);
void grace_ipc__msg_remove_all(struct grace_ipc_ns *ns);
void grace_ipc__shm_remove_all(struct grace_ipc_ns *ns);
/* Process exit: SEM_UNDO adjustments; detach everything. */
void grace_ipc__sem_exit(struct grace_ipc_proc *p);
void grace_ipc__shm_exit(struct grace_ipc_proc *p);

#endif /* GRACE_IPC_INTERNAL_H */
