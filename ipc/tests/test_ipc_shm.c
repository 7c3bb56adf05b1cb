/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc shared memory, run against both implementations: every error case of shmget,
 * shmat, shmdt and shmctl; attachments that share their pages (in one handle and across
 * handles); SHM_RDONLY (a write faults), SHM_RND, SHM_REMAP; removal deferred to the last
 * detach (the key is gone, the ID and the memory still work); detach at close; SHM_LOCK and
 * SHM_UNLOCK; IPC_STAT/IPC_SET with permissions; SHM_STAT, IPC_INFO, SHM_INFO. The
 * kernel-differential test (test_ipc_kernel.c) checks the same calls against Linux itself.
 * Compiled as C and as C++.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace_ipc.h>
#include "gtest_lite.h"
#include "ipc_test.h"

static struct grace_ipc_shmid_ds sstat(struct grace_ipc_proc *p, int id)
{
	struct grace_ipc_shmid_ds ds;

	memset(&ds, 0, sizeof(ds));
	REQUIRE(grace_ipc_shmctl(p, id, GRACE_IPC_STAT, &ds) == 0);
	return ds;
}

static char *at(struct grace_ipc_proc *p, int id, int flg)
{
	void *a = NULL;

	REQUIRE(grace_ipc_shmat(p, id, NULL, flg, &a) == 0);
	REQUIRE(a != NULL);
	return (char *)a;
}

TEST(shmget_errors)
{
	struct grace_ipc_limits lim;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	memset(&lim, 0, sizeof(lim));
	lim.shmmni = 4;
	lim.shmmax = 1 << 20;
	lim.shmall = 300; /* pages */
	FOR_EACH_IMPL(p, &lim)
	{
		int a, k;

		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 0, 0600) == -EINVAL);
		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, (1 << 20) + 1, 0600) == -EINVAL);
		CHECK(grace_ipc_shmget(NULL, GRACE_IPC_PRIVATE, 1, 0) == -EINVAL);
		a = grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 1 << 20, 0600 | 0x1000000); /* ignored */
		CHECK(a >= 0);
		/* shmall: 256 pages used (4 KiB pages), 45 more would exceed 300. */
		if (pg == 4096)
			CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 45 * pg, 0600) == -ENOSPC);
		CHECK(grace_ipc_shmget(p, 7, 100, 0600) == -ENOENT);
		k = grace_ipc_shmget(p, 7, 100, GRACE_IPC_CREAT | 0600);
		CHECK(k >= 0);
		CHECK(grace_ipc_shmget(p, 7, 100, 0) == k);
		CHECK(grace_ipc_shmget(p, 7, 0, 0) == k);
		CHECK(grace_ipc_shmget(p, 7, 101, 0) == -EINVAL); /* larger than the segment */
		CHECK(grace_ipc_shmget(p, 7, 1, GRACE_IPC_CREAT | GRACE_IPC_EXCL) == -EEXIST);
		CHECK(grace_ipc_shmget(p, 8, 0, GRACE_IPC_CREAT) ==
		      -EINVAL); /* a new one: size 0 */
		/* A huge page size the system does not have (8 KiB). */
		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 100,
				       GRACE_IPC_SHM_HUGETLB | (13 << 26) | 0600) == -EINVAL);
		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 1, 0600) >= 0);
		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 1, 0600) >= 0);
		CHECK(grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 1, 0600) == -ENOSPC); /* shmmni 4 */
		struct grace_ipc_shmid_ds ds = sstat(p, k);
		CHECK(ds.shm_segsz == 100 && ds.shm_nattch == 0 && ds.shm_cpid == 4242);
		CHECK(ds.shm_lpid == 0 && ds.shm_atime == 0 && ds.shm_dtime == 0 &&
		      ds.shm_ctime > 0);
		CHECK(ds.shm_perm.key == 7 && ds.shm_perm.mode == 0600);
		struct grace_ipc_ns_info info;
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.shm.objects == 4);
		if (pg == 4096)
			CHECK(info.shm_pages == 256 + 1 + 1 + 1);
	}
}

