/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc shared-memory segments: shmget, shmat, shmdt, shmctl, after Linux's ipc/shm.c
 * (6.x). The lookup, removal and free are the core's (ipc_core.c, correctness argument
 * (a)-(h)); this file adds what is particular to segments.
 *
 * Memory. A segment's pages belong to one shared anonymous mapping made at shmget (the
 * "master", MAP_SHARED | MAP_ANONYMOUS, never handed out). Each shmat maps the same pages
 * again with mremap(master, 0, len, MREMAP_MAYMOVE), which for a shared mapping creates a new
 * mapping of the same pages (mremap(2)); it needs no file descriptor, so shmmni segments do
 * not run into RLIMIT_NOFILE. An attachment's memory therefore stays valid until it is
 * unmapped (shmdt, or the handle's close), whatever happens to the segment: the pages live as
 * long as one mapping of them does. A huge-page segment (SHM_HUGETLB) is a memfd_create()
 * file instead (mremap() cannot duplicate a hugetlb mapping), mapped once as the master (which
 * makes the reservation shmget makes) and again by each shmat; it holds a descriptor. Where
 * mremap() cannot duplicate a shared mapping at all (qemu-user's emulation of it fails with
 * ENOMEM; probed once, dup_by_mremap()), every segment is a memfd file in the same way.
 *
 * Lifetime, as Linux: shm_nattch counts attachments. IPC_RMID of an attached segment only
 * marks it GRACE_IPC_SHM_DEST and drops its key (it cannot be found by key any more, but its
 * ID keeps working, shmat included, as on Linux); the segment is destroyed (unpublished,
 * master unmapped, freed after a grace period) when shm_nattch drops to 0 with SHM_DEST set,
 * or at IPC_RMID if it has no attachment.
 *
 * RCU-specific points beyond the core's argument:
 *  - shmat finds the segment under RCU, locks it, checks `deleted`, and takes an attachment
 *    (shm_nattch++) before it unlocks and leaves the read-side section; from then on the
 *    attachment, not RCU, keeps the segment published (destroy needs shm_nattch == 0), so the
 *    mapping calls (which may block) run outside any lock or read-side section;
 *  - destroy is always done under the update lock and the segment's lock (like every
 *    removal). A detach that drops the last attachment of a SHM_DEST segment releases the
 *    segment's lock, takes the update lock, and looks the ID up again before it destroys:
 *    meanwhile a shmat may have attached again (the ID still works), or another detach or an
 *    IPC_RMID may have destroyed it (then the ID finds nothing, and the pointer is not
 *    dereferenced);
 *  - `deleted` is set only by destroy, so a lookup that races with it returns -EIDRM.
 */
#include "ipc_internal.h"

#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 4u
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define SHM_HUGE_SHIFT_ 26
#define SHM_HUGE_MASK_ 0x3f

struct shm_attach {
	struct shm_attach *next, *prev; /* p->attach, under p->lock */
	void *addr;
	size_t len;
	struct ipc_seg *seg; /* kept alive by the attachment (shm_nattch) */
};

struct ipc_seg {
	struct ipc_obj obj; /* first: the core's head */
	/* Guarded like obj.deleted. */
	unsigned long nattch;
	int lpid;
	long long atime, dtime;
	void *master; /* NULL once destroyed */
	int fd;       /* huge pages: the memfd (-1 otherwise); closed once destroyed */
	/* Immutable once published. */
	size_t segsz;
	size_t maplen;
	int cpid;
	bool hugetlb;
	bool noreserve; /* huge pages without a reservation: the attachments make none either */
};

static inline struct ipc_seg *to_seg(struct ipc_obj *o)
{
	return (struct ipc_seg *)o;
}

