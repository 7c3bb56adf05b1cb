/* SPDX-License-Identifier: MIT */
/*
 * The callback engine's lifecycle: a domain's creation and destruction, fork(), process exit,
 * and the pause of the workers that fork and exit both need (Linux keeps such concerns in files of their own beside tree.c). The structures are
 * engine/internal.h's; the call path, workers and barriers are callback.c's.
 *
 * fork(). A worker invokes a batch from its own struct worker (the chains, a cursor, the count
 * invoked so far), never from its stack, so that fork() finds it: the child's worker goes on
 * from the cursor (docs/guide.md: the parent's queued callbacks run in the child). fork pauses
 * the workers between two callbacks first (fork_pause_workers(), below), so the cursor is
 * exact; a callback still running when fork stops waiting (FORK_PAUSE_NS for a blocked worker,
 * FORK_PAUSE_RUN_NS for a preempted one) counts as run in the child, which says so. The
 * prepare handler then takes every domain's locks (grace__cb_atfork_prepare(), in the order
 * src/init.c gives); the child releases them, drops the barriers whose callers do not exist
 * there, and restarts its workers on its next call (a domain's first start adopts every queue
 * with inherited work).
 *
 * Exit. at_exit_drain() runs what it can within GRACE_EXIT_TIMEOUT_MS (all domains together),
 * with no lock held while it waits, and joins only workers that stop within that time; the
 * others are told (ATTN_EXIT) never to run anything again.
 */
#include "engine/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/annotate.h"
#include "core/diag.h"
#include "core/options.h"
#include "core/sys.h"

#define FORK_PAUSE_NS 100000000ull      /* how long fork() waits for blocked workers to pause */
#define FORK_PAUSE_RUN_NS 2000000000ull /* ... and for workers that are runnable (preempted) */

/* This thread's fork() paused the workers (prepare to parent handler). */
static __thread bool fork_paused GRACE_TLS_IE;
/* Workers still inside a callback when fork() stopped waiting (set by the forking thread under
 * the atfork lock order, read by its child): those callbacks count as run in the child. */
static __thread uint32_t fork_abandoned GRACE_TLS_IE;
static __thread uint64_t fork_waited_ns GRACE_TLS_IE;
uint32_t grace__cb_fork_abandoned_total; /* callbacks counted as run unfinished: tests read it */
/* Exit drain (internal.h): running, the domains kept; and its rounds so far, under
 * grace__cb_all_lock. */
uint32_t grace__cb_exit_running;
struct grace__cbdom *grace__cb_exit_kept;
static uint32_t exit_rounds;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
struct grace__cb_engine grace__cb_engine;

/*
 * Pausing the workers for fork(). A worker must not be copied in the middle of a callback:
 * the child could not tell whether that callback ran. Protocol (store buffering, with a full
 * barrier on each side):
 *   worker (batch_enter):   busy += 1 (seq_cst RMW); load attn (seq_cst); then, before each
 *                           callback, load attn (relaxed); on ATTN_PAUSE: busy -= 1 (release)
 *                           and sleep until attn clears
 *   forker (fork_pause_workers): attn += ATTN_PAUSE (seq_cst RMW); load busy (seq_cst) until
 *                           it counts no worker but the forking thread itself
 * If the forker's load of busy misses a worker's increment, that worker's load of attn after
 * its increment sees ATTN_PAUSE, so it pauses before its first callback; otherwise the forker
 * waits for it: FORK_PAUSE_NS at most while no worker is runnable (a callback may block on a
 * lock the forking thread holds), FORK_PAUSE_RUN_NS while one is (preempted on a loaded
 * machine: giving up on it would lose its callback in the child). A paused worker stored its
 * cursor before its release decrement, which the forker's load reads: the child, a copy taken
 * after that load, sees the cursor exact.
 */

void grace__cb_batch_enter(void)
{
	grace_fetch_add(&grace__cb_engine.busy, 1u, __ATOMIC_SEQ_CST);
	if (GRACE_UNLIKELY(grace_load_seq_cst(&grace__cb_engine.attn) != 0))
		grace__cb_worker_pause();
}

