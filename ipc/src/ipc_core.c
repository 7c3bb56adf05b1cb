/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc core: namespaces, client handles and their credentials, permission checks, the ID
 * arrays of the three types, the lookup of Fig. 11, creation (ipcget), removal (Fig. 10) and
 * the deferred free (Fig. 12). The types are in ipc_sem.c, ipc_msg.c and ipc_shm.c; locks and
 * objects are listed in ipc_internal.h; API and errors in grace_ipc.h; design and figures in
 * ipc/README.md.
 *
 * Correctness of the RCU mode, for every type (semaphore sets, message queues, segments)
 *  (a) Lookup (grace_ipc__find + grace_ipc__lock, Fig. 11). Inside rcu_read_lock()
 *      grace_idr_lookup() loads the array, the slot and its sequence: a stale ID whose slot
 *      holds a newer object finds nothing (-EINVAL). The reader then takes the object's lock
 *      and checks `deleted`. The object cannot be freed meanwhile: its free is queued with
 *      call_rcu() only after grace_idr_remove() unpublished it, so every reader that could
 *      have loaded the pointer is inside a read-side section that began before that grace
 *      period started.
 *  (b) Removal (grace_ipc__unpublish, Fig. 10). Under the type's update lock and the object's
 *      lock: unpublish, set `deleted`, and (in the type's code) complete every sleeper with
 *      -EIDRM. A reader that found the object through the old pointer takes the lock after
 *      the remover released it, sees `deleted` (the lock orders the flag) and returns -EIDRM:
 *      no operation ever applies to a removed object.
 *  (c) Deferred free (grace_ipc__retire, Fig. 12). A removed object is freed by call_rcu()
 *      once no sleeper holds it (refcnt == 0). The decision is taken under the object's lock;
 *      call_rcu() is called after the lock is released, so the grace period also covers
 *      readers waiting for the lock at that moment.
 *  (d) Sleeping: never inside a read-side section. A call that must block (semop, msgsnd,
 *      msgrcv) takes a reference (refcnt++, under the lock) and leaves its read-side section
 *      before it sleeps (grace_ipc__sleep); the reference, not RCU, keeps the object and the
 *      lock it sleeps on alive until it has woken and released the lock. The last reference
 *      of a removed object queues its free, as in (c) (grace_ipc__unlock_put). A segment's
 *      attachments hold it the same way through shm_nattch: it is only removed (unpublished)
 *      once its last attachment is gone (ipc_shm.c).
 *  (e) Array growth under readers (Fig. 13): grace_idr_alloc() publishes a larger copy with
 *      rcu_assign_pointer() and retires the old array with call_rcu(); a reader still indexing
 *      the old array sees every object that existed when it started, and objects removed
 *      since are caught by (b).
 *  (f) Publication: an object is fully initialised (its type part included) before
 *      grace_idr_replace() stores the pointer with release order, which pairs with the acquire
 *      load in grace_idr_lookup(): a reader that finds it sees its lock, ID and contents.
 *  (g) Credentials are read-mostly data of the same kind: a handle's box is replaced with
 *      rcu_assign_pointer() and freed by call_rcu(); every reader holds a read-side section.
 *  (h) Deadlock freedom: lock order ulock -> object lock -> handle lock -> registry mutex ->
 *      drain lock; no lock is held while waiting for a grace period (rcu_barrier() only in
 *      ns_destroy, with no lock held); sleeping releases the object's lock.
 */
#include "ipc_internal.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#define DEF_SEMMSL 32000
#define DEF_SEMMNS 1024000000
#define DEF_SEMOPM 500
#define DEF_SEMMNI 32000
#define DEF_MSGMAX 8192
#define DEF_MSGMNB 16384
#define DEF_MSGMNI 32000
#define DEF_SHMMNI 4096
#define DEF_SHMMAX ((size_t)-1 - ((size_t)1 << 24))
#define MAX_SEMMSL 65536 /* sem_num is an unsigned short */

#ifdef GRACE_IPC_TEST_HOOKS
void (*grace_ipc__hook_after_lookup)(int type, int id);
#endif

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

void *grace_ipc__alloc(size_t size)
{
	size = (size + GRACE_CACHE_LINE - 1) & ~(size_t)(GRACE_CACHE_LINE - 1);
	void *p = aligned_alloc(GRACE_CACHE_LINE, size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* ---------------------------------------------------------------- credentials */

bool grace_ipc__owner(const struct grace_ipc_cred *c, const struct ipc_obj *o)
{
	return c->uid == o->cuid || c->uid == o->uid;
}

static int cred_valid(const struct grace_ipc_cred *c)
{
	return c->ngroups <= GRACE_IPC_NGROUPS_MAX ? 0 : -EINVAL;
}

int grace_ipc_cred_self(struct grace_ipc_cred *out)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	gid_t *all;
	int n;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->uid = (unsigned int)geteuid();
	out->gid = (unsigned int)getegid();
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	all = (gid_t *)calloc((size_t)n + 1, sizeof(gid_t));
	if (!all)
		return -ENOMEM;
	n = getgroups(n, all);
	if (n < 0) {
		int e = -errno;

		free(all);
		return e;
	}
	for (int i = 0; i < n && out->ngroups < GRACE_IPC_NGROUPS_MAX; i++)
		out->groups[out->ngroups++] = (unsigned int)all[i];
	free(all);
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) != 0)
		return -errno;
	/* Every capability System V IPC checks is below 32: the first word. */
	if (data[0].effective & (1u << CAP_IPC_OWNER))
		out->caps |= GRACE_IPC_CAP_IPC_OWNER;
	if (data[0].effective & (1u << CAP_SYS_ADMIN))
		out->caps |= GRACE_IPC_CAP_SYS_ADMIN;
	if (data[0].effective & (1u << CAP_SYS_RESOURCE))
		out->caps |= GRACE_IPC_CAP_SYS_RESOURCE;
	if (data[0].effective & (1u << CAP_IPC_LOCK))
		out->caps |= GRACE_IPC_CAP_IPC_LOCK;
	return 0;
}

