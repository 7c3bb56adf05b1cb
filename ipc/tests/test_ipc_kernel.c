/* SPDX-License-Identifier: MIT */
/*
 * "Errors as the real system calls give them", checked against the real system calls: random
 * sequences of semget/semop/semctl calls (seeded, reproducible) run side by side on the kernel's
 * System V semaphores and on both grace_ipc implementations; every result (value or errno) must
 * match. Operations always carry IPC_NOWAIT, so the kernel side never blocks (blocking is tested
 * in test_ipc_sem.c). Kernel sets are created with IPC_PRIVATE or keys derived from the pid and
 * removed at the end. If the kernel has no System V IPC (some sandboxes), the test says so and
 * passes.
 * Usage: ipc_kernel [seeds [steps]]   (default 6 seeds x 2000 steps)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <grace_ipc.h>
#include "gtest_lite.h"

#define HANDLES 6
#define MAXSEMS 6
#define BUF 600

union semun_ {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static int g_seeds = 6, g_steps = 2000;
static int k_semmsl, k_semopm;

/* Every kernel set we created, for removal at exit whatever happens. */
static int k_live[4096];
static int k_nlive;

static void k_track(int id)
{
	for (int i = 0; i < k_nlive; i++)
		if (k_live[i] == id)
			return;
	if (k_nlive < 4096)
		k_live[k_nlive++] = id;
}

static void k_cleanup(void)
{
	for (int i = 0; i < k_nlive; i++)
		semctl(k_live[i], 0, IPC_RMID);
	k_nlive = 0;
}

static int kr(int r)
{
	return r < 0 ? -errno : r;
}

/* Which (call, result) pairs the random sequences reached, so the output shows the coverage. */
static struct {
	const char *what;
	int res;
	unsigned long n;
} g_seen[128];

static void tally(const char *what, int res)
{
	int i;

	if (res > 0)
		res = 1; /* any positive value */
	for (i = 0; i < 128 && g_seen[i].what; i++) {
		if (strcmp(g_seen[i].what, what) == 0 && g_seen[i].res == res) {
			g_seen[i].n++;
			return;
		}
	}
	if (i < 128) {
		g_seen[i].what = what;
		g_seen[i].res = res;
		g_seen[i].n = 1;
	}
}

static const char *errname(int res)
{
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
	default:
		return "other";
	}
}

/* One handle: the same logical set in the kernel (k), the global ns (g) and the RCU ns (r). */
struct handle {
	int k, g, r;
	int nsems;
	bool live;
};