size_t grace_ipc_shmlba(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static unsigned long seg_pages(struct grace_ipc_ns *ns, size_t size)
{
	return (unsigned long)((size + ns->page - 1) / ns->page);
}

/* The lock that guards a segment reached through an attachment (no lookup, no read-side
 * section: the attachment keeps it published). */
static pthread_mutex_t *seg_lock(struct grace_ipc_ns *ns, struct ipc_seg *s)
{
	return ipc_is_rcu(ns) ? &s->obj.lock : &ns->ids[IPC_T_SHM].glock;
}

void grace_ipc__shm_free(struct ipc_obj *o)
{
	struct ipc_seg *s = to_seg(o);

	if (s->master)
		munmap(s->master, s->maplen);
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* Destroy: unpublish and give up the pages. Update path and segment lock held. Returns the
 * master mapping, to unmap once the locks are released. */
static void *seg_destroy_locked(struct grace_ipc_ns *ns, struct ipc_seg *s)
{
	void *mem = s->master;

	grace_ipc__unpublish(ns, &s->obj);
	ns->shm_tot -= seg_pages(ns, s->segsz);
	s->master = NULL;
	return mem;
}

/* After destroy, no lock held: give the pages up (the attachments keep theirs), then free the
 * segment after a grace period. The descriptor of a huge-page segment goes with it (in
 * grace_ipc__shm_free()): a shmat that found the segment before destroy holds an
 * attachment, so none can be mapping it now. */
static void seg_destroyed(struct grace_ipc_ns *ns, struct ipc_seg *s, void *mem)
{
	if (mem)
		munmap(mem, s->maplen);
	grace_ipc__retire(ns, &s->obj); /* RCU: call_rcu after the segment's lock (c) */
}

/*
 * An attachment is gone (detach, or a failed attach): shm_nattch--, and destroy the segment
 * if that was the last attachment of a removed one. update: record pid and dtime (a detach).
 * No lock held on entry.
 */
static void seg_put(struct grace_ipc_ns *ns, struct ipc_seg *s, int pid, bool update)
{
	pthread_mutex_t *lk = seg_lock(ns, s);
	bool last;
	int id;

	pthread_mutex_lock(lk);
	if (update) {
		s->lpid = pid;
		s->dtime = grace_ipc__now();
	}
	s->nattch--;
	last = s->nattch == 0 && (s->obj.mode & GRACE_IPC_SHM_DEST);
	id = s->obj.id;
	pthread_mutex_unlock(lk);
	if (!last)
		return;
	/* Destroy under the update path: find the ID again (see the header comment). */
	grace_ipc__upd_begin(ns, IPC_T_SHM);
	{
		struct ipc_obj *o = grace_ipc__upd_find(ns, IPC_T_SHM, id);
		void *mem = NULL;
		bool destroy = false;

		if (o == &s->obj) {
			grace_ipc__upd_lock(ns, o);
			if (s->nattch == 0 && (o->mode & GRACE_IPC_SHM_DEST)) {
				mem = seg_destroy_locked(ns, s);
				destroy = true;
			}
			grace_ipc__upd_unlock(ns, o);
		}
		grace_ipc__upd_end(ns, IPC_T_SHM);
		if (destroy)
			seg_destroyed(ns, s, mem);
	}
}

/* ---------------------------------------------------------------- shmget */

struct shmget_arg {
	size_t size;
};

static int shm_more_checks(struct ipc_obj *o, const void *arg)
{
	return to_seg(o)->segsz < ((const struct shmget_arg *)arg)->size ? -EINVAL : 0;
}

/* The huge page size selected by shmflg (0: the default one), or 0 if the system has none. */
static size_t huge_size(int shmflg)
{
	int log = (shmflg >> SHM_HUGE_SHIFT_) & SHM_HUGE_MASK_;
	FILE *f;

	if (log) {
		char path[96];

		if (log < 12 || log > 40)
			return 0;
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB",
			 (1ull << log) >> 10);
		return access(path, F_OK) == 0 ? (size_t)1 << log : 0;
	}
	f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[128];
		unsigned long kb = 0;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
				break;
		fclose(f);
		return (size_t)kb << 10;
	}
	return 0;
}

