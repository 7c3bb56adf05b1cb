/* SPDX-License-Identifier: MIT */
/*
 * srcu: the end of a domain and fork(), regression tests of an independent review's faults.
 * Each scenario runs in a child process; the test fails when the child dies or reports.
 *
 * unlock_touches_dead_domain: srcu_read_unlock()'s increment may let synchronize_srcu() return;
 *   the usual teardown "synchronize_srcu(); cleanup_srcu_struct(); free(obj)" may then run
 *   before the unlock's next instruction, so the unlock must touch nothing of the domain after
 *   its increment. A signal handler pauses the reader at random points to widen the window; the
 *   domain lives on its own page, made PROT_NONE right after cleanup_srcu_struct() returns, so a
 *   late access is a SIGSEGV. (Before the fix: the unlock loaded ssp->waiting after it.)
 * unlock_touches_dead_domain_exact: the same, deterministic: a hardware write breakpoint
 *   (perf_event_open with sigtrap) on the unlock counter holds the reader right after its
 *   increment until the updater has run synchronize_srcu() and cleanup_srcu_struct() and retired
 *   the page. Skipped, with a message, where perf_event_open is not permitted or not supported.
 * unlock_wake_after_cleanup: one step later: the reader has loaded the waiting flag with the
 *   updater's bit set (a read breakpoint on the word its unlock loads holds it there), the
 *   updater is woken by another reader, returns and cleans the DEFINE_SRCU() domain up; the held
 *   reader then wakes the updater. (Before the fix: through ssp->state, NULL by then: SIGSEGV.)
 * fork_writes_retired_domain: a domain whose cleanup was refused (a reader inside; release
 *   builds report and return) and whose memory the program reused: fork() must not write it.
 *   (Before the fix: every fork child had ssp->waiting zeroed.)
 * recycled_slot_spurious_wake: a domain's wake slot goes to the next domain set up after its
 *   cleanup, while late readers of the old one may still wake it: those wakes must not end the
 *   new domain's grace period early.
 * many_domains: more live domains than the library's static table of wake slots.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <grace/srcu.h>
#include "gtest_lite.h"

static unsigned env_ms(const char *name, unsigned dflt)
{
	const char *s = getenv(name);
	return s ? (unsigned)strtoul(s, NULL, 10) : dflt;
}

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < ns) {
	}
}

/*
 * A hardware breakpoint on addr for the calling thread, delivering SIGTRAP after the access.
 * Where perf_event_open() is not permitted (containers, perf_event_paranoid >= 3, seccomp) or
 * not supported (no breakpoints, no sigtrap: kernels before 5.13), the child exits 77: the test
 * says why and passes as skipped.
 */
static int open_bp(const void *addr, unsigned int type, unsigned int len)
{
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_BREAKPOINT;
	pe.size = sizeof(pe);
	pe.bp_type = type;
	pe.bp_addr = (uint64_t)(uintptr_t)addr;
	pe.bp_len = len;
	pe.sample_period = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	pe.sigtrap = 1;
	pe.remove_on_exec = 1;
	long fd = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
	if (fd < 0) {
		int e = errno;
		if (e == EACCES || e == EPERM || e == ENOENT || e == ENOSYS || e == EINVAL ||
		    e == EOPNOTSUPP || e == ENODEV) {
			fprintf(stderr,
				"  skipped: perf_event_open (hardware breakpoint with sigtrap): %s\n",
				strerror(e));
			_exit(77);
		}
		fprintf(stderr, "  perf_event_open: %s\n", strerror(e));
		_exit(6);
	}
	return (int)fd;
}

/* ---- unlock_touches_dead_domain ---- */

static char *pages[2];
static long pagesz;
static struct srcu_struct *_Atomic g_dom;
static atomic_int g_state; /* 0 idle, 1 domain ready, 2 reader locked */
static atomic_int g_stop;
static atomic_ulong g_iters;
static void *volatile g_fault_addr;

static void on_usr1(int sig)
{
	(void)sig;
	spin_ns(10000); /* pause the reader wherever it was */
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char msg[200];
	int k = snprintf(msg, sizeof(msg),
			 "  SIGSEGV at %p in a reader still inside srcu_read_unlock() after "
			 "synchronize_srcu() + cleanup_srcu_struct() returned (iteration %lu)\n",
			 si->si_addr, atomic_load(&g_iters));
	if (write(2, msg, (size_t)k) < 0) {
	}
	_exit(3);
}

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		if (atomic_load(&g_state) != 1)
			continue;
		struct srcu_struct *d = atomic_load(&g_dom);
		int idx = srcu_read_lock(d);
		atomic_store(&g_state, 2);
		spin_ns(10000); /* the updater spins in synchronize_srcu_expedited() when we unlock */
		srcu_read_unlock(d, idx);
	}
	return NULL;
}

