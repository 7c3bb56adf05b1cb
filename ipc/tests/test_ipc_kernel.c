/* SPDX-License-Identifier: MIT */
/*
 * "Results and errors as the real system calls give them", checked against the real system
 * calls: random sequences of semaphore, message-queue and shared-memory calls (seeded,
 * reproducible) run side by side on the kernel's System V IPC and on both grace_ipc
 * implementations; every result (value or errno, and the contents of every STAT buffer, every
 * message, every attached segment) must match.
 *
 *  - Objects live in handles: the same logical object in the kernel (k), the global-lock
 *    namespace (g) and the RCU namespace (r). Calls use a handle's IDs (live or removed), an
 *    index (the *_STAT commands), or a negative ID.
 *  - Credentials: when the test runs as root it switches between personas (root; uid 1001,
 *    gid 1001; uid 1002 in group 1001; uid 1003 with 1001 as a supplementary group) with
 *    seteuid(2) and friends, and gives grace the same credentials (grace_ipc_cred_self() after
 *    the switch, then grace_ipc_proc_setcred()): EACCES and EPERM paths are compared too.
 *    Otherwise it runs with its own credentials only.
 *  - Exits: now and then a child process (fork) runs a few calls (semop with SEM_UNDO, shmat,
 *    msgsnd, msgrcv) and exits; grace mirrors it with a fresh handle (pid = the child's) that
 *    it closes: SEM_UNDO adjustments and detaches at exit are compared. (The parent's kernel
 *    attachments are MADV_DONTFORK: a child would inherit them, attach them again and detach
 *    them at its exit, which the mirror does not model.)
 *  - Calls never block (IPC_NOWAIT on every semop, msgsnd, msgrcv), so the kernel side never
 *    sleeps; blocking is tested in test_ipc_sem.c and test_ipc_msg.c.
 *  - Attachments at a given address go into PROT_NONE reservations (SHM_REMAP replaces them),
 *    one zone per side, so the three sides never collide in this one address space.
 * Kernel objects are created with IPC_PRIVATE or keys derived from the pid and removed at the
 * end (atexit too). If the kernel has no System V IPC (some sandboxes), the test says so and
 * passes.
 * Usage: ipc_kernel [seeds [steps [first seed number]]]   (default 6 seeds x 3000 steps from 1;
 *        IPC_KERNEL_DEBUG=1 in the environment prints every call)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

#define HANDLES 6
#define MAXSEMS 6
/* One step in EXIT_EVERY forks a child (exit_step()); fork() is slow under TSan. */
#if defined(__SANITIZE_THREAD__)
#define EXIT_EVERY 200
#else
#define EXIT_EVERY 30
#endif
#define BUF 600
#define MAXATT 24
#define ZSLOTS 8 /* attachment slots per address zone */
#define SEGMAX 3 /* pages: the largest segment */

enum { K, G, R, NSIDES };
enum { T_SEM, T_MSG, T_SHM };

union semun_ {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *info;
};

static int g_seeds = 6, g_steps = 3000, g_first = 1;
static struct grace_ipc_limits k_lim;
static size_t g_page, g_hpage; /* the page size, the default huge page size */
static bool g_personas;        /* running as root: switch credentials */
static bool g_debug;           /* IPC_KERNEL_DEBUG: print every call */

/* ---------------------------------------------------------------- kernel bookkeeping */

/* Every kernel object we created, and every kernel attachment, for removal at exit whatever
 * happens. */
static struct {
	int type, id;
} k_live[8192];
static int k_nlive;
static void *k_att[256];
static int k_natt;

static void k_track(int type, int id)
{
	for (int i = 0; i < k_nlive; i++)
		if (k_live[i].type == type && k_live[i].id == id)
			return;
	if (k_nlive < 8192) {
		k_live[k_nlive].type = type;
		k_live[k_nlive].id = id;
		k_nlive++;
	}
}

static void k_att_track(void *a, bool add)
{
	if (add) {
		if (k_natt < 256)
			k_att[k_natt++] = a;
		return;
	}
	for (int i = 0; i < k_natt; i++)
		if (k_att[i] == a) {
			k_att[i] = k_att[--k_natt];
			return;
		}
}

static void root_again(void)
{
	if (g_personas) {
		if (seteuid(0) != 0 || setegid(0) != 0 || setgroups(0, NULL) != 0)
			perror("ipc_kernel: back to root");
	}
}

static void k_cleanup(void)
{
	root_again();
	for (int i = 0; i < k_natt; i++)
		shmdt(k_att[i]);
	k_natt = 0;
	for (int i = 0; i < k_nlive; i++) {
		if (k_live[i].type == T_SEM)
			semctl(k_live[i].id, 0, IPC_RMID);
		else if (k_live[i].type == T_MSG)
			msgctl(k_live[i].id, IPC_RMID, NULL);
		else
			shmctl(k_live[i].id, IPC_RMID, NULL);
	}
	k_nlive = 0;
}

static long kr(long r)
{
	return r < 0 ? -errno : r;
}

/* ---------------------------------------------------------------- coverage */

/* Which (call, result) pairs the random sequences reached, so the output shows the coverage. */
static struct {
	const char *what;
	long res;
	unsigned long n;
} g_seen[256];

static void tally(const char *what, long res)
{
	int i;

	if (res > 0)
		res = 1; /* any positive value */
	for (i = 0; i < 256 && g_seen[i].what; i++) {
		if (strcmp(g_seen[i].what, what) == 0 && g_seen[i].res == res) {
			g_seen[i].n++;
			return;
		}
	}
	if (i < 256) {
		g_seen[i].what = what;
		g_seen[i].res = res;
		g_seen[i].n = 1;
	}
}

static const char *errname(long res)
{
	static char buf[16];

	switch (res) {
	case 0:
		return "0";
	case 1:
		return ">0";
	case -EINVAL:
		return "EINVAL";
	case -EIDRM:
		return "EIDRM";
	case -EAGAIN:
		return "EAGAIN";
	case -ENOSPC:
		return "ENOSPC";
	case -EEXIST:
		return "EEXIST";
	case -ENOENT:
		return "ENOENT";
	case -E2BIG:
		return "E2BIG";
	case -ERANGE:
		return "ERANGE";
	case -EFBIG:
		return "EFBIG";
	case -EACCES:
		return "EACCES";
	case -EPERM:
		return "EPERM";
	case -ENOMSG:
		return "ENOMSG";
	case -EFAULT:
		return "EFAULT";
	case -ENOMEM:
		return "ENOMEM";
	default:
		snprintf(buf, sizeof(buf), "%ld", res);
		return buf;
	}
}

/* ---------------------------------------------------------------- the world */

struct handle {
	int id[NSIDES];
	int nsems;  /* semaphore sets */
	size_t len; /* segments: the size asked for */
	bool huge;  /* segments: huge pages (with SHM_NORESERVE and no pool: touching it faults) */
	bool live;  /* not removed (a removed segment may still be attached) */
	int natt;   /* segments: attachments (of every side) */
	int gen;
};

struct attach {
	int h, gen;
	void *a[NSIDES];
	int zslot; /* the zone slot it sits in, or -1 */
	bool rdonly;
};

struct world {
	struct grace_ipc_ns *ns[NSIDES];
	struct grace_ipc_proc *p[NSIDES];
	struct handle h[3][HANDLES];
	int keys[3][3];
	struct attach att[MAXATT];
	int natt;
	char *zone[NSIDES]; /* ZSLOTS + 1 slots of SEGMAX pages each; the last is never attached */
	bool zused[ZSLOTS];
	int persona;
	unsigned seed;
	unsigned step;
};

static unsigned rnd(struct world *w)
{
	w->seed = w->seed * 1103515245u + 12345u;
	return (w->seed >> 8) & 0xffffff;
}

