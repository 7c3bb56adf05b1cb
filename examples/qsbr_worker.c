/* SPDX-License-Identifier: MIT */
/*
 * A QSBR worker loop.
 *
 * QSBR (quiescent-state-based reclamation) makes read-side sections free: no instruction at
 * all in release builds. In exchange each reading thread
 *   1. registers (qsbr_register_thread()) and unregisters before it exits,
 *   2. reports a quiescent state regularly (qsbr_quiescent_state()): a point where it holds no
 *      pointer to QSBR-protected data, typically once per loop iteration,
 *   3. goes offline around anything that blocks (qsbr_thread_offline() / _online()), or every
 *      synchronize_qsbr() in the process waits for it. grace names a thread that forgets this
 *      on stderr after the stall timeout (GRACE_STALL_TIMEOUT_MS, default 10 s).
 *
 * Here worker threads take requests from a queue (they block on a condition variable while it
 * is empty: offline) and route each through a routing table that a control thread replaces
 * from time to time, freeing old tables with synchronize_qsbr() or call_qsbr().
 *
 * Build against an installed grace:
 *   cc -O2 qsbr_worker.c $(pkg-config --cflags --libs grace) -pthread -o qsbr_worker
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <grace/qsbr.h>

#define NROUTES 64
#define NWORKERS 2
#define NREQUESTS 20000

struct table {
	unsigned int generation;
	unsigned int route[NROUTES]; /* route[i] == generation for every i while published */
	struct rcu_head rcu;
};

static struct table *routes; /* QSBR-protected */

/* A plain work queue: a counter of pending requests under a mutex. */
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static unsigned int pending, submitted;
static int closing;
static unsigned long routed[NWORKERS];

/* Block until a request is available: the thread is offline while it may sleep. */
static int get_request(void)
{
	int got = 0;

	pthread_mutex_lock(&qlock);
	if (pending == 0 && !closing) {
		qsbr_thread_offline(); /* may sleep: stop holding up grace periods */
		while (pending == 0 && !closing)
			pthread_cond_wait(&qcond, &qlock);
		qsbr_thread_online(); /* before touching QSBR-protected data again */
	}
	if (pending) {
		pending--;
		got = 1;
	}
	pthread_mutex_unlock(&qlock);
	return got;
}

static void *worker(void *arg)
{
	long id = (long)arg;

	qsbr_register_thread(); /* online from here on */
	while (get_request()) {
		/* Read side: marks only (no code in release builds), checked in debug builds. */
		qsbr_read_lock();
		const struct table *t = rcu_dereference(routes);
		unsigned int r = t->route[routed[id] % NROUTES];
		if (r != t->generation) {
			fprintf(stderr, "worker %ld: routing table freed under it\n", id);
			abort();
		}
		qsbr_read_unlock();
		routed[id]++;
		/* Done with t: a quiescent state lets grace periods end. */
		qsbr_quiescent_state();
	}
	qsbr_unregister_thread();
	return NULL;
}

static struct table *table_new(unsigned int generation)
{
	struct table *t = malloc(sizeof(*t));
	if (!t) {
		perror("malloc");
		exit(1);
	}
	t->generation = generation;
	for (int i = 0; i < NROUTES; i++)
		t->route[i] = generation;
	return t;
}

static void table_free_cb(struct rcu_head *head)
{
	struct table *t = container_of(head, struct table, rcu);
	t->route[0] = ~0u; /* poison */
	free(t);
}

/* The control thread (this one) is not registered with QSBR: it only updates. */
static void replace_table(unsigned int generation, int wait)
{
	struct table *old = rcu_dereference_protected(routes, 1 /* the only writer */);
	rcu_assign_pointer(routes, table_new(generation));
	if (wait) {
		synchronize_qsbr(); /* every online worker has passed a quiescent state */
		table_free_cb(&old->rcu);
	} else {
		call_qsbr(&old->rcu, table_free_cb);
	}
}

int main(void)
{
	pthread_t w[NWORKERS];
	unsigned long total = 0;

	RCU_INIT_POINTER(routes, table_new(0));
	for (long i = 0; i < NWORKERS; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);

	for (unsigned int gen = 1; submitted < NREQUESTS; gen++) {
		pthread_mutex_lock(&qlock);
		pending += 100;
		submitted += 100;
		pthread_cond_broadcast(&qcond);
		pthread_mutex_unlock(&qlock);
		replace_table(gen, gen % 2);
	}
	pthread_mutex_lock(&qlock);
	closing = 1;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	for (int i = 0; i < NWORKERS; i++) {
		pthread_join(w[i], NULL);
		total += routed[i];
	}

	printf("qsbr_worker: %lu requests routed by %d workers across %u table replacements\n",
	       total, NWORKERS, NREQUESTS / 100);
	qsbr_barrier(); /* every call_qsbr() callback has run */
	free(routes);
	return total == NREQUESTS ? 0 : 1;
}
