/* SPDX-License-Identifier: MIT */
/*
 * Fault 3 of issue 12: dlclose() of a shared object whose code ran the inline srcu read side.
 *
 * The srcu read side is an rseq critical section inlined into the caller, so its descriptor
 * (struct rseq_cs) lives in the caller's object. The kernel reads the thread's rseq_cs pointer
 * on its next return to user space after a preemption, migration or signal, and clears it only
 * then; if the object was unloaded in between, that read faults and the kernel kills the thread
 * with SIGSEGV (si_code SI_KERNEL). Contract rule 6 of internal/rseq.h: every section leaves
 * rseq_cs at 0.
 *
 * Here: threads run the plugin's sections (and its call_rcu(), which pushes inside libgrace.so),
 * one thread leaves a section opened by the plugin open, the plugin is unloaded (rcu_barrier()
 * first, since its callbacks are its code), then every thread sleeps, yields, migrates, takes
 * signals and is preempted for a while, and the open section is closed from this program. It
 * all runs in a child process: the test passes only if the child exits normally.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <grace/rcu.h>
#include <grace/srcu.h>
#include "gtest_lite.h"

#ifndef PLUGIN_PATH
#error "PLUGIN_PATH: the plugin's file (set by tests/unit/rseq.cmake)"
#endif

typedef unsigned long (*read_fn)(struct srcu_struct *, const unsigned long *, unsigned long);
typedef int (*lock_fn)(struct srcu_struct *);
typedef void (*call_fn)(struct rcu_head *, unsigned long *);

enum { NT = 4, NCB = 64 };

static struct srcu_struct dom;
static unsigned long word = 1, callbacks;
static read_fn p_read;
static lock_fn p_lock;
static call_fn p_call;
static uint32_t phase;        /* 0: use the plugin, 1: the plugin is gone (a futex word) */
static int done_with;         /* threads that stopped calling the plugin */
static unsigned long signals; /* SIGALRMs taken, by any thread */

struct cbmem {
	struct rcu_head head;
	unsigned long *counter;
};

static void on_signal(int sig)
{
	(void)sig;
	grace_fetch_add(&signals, 1, __ATOMIC_RELAXED); /* async-signal-safe; a counter only */
}

static void spin_us(unsigned int us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < (long)us);
}

static void *worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	struct cbmem *cbs = (struct cbmem *)calloc(NCB, sizeof(*cbs));
	unsigned int ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	int open_idx = -1;
	sigset_t alrm;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);

	/* Phase 0: the plugin's read side and call_rcu(), from every thread. */
	for (int round = 0; round < 20; round++) {
		if (p_read(&dom, &word, 500) != 500)
			abort();
		if (round < NCB)
			p_call(&cbs[round].head, &callbacks);
	}
	/*
	 * From the last section of the plugin to the unload, this thread must not return to user
	 * space from the kernel: that return is where the kernel reads rseq_cs, and finding the
	 * plugin still mapped it would clear it (lazily) and the test would prove nothing. So no
	 * signal, and sleep in the kernel (futex) until the plugin is gone: the wake-up's return
	 * to user space is the first point where the kernel looks at rseq_cs again.
	 */
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	if (p_read(&dom, &word, 1) != 1)
		abort();
	if (id == 0)
		open_idx = p_lock(&dom); /* stays open across the dlclose */
	grace_fetch_add(&done_with, 1, __ATOMIC_RELEASE);
	while (grace_load_acquire(&phase) == 0)
		syscall(SYS_futex, &phase, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);

	/* Phase 1: the plugin is unmapped. Sleep, yield, migrate, spin through signals. */
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 100000 };
		cpu_set_t set;

		nanosleep(&ts, NULL);
		sched_yield();
		if (ncpu > 1) {
			CPU_ZERO(&set);
			CPU_SET((id + (unsigned int)i) % ncpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		spin_us(200);
	}
	if (open_idx >= 0)
		srcu_read_unlock(&dom, open_idx); /* closed by this program, not the plugin */
	free(cbs);
	return NULL;
}

static void scenario(void *arg)
{
	pthread_t t[NT];
	struct itimerval it = { { 0, 300 }, { 0, 300 } };
	struct sigaction sa;
	void *h;

	(void)arg;
	h = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(3);
	}
	p_read = (read_fn)dlsym(h, "plugin_read");
	p_lock = (lock_fn)dlsym(h, "plugin_lock");
	p_call = (call_fn)dlsym(h, "plugin_call");
	if (!p_read || !p_lock || !p_call)
		exit(4);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL); /* a signal storm on whichever thread runs */
	for (uintptr_t i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	while (grace_load_acquire(&done_with) < NT)
		gt_sleep_ms(1);
	rcu_barrier(); /* the plugin's callbacks are its code: they run before it goes */
	if (grace_load_relaxed(&callbacks) != NT * 20)
		exit(5);
	if (dlclose(h) != 0)
		exit(6);
	if (dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD) != NULL)
		exit(7); /* still mapped: the test would prove nothing */
	grace_store_release(&phase, 1);
	syscall(SYS_futex, &phase, FUTEX_WAKE_PRIVATE, NT, NULL, NULL, 0);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (grace_srcu_readers_active(&dom) != 0)
		exit(8);
	fprintf(stderr, "scenario done: %lu signals\n", grace_load_relaxed(&signals));
}

TEST(mode_is_as_expected)
{
	const char *want = getenv("EXPECT_SRCU_MODE");
	const char *mode;

	CHECK(init_srcu_struct(&dom) == 0);
	mode = grace_srcu_mode();
	printf("  srcu mode: %s (rseq: %s)\n", mode, grace_rseq_mode());
	if (want)
		CHECK_MSG(strcmp(mode, want) == 0, "mode %s, expected %s", mode, want);
}

TEST(threads_survive_the_unload_of_code_that_ran_srcu_readers)
{
	char out[4096];
	int st = gt_run_child(scenario, NULL, out, sizeof(out));

	if (WIFSIGNALED(st))
		CHECK_MSG(0, "child killed by signal %d%s; it said: %s", WTERMSIG(st),
			  WTERMSIG(st) == SIGSEGV
				  ? " (the kernel read an rseq descriptor of the unloaded plugin)"
				  : "",
			  out);
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child exit status %d: %s",
			  WEXITSTATUS(st), out);
	printf("  %s", out);
}

GT_MAIN()