static int pick(struct world *w, int n)
{
	return (int)(rnd(w) % (unsigned)n);
}

#define FAIL(...)                                                       \
	do {                                                            \
		fprintf(stderr, "  seed %u step %u: ", seed0, w->step); \
		fprintf(stderr, __VA_ARGS__);                           \
		fprintf(stderr, "\n");                                  \
		return false;                                           \
	} while (0)

/* Compare three results (a value or -errno). */
#define SAME3(what, kv, gv, rv)                                                                    \
	do {                                                                                       \
		long k_ = (kv), g_ = (gv), r_ = (rv);                                              \
		tally(what, k_);                                                                   \
		if (g_debug)                                                                       \
			fprintf(stderr, "  step %u: %s %ld %ld %ld\n", w->step, what, k_, g_, r_); \
		if (k_ != g_ || k_ != r_) {                                                        \
			fprintf(stderr,                                                            \
				"  seed %u step %u (persona %d): %s: kernel %ld global %ld "       \
				"rcu %ld\n",                                                       \
				seed0, w->step, w->persona, what, k_, g_, r_);                     \
			return false;                                                              \
		}                                                                                  \
	} while (0)

/* Times: both 0, or both set within 2 seconds of each other. */
static bool same_time(long long k, long long g)
{
	if (!k || !g)
		return !k && !g;
	return k - g <= 2 && g - k <= 2;
}

/* ---------------------------------------------------------------- personas */

struct persona {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[2];
};

static const struct persona personas[4] = {
	{ 0, 0, 0, { 0, 0 } },
	{ 1001, 1001, 0, { 0, 0 } },
	{ 1002, 1001, 0, { 0, 0 } },
	{ 1003, 1003, 1, { 1001, 0 } },
};

static bool become(struct world *w, int i)
{
	struct grace_ipc_cred c;

	if (!g_personas)
		return true;
	root_again();
	if (setgroups((size_t)personas[i].ngroups, personas[i].groups) != 0 ||
	    setegid(personas[i].gid) != 0 || seteuid(personas[i].uid) != 0) {
		perror("ipc_kernel: switching persona");
		return false;
	}
	w->persona = i;
	/* grace gets what the kernel now sees: euid, egid, groups, effective capabilities. */
	if (grace_ipc_cred_self(&c) != 0)
		return false;
	return grace_ipc_proc_setcred(w->p[G], &c) == 0 && grace_ipc_proc_setcred(w->p[R], &c) == 0;
}

/* ---------------------------------------------------------------- helpers */

static int find_handle(struct world *w, int t, int side, int id)
{
	for (int i = 0; i < HANDLES; i++)
		if (w->h[t][i].id[side] == id && (w->h[t][i].live || w->h[t][i].natt))
			return i;
	return -1;
}

/* Does the handle still exist (kernel side)? */
static bool exists(const struct handle *h)
{
	return h->live || h->natt > 0;
}

/* A *get call that returned IDs: all three must agree on success, and name the same handle. */
static bool got_ids(struct world *w, unsigned seed0, int t, const char *what, int hi, long kres,
		    long gres, long rres, int nsems, size_t len, bool huge)
{
	tally(what, kres);
	if ((kres >= 0) != (gres >= 0) || (kres >= 0) != (rres >= 0) ||
	    (kres < 0 && (kres != gres || kres != rres)))
		FAIL("%s: kernel %ld global %ld rcu %ld", what, kres, gres, rres);
	if (kres < 0)
		return true;
	k_track(t, (int)kres);
	int a = find_handle(w, t, K, (int)kres), b = find_handle(w, t, G, (int)gres),
	    c = find_handle(w, t, R, (int)rres);
	if (a != b || a != c)
		FAIL("%s found different objects (%d %d %d)", what, a, b, c);
	if (a >= 0)
		return true; /* an existing keyed object */
	struct handle *h = &w->h[t][hi];
	if (exists(h)) { /* a new object but the handle is busy: drop it */
		if (t == T_SEM) {
			semctl((int)kres, 0, IPC_RMID);
			grace_ipc_sem_rmid(w->p[G], (int)gres);
			grace_ipc_sem_rmid(w->p[R], (int)rres);
		} else if (t == T_MSG) {
			msgctl((int)kres, IPC_RMID, NULL);
			grace_ipc_msgctl(w->p[G], (int)gres, GRACE_IPC_RMID, NULL);
			grace_ipc_msgctl(w->p[R], (int)rres, GRACE_IPC_RMID, NULL);
		} else {
			shmctl((int)kres, IPC_RMID, NULL);
			grace_ipc_shmctl(w->p[G], (int)gres, GRACE_IPC_RMID, NULL);
			grace_ipc_shmctl(w->p[R], (int)rres, GRACE_IPC_RMID, NULL);
		}
		return true;
	}
	h->id[K] = (int)kres;
	h->id[G] = (int)gres;
	h->id[R] = (int)rres;
	h->nsems = nsems;
	h->len = len;
	h->huge = huge;
	h->live = true;
	h->natt = 0;
	h->gen++;
	return true;
}

/* The IDs to use for a call: the handle's (live or removed), or a negative one. */
static void ids_for(struct world *w, struct handle *h, int id[NSIDES])
{
	for (int s = 0; s < NSIDES; s++)
		id[s] = h->id[s];
	if (pick(w, 40) == 0)
		id[K] = id[G] = id[R] = -1 - pick(w, 3);
}

/* An index for the *_STAT commands: a live handle's slot, or one with nothing. */
static bool index_for(struct world *w, struct handle *h, int idx[NSIDES])
{
	if (!h->live || h->id[K] < 0)
		return false;
	for (int s = 0; s < NSIDES; s++)
		idx[s] = h->id[s] & 0x7fff;
	return true;
}

/* Map an ID returned by a *_STAT command back to a handle (-1: none). */
static long idmap(struct world *w, int t, int side, long ret)
{
	if (ret < 0)
		return ret;
	return 1000 + find_handle(w, t, side, (int)ret);
}

static int rnd_mode(struct world *w)
{
	static const int modes[] = {
		0600, 0640, 0660, 0666, 0644, 0400, 0200, 0604, 0060, 0006, 0
	};

	return modes[pick(w, 11)];
}

/* Flags of a *get call: creation bits, a mode, sometimes bits the kernel ignores. */
static int rnd_getflags(struct world *w)
{
	static const int fl[] = { 0, IPC_CREAT, IPC_CREAT | IPC_EXCL, IPC_EXCL };
	int flags = fl[pick(w, 4)] | rnd_mode(w);

	if (pick(w, 8) == 0)
		flags |= pick(w, 2) ? 0100000 : 0x10000000;
	return flags;
}

static void rnd_owner(struct world *w, unsigned *uid, unsigned *gid, unsigned *mode)
{
	static const unsigned uids[] = { 0, 1001, 1002, 1003, 4000, (unsigned)-1 };
	static const unsigned gids[] = { 0, 1001, 1003, 4000, (unsigned)-1 };

	*uid = uids[pick(w, pick(w, 10) == 0 ? 6 : 5)];
	*gid = gids[pick(w, pick(w, 10) == 0 ? 5 : 4)];
	*mode = (unsigned)rnd_mode(w) | (pick(w, 4) == 0 ? 07000u : 0u);
}

/* ---------------------------------------------------------------- semaphores */