static void cred_box_free(struct rcu_head *head)
{
	free(grace_container_of(head, struct ipc_cred_box, rcu));
}

/* ---------------------------------------------------------------- limits */

static int read_proc_ints(const char *path, long long *v, int n)
{
	FILE *f = fopen(path, "r");
	int got = 0;

	if (!f)
		return -errno;
	while (got < n && fscanf(f, "%lld", &v[got]) == 1)
		got++;
	fclose(f);
	return got == n ? 0 : -EIO;
}

static int clamp_mni(long long v)
{
	return v > GRACE_IPC_IPCMNI ? GRACE_IPC_IPCMNI : v < 0 ? 0 : (int)v;
}

/* One int of /proc/sys/kernel into *dst (mni: capped as clamp_mni() does); a failure leaves *dst
 * and records its error in *ret unless one is there already. */
static void read_kernel_int(const char *path, int *dst, bool mni, int *ret)
{
	long long v = 0;
	int err = read_proc_ints(path, &v, 1);

	if (!err)
		*dst = mni ? clamp_mni(v) : (int)v;
	else if (!*ret)
		*ret = err;
}

/* As read_kernel_int() for an unsigned long (shmmax, shmall): read it as such. */
static void read_kernel_ulong(const char *path, size_t *dst, int *ret)
{
	FILE *f = fopen(path, "r");
	unsigned long long u;

	if (f && fscanf(f, "%llu", &u) == 1)
		*dst = (size_t)u;
	else if (!*ret)
		*ret = f ? -EIO : -errno;
	if (f)
		fclose(f);
}

int grace_ipc_limits_kernel(struct grace_ipc_limits *out)
{
	long long v[4] = { 0, 0, 0, 0 };
	int ret;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	ret = read_proc_ints("/proc/sys/kernel/sem", v, 4);
	if (!ret) {
		out->semmsl = (int)v[0];
		out->semmns = (int)v[1];
		out->semopm = (int)v[2];
		out->semmni = clamp_mni(v[3]);
	}
	read_kernel_int("/proc/sys/kernel/msgmax", &out->msgmax, false, &ret);
	read_kernel_int("/proc/sys/kernel/msgmnb", &out->msgmnb, false, &ret);
	read_kernel_int("/proc/sys/kernel/msgmni", &out->msgmni, true, &ret);
	read_kernel_int("/proc/sys/kernel/shmmni", &out->shmmni, true, &ret);
	read_kernel_ulong("/proc/sys/kernel/shmmax", &out->shmmax, &ret);
	read_kernel_ulong("/proc/sys/kernel/shmall", &out->shmall, &ret);
	return ret;
}

/* ---------------------------------------------------------------- namespace */