/* hugetlb_file_setup()'s can_do_hugetlb_shm(): CAP_IPC_LOCK, or the group of the
 * vm.hugetlb_shm_group sysctl (0 if it cannot be read). */
static bool can_do_hugetlb_shm(const struct grace_ipc_cred *c)
{
	FILE *f = fopen("/proc/sys/vm/hugetlb_shm_group", "r");
	unsigned int g = 0;

	if (f) {
		if (fscanf(f, "%u", &g) != 1)
			g = 0;
		fclose(f);
	}
	return (c->caps & GRACE_IPC_CAP_IPC_LOCK) || ipc_in_group(c, g);
}

/* Can mremap(old, 0, len, MREMAP_MAYMOVE) duplicate a shared anonymous mapping here? Linux
 * can; qemu-user cannot. Probed once with one page; the answer never changes. */
static pthread_once_t dup_once = PTHREAD_ONCE_INIT;
static bool dup_ok;

static void dup_probe(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *a = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	void *b;

	if (a == MAP_FAILED)
		return;
	b = mremap(a, 0, pg, MREMAP_MAYMOVE);
	if (b != MAP_FAILED) {
		*(volatile int *)a = 42;
		dup_ok = *(volatile int *)b == 42; /* the same page, not a copy */
		munmap(b, pg);
	}
	munmap(a, pg);
}

static bool dup_by_mremap(void)
{
	pthread_once(&dup_once, dup_probe);
	return dup_ok;
}

/* Linux's newseg() checks of the size, in its order: 0 with *maplen (whole pages), or -errno. */
static int seg_size_check(struct grace_ipc_ns *ns, size_t size, size_t *maplen)
{
	size_t numpages = (size + ns->page - 1) / ns->page;

	if (size < 1 || size > ns->lim.shmmax)
		return -EINVAL;
	if (numpages * ns->page < size)
		return -ENOSPC;
	if (ns->shm_tot + numpages < ns->shm_tot || ns->shm_tot + numpages > ns->lim.shmall)
		return -ENOSPC;
	*maplen = numpages * ns->page;
	return 0;
}

/* A segment's file: memfd_create(flags), len bytes long. 0 with *fd, or -EINVAL (a huge page
 * size that memfd_create() refuses) or -ENOMEM. */
static int seg_file(unsigned int flags, size_t len, int *fd)
{
	*fd = memfd_create("SYSV", flags);
	if (*fd < 0)
		return (flags & MFD_HUGETLB) && errno == EINVAL ? -EINVAL : -ENOMEM;
	if (ftruncate(*fd, (off_t)len) != 0) {
		close(*fd);
		*fd = -1;
		return -ENOMEM;
	}
	return 0;
}

/*
 * The file behind a new segment's pages, if it needs one (*fd; -1 if not): a huge-page
 * segment's (*maplen then rounded up to the huge page size), or every segment's where mremap()
 * cannot duplicate a shared mapping (dup_by_mremap()). 0 or -errno.
 */
static int seg_backing(struct grace_ipc_proc *p, size_t size, int flg, size_t *maplen, int *fd)
{
	*fd = -1;
	if (flg & GRACE_IPC_SHM_HUGETLB) {
		size_t hs = huge_size(flg);
		int log = (flg >> SHM_HUGE_SHIFT_) & SHM_HUGE_MASK_;

		if (!hs)
			return -EINVAL; /* no such huge page size (hstate_sizelog() fails) */
		if (!can_do_hugetlb_shm(cred_of(p)))
			return -EPERM;
		*maplen = (size + hs - 1) / hs * hs;
		return seg_file(MFD_CLOEXEC | MFD_HUGETLB | ((unsigned)log << MFD_HUGE_SHIFT),
				*maplen, fd);
	}
	if (!dup_by_mremap())
		return seg_file(MFD_CLOEXEC, *maplen, fd);
	return 0;
}

/* Map a new segment's master: its file (fd >= 0), or shared anonymous memory. Returns the
 * address or MAP_FAILED (errno). */
