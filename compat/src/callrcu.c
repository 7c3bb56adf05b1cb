/* SPDX-License-Identifier: MIT */
/*
 * call_rcu worker control (liburcu's call_rcu_data API) on grace.
 *
 * grace runs callbacks on its own per-CPU workers, started on demand, restarted after fork(),
 * with a bounded backlog: call_rcu() always queues there. A struct call_rcu_data is therefore a
 * handle that keeps liburcu's bookkeeping contract (a default handle, per-CPU handles, a
 * per-thread handle, what get_call_rcu_data() picks), not a thread. Each liburcu flavor has its
 * own set, as each liburcu flavor library has. The exact behaviour of every function is listed
 * in docs/compat.md.
 *
 * get_call_rcu_thread(): liburcu returns the handle's worker thread, and programs join it after
 * call_rcu_data_free() (multipathd's shutdown does), or set its priority or affinity. grace's
 * workers are not per handle, so the first get_call_rcu_thread() of a handle starts a thread of
 * the handle's own that runs no callback: it sleeps until the handle is freed
 * (call_rcu_data_free(), free_all_cpu_call_rcu_data(), a fork child dropping the per-CPU
 * handles), then exits, so joining it after the free returns, as with liburcu. The default
 * handle is never freed: its thread never exits (liburcu's default worker does not either).
 * The thread belongs to the process that started it: in a fork child the handle gets a new one
 * at its next get_call_rcu_thread().
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

/* A handle's thread and what it waits on. Owned by the thread once stop is set: the thread
 * frees it, and whoever set stop no longer touches it. */
struct handle_thread {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

struct call_rcu_data {
	unsigned long flags;
	int cpu_affinity; /* -1: none */
	int flavor;
	/* get_call_rcu_thread(): its thread, started by process thread_pid (0: none). */
	pthread_mutex_t thread_lock;
	struct handle_thread *ht;
	pthread_t thread;
	pid_t thread_pid;
};

struct flavor_state {
	pthread_mutex_t lock; /* the per-CPU table, the fork hooks; held across fork() */
	struct call_rcu_data deflt;
	struct call_rcu_data **percpu; /* RCU-like: read with acquire, freed never (size fixed) */
	long ncpus;
	struct urcu_atfork *atfork;
	unsigned long atfork_refs;
};

static struct flavor_state fs[GRACE_URCU_NR_FLAVORS] = {
#define FS_INIT(id)                                                    \
	{                                                              \
		.lock = PTHREAD_MUTEX_INITIALIZER,                     \
		.deflt = { .flags = 0,                                 \
			   .cpu_affinity = -1,                         \
			   .flavor = (id),                             \
			   .thread_lock = PTHREAD_MUTEX_INITIALIZER }, \
	}
	FS_INIT(GRACE_URCU_MEMB), FS_INIT(GRACE_URCU_MB),   FS_INIT(GRACE_URCU_SIGNAL),
	FS_INIT(GRACE_URCU_BP),   FS_INIT(GRACE_URCU_QSBR),
#undef FS_INIT
};

static __thread struct call_rcu_data *thread_crdp[GRACE_URCU_NR_FLAVORS];

static struct flavor_state *state(int flavor)
{
	if (flavor < 0 || flavor >= GRACE_URCU_NR_FLAVORS)
		grace_urcu__misuse("call_rcu_data", "unknown flavor %d", flavor);
	return &fs[flavor];
}

static void *handle_thread_main(void *arg)
{
	struct handle_thread *ht = (struct handle_thread *)arg;

	pthread_mutex_lock(&ht->lock);
	while (!ht->stop)
		pthread_cond_wait(&ht->cond, &ht->lock);
	pthread_mutex_unlock(&ht->lock);
	/* Whoever set stop no longer touches ht (handle_stop()). */
	pthread_cond_destroy(&ht->cond);
	pthread_mutex_destroy(&ht->lock);
	free(ht);
	return NULL;
}

/* The handle is being freed: its thread, if this process started it, exits (and may be
 * joined); one inherited from the parent over fork() does not exist here, only its memory. */
static void handle_stop(struct call_rcu_data *c)
{
	struct handle_thread *ht = c->ht;

	if (!ht)
		return;
	c->ht = NULL;
	if (c->thread_pid != getpid()) {
		free(ht);
		return;
	}
	pthread_mutex_lock(&ht->lock);
	ht->stop = true;
	pthread_cond_signal(&ht->cond);
	pthread_mutex_unlock(&ht->lock);
	/* ht is the thread's now. */
}

static void handle_free(struct call_rcu_data *c)
{
	if (!c) /* an empty per-CPU slot */
		return;
	handle_stop(c);
	pthread_mutex_destroy(&c->thread_lock);
	free(c);
}

static int handle_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (struct call_rcu_data *const *)a;
	uintptr_t y = (uintptr_t) * (struct call_rcu_data *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * Free the handles of v (n entries, a private copy, sorted here): each once, though a handle may
 * be set for several CPUs, and never the default handle (static), which may be set for a CPU too:
 * liburcu's call_rcu_data_free() ignores it, and its fork child frees each handle once.
 */
static void free_handles(struct flavor_state *s, struct call_rcu_data **v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), handle_cmp);
	for (long i = 0; i < n; i++)
		if (v[i] != &s->deflt && (i == 0 || v[i] != v[i - 1]))
			handle_free(v[i]);
}