static void *pester(void *arg)
{
	pthread_t r = *(pthread_t *)arg;
	unsigned seed = 1;
	while (!atomic_load(&g_stop)) {
		pthread_kill(r, SIGUSR1);
		spin_ns(5000 + (uint64_t)(rand_r(&seed) % 10000));
	}
	return NULL;
}

/* The child's handlers: `sig` runs `h`, SIGSEGV runs on_segv (with its siginfo). */
static void catch_signals(int sig, void (*h)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigaction(sig, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
}

static void unlock_dead_child(void *arg)
{
	(void)arg;
	catch_signals(SIGUSR1, on_usr1);
	pagesz = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < 2; i++) {
		pages[i] = mmap(NULL, (size_t)pagesz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				0);
		REQUIRE(pages[i] != MAP_FAILED);
	}
	pthread_t r, p;
	REQUIRE(pthread_create(&r, NULL, reader, NULL) == 0);
	REQUIRE(pthread_create(&p, NULL, pester, &r) == 0);
	uint64_t end = gt_now_ns() + (uint64_t)env_ms("SRCU_TEARDOWN_MS", 1000) * 1000000ull;
	for (unsigned long i = 0; gt_now_ns() < end; i++) {
		char *pg = pages[i & 1];
		REQUIRE(mprotect(pg, (size_t)pagesz, PROT_READ | PROT_WRITE) == 0);
		memset(pg, 0, (size_t)pagesz);
		struct srcu_struct *d = (struct srcu_struct *)pg;
		REQUIRE(init_srcu_struct(d) == 0);
		atomic_store(&g_dom, d);
		atomic_store(&g_state, 1);
		while (atomic_load(&g_state) != 2) {
		}
		/* The reader is inside its section: wait for it, then retire the domain, the way
		 * an object holding an srcu_struct is torn down. */
		synchronize_srcu_expedited(d);
		atomic_store(&g_state, 0);
		cleanup_srcu_struct(d);
		REQUIRE(mprotect(pg, (size_t)pagesz, PROT_NONE) == 0);
		atomic_store(&g_iters, i + 1);
	}
	atomic_store(&g_stop, 1);
	pthread_join(p, NULL);
	pthread_join(r, NULL);
	fprintf(stderr, "  %lu iterations, no late access\n", atomic_load(&g_iters));
}

/* ---- unlock_touches_dead_domain_exact ---- */

static atomic_int x_retired, x_trapped;

static void on_trap(int sig)
{
	(void)sig;
	atomic_store(&x_trapped, 1);
	uint64_t t0 = gt_now_ns();
	while (!atomic_load(&x_retired) && gt_now_ns() - t0 < 1000000000ull) {
	}
}

static void *x_reader(void *arg)
{
	struct srcu_struct *d = (struct srcu_struct *)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
	int idx = srcu_read_lock(d);
	struct grace__srcu_cpu *pc = grace_load_relaxed(&d->fast); /* the rseq counters */
	REQUIRE(pc != NULL);
	int fd = open_bp(&pc[0].unlock[idx], HW_BREAKPOINT_W, HW_BREAKPOINT_LEN_8);
	atomic_store(&g_state, 2);
	gt_sleep_ms(20);          /* the updater is inside synchronize_srcu() */
	srcu_read_unlock(d, idx); /* SIGTRAP right after the increment */
	close(fd);
	return NULL;
}

/* A second reader of the same index: it leaves once the first is held after its increment,
 * and its unlock wakes the updater if it sleeps (so the test does not depend on whether the
 * updater spins or sleeps at that moment). */
static void *x_reader2(void *arg)
{
	struct srcu_struct *d = (struct srcu_struct *)arg;
	int idx = srcu_read_lock(d);
	atomic_store(&g_iters, 1);
	while (!atomic_load(&x_trapped)) {
	}
	srcu_read_unlock(d, idx);
	return NULL;
}