struct world {
	struct grace_ipc_ns *g, *r;
	struct handle h[HANDLES];
	int keys[3];
	unsigned seed;
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

static int find_handle(struct world *w, int which, int id)
{
	for (int i = 0; i < HANDLES; i++) {
		int v = which == 0 ? w->h[i].k : which == 1 ? w->h[i].g : w->h[i].r;

		if (w->h[i].live && v == id)
			return i;
	}
	return -1;
}

static bool kernel_has_sysv(void)
{
	int id = semget(IPC_PRIVATE, 1, 0600 | IPC_CREAT);

	if (id < 0) {
		printf("  no System V semaphores here (%s): skipped\n", strerror(errno));
		return false;
	}
	semctl(id, 0, IPC_RMID);
	FILE *f = fopen("/proc/sys/kernel/sem", "r");
	int mns, mni;
	if (!f || fscanf(f, "%d %d %d %d", &k_semmsl, &mns, &k_semopm, &mni) != 4) {
		k_semmsl = 32000;
		k_semopm = 500;
	}
	if (f)
		fclose(f);
	if (k_semopm + 1 > BUF)
		k_semopm = BUF - 1; /* only used to build an E2BIG call */
	return true;
}

#define EXPECT3(what, kv, gv, rv)                                                              \
	do {                                                                                   \
		int k_ = (kv), g_ = (gv), r_ = (rv);                                           \
		tally(what, k_);                                                               \
		if (k_ != g_ || k_ != r_) {                                                    \
			fprintf(stderr, "  seed %u step %d: %s: kernel %d global %d rcu %d\n", \
				seed, step, what, k_, g_, r_);                                 \
			return false;                                                          \
		}                                                                              \
	} while (0)

static bool run_seed(unsigned seed, int steps)
{
	struct world w;
	static struct sembuf kops[BUF];
	static struct grace_ipc_sembuf gops[BUF];
	unsigned short kv[BUF], gv[BUF], rv[BUF];

	memset(&w, 0, sizeof(w));
	w.seed = seed;
	/* Never-created handles use ID -1: a small positive ID could be another process's set. */
	for (int i = 0; i < HANDLES; i++)
		w.h[i].k = w.h[i].g = w.h[i].r = -1;
	for (int i = 0; i < 3; i++)
		w.keys[i] = 0x4752000 + ((int)getpid() & 0xffff) * 8 + i + 1;
	struct grace_ipc_limits lim;
	memset(&lim, 0, sizeof(lim));
	lim.semmsl = k_semmsl;
	lim.semopm = k_semopm;
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_GLOBAL_LOCK, &lim, &w.g) == 0);
	REQUIRE(grace_ipc_ns_create(GRACE_IPC_RCU, &lim, &w.r) == 0);

	for (int step = 0; step < steps; step++) {
		int hi = pick(&w, HANDLES);
		struct handle *h = &w.h[hi];
		/* The IDs to use: the handle's (live or removed), or a negative one. */
		int k = h->k, g = h->g, r = h->r;
		int nsems = h->nsems ? h->nsems : 1;
		int kres, gres, rres;

		if (pick(&w, 40) == 0)
			k = g = r = -1 - pick(&w, 3);
		switch (pick(&w, 10)) {
		case 0: { /* semget: private, or a key with flag combinations */
			int ns_choice[] = { -1, 0, 1, 2, 3, MAXSEMS, k_semmsl + 1 };
			int n = ns_choice[pick(&w, 7)];
			int keyed = pick(&w, 2);
			int key = keyed ? w.keys[pick(&w, 3)] : IPC_PRIVATE;
			int fl[] = { 0, IPC_CREAT, IPC_CREAT | IPC_EXCL, IPC_EXCL };
			int flags = fl[pick(&w, 4)] | 0600;

			if (h->live && !keyed)
				break; /* keep the handle; private creations go to free handles */
			kres = kr(semget(key, n, flags));
			gres = grace_ipc_semget(w.g, key, n, flags);
			rres = grace_ipc_semget(w.r, key, n, flags);
			if (kres >= 0)
				k_track(kres);
			tally("semget", kres);
			if ((kres >= 0) != (gres >= 0) || (kres >= 0) != (rres >= 0) ||
			    (kres < 0 && (kres != gres || kres != rres))) {
				fprintf(stderr,
					"  seed %u step %d: semget(key %d, %d, %#o): kernel %d "
					"global %d rcu %d\n",
					seed, step, key, n, flags, kres, gres, rres);
				return false;
			}
			if (kres < 0)
				break;
			/* An existing keyed set: all three must name the same handle. */
			int a = find_handle(&w, 0, kres), b = find_handle(&w, 1, gres),
			    c = find_handle(&w, 2, rres);
			if (a != b || a != c) {
				fprintf(stderr, "  seed %u step %d: semget found different sets\n",
					seed, step);
				return false;
			}
			if (a >= 0)
				break;
			if (h->live) { /* a new keyed set but the handle is busy: drop it */
				semctl(kres, 0, IPC_RMID);
				grace_ipc_rmid(w.g, gres);
				grace_ipc_rmid(w.r, rres);
				break;
			}
			h->k = kres, h->g = gres, h->r = rres, h->nsems = n, h->live = true;
			break;
		}
		case 1:
		case 2:
		case 3: { /* semop, always IPC_NOWAIT */
			int shapes[] = { 0, 1, 1, 2, 3, 4, k_semopm + 1 };
			int nops = shapes[pick(&w, 7)];
			for (int i = 0; i < nops; i++) {
				int num = pick(&w, 8) == 0 ? nsems + pick(&w, 2) : pick(&w, nsems);
				int o = pick(&w, 7) - 3;

				if (pick(&w, 25) == 0)
					o = pick(&w, 2) ? 32767 : -32767;
				kops[i].sem_num = gops[i].sem_num = (unsigned short)num;
				kops[i].sem_op = gops[i].sem_op = (short)o;
				kops[i].sem_flg = gops[i].sem_flg = IPC_NOWAIT;
			}
			kres = kr(semop(k, kops, (size_t)nops));
			gres = grace_ipc_semop(w.g, g, gops, (size_t)nops);
			rres = grace_ipc_semop(w.r, r, gops, (size_t)nops);
			EXPECT3("semop", kres, gres, rres);
			break;
		}
		case 4: { /* GETVAL, with semnum sometimes out of range */
			int num = pick(&w, 6) == 0 ? (pick(&w, 2) ? -1 : nsems) : pick(&w, nsems);
			kres = kr(semctl(k, num, GETVAL));
			EXPECT3("getval", kres, grace_ipc_getval(w.g, g, num),
				grace_ipc_getval(w.r, r, num));
			break;
		}
		case 5: { /* SETVAL, with values sometimes out of range */
			int num = pick(&w, 8) == 0 ? nsems : pick(&w, nsems);
			int vals[] = { 0, 1, 2, 5, 32767, -1, 32768 };
			union semun_ a;
			a.val = vals[pick(&w, 7)];
			kres = kr(semctl(k, num, SETVAL, a));
			EXPECT3("setval", kres, grace_ipc_setval(w.g, g, num, a.val),
				grace_ipc_setval(w.r, r, num, a.val));
			break;
		}
		case 6: { /* GETALL */
			union semun_ a;
			a.array = kv;
			memset(kv, 0xff, sizeof(kv));
			memset(gv, 0xff, sizeof(gv));
			memset(rv, 0xff, sizeof(rv));
			kres = kr(semctl(k, 0, GETALL, a));
			gres = grace_ipc_getall(w.g, g, gv, BUF);
			rres = grace_ipc_getall(w.r, r, rv, BUF);
			/* semctl(GETALL) returns 0, grace_ipc_getall() the count. */
			EXPECT3("getall", kres, gres > 0 ? 0 : gres, rres > 0 ? 0 : rres);
			if (kres == 0 && (memcmp(kv, gv, (size_t)gres * 2) != 0 ||
					  memcmp(kv, rv, (size_t)rres * 2) != 0)) {
				fprintf(stderr, "  seed %u step %d: getall values differ\n", seed,
					step);
				return false;
			}
			break;
		}
		case 7: { /* SETALL, sometimes with a value above SEMVMX */
			union semun_ a;
			for (int i = 0; i < nsems; i++)
				kv[i] = (unsigned short)pick(&w, 4);
			if (pick(&w, 6) == 0)
				kv[pick(&w, nsems)] = 32768;
			a.array = kv;
			kres = kr(semctl(k, 0, SETALL, a));
			EXPECT3("setall", kres, grace_ipc_setall(w.g, g, kv, (size_t)h->nsems),
				grace_ipc_setall(w.r, r, kv, (size_t)h->nsems));
			break;
		}
		case 8: { /* GETNCNT / GETZCNT / IPC_STAT */
			int num = pick(&w, 6) == 0 ? nsems : pick(&w, nsems);
			struct semid_ds ds;
			union semun_ a;
			struct grace_ipc_semid_ds gd, rd;

			EXPECT3("getncnt", kr(semctl(k, num, GETNCNT)),
				grace_ipc_getncnt(w.g, g, num), grace_ipc_getncnt(w.r, r, num));
			EXPECT3("getzcnt", kr(semctl(k, num, GETZCNT)),
				grace_ipc_getzcnt(w.g, g, num), grace_ipc_getzcnt(w.r, r, num));
			a.buf = &ds;
			kres = kr(semctl(k, 0, IPC_STAT, a));
			EXPECT3("stat", kres, grace_ipc_stat(w.g, g, &gd),
				grace_ipc_stat(w.r, r, &rd));
			if (kres == 0)
				EXPECT3("stat nsems", (int)ds.sem_nsems, gd.nsems, rd.nsems);
			break;
		}
		default: /* IPC_RMID, of live and of removed sets */
			if (h->live && pick(&w, 3))
				break;
			kres = kr(semctl(k, 0, IPC_RMID));
			EXPECT3("rmid", kres, grace_ipc_rmid(w.g, g), grace_ipc_rmid(w.r, r));
			if (kres == 0 && k == h->k)
				h->live =
					false; /* keep the IDs: later calls must fail with EINVAL */
			break;
		}
	}
	for (int i = 0; i < HANDLES; i++)
		if (w.h[i].live)
			semctl(w.h[i].k, 0, IPC_RMID);
	grace_ipc_ns_destroy(w.g);
	grace_ipc_ns_destroy(w.r);
	return true;
}

TEST(matches_the_kernel)
{
	if (!kernel_has_sysv())
		return;
	atexit(k_cleanup);
	for (int s = 1; s <= g_seeds; s++) {
		bool ok = run_seed((unsigned)s * 7919u, g_steps);

		k_cleanup();
		CHECK_MSG(ok, "seed %u", (unsigned)s * 7919u);
	}
	printf("  %d seeds x %d steps: kernel, global and rcu agree. Results seen:\n", g_seeds,
	       g_steps);
	for (int i = 0; i < 128 && g_seen[i].what; i++)
		printf("    %-10s %-7s %lu\n", g_seen[i].what, errname(g_seen[i].res), g_seen[i].n);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		g_seeds = atoi(argv[1]);
	if (argc > 2)
		g_steps = atoi(argv[2]);
	return gt_main(1, argv);
}