static bool sem_stat_same(struct world *w, unsigned seed0, const struct semid_ds *k,
			  const struct grace_ipc_semid_ds *g, const char *side)
{
	if ((int)k->sem_perm.__key != g->sem_perm.key || k->sem_perm.uid != g->sem_perm.uid ||
	    k->sem_perm.gid != g->sem_perm.gid || k->sem_perm.cuid != g->sem_perm.cuid ||
	    k->sem_perm.cgid != g->sem_perm.cgid || k->sem_perm.mode != g->sem_perm.mode ||
	    k->sem_nsems != g->sem_nsems || !same_time(k->sem_otime, g->sem_otime) ||
	    !same_time(k->sem_ctime, g->sem_ctime))
		FAIL("sem stat (%s): key %d/%d uid %u/%u gid %u/%u cuid %u/%u mode %o/%o nsems "
		     "%lu/%lu otime %ld/%lld ctime %ld/%lld",
		     side, (int)k->sem_perm.__key, g->sem_perm.key, k->sem_perm.uid,
		     g->sem_perm.uid, k->sem_perm.gid, g->sem_perm.gid, k->sem_perm.cuid,
		     g->sem_perm.cuid, k->sem_perm.mode, g->sem_perm.mode,
		     (unsigned long)k->sem_nsems, g->sem_nsems, (long)k->sem_otime, g->sem_otime,
		     (long)k->sem_ctime, g->sem_ctime);
	return true;
}

static void rnd_sops(struct world *w, int nsems, struct sembuf *kops, struct grace_ipc_sembuf *gops,
		     int nops, bool undo)
{
	for (int i = 0; i < nops; i++) {
		int num = pick(w, 8) == 0 ? nsems + pick(w, 2) : pick(w, nsems);
		int o = pick(w, 7) - 3;
		int flg = IPC_NOWAIT;

		if (pick(w, 25) == 0)
			o = pick(w, 2) ? 32767 : -32767;
		if (undo || pick(w, 4) == 0)
			flg |= SEM_UNDO;
		if (pick(w, 12) == 0)
			flg |= 0x2000; /* ignored */
		kops[i].sem_num = gops[i].sem_num = (unsigned short)num;
		kops[i].sem_op = gops[i].sem_op = (short)o;
		kops[i].sem_flg = gops[i].sem_flg = (short)flg;
	}
}

static bool sem_step(struct world *w, unsigned seed0)
{
	static struct sembuf kops[BUF];
	static struct grace_ipc_sembuf gops[BUF];
	unsigned short kv[BUF], gv[BUF], rv[BUF];
	int hi = pick(w, HANDLES);
	struct handle *h = &w->h[T_SEM][hi];
	int id[NSIDES];
	int nsems = h->nsems ? h->nsems : 1;
	union grace_ipc_semun ga, ra;
	union semun_ ka;
	long kres, gres, rres;

	ids_for(w, h, id);
	if (g_debug)
		fprintf(stderr, "  step %u: sem handle %d ids %d/%d/%d live %d\n", w->step, hi,
			id[K], id[G], id[R], h->live);
	switch (pick(w, 12)) {
	case 0: { /* semget: private, or a key with flag combinations */
		int ns_choice[] = { -1, 0, 1, 2, 3, MAXSEMS, k_lim.semmsl + 1 };
		int n = ns_choice[pick(w, 7)];
		int keyed = pick(w, 2);
		int key = keyed ? w->keys[T_SEM][pick(w, 3)] : IPC_PRIVATE;
		int flags = rnd_getflags(w);

		if (exists(h) && !keyed)
			break; /* keep the handle; private creations go to free handles */
		kres = kr(semget(key, n, flags));
		gres = grace_ipc_semget(w->p[G], key, n, flags);
		rres = grace_ipc_semget(w->p[R], key, n, flags);
		return got_ids(w, seed0, T_SEM, "semget", hi, kres, gres, rres, n, 0, false);
	}
	case 1:
	case 2: { /* semop, always IPC_NOWAIT */
		int shapes[] = { 0, 1, 1, 2, 3, 4, k_lim.semopm + 1 };
		int nops = shapes[pick(w, 7)];

		if (nops > BUF)
			nops = BUF;
		rnd_sops(w, nsems, kops, gops, nops, false);
		SAME3("semop", kr(semop(id[K], kops, (size_t)nops)),
		      grace_ipc_semop(w->p[G], id[G], gops, (size_t)nops),
		      grace_ipc_semop(w->p[R], id[R], gops, (size_t)nops));
		break;
	}
	case 3: { /* GETVAL, GETPID, GETNCNT, GETZCNT, with semnum sometimes out of range */
		static const int cmds[] = { GETVAL, GETPID, GETNCNT, GETZCNT };
		static const char *const names[] = { "getval", "getpid", "getncnt", "getzcnt" };
		int c = pick(w, 4);
		int num = pick(w, 6) == 0 ? (pick(w, 2) ? -1 : nsems) : pick(w, nsems);

		ga.val = ra.val = 0;
		SAME3(names[c], kr(semctl(id[K], num, cmds[c])),
		      grace_ipc_semctl(w->p[G], id[G], num, cmds[c], ga),
		      grace_ipc_semctl(w->p[R], id[R], num, cmds[c], ra));
		break;
	}
	case 4: { /* SETVAL, with values sometimes out of range */
		int num = pick(w, 8) == 0 ? nsems : pick(w, nsems);
		int vals[] = { 0, 1, 2, 5, 32767, -1, 32768 };

		ka.val = ga.val = ra.val = vals[pick(w, 7)];
		SAME3("setval", kr(semctl(id[K], num, SETVAL, ka)),
		      grace_ipc_semctl(w->p[G], id[G], num, SETVAL, ga),
		      grace_ipc_semctl(w->p[R], id[R], num, SETVAL, ra));
		break;
	}
	case 5: /* GETALL */
		ka.array = kv;
		ga.array = gv;
		ra.array = rv;
		memset(kv, 0xff, sizeof(kv));
		memset(gv, 0xff, sizeof(gv));
		memset(rv, 0xff, sizeof(rv));
		kres = kr(semctl(id[K], 0, GETALL, ka));
		SAME3("getall", kres, grace_ipc_semctl(w->p[G], id[G], 0, GETALL, ga),
		      grace_ipc_semctl(w->p[R], id[R], 0, GETALL, ra));
		if (kres == 0 && (memcmp(kv, gv, (size_t)nsems * 2) != 0 ||
				  memcmp(kv, rv, (size_t)nsems * 2) != 0))
			FAIL("getall values differ");
		break;
	case 6: /* SETALL, sometimes with a value above SEMVMX */
		for (int i = 0; i < nsems; i++)
			kv[i] = (unsigned short)pick(w, 4);
		if (pick(w, 6) == 0)
			kv[pick(w, nsems)] = 32768;
		ka.array = ga.array = ra.array = kv;
		SAME3("setall", kr(semctl(id[K], 0, SETALL, ka)),
		      grace_ipc_semctl(w->p[G], id[G], 0, SETALL, ga),
		      grace_ipc_semctl(w->p[R], id[R], 0, SETALL, ra));
		break;
	case 7: { /* IPC_STAT, or SEM_STAT / SEM_STAT_ANY by index */
		struct semid_ds kd;
		struct grace_ipc_semid_ds gd, rd;
		int idx[NSIDES];
		int cmd = IPC_STAT;

		memset(&kd, 0, sizeof(kd));
		ka.buf = &kd;
		ga.buf = &gd;
		ra.buf = &rd;
		if (pick(w, 3) == 0 && index_for(w, h, idx)) {
			cmd = pick(w, 2) ? SEM_STAT : SEM_STAT_ANY;
			kres = idmap(w, T_SEM, K, kr(semctl(idx[K], 0, cmd, ka)));
			gres = idmap(w, T_SEM, G, grace_ipc_semctl(w->p[G], idx[G], 0, cmd, ga));
			rres = idmap(w, T_SEM, R, grace_ipc_semctl(w->p[R], idx[R], 0, cmd, ra));
			SAME3(cmd == SEM_STAT ? "sem_stat" : "sem_stat_any", kres, gres, rres);
		} else {
			kres = kr(semctl(id[K], 0, IPC_STAT, ka));
			SAME3("sem ipc_stat", kres,
			      grace_ipc_semctl(w->p[G], id[G], 0, IPC_STAT, ga),
			      grace_ipc_semctl(w->p[R], id[R], 0, IPC_STAT, ra));
		}
		if (kres >= 0 && (!sem_stat_same(w, seed0, &kd, &gd, "global") ||
				  !sem_stat_same(w, seed0, &kd, &rd, "rcu")))
			return false;
		break;
	}
	case 8: { /* IPC_SET */
		struct semid_ds kd;
		struct grace_ipc_semid_ds gd;

		memset(&kd, 0, sizeof(kd));
		memset(&gd, 0, sizeof(gd));
		rnd_owner(w, &gd.sem_perm.uid, &gd.sem_perm.gid, &gd.sem_perm.mode);
		kd.sem_perm.uid = gd.sem_perm.uid;
		kd.sem_perm.gid = gd.sem_perm.gid;
		kd.sem_perm.mode = (unsigned short)gd.sem_perm.mode;
		ka.buf = &kd;
		ga.buf = ra.buf = &gd;
		SAME3("sem ipc_set", kr(semctl(id[K], 0, IPC_SET, ka)),
		      grace_ipc_semctl(w->p[G], id[G], 0, IPC_SET, ga),
		      grace_ipc_semctl(w->p[R], id[R], 0, IPC_SET, ra));
		break;
	}
	case 9: { /* IPC_INFO / SEM_INFO: the limits (usage figures are system-wide) */
		struct seminfo ki;
		struct grace_ipc_seminfo gi, ri;
		int cmd = pick(w, 2) ? IPC_INFO : SEM_INFO;

		ka.info = &ki;
		ga.info = &gi;
		ra.info = &ri;
		kres = kr(semctl(0, 0, cmd, ka));
		gres = grace_ipc_semctl(w->p[G], 0, 0, cmd, ga);
		rres = grace_ipc_semctl(w->p[R], 0, 0, cmd, ra);
		SAME3("sem_info", kres >= 0, gres >= 0, rres >= 0);
		if (ki.semmni != gi.semmni || ki.semmns != gi.semmns || ki.semmsl != gi.semmsl ||
		    ki.semopm != gi.semopm || ki.semvmx != gi.semvmx || ki.semmnu != gi.semmnu ||
		    ki.semmap != gi.semmap || ki.semume != gi.semume ||
		    memcmp(&gi, &ri, sizeof(gi)) != 0 ||
		    (cmd == IPC_INFO && (ki.semusz != gi.semusz || ki.semaem != gi.semaem)))
			FAIL("seminfo differs");
		break;
	}
	default: /* IPC_RMID, of live and of removed sets */
		if (h->live && pick(w, 3))
			break;
		ka.val = ga.val = ra.val = 0;
		kres = kr(semctl(id[K], 0, IPC_RMID));
		SAME3("sem rmid", kres, grace_ipc_semctl(w->p[G], id[G], 0, IPC_RMID, ga),
		      grace_ipc_semctl(w->p[R], id[R], 0, IPC_RMID, ra));
		if (kres == 0 && id[K] == h->id[K])
			h->live = false; /* keep the IDs: later calls must fail with EINVAL */
		break;
	}
	return true;
}