static int ids_init(struct grace_ipc_ns *ns, enum ipc_type t, int mni)
{
	struct ipc_ids *ids = &ns->ids[t];

	/*
	 * IDs are seq * IPCMNI + slot whatever the type's limit, as Linux's: the array may hold
	 * IPCMNI slots and the limit is a count (grace_ipc__get(), as ipc_addid()). With the
	 * lowest free slot taken first, slots stay below the limit anyway.
	 */
	ids->mni = mni;
	ids->slot_bits = ipc_slot_bits(GRACE_IPC_IPCMNI);
	ids->peak_slot = -1;
	pthread_mutex_init(&ids->glock, NULL);
	pthread_mutex_init(&ids->ulock, NULL);
	if (ipc_is_rcu(ns)) {
		struct grace_idr_params p;

		memset(&p, 0, sizeof(p));
		p.max_ids = GRACE_IPC_IPCMNI;
		p.init_size = IPC_ARY_INIT;
		return grace_idr_init(&ids->idr, &p); /* call_rcu retires replaced arrays */
	}
	return ipc_ary_init(&ids->ary, GRACE_IPC_IPCMNI);
}

static void ids_fini(struct grace_ipc_ns *ns, enum ipc_type t)
{
	struct ipc_ids *ids = &ns->ids[t];

	if (ipc_is_rcu(ns))
		grace_idr_destroy(&ids->idr);
	else
		ipc_ary_fini(&ids->ary);
	pthread_mutex_destroy(&ids->glock);
	pthread_mutex_destroy(&ids->ulock);
}

static int limits_merge(struct grace_ipc_limits *lim, const struct grace_ipc_limits *in)
{
	lim->semmsl = DEF_SEMMSL;
	lim->semmns = DEF_SEMMNS;
	lim->semopm = DEF_SEMOPM;
	lim->semmni = DEF_SEMMNI;
	lim->msgmax = DEF_MSGMAX;
	lim->msgmnb = DEF_MSGMNB;
	lim->msgmni = DEF_MSGMNI;
	lim->shmmni = DEF_SHMMNI;
	lim->shmmax = DEF_SHMMAX;
	lim->shmall = DEF_SHMMAX;
	if (!in)
		return 0;
	if (in->semmsl < 0 || in->semmns < 0 || in->semopm < 0 || in->semmni < 0 ||
	    in->msgmax < 0 || in->msgmnb < 0 || in->msgmni < 0 || in->shmmni < 0)
		return -EINVAL;
#define TAKE(f)                         \
	do {                            \
		if (in->f)              \
			lim->f = in->f; \
	} while (0)
	TAKE(semmsl);
	TAKE(semmns);
	TAKE(semopm);
	TAKE(semmni);
	TAKE(msgmax);
	TAKE(msgmnb);
	TAKE(msgmni);
	TAKE(shmmni);
	TAKE(shmmax);
	TAKE(shmall);
#undef TAKE
	if (lim->semmni > GRACE_IPC_IPCMNI || lim->msgmni > GRACE_IPC_IPCMNI ||
	    lim->shmmni > GRACE_IPC_IPCMNI || lim->semmsl > MAX_SEMMSL)
		return -EINVAL;
	return 0;
}