TEST(shm_attachments_share_pages)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 10000, 0600);
		struct grace_ipc_proc *q = other(p, 0, 0, 0, 77);
		char *a, *b, *c;

		CHECK(id >= 0);
		a = at(p, id, 0);
		b = at(p, id, 0);
		c = at(q, id, GRACE_IPC_SHM_RDONLY);
		CHECK(a != b && a != c && b != c);
		for (int i = 0; i < 10000; i++)
			CHECK(a[i] == 0); /* a new segment is zero */
		memcpy(a + 5000, "shared", 7);
		CHECK(strcmp(b + 5000, "shared") == 0 && strcmp(c + 5000, "shared") == 0);
		b[9999] = 'z';
		CHECK(a[9999] == 'z');
		struct grace_ipc_shmid_ds ds = sstat(p, id);
		CHECK(ds.shm_nattch == 3 && ds.shm_lpid == 77 && ds.shm_atime > 0);
		/* shmdt: only the handle's own attachment, at its start. */
		CHECK(grace_ipc_shmdt(q, a) == -EINVAL);
		CHECK(grace_ipc_shmdt(p, a + 1) == -EINVAL);
		CHECK(grace_ipc_shmdt(p, a + 4096) == -EINVAL);
		CHECK(grace_ipc_shmdt(NULL, a) == -EINVAL);
		CHECK(grace_ipc_shmdt(p, a) == 0);
		CHECK(grace_ipc_shmdt(p, a) == -EINVAL);
		ds = sstat(p, id);
		CHECK(ds.shm_nattch == 2 && ds.shm_lpid == 4242 && ds.shm_dtime > 0);
		CHECK(strcmp(b + 5000, "shared") == 0); /* the pages are the segment's */
		/* Closing the handle detaches. */
		grace_ipc_proc_close(q);
		CHECK(sstat(p, id).shm_nattch == 1);
		a = at(p, id, 0);
		CHECK(strcmp(a + 5000, "shared") == 0 && a[9999] == 'z');
		CHECK(grace_ipc_shmdt(p, a) == 0);
		CHECK(grace_ipc_shmdt(p, b) == 0);
	}
}

static void *g_ro;
static void write_rdonly(void *arg)
{
	(void)arg;
	*(volatile char *)g_ro = 1;
}

TEST(shmat_flags_and_errors)
{
	FOR_EACH_IMPL(p, NULL)
	{
		size_t lba = grace_ipc_shmlba();
		int id = grace_ipc_shmget(p, GRACE_IPC_PRIVATE, lba, 0600);
		struct grace_ipc_proc *ro = other(p, 0, 0, 0, 81);
		void *a = NULL, *x;
		char out[256];

		CHECK(grace_ipc_shmat(p, -1, NULL, 0, &a) == -EINVAL);
		CHECK(grace_ipc_shmat(p, id + 1, NULL, 0, &a) == -EINVAL);
		CHECK(grace_ipc_shmat(p, id, NULL, 0, NULL) == -EINVAL);
		CHECK(grace_ipc_shmat(NULL, id, NULL, 0, &a) == -EINVAL);
		CHECK(grace_ipc_shmat(p, id, NULL, GRACE_IPC_SHM_REMAP, &a) == -EINVAL);
		/* A reserved, inaccessible region to attach into. */
		char *zone = (char *)mmap(NULL, 8 * lba, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
					  0);
		CHECK(zone != MAP_FAILED);
		CHECK(grace_ipc_shmat(p, id, zone + 1, 0, &a) == -EINVAL); /* misaligned */
		CHECK(grace_ipc_shmat(p, id, zone, 0, &a) == -EINVAL);     /* not free */
		CHECK(grace_ipc_shmat(p, id, (void *)(lba - 1),
				      GRACE_IPC_SHM_RND | GRACE_IPC_SHM_REMAP,
				      &a) == -EINVAL); /* rounds to 0 */
		CHECK(sstat(p, id).shm_nattch == 0);   /* failed attaches leave nothing */
		/* SHM_REMAP replaces the reservation; SHM_RND rounds down. */
		CHECK(grace_ipc_shmat(p, id, zone + 2 * lba + 17,
				      GRACE_IPC_SHM_RND | GRACE_IPC_SHM_REMAP, &a) == 0);
		CHECK(a == zone + 2 * lba);
		strcpy((char *)a, "remapped");
		/* Over an attachment: refused (the kernel would replace it: see README). */
		CHECK(grace_ipc_shmat(p, id, a, GRACE_IPC_SHM_REMAP, &x) == -EINVAL);
		/* The range is free once detached: then without SHM_REMAP too. */
		CHECK(grace_ipc_shmdt(p, a) == 0);
		CHECK(grace_ipc_shmat(p, id, zone + 2 * lba, 0, &a) == 0);
		CHECK(a == zone + 2 * lba && strcmp((char *)a, "remapped") == 0);
		CHECK(grace_ipc_shmdt(p, a) == 0);
		munmap(zone, 8 * lba);
		/* SHM_RDONLY: a write faults. */
		CHECK(grace_ipc_shmat(ro, id, NULL, GRACE_IPC_SHM_RDONLY, &g_ro) == 0);
		int st = gt_run_child(write_rdonly, NULL, out, sizeof(out));
		/* Killed by SIGSEGV (or, under a sanitizer, a SEGV report and an exit). */
		CHECK((WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) || strstr(out, "SEGV") != NULL);
		CHECK(strcmp((const char *)g_ro, "remapped") == 0);
		/* SHM_EXEC: read, write and execute permission are all asked for. */
		CHECK(grace_ipc_shmat(p, id, NULL, GRACE_IPC_SHM_EXEC, &x) == 0);
		CHECK(grace_ipc_shmdt(p, x) == 0);
		grace_ipc_proc_close(ro);
	}
}