static void *seg_map_master(int fd, size_t maplen, int flg)
{
	int mflags = MAP_SHARED | MAP_ANONYMOUS;

	if (flg & GRACE_IPC_SHM_NORESERVE)
		mflags |= MAP_NORESERVE;
	if (fd >= 0)
		return mmap(NULL, maplen, PROT_READ | PROT_WRITE,
			    MAP_SHARED | (mflags & MAP_NORESERVE), fd, 0);
	return mmap(NULL, maplen, PROT_READ | PROT_WRITE, mflags, -1, 0);
}

static int shm_create(struct grace_ipc_proc *p, const void *arg, int flg, struct ipc_obj **out)
{
	size_t size = ((const struct shmget_arg *)arg)->size, maplen;
	struct ipc_seg *s;
	void *mem;
	int fd, ret;

	/* Linux's newseg() order of checks. */
	ret = seg_size_check(p->ns, size, &maplen);
	if (ret)
		return ret;
	ret = seg_backing(p, size, flg, &maplen, &fd);
	if (ret)
		return ret;
	mem = seg_map_master(fd, maplen, flg);
	if (mem == MAP_FAILED) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return e == EINVAL ? -EINVAL : -ENOMEM;
	}
	s = (struct ipc_seg *)grace_ipc__alloc(sizeof(*s));
	if (!s) {
		munmap(mem, maplen);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	s->master = mem;
	s->fd = fd;
	s->segsz = size;
	s->maplen = maplen;
	s->cpid = p->pid;
	s->hugetlb = (flg & GRACE_IPC_SHM_HUGETLB) != 0;
	s->noreserve = (flg & GRACE_IPC_SHM_NORESERVE) != 0;
	*out = &s->obj;
	return 0;
}

static void shm_abandon(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	(void)ns;
	grace_ipc__shm_free(o);
}

static void shm_created(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	ns->shm_tot += seg_pages(ns, to_seg(o)->segsz);
}

static const struct ipc_get_ops shm_get_ops = {
	shm_more_checks,
	shm_create,
	shm_abandon,
	shm_created,
};

int grace_ipc_shmget(struct grace_ipc_proc *p, int key, size_t size, int shmflg)
{
	struct shmget_arg a;

	if (!p)
		return -EINVAL;
	a.size = size;
	return grace_ipc__get(p, IPC_T_SHM, key, shmflg, &shm_get_ops, &a);
}

/* ---------------------------------------------------------------- shmat, shmdt */

/* Does [a, a + len) overlap an attachment of any handle of ns? */
static bool ns_attach_overlaps(struct grace_ipc_ns *ns, uintptr_t a, size_t len)
{
	bool hit = false;

	pthread_mutex_lock(&ns->proc_lock);
	for (struct grace_ipc_proc *p = ns->procs; p && !hit; p = p->next) {
		pthread_mutex_lock(&p->lock);
		for (struct shm_attach *at = p->attach; at; at = at->next) {
			uintptr_t b = (uintptr_t)at->addr;

			if (a < b + at->len && b < a + len) {
				hit = true;
				break;
			}
		}
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&ns->proc_lock);
	return hit;
}

/* What an attachment maps, read under the segment's lock as the attachment is taken. */
struct seg_map {
	void *master;
	int fd;
	bool noreserve;
	size_t len;
};

/*
 * Make [a, a + len) (a != 0) ready for an attachment. Without SHM_REMAP the range must be
 * free (find_vma_intersection() in do_shmat()): reserve it. With SHM_REMAP it must not
 * overlap an attachment (see README). 0, or -1 with errno EINVAL.
 */