int grace_ipc_ns_create(enum grace_ipc_impl impl, const struct grace_ipc_limits *limits,
			struct grace_ipc_ns **out)
{
	struct grace_ipc_limits lim;
	struct grace_ipc_ns *ns;
	int err, t;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (impl != GRACE_IPC_GLOBAL_LOCK && impl != GRACE_IPC_RCU)
		return -EINVAL;
	err = limits_merge(&lim, limits);
	if (err)
		return err;
	ns = (struct grace_ipc_ns *)grace_ipc__alloc(sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns->impl = impl;
	ns->lim = lim;
	ns->page = (size_t)sysconf(_SC_PAGESIZE);
	for (t = 0; t < IPC_NTYPES; t++) {
		int mni = t == IPC_T_SEM ? lim.semmni : t == IPC_T_MSG ? lim.msgmni : lim.shmmni;

		err = ids_init(ns, (enum ipc_type)t, mni);
		if (err) {
			while (t-- > 0)
				ids_fini(ns, (enum ipc_type)t);
			free(ns);
			return err;
		}
	}
	pthread_mutex_init(&ns->drain_lock, NULL);
	pthread_cond_init(&ns->drain_cv, NULL);
	pthread_mutex_init(&ns->proc_lock, NULL);
	*out = ns;
	return 0;
}

void grace_ipc_ns_destroy(struct grace_ipc_ns *ns)
{
	if (!ns)
		return;
	/* Every set and queue goes; their sleepers wake with -EIDRM. */
	grace_ipc__sem_remove_all(ns);
	grace_ipc__msg_remove_all(ns);
	/* The sleepers woken still touch the namespace (their object's lock, the drain count). */
	pthread_mutex_lock(&ns->drain_lock);
	while (ns->nwaiters > 0)
		pthread_cond_wait(&ns->drain_cv, &ns->drain_lock);
	pthread_mutex_unlock(&ns->drain_lock);
	/* Every handle exits: its attachments are detached (segments may be destroyed). */
	for (;;) {
		struct grace_ipc_proc *p;

		pthread_mutex_lock(&ns->proc_lock);
		p = ns->procs;
		pthread_mutex_unlock(&ns->proc_lock);
		if (!p)
			break;
		grace_ipc_proc_close(p);
	}
	/* Segments nobody attached. */
	grace_ipc__shm_remove_all(ns);
	/* Every object, replaced array and credential box queued with call_rcu() is freed
	 * before we return. */
	if (ipc_is_rcu(ns))
		rcu_barrier();
	for (int t = 0; t < IPC_NTYPES; t++)
		ids_fini(ns, (enum ipc_type)t);
	pthread_mutex_destroy(&ns->drain_lock);
	pthread_cond_destroy(&ns->drain_cv);
	pthread_mutex_destroy(&ns->proc_lock);
	free(ns);
}

/* ---------------------------------------------------------------- handles */

int grace_ipc_proc_open(struct grace_ipc_ns *ns, const struct grace_ipc_cred *cred, int pid,
			struct grace_ipc_proc **out)
{
	struct grace_ipc_proc *p;
	struct ipc_cred_box *box;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ns || pid < 0 || (cred && cred_valid(cred)))
		return -EINVAL;
	box = (struct ipc_cred_box *)calloc(1, sizeof(*box));
	p = (struct grace_ipc_proc *)calloc(1, sizeof(*p));
	if (!box || !p) {
		free(box);
		free(p);
		return -ENOMEM;
	}
	if (cred) {
		box->c = *cred;
	} else {
		int err = grace_ipc_cred_self(&box->c);

		if (err) {
			free(box);
			free(p);
			return err;
		}
	}
	p->ns = ns;
	p->cred = box;
	p->pid = pid ? pid : (int)getpid();
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_lock(&ns->proc_lock);
	p->next = ns->procs;
	if (ns->procs)
		ns->procs->prev = p;
	ns->procs = p;
	ns->nprocs++;
	pthread_mutex_unlock(&ns->proc_lock);
	*out = p;
	return 0;
}

int grace_ipc_proc_setcred(struct grace_ipc_proc *p, const struct grace_ipc_cred *cred)
{
	struct grace_ipc_ns *ns;
	struct ipc_cred_box *box, *old;

	if (!p || !cred || cred_valid(cred))
		return -EINVAL;
	ns = p->ns;
	box = (struct ipc_cred_box *)calloc(1, sizeof(*box));
	if (!box)
		return -ENOMEM;
	box->c = *cred;
	if (ipc_is_rcu(ns)) {
		/* Concurrent setcred calls on one handle serialise on its lock. */
		pthread_mutex_lock(&p->lock);
		old = p->cred;
		/* Release: the box's contents before the pointer; pairs with cred_of(). */
		rcu_assign_pointer(p->cred, box);
		pthread_mutex_unlock(&p->lock);
		call_rcu(&old->rcu, cred_box_free);
		return 0;
	}
	/* Global mode: readers hold one glock; hold them all. */
	for (int t = 0; t < IPC_NTYPES; t++)
		pthread_mutex_lock(&ns->ids[t].glock);
	old = p->cred;
	rcu_assign_pointer(p->cred, box);
	for (int t = IPC_NTYPES - 1; t >= 0; t--)
		pthread_mutex_unlock(&ns->ids[t].glock);
	free(old);
	return 0;
}

void grace_ipc_proc_close(struct grace_ipc_proc *p)
{
	struct grace_ipc_ns *ns;

	if (!p)
		return;
	ns = p->ns;
	grace_ipc__sem_exit(p);
	grace_ipc__shm_exit(p);
	pthread_mutex_lock(&ns->proc_lock);
	if (p->prev)
		p->prev->next = p->next;
	else
		ns->procs = p->next;
	if (p->next)
		p->next->prev = p->prev;
	ns->nprocs--;
	pthread_mutex_unlock(&ns->proc_lock);
	pthread_mutex_destroy(&p->lock);
	/* No call on p runs any more (the contract of close), so no reader holds the box. */
	free(p->cred);
	free(p);
}