/* ---------------------------------------------------------------- message queues */

struct kmsg {
	long mtype;
	char text[40];
};

static bool msg_stat_same(struct world *w, unsigned seed0, const struct msqid_ds *k,
			  const struct grace_ipc_msqid_ds *g, const char *side)
{
	if ((int)k->msg_perm.__key != g->msg_perm.key || k->msg_perm.uid != g->msg_perm.uid ||
	    k->msg_perm.gid != g->msg_perm.gid || k->msg_perm.cuid != g->msg_perm.cuid ||
	    k->msg_perm.cgid != g->msg_perm.cgid || k->msg_perm.mode != g->msg_perm.mode ||
	    k->__msg_cbytes != g->msg_cbytes || k->msg_qnum != g->msg_qnum ||
	    k->msg_qbytes != g->msg_qbytes || k->msg_lspid != g->msg_lspid ||
	    k->msg_lrpid != g->msg_lrpid || !same_time(k->msg_stime, g->msg_stime) ||
	    !same_time(k->msg_rtime, g->msg_rtime) || !same_time(k->msg_ctime, g->msg_ctime))
		FAIL("msg stat (%s): uid %u/%u gid %u/%u mode %o/%o cbytes %lu/%lu qnum %lu/%lu "
		     "qbytes %lu/%lu lspid %d/%d lrpid %d/%d stime %ld/%lld rtime %ld/%lld",
		     side, k->msg_perm.uid, g->msg_perm.uid, k->msg_perm.gid, g->msg_perm.gid,
		     k->msg_perm.mode, g->msg_perm.mode, (unsigned long)k->__msg_cbytes,
		     g->msg_cbytes, (unsigned long)k->msg_qnum, g->msg_qnum,
		     (unsigned long)k->msg_qbytes, g->msg_qbytes, k->msg_lspid, g->msg_lspid,
		     k->msg_lrpid, g->msg_lrpid, (long)k->msg_stime, g->msg_stime,
		     (long)k->msg_rtime, g->msg_rtime);
	return true;
}

static void rnd_msg(struct world *w, struct kmsg *m, size_t *sz)
{
	static const long types[] = { 1, 2, 3, 4, 1, 2, 0, -1 };
	static const size_t sizes[] = { 0, 1, 3, 8, 17, 40 };

	m->mtype = types[pick(w, pick(w, 10) == 0 ? 8 : 6)];
	*sz = sizes[pick(w, 6)];
	for (size_t i = 0; i < sizeof(m->text); i++)
		m->text[i] = (char)rnd(w);
}

/* A receive's flags and type: every mode, sometimes MSG_COPY (always with IPC_NOWAIT, except
 * when the kernel must refuse it before looking at anything). */
static void rnd_rcv(struct world *w, long *type, int *flg, size_t *sz)
{
	static const long types[] = { 0, 1, 2, 3, 4, -1, -2, -3, -4, 0, LONG_MIN };
	static const size_t sizes[] = { 0, 2, 8, 16, 40, 40 };

	*type = types[pick(w, 11)];
	*flg = IPC_NOWAIT;
	if (pick(w, 4) == 0)
		*flg |= MSG_EXCEPT;
	if (pick(w, 4) == 0)
		*flg |= MSG_NOERROR;
	if (pick(w, 6) == 0) {
		*flg |= MSG_COPY;
		*type = pick(w, 5) - 1;
		if (pick(w, 6) == 0)
			*flg &= ~IPC_NOWAIT; /* EINVAL before anything */
	}
	if (pick(w, 12) == 0)
		*flg |= 0x1000000; /* ignored */
	*sz = sizes[pick(w, 6)];
}