static int attach_range(struct grace_ipc_ns *ns, uintptr_t a, size_t len, int shmflg)
{
	void *r;

	if (shmflg & GRACE_IPC_SHM_REMAP) {
		if (!ns_attach_overlaps(ns, a, len))
			return 0;
		errno = EINVAL; /* SHM_REMAP over an attachment: see README */
		return -1;
	}
	if (a + len < a) {
		errno = EINVAL;
		return -1;
	}
	r = mmap((void *)a, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		 0);
	if (r == MAP_FAILED || r != (void *)a) {
		if (r != MAP_FAILED)
			munmap(r, len); /* an old kernel took the address as a hint */
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Map the segment's pages again at a (0: anywhere), over the reservation if there is one.
 * Returns the address or MAP_FAILED (errno). */
static void *map_pages(const struct seg_map *sm, uintptr_t a, int prot)
{
	if (sm->fd >= 0) /* huge pages, or no mremap duplication: the file again */
		return mmap((void *)a, sm->len, prot,
			    MAP_SHARED | (a ? MAP_FIXED : 0) | (sm->noreserve ? MAP_NORESERVE : 0),
			    sm->fd, 0);
	if (a)
		return mremap(sm->master, 0, sm->len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a);
	return mremap(sm->master, 0, sm->len, MREMAP_MAYMOVE);
}

/* Map the segment's pages at a (0: anywhere). Returns the address or MAP_FAILED (errno). */
static void *map_segment(struct grace_ipc_ns *ns, const struct seg_map *sm, uintptr_t a, int shmflg,
			 int prot)
{
	void *m;
	int e;

	if (a && attach_range(ns, a, sm->len, shmflg) != 0)
		return MAP_FAILED;
	m = map_pages(sm, a, prot);
	if (m == MAP_FAILED) {
		e = errno;
		if (a && !(shmflg & GRACE_IPC_SHM_REMAP))
			munmap((void *)a, sm->len); /* the reservation */
		errno = e;
		return MAP_FAILED;
	}
	if (sm->fd < 0 && prot != (PROT_READ | PROT_WRITE) && mprotect(m, sm->len, prot) != 0) {
		e = errno;
		munmap(m, sm->len);
		errno = e;
		return MAP_FAILED;
	}
	return m;
}

/* Linux's do_shmat() checks of the address, in its order; SHM_RND rounds *a down. 0 or
 * -EINVAL. */
static int shmat_addr(struct grace_ipc_ns *ns, uintptr_t *a, int shmflg)
{
	size_t lba = grace_ipc_shmlba();

	if (!*a)
		return (shmflg & GRACE_IPC_SHM_REMAP) ? -EINVAL : 0;
	if (*a & (lba - 1)) {
		if (shmflg & GRACE_IPC_SHM_RND) {
			*a &= ~(uintptr_t)(lba - 1);
			if (!*a && (shmflg & GRACE_IPC_SHM_REMAP))
				return -EINVAL;
		} else if (*a & (ns->page - 1)) {
			return -EINVAL;
		}
	}
	return 0;
}

/* The protection of the mapping shmflg asks, and (*acc) the permission that needs. */
static int shmat_prot(int shmflg, int *acc)
{
	int prot;

	if (shmflg & GRACE_IPC_SHM_RDONLY) {
		prot = PROT_READ;
		*acc = S_IRUGO_;
	} else {
		prot = PROT_READ | PROT_WRITE;
		*acc = S_IRUGO_ | S_IWUGO_;
	}
	if (shmflg & GRACE_IPC_SHM_EXEC) {
		prot |= PROT_EXEC;
		*acc |= S_IXUGO_;
	}
	return prot;
}

/*
 * Find the segment, lock it (checking acc, then `deleted`) and take an attachment
 * (shm_nattch++). 0 with *out and what to map in *sm, no lock held; or -errno.
 */
static int seg_attach(struct grace_ipc_proc *p, int shmid, int acc, struct ipc_seg **out,
		      struct seg_map *sm)
{
	struct ipc_held h;
	struct ipc_seg *s;
	int ret;

	ret = grace_ipc__find(p->ns, IPC_T_SHM, shmid, &h);
	if (ret)
		return ret;
	ret = grace_ipc__lock(p, &h, acc, 0);
	if (ret)
		return ret;
	s = to_seg(h.o);
	/* The attachment keeps the segment published from here on (header comment). */
	s->nattch++;
	sm->master = s->master;
	sm->fd = s->fd;
	sm->noreserve = s->noreserve;
	sm->len = s->maplen;
	grace_ipc__unlock(p->ns, &h);
	*out = s;
	return 0;
}

/* The mapping at m is made: record the attach in the segment and link at on the handle. */
static void attach_link(struct grace_ipc_proc *p, struct ipc_seg *s, struct shm_attach *at, void *m,
			size_t len)
{
	pthread_mutex_lock(seg_lock(p->ns, s));
	s->atime = grace_ipc__now();
	s->lpid = p->pid;
	pthread_mutex_unlock(seg_lock(p->ns, s));
	at->addr = m;
	at->len = len;
	at->seg = s;
	pthread_mutex_lock(&p->lock);
	at->next = p->attach;
	if (p->attach)
		p->attach->prev = at;
	p->attach = at;
	pthread_mutex_unlock(&p->lock);
}

int grace_ipc_shmat(struct grace_ipc_proc *p, int shmid, const void *shmaddr, int shmflg,
		    void **addr)
{
	struct shm_attach *at;
	struct seg_map sm;
	struct ipc_seg *s;
	uintptr_t a = (uintptr_t)shmaddr;
	void *m;
	int prot, acc, ret;

	if (!p || !addr)
		return -EINVAL;
	/* Checks in the order of Linux's do_shmat(). */
	if (shmid < 0)
		return -EINVAL;
	ret = shmat_addr(p->ns, &a, shmflg);
	if (ret)
		return ret;
	prot = shmat_prot(shmflg, &acc);
	ret = seg_attach(p, shmid, acc, &s, &sm);
	if (ret)
		return ret;
	/* From here on no lock is held: the attachment keeps the segment (header comment). */
	at = (struct shm_attach *)calloc(1, sizeof(*at));
	m = at ? map_segment(p->ns, &sm, a, shmflg, prot) : MAP_FAILED;
	if (m == MAP_FAILED) {
		ret = !at ? -ENOMEM : errno == EINVAL ? -EINVAL : -ENOMEM;
		free(at);
		seg_put(p->ns, s, p->pid, false);
		return ret;
	}
	attach_link(p, s, at, m, sm.len);
	*addr = m;
	return 0;
}

static void attach_unlink(struct grace_ipc_proc *p, struct shm_attach *at)
{
	if (at->prev)
		at->prev->next = at->next;
	else
		p->attach = at->next;
	if (at->next)
		at->next->prev = at->prev;
}

int grace_ipc_shmdt(struct grace_ipc_proc *p, const void *shmaddr)
{
	struct shm_attach *at;

	if (!p)
		return -EINVAL;
	if ((uintptr_t)shmaddr & (p->ns->page - 1))
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	for (at = p->attach; at; at = at->next)
		if (at->addr == shmaddr)
			break;
	if (at)
		attach_unlink(p, at);
	pthread_mutex_unlock(&p->lock);
	if (!at)
		return -EINVAL;
	munmap(at->addr, at->len);
	seg_put(p->ns, at->seg, p->pid, true);
	free(at);
	return 0;
}

void grace_ipc__shm_exit(struct grace_ipc_proc *p)
{
	for (;;) {
		struct shm_attach *at;

		pthread_mutex_lock(&p->lock);
		at = p->attach;
		if (at)
			attach_unlink(p, at);
		pthread_mutex_unlock(&p->lock);
		if (!at)
			return;
		munmap(at->addr, at->len);
		seg_put(p->ns, at->seg, p->pid, true);
		free(at);
	}
}

/* ---------------------------------------------------------------- removal */

/* IPC_RMID, update path held: mark an attached segment, destroy an unattached one. */
static void shm_rmid_locked(struct grace_ipc_ns *ns, struct ipc_obj *o)
{
	struct ipc_seg *s = to_seg(o);
	void *mem = NULL;
	bool destroy = false;

	grace_ipc__upd_lock(ns, o);
	if (s->nattch) {
		o->mode |= GRACE_IPC_SHM_DEST;
		grace_ipc__key_drop(ns, o); /* "Do not find it any more" */
	} else {
		mem = seg_destroy_locked(ns, s);
		destroy = true;
	}
	grace_ipc__upd_unlock(ns, o);
	if (destroy)
		seg_destroyed(ns, s, mem);
}

void grace_ipc__shm_remove_all(struct grace_ipc_ns *ns)
{
	grace_ipc__upd_begin(ns, IPC_T_SHM);
	for (int idx = grace_ipc__max_index(ns, IPC_T_SHM); idx >= 0; idx--) {
		struct ipc_obj *o = grace_ipc__upd_at(ns, IPC_T_SHM, idx);

		if (o)
			shm_rmid_locked(ns, o);
	}
	grace_ipc__upd_end(ns, IPC_T_SHM);
}

/* ---------------------------------------------------------------- shmctl */

static unsigned long resident_pages(struct grace_ipc_ns *ns, struct ipc_seg *s)
{
	size_t n = s->maplen / ns->page;
	unsigned char *vec;
	unsigned long r = 0;

	if (!s->master || !n)
		return 0;
	vec = (unsigned char *)malloc(n);
	if (!vec)
		return 0;
	if (mincore(s->master, s->maplen, vec) == 0)
		for (size_t i = 0; i < n; i++)
			r += vec[i] & 1;
	free(vec);
	return r;
}

static int shm_info(struct grace_ipc_proc *p, int cmd, struct grace_ipc_shmid_ds *buf)
{
	struct grace_ipc_ns *ns = p->ns;
	int max;

	if (cmd == GRACE_IPC_INFO) {
		struct grace_ipc_shminfo si;

		memset(&si, 0, sizeof(si));
		si.shmmni = si.shmseg = (unsigned long)ns->lim.shmmni;
		si.shmmax = ns->lim.shmmax;
		si.shmall = ns->lim.shmall;
		si.shmmin = 1;
		grace_ipc__upd_begin(ns, IPC_T_SHM);
		max = grace_ipc__max_index(ns, IPC_T_SHM);
		grace_ipc__upd_end(ns, IPC_T_SHM);
		if (!buf)
			return -EFAULT;
		memcpy(buf, &si, sizeof(si));
	} else {
		struct grace_ipc_shm_info si;

		memset(&si, 0, sizeof(si));
		grace_ipc__upd_begin(ns, IPC_T_SHM);
		si.used_ids = ns->ids[IPC_T_SHM].in_use;
		si.shm_tot = ns->shm_tot;
		max = grace_ipc__max_index(ns, IPC_T_SHM);
		for (int idx = max; idx >= 0; idx--) {
			struct ipc_obj *o = grace_ipc__upd_at(ns, IPC_T_SHM, idx);

			if (o) {
				grace_ipc__upd_lock(ns, o);
				si.shm_rss += resident_pages(ns, to_seg(o));
				grace_ipc__upd_unlock(ns, o);
			}
		}
		grace_ipc__upd_end(ns, IPC_T_SHM);
		if (!buf)
			return -EFAULT;
		memcpy(buf, &si, sizeof(si));
	}
	return max < 0 ? 0 : max;
}

static int shm_stat(struct grace_ipc_proc *p, int shmid, int cmd, struct grace_ipc_shmid_ds *out)
{
	struct grace_ipc_shmid_ds ds;
	struct ipc_held h;
	struct ipc_seg *s;
	int ret = grace_ipc__stat_begin(p, IPC_T_SHM, shmid, cmd, GRACE_IPC_SHM_STAT_ANY, &h);

	if (ret)
		return ret;
	s = to_seg(h.o);
	memset(&ds, 0, sizeof(ds));
	grace_ipc__perm_out(p->ns, h.o, &ds.shm_perm);
	ds.shm_segsz = s->segsz;
	ds.shm_atime = s->atime;
	ds.shm_dtime = s->dtime;
	ds.shm_ctime = h.o->ctime;
	ds.shm_cpid = s->cpid;
	ds.shm_lpid = s->lpid;
	ds.shm_nattch = s->nattch;
	return grace_ipc__stat_end(p->ns, &h, cmd, out, &ds, sizeof(ds));
}

/* SHM_LOCK and SHM_UNLOCK (Linux's shmctl_do_lock()). */
static int shm_do_lock(struct grace_ipc_proc *p, int shmid, int cmd)
{
	struct grace_ipc_ns *ns = p->ns;
	const struct grace_ipc_cred *c;
	struct ipc_held h;
	struct ipc_seg *s;
	int ret;

	ret = grace_ipc__find(ns, IPC_T_SHM, shmid, &h);
	if (ret)
		return ret;
	ret = grace_ipc__lock(p, &h, -1, 0);
	if (ret)
		return ret;
	s = to_seg(h.o);
	c = cred_of(p);
	if (!(c->caps & GRACE_IPC_CAP_IPC_LOCK)) {
		struct rlimit rl;
		/* The owner or creator; SHM_LOCK also needs some RLIMIT_MEMLOCK. */
		bool no_limit = cmd == GRACE_IPC_SHM_LOCK && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
				rl.rlim_cur == 0;

		if (!grace_ipc__owner(c, h.o) || no_limit)
			ret = -EPERM;
	}
	if (ret == 0 && !s->hugetlb) {
		if (cmd == GRACE_IPC_SHM_LOCK) {
			if (!(h.o->mode & GRACE_IPC_SHM_LOCKED)) {
				/* The pages are faulted in and locked (see README). */
				if (mlock(s->master, s->maplen) != 0)
					ret = -ENOMEM;
				else
					h.o->mode |= GRACE_IPC_SHM_LOCKED;
			}
		} else if (h.o->mode & GRACE_IPC_SHM_LOCKED) {
			munlock(s->master, s->maplen);
			h.o->mode &= ~(unsigned int)GRACE_IPC_SHM_LOCKED;
		}
	}
	grace_ipc__unlock(ns, &h);
	return ret;
}

/* IPC_SET and IPC_RMID (Linux's shmctl_down()). */
static int shm_down(struct grace_ipc_proc *p, int shmid, int cmd,
		    const struct grace_ipc_shmid_ds *in)
{
	struct grace_ipc_ns *ns = p->ns;
	struct ipc_obj *o;
	int ret = grace_ipc__ctl_begin(p, IPC_T_SHM, shmid, &o);

	if (ret)
		return ret;
	if (cmd == GRACE_IPC_RMID) {
		shm_rmid_locked(ns, o);
	} else {
		grace_ipc__upd_lock(ns, o);
		ret = grace_ipc__perm_set(o, &in->shm_perm);
		if (ret == 0)
			o->ctime = grace_ipc__now();
		grace_ipc__upd_unlock(ns, o);
	}
	grace_ipc__upd_end(ns, IPC_T_SHM);
	return ret;
}

int grace_ipc_shmctl(struct grace_ipc_proc *p, int shmid, int cmd, struct grace_ipc_shmid_ds *buf)
{
	if (!p || cmd < 0 || shmid < 0)
		return -EINVAL;
	switch (cmd) {
	case GRACE_IPC_INFO:
	case GRACE_IPC_SHM_INFO:
		return shm_info(p, cmd, buf);
	case GRACE_IPC_STAT:
	case GRACE_IPC_SHM_STAT:
	case GRACE_IPC_SHM_STAT_ANY:
		return shm_stat(p, shmid, cmd, buf);
	case GRACE_IPC_SET:
		if (!buf)
			return -EFAULT; /* copied in before anything else */
		return shm_down(p, shmid, cmd, buf);
	case GRACE_IPC_RMID:
		return shm_down(p, shmid, cmd, NULL);
	case GRACE_IPC_SHM_LOCK:
	case GRACE_IPC_SHM_UNLOCK:
		return shm_do_lock(p, shmid, cmd);
	default:
		return -EINVAL;
	}
}