struct grace_ipc_ns *grace_ipc_proc_ns(const struct grace_ipc_proc *p)
{
	return p ? p->ns : NULL;
}

/* ---------------------------------------------------------------- key table (update path) */

static inline unsigned keyhash(int key)
{
	return ((uint32_t)key * 0x9e3779b1u) >> (32 - KEYTAB_BITS);
}

static struct ipc_obj *key_find(struct ipc_ids *ids, int key)
{
	struct ipc_obj *o;

	for (o = ids->keytab[keyhash(key)]; o; o = o->key_next)
		if (o->key == key)
			return o;
	return NULL;
}

static void key_insert(struct ipc_ids *ids, struct ipc_obj *o)
{
	unsigned h;

	if (o->key == GRACE_IPC_PRIVATE)
		return;
	h = keyhash(o->key);
	o->key_next = ids->keytab[h];
	ids->keytab[h] = o;
}

static void key_remove(struct ipc_ids *ids, struct ipc_obj *o)
{
	struct ipc_obj **pp;

	if (o->key == GRACE_IPC_PRIVATE)
		return;
	for (pp = &ids->keytab[keyhash(o->key)]; *pp; pp = &(*pp)->key_next) {
		if (*pp == o) {
			*pp = o->key_next;
			o->key_next = NULL;
			return;
		}
	}
}

/* ---------------------------------------------------------------- the operation path */

int grace_ipc__find_index(struct grace_ipc_ns *ns, enum ipc_type t, int idx, struct ipc_held *h,
			  int *id)
{
	struct ipc_ids *ids = &ns->ids[t];
	struct ipc_obj *o;

	h->o = NULL;
	h->lk = NULL;
	if (idx < 0)
		return -EINVAL;
	if (!ipc_is_rcu(ns)) {
		pthread_mutex_lock(&ids->glock);
		o = (struct ipc_obj *)ipc_ary_at(&ids->ary,
						 (uint32_t)idx & ((1u << ids->slot_bits) - 1), id);
		if (!o) {
			pthread_mutex_unlock(&ids->glock);
			return -EINVAL;
		}
		h->o = o;
		h->lk = &ids->glock;
		return 0;
	}
	rcu_read_lock();
	{
		/* The index is the ID's slot part, as ipc_obtain_object_idr() takes it. */
		uint32_t want = (uint32_t)idx & ((1u << ids->slot_bits) - 1), slot = want;

		o = (struct ipc_obj *)grace_idr_get_next(&ids->idr, &slot, id);
		if (!o || slot != want) {
			rcu_read_unlock();
			return -EINVAL;
		}
	}
	h->o = o;
	h->lk = &o->lock;
	return 0;
}

int grace_ipc__stat_begin(struct grace_ipc_proc *p, enum ipc_type t, int id, int cmd, int any_cmd,
			  struct ipc_held *h)
{
	struct grace_ipc_ns *ns = p->ns;
	int ret, unused;

	if (cmd == GRACE_IPC_STAT)
		ret = grace_ipc__find(ns, t, id, h);
	else
		ret = grace_ipc__find_index(ns, t, id, h, &unused);
	if (ret)
		return ret;
	return grace_ipc__lock(p, h, cmd == any_cmd ? -1 : S_IRUGO_, 0);
}

int grace_ipc__stat_end(struct grace_ipc_ns *ns, struct ipc_held *h, int cmd, void *out,
			const void *ds, size_t size)
{
	int id = h->o->id;

	grace_ipc__unlock(ns, h);
	if (!out)
		return -EFAULT; /* the kernel copies out last */
	memcpy(out, ds, size);
	return cmd == GRACE_IPC_STAT ? 0 : id;
}

int grace_ipc__sleep(struct grace_ipc_ns *ns, struct ipc_held *h, pthread_cond_t *cv,
		     const struct timespec *deadline)
{
	int rc;

	h->o->refcnt++;
	if (ipc_is_rcu(ns))
		rcu_read_unlock(); /* the reference keeps the object; the lock is still held */
	if (deadline)
		rc = pthread_cond_timedwait(cv, h->lk, deadline);
	else
		rc = pthread_cond_wait(cv, h->lk);
	if (ipc_is_rcu(ns))
		rcu_read_lock(); /* as the caller's grace_ipc__unlock() expects */
	h->o->refcnt--;
	return rc;
}