static bool msg_step(struct world *w, unsigned seed0)
{
	int hi = pick(w, HANDLES);
	struct handle *h = &w->h[T_MSG][hi];
	int id[NSIDES];
	long kres, gres, rres;

	ids_for(w, h, id);
	switch (pick(w, 10)) {
	case 0: { /* msgget */
		int keyed = pick(w, 2);
		int key = keyed ? w->keys[T_MSG][pick(w, 3)] : IPC_PRIVATE;
		int flags = rnd_getflags(w);

		if (exists(h) && !keyed)
			break;
		kres = kr(msgget(key, flags));
		gres = grace_ipc_msgget(w->p[G], key, flags);
		rres = grace_ipc_msgget(w->p[R], key, flags);
		return got_ids(w, seed0, T_MSG, "msgget", hi, kres, gres, rres, 0, 0, false);
	}
	case 1:
	case 2:
	case 3: { /* msgsnd, always IPC_NOWAIT */
		struct kmsg m;
		size_t sz;
		int flg = IPC_NOWAIT | (pick(w, 12) == 0 ? 0x1000000 : 0);

		rnd_msg(w, &m, &sz);
		if (pick(w, 30) == 0) { /* too long: a buffer that long (sanitizers read it) */
			static struct {
				long mtype;
				char text[65536];
			} big;

			sz = (size_t)k_lim.msgmax + 1;
			big.mtype = m.mtype;
			if (sz <= sizeof(big.text)) {
				SAME3("msgsnd", kr(msgsnd(id[K], &big, sz, flg)),
				      grace_ipc_msgsnd(w->p[G], id[G], &big, sz, flg),
				      grace_ipc_msgsnd(w->p[R], id[R], &big, sz, flg));
			}
			break;
		}
		if (pick(w, 40) == 0) {
			SAME3("msgsnd", kr(msgsnd(id[K], NULL, sz, flg)),
			      grace_ipc_msgsnd(w->p[G], id[G], NULL, sz, flg),
			      grace_ipc_msgsnd(w->p[R], id[R], NULL, sz, flg));
			break;
		}
		SAME3("msgsnd", kr(msgsnd(id[K], &m, sz, flg)),
		      grace_ipc_msgsnd(w->p[G], id[G], &m, sz, flg),
		      grace_ipc_msgsnd(w->p[R], id[R], &m, sz, flg));
		break;
	}
	case 4:
	case 5:
	case 6: { /* msgrcv, never blocking */
		struct kmsg km, gm, rm;
		long type;
		int flg;
		size_t sz;

		rnd_rcv(w, &type, &flg, &sz);
		memset(&km, 0, sizeof(km));
		memset(&gm, 0, sizeof(gm));
		memset(&rm, 0, sizeof(rm));
		kres = kr(msgrcv(id[K], &km, sz, type, flg));
		SAME3((flg & MSG_COPY) ? "msgrcv copy" : "msgrcv", kres,
		      grace_ipc_msgrcv(w->p[G], id[G], &gm, sz, type, flg),
		      grace_ipc_msgrcv(w->p[R], id[R], &rm, sz, type, flg));
		if (kres >= 0 &&
		    (memcmp(&km, &gm, sizeof(km)) != 0 || memcmp(&km, &rm, sizeof(km)) != 0))
			FAIL("msgrcv: the messages differ (type %ld/%ld/%ld)", km.mtype, gm.mtype,
			     rm.mtype);
		break;
	}
	case 7: { /* IPC_STAT, or MSG_STAT / MSG_STAT_ANY by index */
		struct msqid_ds kd;
		struct grace_ipc_msqid_ds gd, rd;
		int idx[NSIDES];

		memset(&kd, 0, sizeof(kd));
		if (pick(w, 3) == 0 && index_for(w, h, idx)) {
			int cmd = pick(w, 2) ? MSG_STAT : MSG_STAT_ANY;

			kres = idmap(w, T_MSG, K, kr(msgctl(idx[K], cmd, &kd)));
			gres = idmap(w, T_MSG, G, grace_ipc_msgctl(w->p[G], idx[G], cmd, &gd));
			rres = idmap(w, T_MSG, R, grace_ipc_msgctl(w->p[R], idx[R], cmd, &rd));
			SAME3(cmd == MSG_STAT ? "msg_stat" : "msg_stat_any", kres, gres, rres);
		} else {
			kres = kr(msgctl(id[K], IPC_STAT, &kd));
			SAME3("msg ipc_stat", kres, grace_ipc_msgctl(w->p[G], id[G], IPC_STAT, &gd),
			      grace_ipc_msgctl(w->p[R], id[R], IPC_STAT, &rd));
		}
		if (kres >= 0 && (!msg_stat_same(w, seed0, &kd, &gd, "global") ||
				  !msg_stat_same(w, seed0, &kd, &rd, "rcu")))
			return false;
		break;
	}
	case 8: { /* IPC_SET, and IPC_INFO / MSG_INFO */
		static const unsigned long qb[] = { 16384, 40, 100, 16385, 0, 64 };
		struct msqid_ds kd;
		struct grace_ipc_msqid_ds gd;

		if (pick(w, 4) == 0) {
			struct msginfo ki;
			struct grace_ipc_msginfo gi, ri;
			int cmd = pick(w, 2) ? IPC_INFO : MSG_INFO;

			kres = kr(msgctl(0, cmd, (struct msqid_ds *)(void *)&ki));
			gres = grace_ipc_msgctl(w->p[G], 0, cmd,
						(struct grace_ipc_msqid_ds *)(void *)&gi);
			rres = grace_ipc_msgctl(w->p[R], 0, cmd,
						(struct grace_ipc_msqid_ds *)(void *)&ri);
			SAME3("msg_info", kres >= 0, gres >= 0, rres >= 0);
			if (ki.msgmax != gi.msgmax || ki.msgmnb != gi.msgmnb ||
			    ki.msgmni != gi.msgmni || ki.msgssz != gi.msgssz ||
			    ki.msgseg != gi.msgseg || gi.msgmax != ri.msgmax ||
			    gi.msgmni != ri.msgmni ||
			    (cmd == IPC_INFO && (ki.msgpool != gi.msgpool ||
						 ki.msgmap != gi.msgmap || ki.msgtql != gi.msgtql)))
				FAIL("msginfo differs");
			break;
		}
		memset(&kd, 0, sizeof(kd));
		memset(&gd, 0, sizeof(gd));
		rnd_owner(w, &gd.msg_perm.uid, &gd.msg_perm.gid, &gd.msg_perm.mode);
		gd.msg_qbytes = qb[pick(w, 6)];
		kd.msg_perm.uid = gd.msg_perm.uid;
		kd.msg_perm.gid = gd.msg_perm.gid;
		kd.msg_perm.mode = (unsigned short)gd.msg_perm.mode;
		kd.msg_qbytes = gd.msg_qbytes;
		SAME3("msg ipc_set", kr(msgctl(id[K], IPC_SET, &kd)),
		      grace_ipc_msgctl(w->p[G], id[G], IPC_SET, &gd),
		      grace_ipc_msgctl(w->p[R], id[R], IPC_SET, &gd));
		break;
	}
	default: /* IPC_RMID */
		if (h->live && pick(w, 3))
			break;
		kres = kr(msgctl(id[K], IPC_RMID, NULL));
		SAME3("msg rmid", kres, grace_ipc_msgctl(w->p[G], id[G], IPC_RMID, NULL),
		      grace_ipc_msgctl(w->p[R], id[R], IPC_RMID, NULL));
		if (kres == 0 && id[K] == h->id[K])
			h->live = false;
		break;
	}
	return true;
}

/* ---------------------------------------------------------------- shared memory */

static bool shm_stat_same(struct world *w, unsigned seed0, const struct shmid_ds *k,
			  const struct grace_ipc_shmid_ds *g, const char *side)
{
	if ((int)k->shm_perm.__key != g->shm_perm.key || k->shm_perm.uid != g->shm_perm.uid ||
	    k->shm_perm.gid != g->shm_perm.gid || k->shm_perm.cuid != g->shm_perm.cuid ||
	    k->shm_perm.cgid != g->shm_perm.cgid || k->shm_perm.mode != g->shm_perm.mode ||
	    k->shm_segsz != g->shm_segsz || k->shm_nattch != g->shm_nattch ||
	    k->shm_cpid != g->shm_cpid || k->shm_lpid != g->shm_lpid ||
	    !same_time(k->shm_atime, g->shm_atime) || !same_time(k->shm_dtime, g->shm_dtime) ||
	    !same_time(k->shm_ctime, g->shm_ctime))
		FAIL("shm stat (%s): key %d/%d uid %u/%u mode %o/%o segsz %zu/%zu nattch %lu/%lu "
		     "cpid %d/%d lpid %d/%d atime %ld/%lld dtime %ld/%lld",
		     side, (int)k->shm_perm.__key, g->shm_perm.key, k->shm_perm.uid,
		     g->shm_perm.uid, k->shm_perm.mode, g->shm_perm.mode, (size_t)k->shm_segsz,
		     g->shm_segsz, (unsigned long)k->shm_nattch, g->shm_nattch, k->shm_cpid,
		     g->shm_cpid, k->shm_lpid, g->shm_lpid, (long)k->shm_atime, g->shm_atime,
		     (long)k->shm_dtime, g->shm_dtime);
	return true;
}