/* The per-CPU table, allocated once with the number of configured CPUs. Lock held. */
static int percpu_alloc(struct flavor_state *s)
{
	if (s->percpu)
		return 0;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	if (n <= 0)
		return -EINVAL;
	struct call_rcu_data **t = (struct call_rcu_data **)calloc((size_t)n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	s->ncpus = n;
	/* Release: readers that see the table (acquire in get_cpu) see it zeroed and sized. */
	grace_store_release(&s->percpu, t);
	return 0;
}

struct call_rcu_data *grace_urcu_create_call_rcu_data(int flavor, unsigned long flags,
						      int cpu_affinity)
{
	struct call_rcu_data *c;

	(void)state(flavor);
	if (flags & URCU_CALL_RCU_RT) {
		/* Real-time workers that never sleep: grace's workers sleep on futexes. */
		errno = ENOTSUP;
		return NULL;
	}
	c = (struct call_rcu_data *)malloc(sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->flags = flags;
	c->cpu_affinity = cpu_affinity;
	c->flavor = flavor;
	pthread_mutex_init(&c->thread_lock, NULL);
	c->ht = NULL;
	c->thread_pid = 0;
	return c;
}

void grace_urcu_call_rcu_data_free(int flavor, struct call_rcu_data *crdp)
{
	struct flavor_state *s = state(flavor);

	/* Callbacks queued through it are in grace's engine: they run whatever happens here. */
	if (!crdp || crdp == &s->deflt)
		return;
	handle_free(crdp);
}

struct call_rcu_data *grace_urcu_get_default_call_rcu_data(int flavor)
{
	return &state(flavor)->deflt;
}

struct call_rcu_data *grace_urcu_get_cpu_call_rcu_data(int flavor, int cpu)
{
	struct flavor_state *s = state(flavor);
	/* Acquire: pairs with the release in percpu_alloc(). */
	struct call_rcu_data **t = grace_load_acquire(&s->percpu);

	if (!t || cpu < 0 || cpu >= s->ncpus)
		return NULL;
	/* Acquire: pairs with the release in set_cpu (the handle is initialised). */
	return grace_load_acquire(&t[cpu]);
}

struct call_rcu_data *grace_urcu_get_thread_call_rcu_data(int flavor)
{
	(void)state(flavor);
	return thread_crdp[flavor];
}

void grace_urcu_set_thread_call_rcu_data(int flavor, struct call_rcu_data *crdp)
{
	(void)state(flavor);
	thread_crdp[flavor] = crdp;
}

struct call_rcu_data *grace_urcu_get_call_rcu_data(int flavor)
{
	struct call_rcu_data *c = grace_urcu_get_thread_call_rcu_data(flavor);

	if (c)
		return c;
	int cpu = sched_getcpu();
	if (cpu >= 0 && (c = grace_urcu_get_cpu_call_rcu_data(flavor, cpu)) != NULL)
		return c;
	return grace_urcu_get_default_call_rcu_data(flavor);
}

pthread_t grace_urcu_get_call_rcu_thread(struct call_rcu_data *crdp)
{
	pthread_t t;

	if (!crdp)
		grace_urcu__misuse("get_call_rcu_thread", "NULL call_rcu_data handle");
	pthread_mutex_lock(&crdp->thread_lock);
	if (!crdp->ht || crdp->thread_pid != getpid()) {
		/* None yet, or the parent's over fork(): start this process's. */
		struct handle_thread *ht = (struct handle_thread *)calloc(1, sizeof(*ht));
		if (crdp->ht)
			free(crdp->ht); /* the parent's: no thread here */
		crdp->ht = NULL;
		if (!ht) {
			pthread_mutex_unlock(&crdp->thread_lock);
			grace_urcu__misuse("get_call_rcu_thread",
					   "out of memory for the handle's thread");
		}
		pthread_mutex_init(&ht->lock, NULL);
		pthread_cond_init(&ht->cond, NULL);
		/* All signals blocked in it: it takes none meant for the program's threads. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int r = pthread_create(&crdp->thread, NULL, handle_thread_main, ht);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (r != 0) {
			pthread_mutex_unlock(&crdp->thread_lock);
			grace_urcu__misuse("get_call_rcu_thread",
					   "cannot start the handle's thread: %s", strerror(r));
		}
		crdp->ht = ht;
		crdp->thread_pid = getpid();
	}
	t = crdp->thread;
	pthread_mutex_unlock(&crdp->thread_lock);
	return t;
}

int grace_urcu_set_cpu_call_rcu_data(int flavor, int cpu, struct call_rcu_data *crdp)
{
	struct flavor_state *s = state(flavor);
	int r;

	pthread_mutex_lock(&s->lock);
	r = percpu_alloc(s);
	if (r == 0 && (cpu < 0 || cpu >= s->ncpus))
		r = -EINVAL;
	if (r == 0 && s->percpu[cpu] && crdp)
		r = -EEXIST;
	if (r == 0)
		/* Release: a reader of the slot sees the handle initialised. */
		grace_store_release(&s->percpu[cpu], crdp);
	pthread_mutex_unlock(&s->lock);
	if (r)
		errno = -r;
	return r;
}

int grace_urcu_create_all_cpu_call_rcu_data(int flavor, unsigned long flags)
{
	struct flavor_state *s = state(flavor);
	int r;

	if (flags & URCU_CALL_RCU_RT) {
		errno = ENOTSUP;
		return -ENOTSUP;
	}
	pthread_mutex_lock(&s->lock);
	r = percpu_alloc(s);
	pthread_mutex_unlock(&s->lock);
	if (r) {
		errno = -r;
		return r;
	}
	for (long i = 0; i < s->ncpus; i++) {
		struct call_rcu_data *c;

		if (grace_urcu_get_cpu_call_rcu_data(flavor, (int)i))
			continue;
		c = grace_urcu_create_call_rcu_data(flavor, flags, (int)i);
		if (!c) {
			errno = ENOMEM;
			return -ENOMEM;
		}
		r = grace_urcu_set_cpu_call_rcu_data(flavor, (int)i, c);
		if (r) {
			handle_free(c);
			if (r == -EEXIST) /* another thread set it meanwhile */
				continue;
			return r;
		}
	}
	return 0;
}

void grace_urcu_free_all_cpu_call_rcu_data(int flavor)
{
	struct flavor_state *s = state(flavor);
	struct call_rcu_data **t = grace_load_acquire(&s->percpu), **old;

	if (!t)
		return;
	old = (struct call_rcu_data **)calloc((size_t)s->ncpus, sizeof(*old));
	if (!old) {
		grace_urcu__warn("free_all_cpu_call_rcu_data", "out of memory: handles kept");
		return;
	}
	pthread_mutex_lock(&s->lock);
	for (long i = 0; i < s->ncpus; i++) {
		old[i] = t[i];
		grace_store_release(&t[i], (struct call_rcu_data *)NULL);
	}
	pthread_mutex_unlock(&s->lock);
	/* Threads that took a handle with get_cpu_call_rcu_data() inside a read-side section may
	 * still use it: free after a grace period, as liburcu does. */
	if (grace_urcu__is_qsbr(flavor))
		grace_qsbr_synchronize();
	else
		grace_rcu_synchronize();
	free_handles(s, old, s->ncpus);
	free(old);
}

/* ---- fork ---- */

void grace_urcu_call_rcu_before_fork(int flavor)
{
	struct flavor_state *s = state(flavor);

	/* Held across fork(): the child gets the tables consistent. */
	pthread_mutex_lock(&s->lock);
	if (s->atfork)
		s->atfork->before_fork(s->atfork->priv);
}

void grace_urcu_call_rcu_after_fork_parent(int flavor)
{
	struct flavor_state *s = state(flavor);

	if (s->atfork)
		s->atfork->after_fork_parent(s->atfork->priv);
	pthread_mutex_unlock(&s->lock);
}

void grace_urcu_call_rcu_after_fork_child(int flavor)
{
	struct flavor_state *s = state(flavor);
	struct call_rcu_data **t = s->percpu;

	if (s->atfork)
		s->atfork->after_fork_child(s->atfork->priv);
	/* As liburcu: the child starts with no per-CPU and no per-thread handle (only the
	 * default one); grace restarts its own workers in the child. */
	if (t) {
		/* The child is single-threaded: the table itself is the private copy. */
		free_handles(s, t, s->ncpus);
		memset(t, 0, (size_t)s->ncpus * sizeof(*t));
	}
	thread_crdp[flavor] = NULL;
	pthread_mutex_unlock(&s->lock);
}

void grace_urcu_register_rculfhash_atfork(int flavor, struct urcu_atfork *atfork)
{
	struct flavor_state *s = state(flavor);

	pthread_mutex_lock(&s->lock);
	if (s->atfork_refs++ == 0)
		s->atfork = atfork;
	pthread_mutex_unlock(&s->lock);
}

void grace_urcu_unregister_rculfhash_atfork(int flavor, struct urcu_atfork *atfork)
{
	struct flavor_state *s = state(flavor);

	(void)atfork;
	pthread_mutex_lock(&s->lock);
	if (s->atfork_refs && --s->atfork_refs == 0)
		s->atfork = NULL;
	pthread_mutex_unlock(&s->lock);
}