void grace_ipc__unlock_put(struct grace_ipc_ns *ns, struct ipc_held *h)
{
	/* The remover left the free to the last sleeper: see (c), (d). */
	bool retire = h->o->deleted && h->o->refcnt == 0;
	struct ipc_obj *o = h->o;

	grace_ipc__unlock(ns, h);
	if (retire)
		grace_ipc__retire(ns, o); /* after the unlock: see (c) */
}

void grace_ipc__waiters_add(struct grace_ipc_ns *ns, int d)
{
	pthread_mutex_lock(&ns->drain_lock);
	ns->nwaiters += d;
	if (ns->nwaiters == 0)
		pthread_cond_broadcast(&ns->drain_cv);
	pthread_mutex_unlock(&ns->drain_lock);
}

/* ---------------------------------------------------------------- the update path */

void grace_ipc__upd_begin(struct grace_ipc_ns *ns, enum ipc_type t)
{
	pthread_mutex_lock(ipc_upd_lock(ns, t));
	if (ipc_is_rcu(ns))
		rcu_read_lock(); /* credentials and registry lookups */
}

void grace_ipc__upd_end(struct grace_ipc_ns *ns, enum ipc_type t)
{
	if (ipc_is_rcu(ns))
		rcu_read_unlock();
	pthread_mutex_unlock(ipc_upd_lock(ns, t));
}

struct ipc_obj *grace_ipc__upd_find(struct grace_ipc_ns *ns, enum ipc_type t, int id)
{
	struct ipc_ids *ids = &ns->ids[t];

	if (id < 0)
		return NULL;
	/* Under the update lock nothing found can be unpublished, so nothing found is deleted. */
	if (ipc_is_rcu(ns))
		return (struct ipc_obj *)grace_idr_lookup(&ids->idr, id);
	return (struct ipc_obj *)ipc_ary_find(&ids->ary, id);
}

struct ipc_obj *grace_ipc__upd_at(struct grace_ipc_ns *ns, enum ipc_type t, int idx)
{
	struct ipc_ids *ids = &ns->ids[t];
	int id;

	if (ipc_is_rcu(ns)) {
		uint32_t slot = (uint32_t)idx;
		struct ipc_obj *o = (struct ipc_obj *)grace_idr_get_next(&ids->idr, &slot, &id);

		return o && slot == (uint32_t)idx ? o : NULL;
	}
	return (struct ipc_obj *)ipc_ary_at(&ids->ary, (uint32_t)idx, &id);
}

void grace_ipc__upd_lock(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	if (ipc_is_rcu(ns))
		pthread_mutex_lock(&o->lock);
}

void grace_ipc__upd_unlock(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	if (ipc_is_rcu(ns))
		pthread_mutex_unlock(&o->lock);
}

int grace_ipc__ctl_begin(struct grace_ipc_proc *p, enum ipc_type t, int id, struct ipc_obj **out)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o;
	const struct grace_ipc_cred *c;

	*out = NULL;
	grace_ipc__upd_begin(ns, t);
	o = grace_ipc__upd_find(ns, t, id);
	if (!o) {
		grace_ipc__upd_end(ns, t);
		return -EINVAL;
	}
	/* uid and cuid are read under the update lock, which IPC_SET holds to change them. */
	c = cred_of(p);
	if (!grace_ipc__owner(c, o) && !(c->caps & GRACE_IPC_CAP_SYS_ADMIN)) {
		grace_ipc__upd_end(ns, t);
		return -EPERM;
	}
	*out = o;
	return 0;
}

void grace_ipc__obj_init(struct ipc_obj *o, enum ipc_type t, const struct grace_ipc_cred *c,
			 int key, int flg)
{
	pthread_mutex_init(&o->lock, NULL);
	o->type = t;
	o->key = key;
	o->uid = o->cuid = c->uid;
	o->gid = o->cgid = c->gid;
	o->mode = (unsigned int)flg & GRACE_IPC_MODE_MASK;
	o->ctime = grace_ipc__now();
}

/* Linux's ipcget_public() for the key's existing object o: EEXIST, the type's check, then
 * permission. Returns the ID or -errno. Update path held. */