static char *zaddr(struct world *w, int side, int slot)
{
	return w->zone[side] + (size_t)slot * SEGMAX * g_page;
}

/* Reserve a zone slot again (PROT_NONE) after what was mapped there was unmapped. */
static void zone_refill(struct world *w, int slot)
{
	for (int s = 0; s < NSIDES; s++) {
		void *r = mmap(zaddr(w, s, slot), SEGMAX * g_page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		REQUIRE(r == zaddr(w, s, slot));
	}
	w->zused[slot] = false;
}

static long k_shmat(int id, const void *addr, int flg, void **out)
{
	void *a = shmat(id, addr, flg);

	if (a == (void *)-1)
		return -errno;
	*out = a;
	k_att_track(a, true);
	return 0;
}

static void att_forget(struct world *w, int i)
{
	struct attach *at = &w->att[i];
	struct handle *h = &w->h[T_SHM][at->h];

	k_att_track(at->a[K], false);
	if (at->gen == h->gen)
		h->natt -= 3;
	if (at->zslot >= 0)
		zone_refill(w, at->zslot);
	w->att[i] = w->att[--w->natt];
}

static bool shm_step(struct world *w, unsigned seed0)
{
	int hi = pick(w, HANDLES);
	struct handle *h = &w->h[T_SHM][hi];
	int id[NSIDES];
	long kres, gres, rres;

	ids_for(w, h, id);
	if (g_debug)
		fprintf(stderr, "  step %u: shm handle %d ids %d/%d/%d live %d natt %d\n", w->step,
			hi, id[K], id[G], id[R], h->live, h->natt);
	switch (pick(w, 12)) {
	case 0: { /* shmget */
		static const size_t sizes[] = { 0, 1, 100, 4096, 5000, 3 * 4096, 4097 };
		int keyed = pick(w, 2);
		int key = keyed ? w->keys[T_SHM][pick(w, 3)] : IPC_PRIVATE;
		int flags = rnd_getflags(w);
		size_t sz = sizes[pick(w, 7)];

		if (pick(w, 30) == 0)
			sz = k_lim.shmmax + 1;
		if (pick(w, 20) == 0)
			flags |= SHM_NORESERVE;
		if (pick(w, 30) == 0)
			flags |= SHM_HUGETLB | (pick(w, 2) ? 13 << 26 : 0);
		if (exists(h) && !keyed)
			break;
		kres = kr(shmget(key, sz, flags));
		gres = grace_ipc_shmget(w->p[G], key, sz, flags);
		rres = grace_ipc_shmget(w->p[R], key, sz, flags);
		return got_ids(w, seed0, T_SHM, "shmget", hi, kres, gres, rres, 0, sz,
			       (flags & SHM_HUGETLB) != 0);
	}
	case 1:
	case 2:
	case 3: { /* shmat: anywhere, or in a zone slot, or at a bad address */
		void *a[NSIDES] = { NULL, NULL, NULL };
		const void *at[NSIDES] = { NULL, NULL, NULL };
		int flg = 0, slot = -1;
		int kind = pick(w, 8);

		if (pick(w, 3) == 0)
			flg |= SHM_RDONLY;
		if (pick(w, 15) == 0)
			flg |= SHM_EXEC;
		if (pick(w, 12) == 0)
			flg |= 0x1000000; /* ignored */
		if (w->natt >= MAXATT)
			break;
		if (kind == 0 || kind == 1) { /* SHM_REMAP into a free zone slot, maybe SHM_RND */
			int start = pick(w, ZSLOTS);

			for (int i = 0; i < ZSLOTS && slot < 0; i++)
				if (!w->zused[(start + i) % ZSLOTS])
					slot = (start + i) % ZSLOTS;
			if (slot < 0)
				break;
			flg |= SHM_REMAP;
			for (int s = 0; s < NSIDES; s++)
				at[s] = zaddr(w, s, slot) + (kind ? 123 : 0);
			if (kind)
				flg |= SHM_RND;
		} else if (kind == 2) { /* onto the reservation without SHM_REMAP: EINVAL */
			for (int s = 0; s < NSIDES; s++)
				at[s] = zaddr(w, s, ZSLOTS) + g_page;
		} else if (kind == 3) { /* misaligned without SHM_RND, or REMAP without address */
			if (pick(w, 2))
				flg |= SHM_REMAP;
			else
				for (int s = 0; s < NSIDES; s++)
					at[s] = zaddr(w, s, ZSLOTS) + 5;
		}
		kres = k_shmat(id[K], at[K], flg, &a[K]);
		gres = grace_ipc_shmat(w->p[G], id[G], at[G], flg, &a[G]);
		rres = grace_ipc_shmat(w->p[R], id[R], at[R], flg, &a[R]);
		if (kres == 0 && gres == 0 && rres == 0) {
			if (slot >= 0 && ((char *)a[K] != zaddr(w, K, slot) ||
					  (char *)a[G] != zaddr(w, G, slot) ||
					  (char *)a[R] != zaddr(w, R, slot)))
				FAIL("shmat: not at the slot's address");
			struct attach *nat = &w->att[w->natt++];
			int hk = find_handle(w, T_SHM, K, id[K]);

			for (int s = 0; s < NSIDES; s++)
				nat->a[s] = a[s];
			/* The exit step's children must not inherit it (fork() would attach it in
			 * the child, whose exit would then detach it: see exit_step()). */
			if (hk >= 0) {
				size_t u = w->h[T_SHM][hk].huge ? g_hpage : g_page;

				madvise(a[K], (w->h[T_SHM][hk].len + u - 1) / u * u, MADV_DONTFORK);
			}
			nat->h = hk;
			nat->gen = hk >= 0 ? w->h[T_SHM][hk].gen : -1;
			nat->zslot = slot;
			nat->rdonly = (flg & SHM_RDONLY) != 0;
			if (slot >= 0)
				w->zused[slot] = true;
			if (hk >= 0)
				w->h[T_SHM][hk].natt += 3;
		} else {
			/* A side that succeeded alone is detached again before we report. */
			if (kres == 0)
				shmdt(a[K]), k_att_track(a[K], false);
			if (gres == 0)
				grace_ipc_shmdt(w->p[G], a[G]);
			if (rres == 0)
				grace_ipc_shmdt(w->p[R], a[R]);
			if (slot >= 0 && (kres == 0 || gres == 0 || rres == 0))
				zone_refill(w, slot);
		}
		SAME3("shmat", kres, gres, rres);
		break;
	}
	case 4:
	case 5: { /* shmdt: an attachment, or a bad address */
		if (w->natt > 0 && pick(w, 5)) {
			int i = pick(w, w->natt);
			struct attach *at = &w->att[i];

			kres = kr(shmdt(at->a[K]));
			gres = grace_ipc_shmdt(w->p[G], at->a[G]);
			rres = grace_ipc_shmdt(w->p[R], at->a[R]);
			att_forget(w, i);
			SAME3("shmdt", kres, gres, rres);
		} else {
			int off = pick(w, 2) ? 5 : 0;

			SAME3("shmdt bad", kr(shmdt(zaddr(w, K, ZSLOTS) + off)),
			      grace_ipc_shmdt(w->p[G], zaddr(w, G, ZSLOTS) + off),
			      grace_ipc_shmdt(w->p[R], zaddr(w, R, ZSLOTS) + off));
		}
		break;
	}
	case 6: { /* memory: write through one attachment of each side, read through another */
		int i, j;
		size_t len, off;
		unsigned char v = (unsigned char)rnd(w);

		if (w->natt == 0)
			break;
		i = pick(w, w->natt);
		j = pick(w, w->natt);
		if (w->att[i].h < 0 || w->att[i].h != w->att[j].h || w->att[i].gen != w->att[j].gen)
			break;
		len = w->h[T_SHM][w->att[i].h].len;
		if (!len || w->h[T_SHM][w->att[i].h].huge)
			break;
		off = (size_t)pick(w, (int)len);
		if (!w->att[i].rdonly)
			for (int s = 0; s < NSIDES; s++)
				((unsigned char *)w->att[i].a[s])[off] = v;
		unsigned char kv = ((unsigned char *)w->att[j].a[K])[off];
		if (kv != ((unsigned char *)w->att[j].a[G])[off] ||
		    kv != ((unsigned char *)w->att[j].a[R])[off])
			FAIL("segment contents differ at %zu", off);
		tally("shm memory", 0);
		break;
	}
	case 7:
	case 8: { /* IPC_STAT, or SHM_STAT / SHM_STAT_ANY by index */
		struct shmid_ds kd;
		struct grace_ipc_shmid_ds gd, rd;
		int idx[NSIDES];

		memset(&kd, 0, sizeof(kd));
		if (pick(w, 3) == 0 && index_for(w, h, idx)) {
			int cmd = pick(w, 2) ? SHM_STAT : SHM_STAT_ANY;

			kres = idmap(w, T_SHM, K, kr(shmctl(idx[K], cmd, &kd)));
			gres = idmap(w, T_SHM, G, grace_ipc_shmctl(w->p[G], idx[G], cmd, &gd));
			rres = idmap(w, T_SHM, R, grace_ipc_shmctl(w->p[R], idx[R], cmd, &rd));
			SAME3(cmd == SHM_STAT ? "shm_stat" : "shm_stat_any", kres, gres, rres);
		} else {
			kres = kr(shmctl(id[K], IPC_STAT, &kd));
			SAME3("shm ipc_stat", kres, grace_ipc_shmctl(w->p[G], id[G], IPC_STAT, &gd),
			      grace_ipc_shmctl(w->p[R], id[R], IPC_STAT, &rd));
		}
		if (kres >= 0 && (!shm_stat_same(w, seed0, &kd, &gd, "global") ||
				  !shm_stat_same(w, seed0, &kd, &rd, "rcu")))
			return false;
		break;
	}
	case 9: { /* IPC_SET, SHM_LOCK / SHM_UNLOCK, IPC_INFO */
		struct shmid_ds kd;
		struct grace_ipc_shmid_ds gd;
		int c = pick(w, 4);

		if (c == 0) {
			struct shminfo ki;
			struct grace_ipc_shminfo gi, ri;

			kres = kr(shmctl(0, IPC_INFO, (struct shmid_ds *)(void *)&ki));
			gres = grace_ipc_shmctl(w->p[G], 0, IPC_INFO,
						(struct grace_ipc_shmid_ds *)(void *)&gi);
			rres = grace_ipc_shmctl(w->p[R], 0, IPC_INFO,
						(struct grace_ipc_shmid_ds *)(void *)&ri);
			SAME3("shm_info", kres >= 0, gres >= 0, rres >= 0);
			if (ki.shmmax != gi.shmmax || ki.shmmin != gi.shmmin ||
			    ki.shmmni != gi.shmmni || ki.shmseg != gi.shmseg ||
			    ki.shmall != gi.shmall || memcmp(&gi, &ri, sizeof(gi)) != 0)
				FAIL("shminfo differs");
			break;
		}
		if (c == 1) {
			int cmd = pick(w, 2) ? SHM_LOCK : SHM_UNLOCK;

			SAME3(cmd == SHM_LOCK ? "shm_lock" : "shm_unlock",
			      kr(shmctl(id[K], cmd, NULL)),
			      grace_ipc_shmctl(w->p[G], id[G], cmd, NULL),
			      grace_ipc_shmctl(w->p[R], id[R], cmd, NULL));
			break;
		}
		memset(&kd, 0, sizeof(kd));
		memset(&gd, 0, sizeof(gd));
		rnd_owner(w, &gd.shm_perm.uid, &gd.shm_perm.gid, &gd.shm_perm.mode);
		kd.shm_perm.uid = gd.shm_perm.uid;
		kd.shm_perm.gid = gd.shm_perm.gid;
		kd.shm_perm.mode = (unsigned short)gd.shm_perm.mode;
		SAME3("shm ipc_set", kr(shmctl(id[K], IPC_SET, &kd)),
		      grace_ipc_shmctl(w->p[G], id[G], IPC_SET, &gd),
		      grace_ipc_shmctl(w->p[R], id[R], IPC_SET, &gd));
		break;
	}
	default: /* IPC_RMID: an attached segment stays (SHM_DEST) until its last detach */
		if (h->live && pick(w, 3))
			break;
		kres = kr(shmctl(id[K], IPC_RMID, NULL));
		SAME3("shm rmid", kres, grace_ipc_shmctl(w->p[G], id[G], IPC_RMID, NULL),
		      grace_ipc_shmctl(w->p[R], id[R], IPC_RMID, NULL));
		if (kres == 0 && id[K] == h->id[K])
			h->live = false;
		break;
	}
	return true;
}

/* ---------------------------------------------------------------- exits */

/* A child process runs a few calls and exits (the kernel applies its SEM_UNDO adjustments and
 * detaches its segments); grace runs the same calls in a fresh handle and closes it. */
#define EXIT_OPS 4
struct exit_op {
	int type;
	int id[NSIDES];
	struct sembuf kops[3];
	struct grace_ipc_sembuf gops[3];
	int nops;
	struct kmsg m;
	size_t sz;
	long rtype;
	int flg;
	bool rcv;
};

static bool exit_step(struct world *w, unsigned seed0)
{
	struct exit_op ops[EXIT_OPS];
	long kres[EXIT_OPS], gres, rres;
	struct grace_ipc_proc *pg, *pr;
	struct grace_ipc_cred c;
	int n = 1 + pick(w, EXIT_OPS), fds[2];
	pid_t pid;

	for (int i = 0; i < n; i++) {
		struct exit_op *o = &ops[i];
		struct handle *h;

		o->type = pick(w, 3);
		h = &w->h[o->type][pick(w, HANDLES)];
		ids_for(w, h, o->id);
		if (o->type == T_SEM) {
			o->nops = 1 + pick(w, 3);
			rnd_sops(w, h->nsems ? h->nsems : 1, o->kops, o->gops, o->nops, true);
		} else if (o->type == T_MSG) {
			o->rcv = pick(w, 2);
			if (o->rcv) {
				rnd_rcv(w, &o->rtype, &o->flg, &o->sz);
				o->flg = (o->flg | IPC_NOWAIT) & ~MSG_COPY;
			} else {
				rnd_msg(w, &o->m, &o->sz);
			}
		} else {
			o->flg = pick(w, 2) ? SHM_RDONLY : 0;
		}
	}
	REQUIRE(pipe(fds) == 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		for (int i = 0; i < n; i++) {
			struct exit_op *o = &ops[i];
			long r;

			if (o->type == T_SEM) {
				r = kr(semop(o->id[K], o->kops, (size_t)o->nops));
			} else if (o->type == T_MSG) {
				struct kmsg m;

				if (o->rcv)
					r = kr(msgrcv(o->id[K], &m, o->sz, o->rtype, o->flg));
				else
					r = kr(msgsnd(o->id[K], &o->m, o->sz, IPC_NOWAIT));
			} else {
				void *a = shmat(o->id[K], NULL, o->flg);

				r = a == (void *)-1 ? -errno : 0;
			}
			if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(2);
		}
		_exit(0); /* exit_sem(), exit_shm() */
	}
	close(fds[1]);
	for (int i = 0; i < n; i++)
		REQUIRE(read(fds[0], &kres[i], sizeof(kres[i])) == (ssize_t)sizeof(kres[i]));
	close(fds[0]);
	int st;
	REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* grace: the same calls by a process with the same credentials and the child's pid. */
	REQUIRE(grace_ipc_cred_self(&c) == 0);
	REQUIRE(grace_ipc_proc_open(w->ns[G], &c, pid, &pg) == 0);
	REQUIRE(grace_ipc_proc_open(w->ns[R], &c, pid, &pr) == 0);
	for (int i = 0; i < n; i++) {
		struct exit_op *o = &ops[i];

		if (o->type == T_SEM) {
			gres = grace_ipc_semop(pg, o->id[G], o->gops, (size_t)o->nops);
			rres = grace_ipc_semop(pr, o->id[R], o->gops, (size_t)o->nops);
		} else if (o->type == T_MSG) {
			struct kmsg m;

			if (o->rcv) {
				gres = grace_ipc_msgrcv(pg, o->id[G], &m, o->sz, o->rtype, o->flg);
				rres = grace_ipc_msgrcv(pr, o->id[R], &m, o->sz, o->rtype, o->flg);
			} else {
				gres = grace_ipc_msgsnd(pg, o->id[G], &o->m, o->sz, IPC_NOWAIT);
				rres = grace_ipc_msgsnd(pr, o->id[R], &o->m, o->sz, IPC_NOWAIT);
			}
		} else {
			void *a;

			gres = grace_ipc_shmat(pg, o->id[G], NULL, o->flg, &a);
			rres = grace_ipc_shmat(pr, o->id[R], NULL, o->flg, &a);
		}
		if (getenv("IPC_KERNEL_DEBUG"))
			fprintf(stderr, "  step %u exit op %d type %d ids %d/%d/%d: %ld %ld %ld\n",
				w->step, i, o->type, o->id[K], o->id[G], o->id[R], kres[i], gres,
				rres);
		SAME3(o->type == T_SEM   ? "exit semop"
		      : o->type == T_MSG ? "exit msg"
					 : "exit shmat",
		      kres[i], gres, rres);
	}
	grace_ipc_proc_close(pg); /* the exit */
	grace_ipc_proc_close(pr);
	tally("exit", 0);
	/* A removed segment whose last attachment was the child's is gone now: the handle is
	 * free (its IDs keep failing). */
	return true;
}

/* ---------------------------------------------------------------- a run */

static bool run_seed(unsigned seed0, int steps)
{
	struct world *w = (struct world *)calloc(1, sizeof(struct world));
	struct grace_ipc_cred c;
	bool ok = true;

	REQUIRE(w);
	w->seed = seed0;
	/* Never-created handles use ID -1: a small positive ID could be another process's. */
	for (int t = 0; t < 3; t++) {
		for (int i = 0; i < HANDLES; i++)
			w->h[t][i].id[K] = w->h[t][i].id[G] = w->h[t][i].id[R] = -1;
		for (int i = 0; i < 3; i++)
			w->keys[t][i] = 0x4752000 + ((int)getpid() & 0xffff) * 16 + t * 4 + i + 1;
	}
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_GLOBAL_LOCK, &k_lim, &w->ns[G]) == 0);
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, &k_lim, &w->ns[R]) == 0);
	REQUIRE(grace_ipc_cred_self(&c) == 0);
	REQUIRE(grace_ipc_proc_open(w->ns[G], &c, 0, &w->p[G]) == 0);
	REQUIRE(grace_ipc_proc_open(w->ns[R], &c, 0, &w->p[R]) == 0);
	for (int s = 0; s < NSIDES; s++) {
		w->zone[s] = (char *)mmap(NULL, (ZSLOTS + 1) * SEGMAX * g_page, PROT_NONE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		REQUIRE(w->zone[s] != MAP_FAILED);
	}

	for (int step = 0; step < steps && ok; step++) {
		w->step = (unsigned)step;
		if (g_personas && pick(w, 15) == 0)
			REQUIRE(become(w, pick(w, 4)));
		switch (pick(w, EXIT_EVERY)) {
		case 0:
			ok = exit_step(w, seed0);
			break;
		default: {
			int t = pick(w, 3);

			ok = t == T_SEM   ? sem_step(w, seed0)
			     : t == T_MSG ? msg_step(w, seed0)
					  : shm_step(w, seed0);
			break;
		}
		}
	}
	root_again();
	w->persona = 0;
	/* Kernel side: detach and remove what is left (the grace sides go with their ns). */
	while (w->natt > 0) {
		shmdt(w->att[0].a[K]);
		att_forget(w, 0);
	}
	for (int s = 0; s < NSIDES; s++)
		munmap(w->zone[s], (ZSLOTS + 1) * SEGMAX * g_page);
	grace_ipc_ns_destroy(w->ns[G]);
	grace_ipc_ns_destroy(w->ns[R]);
	free(w);
	return ok;
}

