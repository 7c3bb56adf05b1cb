/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness shared by grace's tests (C and C++): CHECK macros that report the
 * file, line and expression; TEST() registration; death tests that run a function in a child
 * process and check its exit status and stderr. Each test binary prints one line per test and
 * a closing "N passed, N failed" line.
 */
#ifndef GRACE_TEST_HARNESS_H
#define GRACE_TEST_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
#define GT_EXTERN_C extern "C"
#else
#define GT_EXTERN_C
#endif

typedef void (*gt_fn)(void);
struct gt_test {
	const char *name;
	gt_fn fn;
};
#define GT_MAX_TESTS 256
static struct gt_test gt_tests[GT_MAX_TESTS];
static int gt_ntests;
static int gt_failed_current;

static inline void gt_register(const char *name, gt_fn fn)
{
	if (gt_ntests < GT_MAX_TESTS) {
		gt_tests[gt_ntests].name = name;
		gt_tests[gt_ntests].fn = fn;
		gt_ntests++;
	}
}

#define TEST(name)                                                   \
	static void test_##name(void);                               \
	__attribute__((constructor)) static void gt_reg_##name(void) \
	{                                                            \
		gt_register(#name, test_##name);                     \
	}                                                            \
	static void test_##name(void)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			gt_failed_current = 1;                                                     \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define CHECK_MSG(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			gt_failed_current = 1;                                                     \
			return;                                                                    \
		}                                                                                  \
	} while (0)
/* Check in a helper thread or function that cannot return early: abort the process. */
#define REQUIRE(cond)                                                                        \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "  %s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                      \
			abort();                                                             \
		}                                                                            \
	} while (0)

static inline uint64_t gt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void gt_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

/* fork() a child that exits at once, and wait for it: a fork made for the library's fork
 * handlers alone. */
static inline void gt_fork_and_wait(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* Fill out[0..n) with make(), signal sig blocked meanwhile: a test whose signal handler may
 * free (a legal call of the library between two of the thread's own) allocates so, since the
 * handler must not interrupt this thread's malloc(). */
static inline void gt_fill_blocked(void **out, int n, void *(*make)(void), int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < n; i++)
		out[i] = make();
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* A signal handler whose call the library should have reported came back from it: say so and
 * end the child (its status then says neither abort nor success). Async-signal-safe. */
static inline void gt_handler_came_back(void)
{
	static const char m[] = "child: a handler's retire inside the thread's call returned\n";
	(void)!write(2, m, sizeof(m) - 1);
	_exit(3);
}

/* For ns, make fresh objects in batches of n (at most 1024) with sig blocked and hand each to
 * retire: the signal tests' loop, whose handler's legal retires between two calls may free
 * what is ready, which must not interrupt this thread's malloc(). */
static inline void gt_retire_batches(void *(*make)(void), int n, void (*retire)(void *), int sig,
				     uint64_t ns)
{
	void *batch[1024];
	uint64_t t0 = gt_now_ns();
	while (gt_now_ns() - t0 < ns) {
		gt_fill_blocked(batch, n, make, sig);
		for (int i = 0; i < n; i++)
			retire(batch[i]);
	}
}

/* Install handler for sig (flags: SA_RESTART or 0), the rest of the action cleared. */
static inline void gt_on_signal(int sig, void (*handler)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	REQUIRE(sigaction(sig, &sa, NULL) == 0);
}

/* Block sig on the calling thread; returns the set, for the unblock. */
static inline sigset_t gt_block_signal(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return set;
}

/* Call fn(tid, comm, arg) for every thread of this process, comm its name as /proc gives it
 * (the newline kept); a thread that ends meanwhile may be left out. */
static inline void gt_for_each_thread(void (*fn)(int tid, const char *comm, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* gone meanwhile */
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		fn(atoi(e->d_name), comm, arg);
	}
	closedir(d);
}

/* Is thread tid of this process asleep (state S)? Read with open() and read(), not stdio,
 * which may malloc(): callers wait for a thread to sleep in a pause site before they signal it
 * there. */
static inline int gt_thread_sleeps(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *q = strrchr(buf, ')'); /* the state follows the command's name */
	return q && q[1] == ' ' && q[2] == 'S';
}

/* A rain of signals: a thread that sends sig to target every us microseconds until stopped.
 * Tests of what a signal handler may do start one on the thread whose calls it interrupts. */
struct gt_rain {
	pthread_t target, thread;
	int sig;
	unsigned int us;
	int stop;
};

static inline void *gt_rain_run(void *arg)
{
	struct gt_rain *r = (struct gt_rain *)arg;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		pthread_kill(r->target, r->sig);
		usleep(r->us);
	}
	return NULL;
}

/* Start raining sig on the calling thread; 0 or an errno. */
static inline int gt_rain_start(struct gt_rain *r, int sig, unsigned int us)
{
	r->target = pthread_self();
	r->sig = sig;
	r->us = us;
	r->stop = 0;
	return pthread_create(&r->thread, NULL, gt_rain_run, r);
}

static inline void gt_rain_stop(struct gt_rain *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	pthread_join(r->thread, NULL);
}

/* Run fn in a child process; capture stderr. Returns the wait status; *out gets stderr text. */
static inline int gt_run_child(void (*fn)(void *), void *arg, char *out, size_t outsz)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 2);
		signal(SIGABRT, SIG_DFL);
		fn(arg);
		fflush(stderr);
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t k;
	while ((k = read(p[0], out + n, outsz - 1 - n)) > 0) {
		n += (size_t)k;
		if (n >= outsz - 1)
			break;
	}
	out[n] = 0;
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return st;
}

