/* SPDX-License-Identifier: MIT */
/*
 * The callback engine's internal structures, shared by its files (Linux's tree.h, in grace's
 * shape): callback.c (the call path, the workers, barriers, domains), lifecycle.c (fork, exit,
 * the workers' pause) and segcb.c (the segmented list of one queue). Nothing outside
 * src/engine/ includes it: the rest of the library uses engine/callback.h.
 */
#ifndef GRACE_SRC_ENGINE_INTERNAL_H
#define GRACE_SRC_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <grace/arch/atomic.h>
#include <grace/internal/rseq.h>
#include <grace/list.h>

#include "core/lock.h"
#include "engine/callback.h"
#include "engine/policy.h"
#include "engine/segcb.h"

#define DEFAULT_SOFT 10000u
#define DEFAULT_HARD 100000u
#define HARD_WAIT_NS 1000000000ull /* least wait of one call_* at the hard limit */
/* The most one call_srcu() waits at the hard limit: its caller may be inside a section of the
 * same domain, which the grace period it waits for would need (flavor.h, call_may_wait). */
#define HARD_WAIT_SHORT_NS 100000000ull
#define WORKER_NAME_PREFIX "grace-" /* the workers' thread names (lifecycle.c reads them) */

/* A worker's sleep (worker_sleep()). IDLE_SLEEP: nothing waits, until a push wakes it.
 * TIMED_SLEEP: a pacing nap or a policy's wait; hurries, barriers, urgent requests and stop end
 * it. GAP_SLEEP: a hurry waits out the least gap between back-to-back grace
 * periods (at most GRACE_POLL_MIN_GAP_US): only urgent requests and stop end it, so that a
 * flood of hurried callbacks neither wakes the worker per call nor keeps it from sleeping. */
enum { AWAKE = 0, IDLE_SLEEP = 1, TIMED_SLEEP = 2, GAP_SLEEP = 3 };

/*
 * A barrier: one marker per queue, allocated by the barrier and owned by it. refs counts the
 * caller (BARRIER_CALLER, while it has not let go) and each marker pushed on a queue and not
 * yet invoked; it changes only under the domain's bar_lock, and the barrier is
 * freed when it reaches 0. Live barriers are linked on the domain (bars), so a fork child
 * can let go for a caller that does not exist there, and the leak checker sees them.
 */
#define BARRIER_CALLER (1u << 30)
struct barrier;
struct bmark {
	struct rcu_head h; /* h.func is marker_fn: how invoke() tells a marker */
	struct barrier *b;
};
struct barrier {
	uint32_t done; /* futex: markers invoked */
	uint32_t refs; /* under bar_lock */
	struct grace__cbdom *d;
	struct grace_list_head link; /* on its domain's bars, under bar_lock */
	struct bmark m[];            /* one per queue */
};

struct cbq {
	/* Pusher line: written by rseq pushes on this CPU only (contract of internal/rseq.h), and
	 * by atomic pushes of threads without rseq (ahead, pushed_atomic). */
	struct grace__rseq_list list GRACE_ALIGNED_CACHE;
	uint64_t pushed;        /* rseq per-CPU count of pushes */
	uint64_t pushed_atomic; /* pushes counted by threads without rseq */
	/* Worker-published line. */
	uint64_t invoked GRACE_ALIGNED_CACHE;
	/* Barrier markers for this queue: a stack (pushed with a release CAS by barriers, linked
	 * through h.next; taken whole by the worker's exchange). */
	struct bmark *barrier_req GRACE_ALIGNED_CACHE;
	/* A call_*_hurry() callback was pushed on this queue: its worker starts the grace period
	 * it needs without pacing. Set by the caller after its push, taken by the worker's
	 * exchange before it harvests (queue_collect()). */
	uint32_t hurry;
	/* Worker-private, under lock (fork takes it). */
	struct grace__lock lock GRACE_ALIGNED_CACHE;
	struct grace__segcb cb; /* the callbacks that wait (segcb.h) */
	unsigned int cpu;
	struct worker *w;
	struct grace__cbdom *d;
};

struct worker {
	uint32_t sleeping GRACE_ALIGNED_CACHE; /* futex: AWAKE or one of the sleeps above */
	uint32_t started;
	uint64_t last_gp_end; /* worker-private: when its last grace-period wait ended */
	uint32_t gps;         /* worker-private: grace periods waited for (cost sampling) */
	uint64_t last_new;    /* worker-private: when a pass last found new callbacks */
	uint64_t arrival_ns;  /* worker-private: running mean of the time between such passes */
	/* worker-private: when the last pass began, unless the worker has since slept until a
	 * push woke it (then 0): what it stamps callbacks with (grace__policy_stamp()). */
	uint64_t floor_ns;
	uint32_t pressure_seen; /* worker-private: the policy's pressure generation last seen */
	/* worker-private: grace periods up to cookie hurry_gp are started without pacing but
	 * with the least gap after one that just ended (a hurried callback waits for them), and
	 * those up to flush_gp at once (a barrier waits for them); each over once its cookie
	 * completes. */
	uint64_t hurry_gp, flush_gp;
	bool hurrying, flushing;
	uint64_t steps_seen;    /* worker-private: gp->steps at its last look (worker_advance()) */
	uint64_t patient_since; /* worker-private: only patient callbacks wait since (0: not so) */
	unsigned int idx;
	pthread_t th;
	struct grace__cbdom *d;
	/*
	 * The batch being invoked: the ready chains of queue inv_q, and a cursor. Written by the
	 * worker only; read by nobody else but a fork child, whose new worker goes on from the
	 * cursor (fork pauses the workers between two callbacks first, see fork_pause_workers()).
	 * Set under inv_q->lock together with the segments it comes from, so a fork (which holds
	 * every queue lock) sees a callback either in a segment or in the batch.
	 */
	struct cbq *inv_q;
	unsigned int inv_n;        /* chains in the batch (0: no batch) */
	unsigned int inv_ci;       /* the chain being invoked */
	struct rcu_head *inv_next; /* the next callback of chain inv_ci not yet started */
	uint64_t inv_base;         /* inv_q->invoked when the batch was taken */
	uint64_t inv_done;         /* callbacks of the batch started (so: counted as run) */
	struct rcu_head *inv[GRACE__SEGCB_MAX_READY];
};