static bool kernel_has_sysv(void)
{
	int id = semget(IPC_PRIVATE, 1, 0600 | IPC_CREAT);

	if (id < 0) {
		printf("  no System V IPC here (%s): skipped\n", strerror(errno));
		return false;
	}
	semctl(id, 0, IPC_RMID);
	return true;
}

TEST(matches_the_kernel)
{
	if (!kernel_has_sysv())
		return;
	g_page = (size_t)sysconf(_SC_PAGESIZE);
	g_hpage = 2u << 20;
	FILE *mi = fopen("/proc/meminfo", "r");
	if (mi) {
		char line[128];
		unsigned long kb;

		while (fgets(line, sizeof(line), mi))
			if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
				g_hpage = (size_t)kb << 10;
		fclose(mi);
	}
	REQUIRE(grace_ipc_limits_kernel(&k_lim) == 0);
	if (k_lim.semopm + 1 > BUF)
		k_lim.semopm = BUF - 1; /* only used to build an E2BIG call */
	g_personas = geteuid() == 0 && setegid(0) == 0;
	printf("  %s\n", g_personas ? "as root: 4 personas (root, 1001, 1002, 1003)"
				    : "not root: one persona");
	atexit(k_cleanup);
	for (int s = g_first; s < g_first + g_seeds; s++) {
		bool ok = run_seed((unsigned)s * 7919u, g_steps);

		k_cleanup();
		CHECK_MSG(ok, "seed %u", (unsigned)s * 7919u);
	}
	printf("  %d seeds x %d steps: kernel, global and rcu agree. Results seen:\n", g_seeds,
	       g_steps);
	for (int i = 0; i < 256 && g_seen[i].what; i++)
		printf("    %-14s %-7s %lu\n", g_seen[i].what, errname(g_seen[i].res), g_seen[i].n);
}

int main(int argc, char **argv)
{
	g_debug = getenv("IPC_KERNEL_DEBUG") != NULL;
	if (argc > 1)
		g_seeds = atoi(argv[1]);
	if (argc > 2)
		g_steps = atoi(argv[2]);
	if (argc > 3)
		g_first = atoi(argv[3]);
	return gt_main(1, argv);
}