/* Run fn in a child and check that it aborted (SIGABRT) with both strings on its stderr (b may
 * be NULL); on a mismatch the status and stderr are printed. Returns 1 if so. */
static inline int gt_child_aborts_with(void (*fn)(void *), void *arg, const char *a, const char *b)
{
	char out[2048];
	int st = gt_run_child(fn, arg, out, sizeof(out));
	int ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(out, a) &&
		 (!b || strstr(out, b));
	if (!ok)
		fprintf(stderr, "  expected an abort with \"%s\"%s%s: status 0x%x, stderr: %s\n", a,
			b ? " and " : "", b ? b : "", st, out);
	return ok;
}

/*
 * Hang dump. grace_test() sets GT_HANG_DUMP_S 10 s short of the test's ctest TIMEOUT: if the
 * process is still running then, a watchdog thread prints every thread's backtrace (gdb, which
 * scripts/setup-debian.sh installs), so that a hang in CI leaves evidence instead of a bare
 * timeout. It changes nothing else: the process goes on, and ctest's timeout still ends it.
 * The process's children are dumped first (a fork test's hang may be in the child): gdb
 * attaches to them where Yama's ptrace_scope is 0 (Debian's default); with 1 it fails and says
 * so. posix_spawn() (clone with CLONE_VFORK) runs no fork handlers, so a process hung on a lock
 * that grace's atfork handlers take can still be dumped; PR_SET_PTRACER lets the spawned gdb
 * attach to its parent where Yama's ptrace_scope is 1.
 */