TEST(shm_removal_deferred_to_last_detach)
{
	FOR_EACH_IMPL(p, NULL)
	{
		int id = grace_ipc_shmget(p, 99, 4096, GRACE_IPC_CREAT | 0600);
		struct grace_ipc_proc *q = other(p, 0, 0, 0, 91);
		struct grace_ipc_ns_info info;
		char *a = at(p, id, 0), *b = at(q, id, 0), *c;

		strcpy(a, "before");
		CHECK(grace_ipc_shmctl(p, id, GRACE_IPC_RMID, NULL) == 0);
		/* Marked, key dropped, ID working, memory valid. */
		struct grace_ipc_shmid_ds ds = sstat(p, id);
		CHECK(ds.shm_perm.mode == (0600 | GRACE_IPC_SHM_DEST));
		CHECK(ds.shm_perm.key == GRACE_IPC_PRIVATE && ds.shm_nattch == 2);
		CHECK(grace_ipc_shmget(p, 99, 4096, 0) == -ENOENT);
		int id2 = grace_ipc_shmget(p, 99, 4096, GRACE_IPC_CREAT | GRACE_IPC_EXCL | 0600);
		CHECK(id2 >= 0 && id2 != id); /* the key is free for a new segment */
		c = at(p, id, 0);             /* attaching a removed segment works, as on Linux */
		CHECK(strcmp(c, "before") == 0);
		strcpy(b, "after");
		CHECK(strcmp(a, "after") == 0);
		CHECK(grace_ipc_shmctl(p, id, GRACE_IPC_RMID, NULL) == 0); /* again: still marked */
		CHECK(grace_ipc_shmdt(p, a) == 0);
		CHECK(grace_ipc_shmdt(p, c) == 0);
		CHECK(sstat(p, id).shm_nattch == 1);
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.shm.objects == 2);
		/* The last detach (here: the handle's close) destroys it. */
		grace_ipc_proc_close(q);
		struct grace_ipc_shmid_ds gone;
		CHECK(grace_ipc_shmctl(p, id, GRACE_IPC_STAT, &gone) == -EINVAL);
		void *x;
		CHECK(grace_ipc_shmat(p, id, NULL, 0, &x) == -EINVAL);
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.shm.objects == 1);
		/* Without attachments, IPC_RMID destroys at once. */
		CHECK(grace_ipc_shmctl(p, id2, GRACE_IPC_RMID, NULL) == 0);
		CHECK(grace_ipc_shmctl(p, id2, GRACE_IPC_STAT, &gone) == -EINVAL);
		grace_ipc_info(grace_ipc_proc_ns(p), &info);
		CHECK(info.shm.objects == 0 && info.shm_pages == 0);
		/* A segment still attached at ns_destroy is unmapped by it. */
		int id3 = grace_ipc_shmget(p, GRACE_IPC_PRIVATE, 4096, 0600);
		(void)at(p, id3, 0);
	}
}