struct grace__cbdom {
	struct grace__flavor *f;
	struct grace__gp *gp; /* f->gp */
	unsigned int ncpu, nworkers;
	struct cbq *q;
	struct worker *w;
	struct grace__lock start_lock;
	struct grace__policy pol;
	uint64_t soft, hard;
	uint64_t gp_req;    /* highest cookie asked for by start_poll (atomic max) */
	uint64_t gp_req_ns; /* when the oldest request not yet completed was made */
	uint32_t urgent;    /* expedite the next grace period */
	uint32_t stop;
	uint32_t adopt; /* fork child: the first worker started starts those with inherited work */
	/* Exit drain (under all_lock): the last round that took this domain, and whether the drain
	 * stopped its workers (a fork child of a process in its exit handler restarts them). */
	uint32_t exit_round;
	bool exit_stopped;
	struct grace__lock bar_lock; /* barrier refs and bars (fork takes it) */
	struct grace_list_head bars; /* the live barriers */
	uint64_t waits;
	/* Hard limit, stuck: a wait timed out when `stuck_invoked` callbacks had run; later
	 * calls do not wait until more have run (check_backlog()). Under stuck_lock. */
	struct grace__lock stuck_lock;
	bool stuck;
	uint64_t stuck_invoked, stuck_since;
	/* Callbacks queued with grace__engine_call_patient() whose function has not begun (free.c's
	 * monitors; atomic, relaxed: a hint of how long a worker may sleep, never of what is ready).
	 * It may read low for a moment (the count follows the push, the function's first act takes
	 * it back), never high: only a fork that abandons a monitor before its first act
	 * (fork_pause_workers()) would leave it one high in the child. */
	int64_t patient;
	uint32_t progress GRACE_ALIGNED_CACHE; /* futex: bumped after each invocation batch */
	uint32_t progress_waiters;
	struct grace__cbdom *next_all;
};

/* The domain whose callbacks this thread is invoking (NULL: not in a callback). */

/* The domain whose callbacks this thread is invoking (NULL: not in a callback). */
extern __thread struct grace__cbdom *grace__cb_invoking GRACE_TLS_IE;
/* The worker this thread is (NULL: not a worker). */
extern __thread struct worker *grace__cb_self_worker GRACE_TLS_IE;
/* Every domain (linked through next_all), under grace__cb_all_lock. */
extern struct grace__lock grace__cb_all_lock;
extern struct grace__cbdom *grace__cb_all_domains;
/* Exit drain, under grace__cb_all_lock: it is running (in this process: a fork child clears
 * it; also read without the lock, relaxed, by the fork pause), and the domains destroyed while
 * it ran, kept (not freed) because the drain may be using them without the lock (lifecycle.c,
 * at_exit_drain()). */
extern uint32_t grace__cb_exit_running;
extern struct grace__cbdom *grace__cb_exit_kept;

/*
 * Process-wide word every worker loads (relaxed) before each callback: ATTN_EXIT once the exit
 * handler has given up on a worker (it must not run anything any more), plus ATTN_PAUSE for
 * each fork() under way (between its prepare and parent handlers) that wants the workers
 * stopped between callbacks. busy counts the workers inside a batch and not paused.
 * lifecycle.c, fork_pause_workers(), has the protocol.
 */
#define ATTN_EXIT 1u
#define ATTN_PAUSE 2u /* a count: concurrent forks each add one */
#define ATTN_PAUSED(a) ((a) >= ATTN_PAUSE)
struct grace__cb_engine {
	uint32_t attn GRACE_ALIGNED_CACHE; /* futex: paused workers sleep on it */
	uint32_t busy GRACE_ALIGNED_CACHE;
};
extern struct grace__cb_engine grace__cb_engine;

static inline bool cookie_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

/* ---- callback.c, for lifecycle.c ---- */
void grace__cb_wake_worker(struct worker *w);
void grace__cb_barrier_put(struct grace__cbdom *d, struct barrier *b, uint32_t n);
bool grace__cb_barrier_timed(struct grace__cbdom *d, uint64_t timeout_ns, const char *call);
const char *grace__cb_domain_name(const struct grace__cbdom *d, char *buf, size_t n);

/* ---- lifecycle.c, for callback.c ---- */
/* A worker enters and leaves the invocation of a batch (the fork pause protocol); before each
 * callback, a worker that finds attn set calls grace__cb_worker_pause(). */
void grace__cb_batch_enter(void);
void grace__cb_batch_leave(void);
void grace__cb_worker_pause(void);
/* Register the exit drain (once; when the first worker starts). */
void grace__cb_exit_register(void);

#endif