void grace__cb_batch_leave(void)
{
	/* Release: the cursor and the callbacks run so far before the forker's load of busy. */
	grace_fetch_sub(&grace__cb_engine.busy, 1u, __ATOMIC_RELEASE);
	if (GRACE_UNLIKELY(ATTN_PAUSED(grace_load_relaxed(&grace__cb_engine.attn))))
		grace__futex_wake(&grace__cb_engine.busy, INT_MAX);
}

/* Before a callback, attn is set: a fork waits (pause until it is done), or the exit handler
 * gave up on this worker (run nothing any more: park until the process ends). */
GRACE_COLD void grace__cb_worker_pause(void)
{
	uint32_t a;

	/* seq_cst: after the increment below, as in grace__cb_batch_enter(). */
	while ((a = grace_load_seq_cst(&grace__cb_engine.attn)) != 0) {
		grace__cb_batch_leave();
		if (a & ATTN_EXIT) {
			for (;;)
				grace__futex_wait(&grace__cb_engine.attn, a, -1);
		}
		while (ATTN_PAUSED(a = grace_load_acquire(&grace__cb_engine.attn)) &&
		       !(a & ATTN_EXIT))
			grace__futex_wait(&grace__cb_engine.attn, a, 100 * 1000000ll);
		grace_fetch_add(&grace__cb_engine.busy, 1u, __ATOMIC_SEQ_CST);
	}
}

/*
 * Is a thread of this process other than the caller, named as a worker, runnable (state R in
 * /proc: running or preempted, not blocked)? False when /proc cannot be read. Only fork's
 * slow path calls it (a worker still inside a callback after FORK_PAUSE_NS).
 */
static bool fork_workers_runnable(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int me = grace__gettid();
	bool r = false;

	if (!dir)
		return false;
	while (!r && (e = readdir(dir)) != NULL) {
		char path[64], buf[128];
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == me)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "tid (comm) S ...": comm may hold ')' itself, the state follows the last one. */
		char *o = strchr(buf, '('), *c = strrchr(buf, ')');
		if (!o || !c || c < o || c[1] != ' ' ||
		    strncmp(o + 1, WORKER_NAME_PREFIX, sizeof(WORKER_NAME_PREFIX) - 1) != 0)
			continue;
		r = c[2] == 'R';
	}
	closedir(dir);
	return r;
}

/*
 * fork() prepare: wait until no worker is inside a callback (see above). Returns false, having
 * paused nothing, while the exit handler drains the queues: a thread that forks in a loop
 * keeps the workers paused (a paused worker wakes when one fork is over only to find the next
 * one's pause), so the drain, which has a deadline, would run nothing and lose the callbacks.
 * A child forked then inherits a worker perhaps inside a callback, which counts as run in the
 * child, exactly as a callback still running after FORK_PAUSE_NS does at any fork; the child of
 * a process inside exit() gets no stronger promise than that.
 */
static bool fork_pause_workers(void)
{
	/* A callback that forks: its worker (this thread) counts itself. */
	uint32_t self = grace__cb_invoking ? 1u : 0u;
	uint64_t t0 = grace__now_ns();

	fork_abandoned = 0;
	if (grace_load_relaxed(&grace__cb_exit_running))
		return false;

	grace_fetch_add(&grace__cb_engine.attn, ATTN_PAUSE, __ATOMIC_SEQ_CST);
	unsigned int blocked_seen = 0;
	for (;;) {
		uint32_t b = grace_load_seq_cst(&grace__cb_engine.busy);
		if (b <= self)
			break;
		uint64_t el = grace__now_ns() - t0;
		/* Past FORK_PAUSE_NS only for a worker that is runnable: one a loaded machine
		 * preempted inside a callback (which would count as run in the child, and be lost
		 * there) rather than one blocked, perhaps on a lock this thread holds. Blocked at
		 * two looks in a row (10 ms apart): a worker between its callback's end and its
		 * decrement of busy can block for a moment (seen once in a loaded test run, 398 ms
		 * into a 400 ms callback), and one look took it for a callback that never ends. */
		if (el >= FORK_PAUSE_NS)
			blocked_seen = fork_workers_runnable() ? 0 : blocked_seen + 1;
		if (el >= FORK_PAUSE_RUN_NS || blocked_seen >= 2) {
			fork_abandoned = b - self;
			fork_waited_ns = el;
			break;
		}
		grace__futex_wait(&grace__cb_engine.busy, b,
				  el >= FORK_PAUSE_NS ? 10000000 : 1000000);
	}
	return true;
}

