/* SPDX-License-Identifier: MIT */
/*
 * Consumer of an installed grace (C): the version header matches the library that was loaded
 * and the package that was found, the library was loaded from the expected prefix, and both
 * flavors work: readers of an RCU-protected pointer against an updater that frees old
 * versions after synchronize_rcu(), and a QSBR thread against synchronize_qsbr().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>

#define FAIL(...)                                                \
	do {                                                     \
		fprintf(stderr, "consumer: FAIL: " __VA_ARGS__); \
		fprintf(stderr, "\n");                           \
		exit(1);                                         \
	} while (0)

struct cfg {
	unsigned long gen;
	unsigned long check; /* always ~gen while the object is live */
	struct rcu_head rcu;
};

static void cfg_free(struct rcu_head *h)
{
	struct cfg *c = container_of(h, struct cfg, rcu);
	c->check = 0;
	free(c);
}

static struct cfg *cur;
static int stop, started;

static void *reader(void *arg)
{
	unsigned long reads = 0, last = 0;
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		struct cfg *c = rcu_dereference(cur);
		if (c->check != ~c->gen)
			FAIL("reader saw a freed configuration (gen %lu)", c->gen);
		if (c->gen < last)
			FAIL("generation went backwards");
		last = c->gen;
		rcu_read_unlock();
		if (reads++ == 0)
			__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	}
	return (void *)reads;
}

static void *qsbr_reader(void *arg)
{
	(void)arg;
	qsbr_register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		qsbr_read_lock();
		qsbr_read_unlock();
		qsbr_quiescent_state();
	}
	qsbr_thread_offline();
	qsbr_thread_online();
	qsbr_unregister_thread();
	return NULL;
}

int main(void)
{
	/* The package passes the debug checks on to its users exactly when the library has them. */
	if (GRACE__DEBUG != GRACE_EXPECT_DEBUG)
		FAIL("GRACE_DEBUG is %d in user code, the library was built with %d", GRACE__DEBUG,
		     GRACE_EXPECT_DEBUG);
	if (strcmp(GRACE_VERSION_STRING, GRACE_EXPECT_VERSION) != 0)
		FAIL("header version %s, package version %s", GRACE_VERSION_STRING,
		     GRACE_EXPECT_VERSION);
	if (grace_version_number() != GRACE_VERSION_NUMBER ||
	    strcmp(grace_version_string(), GRACE_VERSION_STRING) != 0)
		FAIL("library version %s, header version %s", grace_version_string(),
		     GRACE_VERSION_STRING);
#ifndef CONSUMER_STATIC
	Dl_info info;
	if (!dladdr((void *)grace_version_string, &info) || !info.dli_fname)
		FAIL("dladdr(grace_version_string) failed");
	if (strncmp(info.dli_fname, GRACE_EXPECT_PREFIX "/", strlen(GRACE_EXPECT_PREFIX) + 1) != 0)
		FAIL("libgrace loaded from %s, not from %s", info.dli_fname, GRACE_EXPECT_PREFIX);
	printf("consumer: libgrace %s from %s (%s)\n", grace_version_string(), info.dli_fname,
	       grace_membarrier_mode());
#else
	printf("consumer: static libgrace %s (%s)\n", grace_version_string(),
	       grace_membarrier_mode());
#endif

	struct cfg *c = malloc(sizeof(*c));
	c->gen = 0;
	c->check = ~0ul;
	RCU_INIT_POINTER(cur, c);

	pthread_t r[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&r[i], NULL, i ? qsbr_reader : reader, NULL))
			FAIL("pthread_create");
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		sched_yield();
	for (unsigned long gen = 1; gen <= 200; gen++) {
		struct cfg *n = malloc(sizeof(*n)), *old;
		n->gen = gen;
		n->check = ~gen;
		old = rcu_dereference_protected(cur, 1);
		rcu_assign_pointer(cur, n);
		if (gen % 2) {
			synchronize_rcu();
			old->check = 0; /* poison: a reader still holding it would notice */
			free(old);
		} else {
			call_rcu(&old->rcu, cfg_free);
		}
		if (gen % 20 == 0)
			synchronize_qsbr();
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	void *reads;
	pthread_join(r[0], &reads);
	pthread_join(r[1], NULL);
	free(cur);
	rcu_barrier();
	printf("consumer: C OK (%lu reads)\n", (unsigned long)reads);
	return 0;
}
