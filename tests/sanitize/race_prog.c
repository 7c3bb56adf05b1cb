/* SPDX-License-Identifier: MIT */
/*
 * Correct and incorrect RCU use, for race detectors (ThreadSanitizer, helgrind, drd) run on a
 * program linked against the regular library. sanitize.cmake builds it twice: with
 * -fsanitize=thread, and with -DGRACE_VALGRIND=1 for Valgrind.
 *
 * Every object carries a plain (non-atomic) payload: the updater writes it before publishing,
 * readers read it inside their sections, and the reclaimer writes it ("scribble") right before
 * freeing. Without a happens-before edge from every reader's section to the scribble, the tools
 * report a race; with one, nothing. Scenarios (argv[1]):
 *   rcu_sync    default flavor: synchronize_rcu() or synchronize_rcu_expedited(), then scribble and free
 *   rcu_call    call_rcu(): the callback scribbles and frees on a library worker; rcu_barrier()
 *               then the program frees what the callbacks wrote to
 *   rcu_poll    polled API: start_poll_synchronize_rcu(), poll_state_synchronize_rcu() and
 *               cond_synchronize_rcu() before the free
 *   rcu_exit    readers that exit (unregistered, not joined yet) before the free
 *   qsbr        QSBR: quiescent states, offline around a sleep; synchronize_qsbr(), call_qsbr(),
 *               qsbr_barrier(), polled QSBR
 *   srcu        srcu: synchronize_srcu(), call_srcu(), srcu_barrier(), polled srcu
 *   broken      a free with no grace period: the updater scribbles while a reader that read the
 *               payload is still inside its section. The tools must report it.
 *   all         every correct scenario in turn
 * The program's own control flags are relaxed atomics (no happens-before for TSan); for
 * Valgrind, which cannot tell atomics from plain accesses, it declares them shared with the
 * library's helper (the same thing ANNOTATE_BENIGN_RACE would do).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grace/grace.h>

#define NREADERS 2

struct obj {
	long payload[4];
	struct rcu_head rh;
	unsigned long cookie;
	struct obj *next_retired;
	long *done; /* a callback sets *done = 1 (plain), read after the barrier */
};

static struct obj *gp;
static int stop;
static DEFINE_SRCU(dom);

static void shared_flag(void *p, size_t n)
{
	grace__ann_shared(p, n);
}
static int flag(int *p)
{
	return grace_load_relaxed(p); /* no happens-before: only the library may order */
}
static void set_flag(int *p, int v)
{
	grace_store_relaxed(p, v);
}

static struct obj *obj_new(long v)
{
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	for (int i = 0; i < 4; i++)
		o->payload[i] = v;
	o->done = NULL;
	return o;
}

/* Named so that a report of the broken scenario can be recognised by its stack. */
__attribute__((noinline)) static long payload_read(const struct obj *o)
{
	return o->payload[0] + o->payload[3];
}
__attribute__((noinline)) static void payload_scribble(struct obj *o)
{
	/* volatile: the compiler would otherwise drop stores to memory that is freed next */
	for (int i = 0; i < 4; i++)
		((volatile long *)o->payload)[i] = -1;
}
static void obj_free(struct obj *o)
{
	payload_scribble(o);
	free(o);
}
static void obj_free_cb(struct rcu_head *h)
{
	struct obj *o = container_of(h, struct obj, rh);
	if (o->done)
		*o->done =
			1; /* plain write on a library worker; the program reads it after *_barrier() */
	obj_free(o);
}

/* Readers leave the CPU between sections: under Valgrind, which runs one thread at a time,
 * spinning readers would take most of the run. */
static void pace(void)
{
	sched_yield();
}

static void check(long s)
{
	if (s < 0) {
		fprintf(stderr, "a reader saw a scribbled payload\n");
		abort();
	}
}

/* ---- readers ---- */

static void *rcu_reader(void *arg)
{
	long n = (long)(intptr_t)arg; /* 0: until stop; else that many sections, then exit */
	long s = 0;
	for (long i = 0; n == 0 ? !flag(&stop) : i < n; i++) {
		rcu_read_lock();
		struct obj *o = rcu_dereference(gp);
		if (o)
			s += payload_read(o);
		rcu_read_unlock();
		pace();
	}
	check(s);
	return NULL;
}

static void *qsbr_reader(void *arg)
{
	(void)arg;
	long s = 0;
	qsbr_register_thread();
	for (long i = 0; !flag(&stop); i++) {
		qsbr_read_lock();
		struct obj *o = rcu_dereference(gp);
		if (o)
			s += payload_read(o);
		qsbr_read_unlock();
		qsbr_quiescent_state();
		pace();
		if (i % 64 == 0) {
			qsbr_thread_offline();
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
			qsbr_thread_online();
		}
	}
	qsbr_unregister_thread();
	check(s);
	return NULL;
}

static void *srcu_reader(void *arg)
{
	(void)arg;
	long s = 0;
	while (!flag(&stop)) {
		int idx = srcu_read_lock(&dom);
		struct obj *o = srcu_dereference(gp, &dom);
		if (o)
			s += payload_read(o);
		srcu_read_unlock(&dom, idx);
		pace();
	}
	check(s);
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&t[i], NULL, fn, arg);
}
static void finish(pthread_t *t)
{
	set_flag(&stop, 1);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(t[i], NULL);
}

static struct obj *replace(long v)
{
	return rcu_xchg_pointer(&gp, obj_new(v));
}