static int get_existing(struct grace_ipc_proc *p, struct ipc_obj *o, int flg,
			const struct ipc_get_ops *ops, const void *arg)
{
	struct grace_ipc_ns *ns = p->ns;
	int ret;

	grace_ipc__upd_lock(ns, o);
	if ((flg & GRACE_IPC_CREAT) && (flg & GRACE_IPC_EXCL))
		ret = -EEXIST;
	else if (ops->more_checks && (ret = ops->more_checks(o, arg)) != 0)
		;
	else if (grace_ipc__perms(cred_of(p), o, flg))
		ret = -EACCES;
	else
		ret = o->id;
	grace_ipc__upd_unlock(ns, o);
	return ret;
}

/* Number and publish o, created and initialised, with the ID reserved for it. Update path
 * held. */
static void get_publish(struct grace_ipc_ns *ns, struct ipc_ids *ids, struct ipc_obj *o, int id,
			const struct ipc_get_ops *ops)
{
	int slot = (int)((uint32_t)id & ((1u << ids->slot_bits) - 1));

	o->id = id;
	key_insert(ids, o);
	ids->in_use++;
	if (slot > ids->peak_slot)
		ids->peak_slot = slot;
	ops->created(ns, o);
	/*
	 * Publish the initialised object: grace_idr_replace() stores the pointer with release
	 * order, pairing with the acquire load in grace_idr_lookup(), so a reader that finds the
	 * object sees its lock, ID and contents (f).
	 */
	if (ipc_is_rcu(ns))
		(void)grace_idr_replace(&ids->idr, id, o, NULL);
	else
		ipc_ary_set(&ids->ary, id, o);
}

/* A new object of type t for key (Linux's ipcget() for IPC_PRIVATE or a new key, and
 * ipc_addid()). Returns the ID or -errno. Update path held. */
static int get_new(struct grace_ipc_proc *p, enum ipc_type t, int key, int flg,
		   const struct ipc_get_ops *ops, const void *arg)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_ids *ids = &ns->ids[t];
	struct ipc_obj *o = NULL;
	int id, ret;

	ret = ops->create(p, arg, flg, &o);
	if (ret)
		return ret;
	grace_ipc__obj_init(o, t, cred_of(p), key, flg);
	if (ids->in_use >= ids->mni) { /* ipc_addid(): after the type's own checks */
		ops->abandon(ns, o);
		return -ENOSPC;
	}
	/* Reserve an ID (lookups find nothing there yet); may grow the array under readers. */
	id = ipc_is_rcu(ns) ? grace_idr_alloc(&ids->idr, NULL) : ipc_ary_alloc(&ids->ary, NULL);
	if (id < 0) {
		ops->abandon(ns, o);
		return id;
	}
	get_publish(ns, ids, o, id, ops);
	return id;
}

int grace_ipc__get(struct grace_ipc_proc *p, enum ipc_type t, int key, int flg,
		   const struct ipc_get_ops *ops, const void *arg)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o = NULL;
	int ret;

	grace_ipc__upd_begin(ns, t);
	if (key != GRACE_IPC_PRIVATE)
		o = key_find(&ns->ids[t], key);
	if (o)
		ret = get_existing(p, o, flg, ops, arg);
	else if (key != GRACE_IPC_PRIVATE && !(flg & GRACE_IPC_CREAT))
		ret = -ENOENT;
	else
		ret = get_new(p, t, key, flg, ops, arg);
	grace_ipc__upd_end(ns, t);
	return ret;
}

/* ---------------------------------------------------------------- removal (Fig. 10) */

void grace_ipc__unpublish(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	struct ipc_ids *ids = &ns->ids[o->type];

	/* Unpublish (Fig. 10 line 10): lookups that start now find nothing. */
	if (ipc_is_rcu(ns))
		(void)grace_idr_remove(&ids->idr, o->id);
	else
		ipc_ary_remove(&ids->ary, o->id);
	key_remove(ids, o);
	ids->in_use--;
	o->deleted = true; /* readers check it under the object's lock (grace_ipc__lock) */
}

void grace_ipc__key_drop(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	key_remove(&ns->ids[o->type], o);
	o->key = GRACE_IPC_PRIVATE;
}

static void obj_free(struct ipc_obj *o)
{
	switch (o->type) {
	case IPC_T_SEM:
		grace_ipc__sem_free(o);
		break;
	case IPC_T_MSG:
		grace_ipc__msg_free(o);
		break;
	case IPC_T_SHM:
		grace_ipc__shm_free(o);
		break;
	default:
		break;
	}
}

