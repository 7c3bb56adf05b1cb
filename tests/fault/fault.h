/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the fault regressions and the fault-injection suite (tests/fault/): run a
 * function in a child process with a hang detector, capture its stderr, and a watchdog for
 * calls that must return. The hang limits are generous (seconds, many times the documented
 * bound): they catch a call that never returns, they do not measure how fast it returns.
 */
#ifndef GRACE_TEST_FAULT_H
#define GRACE_TEST_FAULT_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How a child ended. */
struct fault_child {
	int status;     /* waitpid status (valid unless hung) */
	bool hung;      /* still running after the limit: killed with SIGKILL */
	double seconds; /* from fork to its end (or to the kill) */
	double end;     /* fault_now() when its end was seen */
};

static inline double fault_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void fault_sleep_ms(unsigned int ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

/*
 * Run fn(arg) in a forked child whose stderr goes to err (NUL-terminated, truncated to errsz).
 * The child ends however fn ends it; if fn returns, the child calls exit(0) (not _exit: the
 * library's exit handler and, under ASan, the leak check run). A child still running after
 * limit_s seconds is killed and reported hung.
 */
static inline struct fault_child fault_run(void (*fn)(void *), void *arg, double limit_s, char *err,
					   size_t errsz)
{
	struct fault_child r = { 0, false, 0, 0 };
	int p[2];
	size_t n = 0;
	double t0 = fault_now();

	if (pipe(p) != 0) {
		perror("pipe");
		exit(2);
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 2);
		close(p[1]);
		signal(SIGABRT, SIG_DFL);
		fn(arg);
		exit(0);
	}
	close(p[1]);
	for (;;) {
		double left = limit_s - (fault_now() - t0);
		if (left <= 0) {
			kill(pid, SIGKILL);
			r.hung = true;
			break;
		}
		struct pollfd pf = { p[0], POLLIN, 0 };
		int k = poll(&pf, 1, (int)(left * 1000) + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue;
		char buf[4096];
		ssize_t m = read(p[0], buf, sizeof(buf));
		if (m <= 0)
			break; /* every writer closed: the child is gone (or closed stderr) */
		if (errsz && n < errsz - 1) {
			size_t c = (size_t)m < errsz - 1 - n ? (size_t)m : errsz - 1 - n;
			memcpy(err + n, buf, c);
			n += c;
		}
	}
	if (errsz)
		err[n] = 0;
	close(p[0]);
	/* stderr closed, but the process may still be finishing (threads, exit handlers). */
	for (;;) {
		pid_t w = waitpid(pid, &r.status, WNOHANG);
		if (w == pid)
			break;
		if (fault_now() - t0 > limit_s) {
			kill(pid, SIGKILL);
			r.hung = true;
			waitpid(pid, &r.status, 0);
			break;
		}
		fault_sleep_ms(2);
	}
	r.end = fault_now();
	r.seconds = r.end - t0;
	return r;
}

/* "exited 0", "killed by Aborted", "hung": for messages. */
static inline const char *fault_how(const struct fault_child *c, char *buf, size_t sz)
{
	if (c->hung)
		snprintf(buf, sz, "hung (killed after %.1f s)", c->seconds);
	else if (WIFEXITED(c->status))
		snprintf(buf, sz, "exited %d after %.2f s", WEXITSTATUS(c->status), c->seconds);
	else if (WIFSIGNALED(c->status))
		snprintf(buf, sz, "killed by %s after %.2f s", strsignal(WTERMSIG(c->status)),
			 c->seconds);
	else
		snprintf(buf, sz, "status 0x%x", c->status);
	return buf;
}

static inline bool fault_exited(const struct fault_child *c, int code)
{
	return !c->hung && WIFEXITED(c->status) && WEXITSTATUS(c->status) == code;
}

/*
 * Run fn in a child (fault_run(), limit hang_s) that must exit with status 7 and, if bad is not
 * NULL, print nothing containing bad. Prints how the child ended and the start of its stderr.
 * Returns the number of failed expectations (0: as expected).
 */
static inline int fault_expect_exit7(void (*fn)(void *), const char *what, double hang_s,
				     const char *bad)
{
	static char err[16384];
	char how[96];
	struct fault_child c = fault_run(fn, NULL, hang_s, err, sizeof(err));
	int fails = 0;

	printf("  %s: child %s\n", what, fault_how(&c, how, sizeof(how)));
	if (err[0])
		printf("  stderr: %.600s\n", err);
	if (!fault_exited(&c, 7)) {
		fprintf(stderr, "  %s: expected exit status 7 within %.0f s, child %s\n", what,
			hang_s, how);
		fails++;
	}
	if (bad && strstr(err, bad)) {
		fprintf(stderr, "  %s: unexpected message containing \"%s\"\n", what, bad);
		fails++;
	}
	return fails;
}

/*
 * Watchdog: a thread that ends the process with a message if the calls it guards do not
 * return within limit_s. fault_watch() arms it (what: the call being guarded), fault_unwatch()
 * disarms it. One at a time per process.
 */
static pthread_mutex_t fault_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fault_wd_cond = PTHREAD_COND_INITIALIZER;
static const char *fault_wd_what;
static double fault_wd_deadline;
static bool fault_wd_started;

static inline void *fault_wd_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fault_wd_lock);
	for (;;) {
		if (fault_wd_what && fault_now() > fault_wd_deadline) {
			fprintf(stderr, "  HANG: %s did not return within its limit\n",
				fault_wd_what);
			fprintf(stdout,
				"  HANG: %s did not return within its limit\n0 passed, 1 failed\n",
				fault_wd_what);
			fflush(stdout);
			_exit(3);
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&fault_wd_cond, &fault_wd_lock, &ts);
	}
	return NULL;
}

static inline void fault_watch(const char *what, double limit_s)
{
	pthread_mutex_lock(&fault_wd_lock);
	if (!fault_wd_started) {
		pthread_t th;
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_create(&th, NULL, fault_wd_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_detach(th);
		fault_wd_started = true;
	}
	fault_wd_what = what;
	fault_wd_deadline = fault_now() + limit_s;
	pthread_mutex_unlock(&fault_wd_lock);
}

static inline void fault_unwatch(void)
{
	pthread_mutex_lock(&fault_wd_lock);
	fault_wd_what = NULL;
	pthread_mutex_unlock(&fault_wd_lock);
}

/* A small deterministic generator (xorshift64*), seeded from the environment or the clock. */
static inline uint64_t fault_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static inline uint64_t fault_seed(void)
{
	const char *e = getenv("GRACE_FAULT_SEED");
	uint64_t s = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (!s)
		s = 1;
	printf("  seed %llu (GRACE_FAULT_SEED to repeat)\n", (unsigned long long)s);
	return s;
}

/* Milliseconds from the environment (quick defaults; the long runs set more). */
static inline unsigned int fault_env_ms(const char *name, unsigned int def)
{
	const char *e = getenv(name);
	return e ? (unsigned int)strtoul(e, NULL, 0) : def;
}

#endif