static void unlock_dead_exact_child(void *arg)
{
	(void)arg;
	catch_signals(SIGTRAP, on_trap);
	if (strcmp(grace_srcu_mode(), "rseq+membarrier") != 0) {
		fprintf(stderr, "  skipped: mode %s: the exact variant needs the fast path\n",
			grace_srcu_mode());
		_exit(77);
	}
	pagesz = sysconf(_SC_PAGESIZE);
	char *pg = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	REQUIRE(pg != MAP_FAILED);
	struct srcu_struct *d = (struct srcu_struct *)pg;
	REQUIRE(init_srcu_struct(d) == 0);
	pthread_t r, r2;
	REQUIRE(pthread_create(&r2, NULL, x_reader2, d) == 0);
	while (atomic_load(&g_iters) != 1) {
	}
	REQUIRE(pthread_create(&r, NULL, x_reader, d) == 0);
	while (atomic_load(&g_state) != 2) {
	}
	uint64_t t0 = gt_now_ns();
	synchronize_srcu(d); /* returns once the reader's unlock counter moved */
	uint64_t t1 = gt_now_ns();
	int trapped = atomic_load(&x_trapped);
	cleanup_srcu_struct(d);
	REQUIRE(mprotect(pg, (size_t)pagesz, PROT_NONE) == 0); /* "free(obj)" */
	atomic_store(&x_retired, 1);
	pthread_join(r2, NULL);
	fprintf(stderr, "  synchronize_srcu() %.3f ms, retired after %.3f ms\n",
		(double)(t1 - t0) / 1e6, (double)(gt_now_ns() - t0) / 1e6);
	pthread_join(r, NULL);
	fprintf(stderr, "  reader %s trapped when synchronize_srcu() returned; no late access\n",
		trapped ? "was" : "was not");
}

TEST(unlock_touches_dead_domain_exact)
{
	static char out[4096];
	int st = gt_run_child(unlock_dead_exact_child, NULL, out, sizeof(out));
	fputs(out, stderr);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return; /* not applicable here */
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "srcu_read_unlock() accessed the domain after synchronize_srcu() and "
		  "cleanup_srcu_struct() returned (status %#x)",
		  st);
}

/* ---- unlock_wake_after_cleanup ---- */

DEFINE_STATIC_SRCU(w_dom);
static atomic_int w_locked;

static void *w_reader(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(&w_dom);
	/* The word the unlock loads after its increment: the wake slot's flag (pad_[0] holds
	 * its address), or, where there is none (the library before the fix), ssp->waiting. */
	const uint32_t *flag = (const uint32_t *)(uintptr_t)grace_load_relaxed(&w_dom.pad_[0]);
	if (!flag)
		flag = &w_dom.waiting;
	/* x86 has no read-only data breakpoint */
	int fd = open_bp(flag, HW_BREAKPOINT_RW, HW_BREAKPOINT_LEN_4);
	atomic_fetch_add(&w_locked, 1);
	gt_sleep_ms(50); /* the updater arms `waiting` and sleeps */
	/* Increment, load `waiting` (bit set: SIGTRAP holds us until the domain is cleaned up),
	 * then grace__srcu_unlock_wake() reads ssp->state. */
	srcu_read_unlock(&w_dom, idx);
	close(fd);
	return NULL;
}

static void *w_reader2(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(&w_dom);
	atomic_fetch_add(&w_locked, 1);
	while (!atomic_load(&x_trapped)) {
	}
	srcu_read_unlock(&w_dom, idx); /* the last reader: wakes the updater */
	return NULL;
}

static void wake_after_cleanup_child(void *arg)
{
	(void)arg;
	catch_signals(SIGTRAP, on_trap);
	pthread_t r, r2;
	REQUIRE(pthread_create(&r2, NULL, w_reader2, NULL) == 0);
	REQUIRE(pthread_create(&r, NULL, w_reader, NULL) == 0);
	while (atomic_load(&w_locked) != 2) {
	}
	synchronize_srcu(&w_dom);
	cleanup_srcu_struct(&w_dom); /* a DEFINE_SRCU() domain: the memory stays */
	atomic_store(&x_retired, 1);
	pthread_join(r2, NULL);
	pthread_join(r, NULL);
	fprintf(stderr, "  reader %s trapped; no crash\n",
		atomic_load(&x_trapped) ? "was" : "was not");
}

TEST(unlock_wake_after_cleanup)
{
	static char out[4096];
	int st = gt_run_child(wake_after_cleanup_child, NULL, out, sizeof(out));
	fputs(out, stderr);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return;
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "srcu_read_unlock() of a static domain crashed after synchronize_srcu() and "
		  "cleanup_srcu_struct() returned (status %#x)",
		  st);
}

/* ---- fork_writes_retired_domain ---- */

static struct srcu_struct *f_dom;
static atomic_int f_locked, f_stop;

static void *f_reader(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(f_dom);
	atomic_store(&f_locked, 1);
	while (!atomic_load(&f_stop))
		gt_sleep_ms(1);
	srcu_read_unlock(f_dom, idx);
	return NULL;
}