/* ---- process exit ---- */

/* GRACE_EXIT_TIMEOUT_MS: the exit handler's bound, all domains together. */
static uint64_t exit_timeout_ns(void)
{
	return (uint64_t)grace__opt(GRACE__OPT_GRACE_EXIT_TIMEOUT_MS) * 1000000ull;
}

/* Why the calling thread cannot wait for d's callbacks at exit (NULL: it can). */
static const char *exit_cannot_drain(struct grace__cbdom *d)
{
	if (grace__cb_invoking == d)
		return "exit() was called from one of its callbacks";
	if (d->f->hooks->is_reader(d->f))
		return d->f->exit_in_reader;
	return NULL;
}

/* Stop d's workers at exit: ask them to stop and join those that do by `deadline`. The others
 * (waiting for a grace period a stuck reader holds, or in a callback that blocks) are left
 * running; ATTN_EXIT keeps them from invoking anything more. */
static void exit_stop_workers(struct grace__cbdom *d, uint64_t deadline)
{
	grace__lock(&d->start_lock);
	if (grace_load_relaxed(&d->stop)) {
		/* grace__cbdom_destroy() in another thread is stopping and joining them (see
		 * stop_workers()): joining them here too would join a thread twice. */
		grace__unlock(&d->start_lock);
		return;
	}
	grace_store_relaxed(&d->stop, 1u);
	d->exit_stopped = true; /* under start_lock, which a fork holds: see the child handler */
	grace__unlock(&d->start_lock);
	for (unsigned int i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->w[i];
		if (!grace_load_acquire(&w->started) || w == grace__cb_self_worker)
			continue;
		grace__cb_wake_worker(w);
	}
	for (unsigned int i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->w[i];
		struct timespec ts;
		if (!grace_load_acquire(&w->started) || w == grace__cb_self_worker)
			continue;
		/* pthread_timedjoin_np() takes CLOCK_REALTIME: convert what is left. */
		uint64_t now = grace__now_ns(), left = deadline > now ? deadline - now : 0;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(left / 1000000000ull);
		ts.tv_nsec += (long)(left % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		/* Release: a destroy in another thread (stop_workers(), whose acquire load of
		 * started pairs with it) that sees 0 sees the worker's end through this join. */
		if (pthread_timedjoin_np(w->th, NULL, &ts) == 0)
			grace_store_release(&w->started, 0u);
	}
}

/* The next domain that round `round` has not taken yet, taken (NULL: none left). Domains
 * created meanwhile (at the head of the list) are found too. */
static struct grace__cbdom *exit_next(uint32_t round)
{
	struct grace__cbdom *d;

	grace__lock(&grace__cb_all_lock);
	for (d = grace__cb_all_domains; d; d = d->next_all)
		if ((int32_t)(d->exit_round - round) < 0)
			break;
	if (d)
		d->exit_round = round;
	grace__unlock(&grace__cb_all_lock);
	return d;
}

static uint32_t exit_new_round(void)
{
	grace__lock(&grace__cb_all_lock);
	uint32_t r = ++exit_rounds;
	grace__unlock(&grace__cb_all_lock);
	return r;
}

/*
 * At exit, run what is still queued (so nothing leaks) and join the workers, within
 * GRACE_EXIT_TIMEOUT_MS for all domains together (and at least a few milliseconds to join
 * workers that are idle). Registered with atexit() when the first worker starts, which is
 * after a sanitizer's own exit handler, so it runs before the leak check. A domain the calling
 * thread holds up (it is inside a section, an online QSBR thread, or one of the domain's
 * callbacks) is not drained; neither is what a stuck reader holds once the time is up: those
 * callbacks are left, with a warning, still reachable from the queues. Workers that do not
 * stop in time are left running, and never run anything again.
 *
 * The drain holds no lock while it waits. grace__cb_all_lock in particular: a fork() in another thread
 * first pauses the workers and then takes grace__cb_all_lock (grace__cb_atfork_prepare()), and a callback
 * that makes the first use of a domain takes it to link the new domain
 * (grace__cbdom_create()); a drain waiting with it held waited for those workers, which waited
 * for it, until the time was up. So grace__cb_all_lock is taken only to pick the next domain (exit_next():
 * each round takes every domain once, those created during the drain included), a domain is
 * never freed while the drain runs (grace__cbdom_destroy() keeps it on grace__cb_exit_kept), and a fork
 * goes through between two callbacks as at any other time. Rounds repeat while the last one
 * found callbacks to run: a callback of one domain may queue on a domain drained before it.
 */
static void at_exit_drain(void)
{
	uint64_t t0 = grace__now_ns(), limit = exit_timeout_ns();
	struct grace__cbdom *d;
	bool timed_out = false;
	char nm[64];

	grace__lock(&grace__cb_all_lock);
	grace_store_relaxed(&grace__cb_exit_running, 1u);
	grace__unlock(&grace__cb_all_lock);
	for (bool more = true; more && !timed_out;) {
		uint32_t round = exit_new_round();
		more = false;
		while ((d = exit_next(round)) != NULL) {
			if (exit_cannot_drain(d))
				continue;
			while (grace__cbdom_pending(d)) {
				uint64_t el = grace__now_ns() - t0;
				if (el >= limit) {
					timed_out = true;
					break;
				}
				more = true;
				(void)grace__cb_barrier_timed(d, limit - el, "exit");
			}
		}
	}
	uint32_t round = exit_new_round();
	while ((d = exit_next(round)) != NULL) {
		const char *why = exit_cannot_drain(d);
		uint64_t left = grace__cbdom_pending(d);
		if (!why && limit == 0)
			why = "GRACE_EXIT_TIMEOUT_MS=0";
		else if (!why && timed_out)
			why = "a reader still holds the grace period they wait for, or a callback "
			      "blocks (GRACE_EXIT_TIMEOUT_MS passed)";
		if (left)
			grace__warn("exit: %llu callback%s of %s not run: %s",
				    (unsigned long long)left, left == 1 ? "" : "s",
				    grace__cb_domain_name(d, nm, sizeof(nm)),
				    why ? why : "queued during the exit");
	}
	/* What the drain did not run is never run: told to stop, a worker would finish its queue
	 * first (the loop of worker_main() ends only when nothing waits), running callbacks the
	 * warnings above call not run, and under GRACE_EXIT_TIMEOUT_MS=0 ("run nothing at exit",
	 * docs/build.md) all of them. So ATTN_EXIT comes before the stop: a worker about to
	 * invoke parks (grace__cb_worker_pause()) and is left running; one with nothing to run
	 * stops and is joined. Release: pairs with the workers' loads of attn before each
	 * callback. */
	grace_fetch_or(&grace__cb_engine.attn, ATTN_EXIT, __ATOMIC_RELEASE);
	/* Idle workers need a moment to stop; those of a domain this thread holds up may be
	 * driving a grace period that cannot end before it does: no more than that moment. */
	uint64_t soon = grace__now_ns() + 20000000ull;
	uint64_t deadline = t0 + limit > soon ? t0 + limit : soon;
	round = exit_new_round();
	while ((d = exit_next(round)) != NULL)
		exit_stop_workers(d, exit_cannot_drain(d) ? soon : deadline);
}

static void at_exit_drain_register(void)
{
	atexit(at_exit_drain);
}

void grace__cb_atfork_pause(void)
{
	/* First of every prepare handler of grace (src/init.c), with no lock held: a callback
	 * the workers are running may need one. */
	fork_paused = fork_pause_workers();
}

void grace__cb_atfork_prepare(void)
{
	grace__lock(&grace__cb_all_lock);
	for (struct grace__cbdom *d = grace__cb_all_domains; d; d = d->next_all) {
		grace__lock(&d->start_lock);
		grace__lock(&d->bar_lock);
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__lock(&d->q[i].lock);
	}
}

void grace__cb_atfork_parent(void)
{
	for (struct grace__cbdom *d = grace__cb_all_domains; d; d = d->next_all) {
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__unlock(&d->q[i].lock);
		grace__unlock(&d->bar_lock);
		grace__unlock(&d->start_lock);
	}
	grace__unlock(&grace__cb_all_lock);
	if (!fork_paused)
		return;
	/* Release: pairs with the paused workers' loads of attn. */
	grace_fetch_sub(&grace__cb_engine.attn, ATTN_PAUSE, __ATOMIC_RELEASE);
	grace__futex_wake(&grace__cb_engine.attn, INT_MAX);
}

void grace__cb_atfork_child(void)
{
	/*
	 * The locks taken in prepare belong to this thread: release them. stuck_lock was not
	 * taken (a hard-limit check may have been under way in another thread): re-initialise
	 * it. The child has no workers but, if a callback forked,
	 * this thread's own: the others restart on the next call_*, start_poll or barrier (its
	 * first start also starts every worker whose queues hold inherited work: `adopt`), and
	 * first finish the batch their parent was invoking (worker_main()). Barriers whose callers
	 * do not exist here lose those callers' references; their markers still run.
	 */
	for (struct grace__cbdom *d = grace__cb_all_domains; d; d = d->next_all) {
		for (unsigned int i = 0; i < d->ncpu; i++)
			grace__unlock(&d->q[i].lock);
		for (unsigned int i = 0; i < d->nworkers; i++) {
			if (&d->w[i] == grace__cb_self_worker)
				continue;
			d->w[i].started = 0;
			d->w[i].sleeping = AWAKE;
		}
		d->progress_waiters = 0;
		grace_store_relaxed(&d->adopt, 1u);
		/* Forked while the parent's exit handler ran: the thread exiting is not here, and
		 * the child's workers must start as anywhere else. */
		if (d->exit_stopped) {
			d->exit_stopped = false;
			d->stop = 0;
		}
		struct barrier *b, *nx;
		grace_list_for_each_entry_safe(b, nx, &d->bars, link) {
			if (b->refs & BARRIER_CALLER) {
				grace__unlock(&d->bar_lock);
				grace__cb_barrier_put(d, b, BARRIER_CALLER);
				grace__lock(&d->bar_lock);
			}
		}
		grace__unlock(&d->bar_lock);
		grace__unlock(&d->start_lock);
		grace__lock_reinit(&d->stuck_lock);
	}
	grace_store_relaxed(&grace__cb_exit_running, 0u);
	if (fork_abandoned) {
		grace__cb_fork_abandoned_total += fork_abandoned;
		grace__warn(
			"fork: %u callback%s still running in the parent's workers after fork() "
			"waited %llu ms for them (blocked or spinning, perhaps on a lock the "
			"forking thread holds): in this child %s as run and will not run",
			fork_abandoned, fork_abandoned == 1 ? " was" : "s were",
			(unsigned long long)(fork_waited_ns / 1000000),
			fork_abandoned == 1 ? "it counts" : "they count");
		fork_abandoned = 0;
	}
	grace__cb_engine.attn = 0;
	grace__cb_engine.busy = grace__cb_invoking ? 1u : 0u;
	grace__unlock(&grace__cb_all_lock);
}

void grace__cb_exit_register(void)
{
	pthread_once(&exit_once, at_exit_drain_register);
}

/* ---- a domain's creation and destruction ---- */

struct grace__cbdom *grace__cbdom_create(struct grace__flavor *f, unsigned int nworkers)
{
	struct grace__cbdom *d = (struct grace__cbdom *)calloc(1, sizeof(*d));
	int ncpu = (int)grace__rseq_nr_cpus();
	if (!d)
		return NULL;
	if (ncpu < 1)
		ncpu = 1;
	d->ncpu = (unsigned int)ncpu;
	d->nworkers = (nworkers == 0 || nworkers > d->ncpu) ? d->ncpu : nworkers;
	if (posix_memalign((void **)&d->q, GRACE_CACHE_LINE, d->ncpu * sizeof(struct cbq)) ||
	    posix_memalign((void **)&d->w, GRACE_CACHE_LINE, d->nworkers * sizeof(struct worker))) {
		free(d->q);
		free(d);
		return NULL;
	}
	memset(d->q, 0, d->ncpu * sizeof(struct cbq));
	memset(d->w, 0, d->nworkers * sizeof(struct worker));
	grace__ann_ignore(d, sizeof(*d)); /* Valgrind: queues and counters are shared atomics */
	grace__ann_ignore(d->q, d->ncpu * sizeof(struct cbq));
	grace__ann_ignore(d->w, d->nworkers * sizeof(struct worker));
	for (unsigned int i = 0; i < d->nworkers; i++) {
		d->w[i].idx = i;
		d->w[i].d = d;
	}
	for (unsigned int i = 0; i < d->ncpu; i++) {
		grace__lock_init(&d->q[i].lock);
		grace__rseq_list_init(&d->q[i].list);
		d->q[i].cpu = i;
		d->q[i].w = &d->w[i % d->nworkers];
		d->q[i].d = d;
	}
	d->f = f;
	d->gp = f->gp;
	grace__policy_init(&d->pol);
	d->soft = DEFAULT_SOFT;
	d->hard = DEFAULT_HARD;
	grace__lock_init(&d->start_lock);
	grace__lock_init(&d->bar_lock);
	grace_list_init(&d->bars);
	grace__lock_init(&d->stuck_lock);
	grace__lock(&grace__cb_all_lock);
	d->next_all = grace__cb_all_domains;
	grace__cb_all_domains = d;
	grace__unlock(&grace__cb_all_lock);
	return d;
}

/* Stop d's workers and join them (grace__cbdom_destroy()). Whoever sets `stop` first under
 * start_lock, this or the exit drain (exit_stop_workers()), joins them, the other does not: a
 * thread joined twice is undefined behaviour (a crash, or a join that waits for ever). If the
 * exit drain got there first, the process is ending: the domain and its flavor are kept, not
 * freed (grace__cbdom_destroy() returns 1), so workers still running use nothing freed. */
static void stop_workers(struct grace__cbdom *d)
{
	grace__lock(&d->start_lock);
	bool exit_joins = d->exit_stopped;
	grace_store_relaxed(&d->stop, 1u);
	grace__unlock(&d->start_lock);
	if (exit_joins)
		return;
	for (unsigned int i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->w[i];
		if (!grace_load_acquire(&w->started))
			continue;
		grace__cb_wake_worker(w);
		pthread_join(w->th, NULL);
		/* Atomic: a thread still running at exit may read it in call_*(). */
		grace_store_relaxed(&w->started, 0u);
	}
}

int grace__cbdom_destroy(struct grace__cbdom *d)
{
	if (!d)
		return 0;
	grace__ann_acquire(d); /* race detectors: d's set-up, before it is torn down */
	if (grace__cbdom_pending(d))
		return -EBUSY;
	stop_workers(d);
	grace__lock(&grace__cb_all_lock);
	for (struct grace__cbdom **pp = &grace__cb_all_domains; *pp; pp = &(*pp)->next_all) {
		if (*pp == d) {
			*pp = d->next_all;
			break;
		}
	}
	if (grace_load_relaxed(&grace__cb_exit_running)) {
		/* The exit drain may hold d without the lock, and use its flavor (d->f, d->gp), as
		 * may workers it stopped and did not join: keep d (reachable, so no leak is
		 * reported) and tell the caller to keep the flavor; the process is ending. */
		d->next_all = grace__cb_exit_kept;
		grace__cb_exit_kept = d;
		grace__unlock(&grace__cb_all_lock);
		return 1;
	}
	grace__unlock(&grace__cb_all_lock);
	/* Barriers whose markers will never run (a fork child's, inherited and never taken or
	 * never invoked: nothing waits for them), freed with the queues they sit in. */
	struct barrier *b, *nx;
	grace_list_for_each_entry_safe(b, nx, &d->bars, link)
		free(b);
	free(d->q);
	free(d->w);
	free(d);
	return 0;
}