static void obj_free_cb(struct rcu_head *head)
{
	obj_free(grace_container_of(head, struct ipc_obj, rcu));
}

void grace_ipc__retire(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	if (ipc_is_rcu(ns))
		call_rcu(&o->rcu, obj_free_cb);
	else
		obj_free(o); /* every reader holds the glock, and none can find it any more */
}

/* ---------------------------------------------------------------- IDs and ipc_perm */

int grace_ipc__seq_of(struct grace_ipc_ns *ns, enum ipc_type t, int id)
{
	return (int)((uint32_t)id >> ns->ids[t].slot_bits);
}

int grace_ipc__max_index(struct grace_ipc_ns *ns, enum ipc_type t)
{
	struct ipc_ids *ids = &ns->ids[t];

	if (ipc_is_rcu(ns))
		return grace_idr_max_index(&ids->idr);
	return ipc_ary_max_index(&ids->ary);
}

void grace_ipc__perm_out(struct grace_ipc_ns *ns, const struct ipc_obj *o,
			 struct grace_ipc_perm *out)
{
	out->key = o->key;
	out->uid = o->uid;
	out->gid = o->gid;
	out->cuid = o->cuid;
	out->cgid = o->cgid;
	out->mode = o->mode;
	out->seq = (unsigned int)grace_ipc__seq_of(ns, o->type, o->id);
}

int grace_ipc__perm_set(struct ipc_obj *o, const struct grace_ipc_perm *in)
{
	/* make_kuid()/make_kgid(): (uid_t)-1 is the one invalid value in the initial namespace. */
	if (in->uid == (unsigned int)-1 || in->gid == (unsigned int)-1)
		return -EINVAL;
	o->uid = in->uid;
	o->gid = in->gid;
	o->mode = (o->mode & ~(unsigned int)GRACE_IPC_MODE_MASK) |
		  (in->mode & (unsigned int)GRACE_IPC_MODE_MASK);
	return 0;
}

/* ---------------------------------------------------------------- info */

static void ids_info(struct grace_ipc_ns *ns, enum ipc_type t, struct grace_ipc_ids_info *out)
{
	struct ipc_ids *ids = &ns->ids[t];

	out->objects = ids->in_use;
	if (ipc_is_rcu(ns)) {
		/* The registry starts at IPC_ARY_INIT slots and doubles when full (idr.h). */
		uint32_t mni = GRACE_IPC_IPCMNI;
		uint32_t size = IPC_ARY_INIT;
		unsigned long grows = 0;

		while ((int)size <= ids->peak_slot) {
			size = size * 2 < mni ? size * 2 : mni;
			grows++;
		}
		out->ary_size = (int)size;
		out->grows = grows;
	} else {
		out->ary_size = (int)ids->ary.size;
		out->grows = ids->ary.grows;
	}
}

void grace_ipc_info(struct grace_ipc_ns *ns, struct grace_ipc_ns_info *out)
{
	memset(out, 0, sizeof(*out));
	out->impl = ns->impl;
	pthread_mutex_lock(ipc_upd_lock(ns, IPC_T_SEM));
	ids_info(ns, IPC_T_SEM, &out->sem);
	out->sems = ns->used_sems;
	pthread_mutex_unlock(ipc_upd_lock(ns, IPC_T_SEM));
	pthread_mutex_lock(ipc_upd_lock(ns, IPC_T_MSG));
	ids_info(ns, IPC_T_MSG, &out->msg);
	pthread_mutex_unlock(ipc_upd_lock(ns, IPC_T_MSG));
	out->msgs = grace_load_relaxed(&ns->msg_hdrs);
	out->msg_bytes = grace_load_relaxed(&ns->msg_bytes);
	pthread_mutex_lock(ipc_upd_lock(ns, IPC_T_SHM));
	ids_info(ns, IPC_T_SHM, &out->shm);
	out->shm_pages = ns->shm_tot;
	pthread_mutex_unlock(ipc_upd_lock(ns, IPC_T_SHM));
	pthread_mutex_lock(&ns->proc_lock);
	out->procs = ns->nprocs;
	pthread_mutex_unlock(&ns->proc_lock);
	pthread_mutex_lock(&ns->drain_lock);
	out->sleepers = ns->nwaiters;
	pthread_mutex_unlock(&ns->drain_lock);
}