static void fork_retired_child(void *arg)
{
	(void)arg;
	f_dom = aligned_alloc(64, 64);
	REQUIRE(f_dom && init_srcu_struct(f_dom) == 0);
	pthread_t r;
	REQUIRE(pthread_create(&r, NULL, f_reader, NULL) == 0);
	while (!atomic_load(&f_locked)) {
	}
	/* Release builds: reported ("not freed") and returns. The program gives up on the domain
	 * and reuses its memory (free() and malloc() may hand it back just the same). */
	cleanup_srcu_struct(f_dom);
	unsigned char *o = (unsigned char *)f_dom;
	memset(o, 0xAB, 64);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 64; i++)
			if (o[i] != 0xAB) {
				fprintf(stderr, "  fork child: byte %d of reused memory is %#x\n",
					i, o[i]);
				_exit(4);
			}
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 5); /* the reader never leaves: do not join */
}

TEST(fork_writes_retired_domain)
{
	static char out[4096];
	int st = gt_run_child(fork_retired_child, NULL, out, sizeof(out));
	fputs(out, stderr);
	if (GRACE__DEBUG)
		return; /* debug builds abort at the refused cleanup_srcu_struct() */
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "fork() wrote into the memory of a domain whose cleanup was refused (status %#x)",
		  st);
}

TEST(unlock_touches_dead_domain)
{
	static char out[4096];
	int st = gt_run_child(unlock_dead_child, NULL, out, sizeof(out));
	fputs(out, stderr);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "srcu_read_unlock() accessed the domain after synchronize_srcu() and "
		  "cleanup_srcu_struct() returned (status %#x)",
		  st);
}

/* ---- recycled_slot_spurious_wake ---- */

static struct srcu_struct r_dom;
static atomic_int r_done;

static void *r_sync(void *arg)
{
	(void)arg;
	synchronize_srcu(&r_dom);
	atomic_store(&r_done, 1);
	return NULL;
}

TEST(recycled_slot_spurious_wake)
{
	struct srcu_struct a;
	REQUIRE(init_srcu_struct(&a) == 0);
	struct grace__srcu_wake *old = GRACE__SRCU_WAKE(&a);
	REQUIRE(old != NULL);
	cleanup_srcu_struct(&a);
	REQUIRE(init_srcu_struct(&r_dom) == 0);
	/* The free list hands the slot just given back to the next domain. */
	CHECK(GRACE__SRCU_WAKE(&r_dom) == old);
	int idx = srcu_read_lock(&r_dom);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, r_sync, NULL) == 0);
	/* Late readers of `a`: each wakes whatever sleeps on the slot now (r_dom's updater). */
	uint64_t end = gt_now_ns() + 200000000ull;
	while (gt_now_ns() < end) {
		grace__srcu_wake_slot(old);
		gt_sleep_ms(1);
	}
	CHECK_MSG(!atomic_load(&r_done),
		  "a spurious wake-up ended synchronize_srcu() with a reader inside");
	srcu_read_unlock(&r_dom, idx);
	pthread_join(t, NULL);
	CHECK(atomic_load(&r_done));
	cleanup_srcu_struct(&r_dom);
}

/* ---- many_domains ---- */

#define NDOM 150 /* more than the library's static table of wake slots */

static struct srcu_struct *m_dom;
static atomic_int m_done;

static void *m_sync(void *arg)
{
	(void)arg;
	synchronize_srcu(m_dom);
	atomic_store(&m_done, 1);
	return NULL;
}

TEST(many_domains)
{
	struct srcu_struct *d = aligned_alloc(64, NDOM * sizeof(*d));
	struct grace__srcu_wake *slot[NDOM];
	REQUIRE(d != NULL);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < NDOM; i++) {
			REQUIRE(init_srcu_struct(&d[i]) == 0);
			struct grace__srcu_wake *w = GRACE__SRCU_WAKE(&d[i]);
			REQUIRE(w != NULL);
			if (round == 0) {
				for (int j = 0; j < i; j++)
					CHECK(slot[j] != w); /* one slot per live domain */
				slot[i] = w;
			} else {
				int found = 0; /* recycled: no slot beyond the first round's */
				for (int j = 0; j < NDOM; j++)
					found |= slot[j] == w;
				CHECK(found);
			}
		}
		/* The last domain's slot is not in the static table: its updater sleeps on it and
		 * the reader's unlock wakes it. */
		m_dom = &d[NDOM - 1];
		atomic_store(&m_done, 0);
		int idx = srcu_read_lock(m_dom);
		pthread_t t;
		REQUIRE(pthread_create(&t, NULL, m_sync, NULL) == 0);
		gt_sleep_ms(20);
		CHECK(!atomic_load(&m_done));
		srcu_read_unlock(m_dom, idx);
		pthread_join(t, NULL);
		for (int i = 0; i < NDOM; i++) {
			synchronize_srcu(&d[i]);
			cleanup_srcu_struct(&d[i]);
		}
	}
	free(d);
}

GT_MAIN()