TEST(shmctl_stat_set_lock_info_permissions)
{
	FOR_EACH_IMPL(p, NULL)
	{
		struct grace_ipc_proc *own = other(p, 1000, 100, 0, 101);
		struct grace_ipc_proc *grp = other(p, 2000, 100, 0, 102);
		struct grace_ipc_proc *oth = other(p, 3000, 300, 0, 103);
		struct grace_ipc_proc *lck = other(p, 4000, 400, GRACE_IPC_CAP_IPC_LOCK, 104);
		int id = grace_ipc_shmget(own, 55, 8192, GRACE_IPC_CREAT | 0640);
		struct grace_ipc_shmid_ds ds;
		void *a;

		CHECK(id >= 0);
		/* Group: read only. Others: nothing. */
		CHECK(grace_ipc_shmat(grp, id, NULL, 0, &a) == -EACCES);
		CHECK(grace_ipc_shmat(grp, id, NULL, GRACE_IPC_SHM_RDONLY, &a) == 0);
		CHECK(grace_ipc_shmdt(grp, a) == 0);
		CHECK(grace_ipc_shmat(grp, id, NULL, GRACE_IPC_SHM_RDONLY | GRACE_IPC_SHM_EXEC,
				      &a) == -EACCES);
		CHECK(grace_ipc_shmat(oth, id, NULL, GRACE_IPC_SHM_RDONLY, &a) == -EACCES);
		CHECK(grace_ipc_shmctl(oth, id, GRACE_IPC_STAT, &ds) == -EACCES);
		CHECK(grace_ipc_shmctl(oth, id & 0x7fff, GRACE_IPC_SHM_STAT, &ds) == -EACCES);
		CHECK(grace_ipc_shmctl(oth, id & 0x7fff, GRACE_IPC_SHM_STAT_ANY, &ds) == id);
		CHECK(grace_ipc_shmget(oth, 55, 0, 0004) == -EACCES);
		CHECK(grace_ipc_shmget(grp, 55, 0, 0040) == id);
		/* SHM_LOCK: owner or CAP_IPC_LOCK. */
		CHECK(grace_ipc_shmctl(oth, id, GRACE_IPC_SHM_LOCK, NULL) == -EPERM);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_SHM_LOCK, NULL) == 0);
		CHECK(sstat(own, id).shm_perm.mode == (0640 | GRACE_IPC_SHM_LOCKED));
		CHECK(grace_ipc_shmctl(lck, id, GRACE_IPC_SHM_UNLOCK, NULL) == 0);
		CHECK(sstat(own, id).shm_perm.mode == 0640);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_SHM_UNLOCK, NULL) ==
		      0); /* not locked: ok */
		CHECK(grace_ipc_shmctl(own, id + 1, GRACE_IPC_SHM_LOCK, NULL) == -EINVAL);
		/* IPC_SET: owner, creator or CAP_SYS_ADMIN; SHM_LOCKED/SHM_DEST are not settable. */
		ds = sstat(own, id);
		ds.shm_perm.mode = 0606 | GRACE_IPC_SHM_LOCKED;
		CHECK(grace_ipc_shmctl(oth, id, GRACE_IPC_SET, &ds) == -EPERM);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_SET, &ds) == 0);
		CHECK(sstat(own, id).shm_perm.mode == 0606);
		CHECK(grace_ipc_shmat(oth, id, NULL, 0, &a) == 0);
		CHECK(grace_ipc_shmdt(oth, a) == 0);
		ds.shm_perm.uid = (unsigned)-1;
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_SET, &ds) == -EINVAL);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_SET, NULL) == -EFAULT);
		CHECK(grace_ipc_shmctl(oth, id, GRACE_IPC_RMID, NULL) == -EPERM);
		/* Commands. */
		CHECK(grace_ipc_shmctl(own, id, 99, &ds) == -EINVAL);
		CHECK(grace_ipc_shmctl(own, id, -1, &ds) == -EINVAL);
		CHECK(grace_ipc_shmctl(own, -1, GRACE_IPC_STAT, &ds) == -EINVAL);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_STAT, NULL) == -EFAULT);
		struct grace_ipc_shminfo si;
		CHECK(grace_ipc_shmctl(own, 0, GRACE_IPC_INFO,
				       (struct grace_ipc_shmid_ds *)(void *)&si) == (id & 0x7fff));
		CHECK(si.shmmni == 4096 && si.shmseg == 4096 && si.shmmin == 1);
		struct grace_ipc_shm_info su;
		a = at(own, id, 0);
		memset(a, 1, 8192); /* two pages resident */
		CHECK(grace_ipc_shmctl(own, 0, GRACE_IPC_SHM_INFO,
				       (struct grace_ipc_shmid_ds *)(void *)&su) == (id & 0x7fff));
		CHECK(su.used_ids == 1 && su.shm_tot == (8191 / grace_ipc_shmlba() + 1));
		CHECK(su.shm_rss >= 1);
		CHECK(grace_ipc_shmctl(own, 0, GRACE_IPC_SHM_INFO, NULL) == -EFAULT);
		CHECK(grace_ipc_shmctl(own, id, GRACE_IPC_RMID, NULL) == 0);
		/* own's attachment keeps it; ns_destroy closes own and it goes. */
	}
}

GT_MAIN()