/* ---- scenarios ---- */

static void rcu_sync(int rounds)
{
	pthread_t t[NREADERS];
	start(t, rcu_reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		if (i % 2)
			synchronize_rcu();
		else
			synchronize_rcu_expedited();
		obj_free(old);
	}
	finish(t);
}

static void rcu_call(int rounds)
{
	pthread_t t[NREADERS];
	long *done = (long *)calloc((size_t)rounds + 1, sizeof(long));
	start(t, rcu_reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		old->done = &done[i];
		call_rcu(&old->rh, obj_free_cb);
	}
	finish(t);
	rcu_barrier();
	/* The callbacks' writes happen before the barrier's return: read and free them. */
	long n = 0;
	for (int i = 1; i <= rounds; i++)
		n += done[i];
	free(done);
	if (n != rounds) {
		fprintf(stderr, "callbacks: %ld of %d\n", n, rounds);
		abort();
	}
}

static void rcu_poll(int rounds)
{
	pthread_t t[NREADERS];
	struct obj *retired = NULL;
	start(t, rcu_reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		old->cookie = start_poll_synchronize_rcu();
		old->next_retired = retired;
		retired = old;
		/* Free what has completed; keep the rest. */
		struct obj **pp = &retired;
		while (*pp) {
			struct obj *o = *pp;
			if (poll_state_synchronize_rcu(o->cookie)) {
				*pp = o->next_retired;
				obj_free(o);
			} else {
				pp = &o->next_retired;
			}
		}
	}
	while (retired) {
		struct obj *o = retired;
		retired = o->next_retired;
		cond_synchronize_rcu(o->cookie);
		obj_free(o);
	}
	finish(t);
}

static void rcu_exit(int rounds)
{
	pthread_t t[NREADERS];
	start(t, rcu_reader, (void *)(intptr_t)200); /* readers exit on their own */
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		synchronize_rcu();
		obj_free(old);
	}
	for (int i = 0; i < NREADERS; i++)
		pthread_join(t[i], NULL);
}

static void qsbr(int rounds)
{
	pthread_t t[NREADERS];
	start(t, qsbr_reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		switch (i % 3) {
		case 0:
			synchronize_qsbr();
			obj_free(old);
			break;
		case 1:
			call_qsbr(&old->rh, obj_free_cb);
			break;
		default:
			cond_synchronize_qsbr(start_poll_synchronize_qsbr());
			obj_free(old);
			break;
		}
	}
	finish(t);
	qsbr_barrier();
}

static void srcu(int rounds)
{
	pthread_t t[NREADERS];
	start(t, srcu_reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct obj *old = replace(i);
		switch (i % 3) {
		case 0:
			synchronize_srcu(&dom);
			obj_free(old);
			break;
		case 1:
			call_srcu(&dom, &old->rh, obj_free_cb);
			break;
		default: {
			unsigned long c = start_poll_synchronize_srcu(&dom);
			while (!poll_state_synchronize_srcu(&dom, c))
				sched_yield();
			obj_free(old);
			break;
		}
		}
	}
	finish(t);
	srcu_barrier(&dom);
}

/* The bug the tools must still see: the updater frees while a reader that read the payload is
 * inside its section, with no grace period in between. */
static int have_read, freed;
static void *broken_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	struct obj *o = rcu_dereference(gp);
	long s = payload_read(o);
	set_flag(&have_read, 1);
	while (!flag(&freed))
		sched_yield();
	rcu_read_unlock();
	return (void *)(intptr_t)s;
}
static void broken(int rounds)
{
	(void)rounds;
	pthread_t t;
	pthread_create(&t, NULL, broken_reader, NULL);
	while (!flag(&have_read))
		sched_yield();
	struct obj *old = replace(1);
	obj_free(old); /* BUG: no synchronize_rcu() */
	set_flag(&freed, 1);
	pthread_join(t, NULL);
}

/* Every correct scenario in one process (one Valgrind start-up instead of six). */
static void all(int rounds)
{
	static void (*const each[])(int) = { rcu_sync, rcu_call, rcu_poll, rcu_exit, qsbr, srcu };
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		set_flag(&stop, 0);
		each[i](rounds);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(int);
	} scen[] = { { "rcu_sync", rcu_sync }, { "rcu_call", rcu_call },
		     { "rcu_poll", rcu_poll }, { "rcu_exit", rcu_exit },
		     { "qsbr", qsbr },         { "srcu", srcu },
		     { "broken", broken },     { "all", all } };
	int rounds = argc > 2 ? atoi(argv[2]) : 100;

	if (argc < 2) {
		fprintf(stderr, "usage: %s scenario [rounds]\n", argv[0]);
		return 2;
	}
	shared_flag(&stop, sizeof(stop));
	shared_flag(&have_read, sizeof(have_read));
	shared_flag(&freed, sizeof(freed));
	gp = obj_new(0);
	for (size_t i = 0; i < sizeof(scen) / sizeof(scen[0]); i++) {
		if (strcmp(argv[1], scen[i].name) == 0) {
			scen[i].fn(rounds);
			/* The last object: no reader is left. */
			obj_free(rcu_xchg_pointer(&gp, (struct obj *)NULL));
			printf("%s: done\n", argv[1]);
			return 0;
		}
	}
	fprintf(stderr, "unknown scenario %s\n", argv[1]);
	return 2;
}