#ifndef __USE_GNU /* <unistd.h> declares it under _GNU_SOURCE */
extern char **environ;
#endif
static int gt_hang_watch_running;
/* Every thread's backtrace of process p, by gdb, on stderr. */
static inline void gt_hang_dump(pid_t p)
{
	char pid[24];
	char *av[] = { (char *)"timeout",
		       (char *)"-s",
		       (char *)"KILL",
		       (char *)"60",
		       (char *)"gdb",
		       (char *)"-p",
		       pid,
		       (char *)"-batch",
		       (char *)"-nx",
		       (char *)"-ex",
		       (char *)"set pagination off",
		       (char *)"-ex",
		       (char *)"thread apply all bt",
		       NULL };
	posix_spawn_file_actions_t fa;
	pid_t c;
	int st;

	snprintf(pid, sizeof(pid), "%d", (int)p);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (posix_spawnp(&c, "timeout", &fa, NULL, av, environ) != 0)
		fprintf(stderr, "gtest_lite: cannot run gdb for the backtraces\n");
	else if (waitpid(c, &st, 0) == c && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		fprintf(stderr, "gtest_lite: gdb failed (status %#x; is it installed?)\n", st);
	posix_spawn_file_actions_destroy(&fa);
}

/* The process's children (a test that forks may hang in its child, not in the parent), at most
 * n, from /proc/PID/stat's fourth field. Returns how many. */
static inline int gt_children(pid_t parent, pid_t *out, int n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int k = 0;

	if (!d)
		return 0;
	while (k < n && (e = readdir(d)) != NULL) {
		char path[300], comm[64];
		long pid = strtol(e->d_name, NULL, 10), ppid = 0;
		char state;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* "pid (comm) state ppid": comm has no space in the tests' binaries. */
		if (fscanf(f, "%*d %63s %c %ld", comm, &state, &ppid) == 3 &&
		    ppid == (long)parent && strcmp(comm, "(timeout)") != 0)
			out[k++] = (pid_t)pid;
		fclose(f);
	}
	closedir(d);
	return k;
}

static inline void *gt_hang_watch(void *arg)
{
	unsigned int s = (unsigned int)(uintptr_t)arg;
	pid_t kids[8];

	/* Release, paired with the creator's acquire load: nothing is published through it
	 * but the fact that this thread's start is over. */
	__atomic_store_n(&gt_hang_watch_running, 1, __ATOMIC_RELEASE);
	gt_sleep_ms(s * 1000u);
	fprintf(stderr,
		"gtest_lite: still running after %u s (GT_HANG_DUMP_S): backtraces follow\n", s);
	fflush(stdout);
	fflush(stderr);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	/* The children first: gdb's attach stops the parent, which may be waiting for them. */
	int nk = gt_children(getpid(), kids, 8);
	for (int i = 0; i < nk; i++) {
		fprintf(stderr, "gtest_lite: child process %d:\n", (int)kids[i]);
		fflush(stderr);
		gt_hang_dump(kids[i]);
	}
	fprintf(stderr, "gtest_lite: this process, %d:\n", (int)getpid());
	fflush(stderr);
	gt_hang_dump(getpid());
	return NULL;
}

static inline void gt_hang_watch_start(void)
{
	const char *e = getenv("GT_HANG_DUMP_S");
	long s = e ? strtol(e, NULL, 10) : 0;
	pthread_t t;

	if (s <= 0 || s > 86400)
		return;
	/* Every signal blocked from its first instruction: the tests' process-directed signals
	 * (timers, kill()) must reach the threads that expect them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, gt_hang_watch, (void *)(uintptr_t)s) == 0) {
		pthread_detach(t);
		/* Wait until it runs: a thread still starting holds allocator locks for a moment
		 * (ASan's allocator takes none around fork), and a test that forks at once would
		 * give its child one of them held for ever. */
		while (!__atomic_load_n(&gt_hang_watch_running, __ATOMIC_ACQUIRE))
			gt_sleep_ms(1);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static inline int gt_main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	gt_hang_watch_start();
	for (int i = 0; i < gt_ntests; i++) {
		if (only && strcmp(only, gt_tests[i].name) != 0)
			continue;
		gt_failed_current = 0;
		uint64_t t0 = gt_now_ns();
		printf("[ RUN  ] %s\n", gt_tests[i].name);
		gt_tests[i].fn();
		double ms = (double)(gt_now_ns() - t0) / 1e6;
		if (gt_failed_current) {
			printf("[ FAIL ] %s (%.1f ms)\n", gt_tests[i].name, ms);
			failed++;
		} else {
			printf("[  OK  ] %s (%.1f ms)\n", gt_tests[i].name, ms);
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define GT_MAIN()                           \
	int main(int argc, char **argv)     \
	{                                   \
		return gt_main(argc, argv); \
	}

#endif
