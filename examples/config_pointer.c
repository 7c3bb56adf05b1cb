/* SPDX-License-Identifier: MIT */
/*
 * An RCU-protected configuration pointer (default flavor).
 *
 * Many threads read the current configuration on every request; now and then one thread
 * replaces it. Readers take no lock and write no shared memory: rcu_read_lock(), one
 * rcu_dereference(), rcu_read_unlock(). Updaters never modify a published configuration: they
 * copy it, change the copy, publish the copy with rcu_assign_pointer(), and free the old one
 * only after a grace period, when no reader can still be using it:
 *   - synchronize_rcu() waits for the grace period (simple; the updater blocks), or
 *   - call_rcu() frees it later on a library thread (the updater never blocks).
 *
 * Build against an installed grace:
 *   cc -O2 config_pointer.c $(pkg-config --cflags --libs grace) -pthread -o config_pointer
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/rcu.h>

struct config {
	unsigned int version;
	unsigned int timeout_ms;
	char server[32];
	unsigned int check;  /* == version * 7 + timeout_ms while published: readers verify */
	struct rcu_head rcu; /* for call_rcu() */
};

/* The published configuration: written with rcu_assign_pointer(), read with rcu_dereference(). */
static struct config *current;
/* Updaters exclude each other with an ordinary lock; readers never touch it. */
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- read side ---- */

/* Copy out what the caller needs. The pointer itself must not be used after the unlock. */
static unsigned int get_timeout(char *server, size_t len)
{
	unsigned int t;

	rcu_read_lock();
	const struct config *c = rcu_dereference(current);
	if (c->check != c->version * 7 + c->timeout_ms) {
		fprintf(stderr, "reader saw a configuration that was freed or half-written\n");
		abort();
	}
	t = c->timeout_ms;
	snprintf(server, len, "%s", c->server);
	rcu_read_unlock();
	return t;
}

/* ---- update side ---- */

static struct config *config_copy(const struct config *old)
{
	struct config *n = malloc(sizeof(*n));
	if (!n) {
		perror("malloc");
		exit(1);
	}
	*n = *old;
	n->version = old->version + 1;
	return n;
}

static void config_seal(struct config *c)
{
	c->check = c->version * 7 + c->timeout_ms;
}

/* Replace the configuration and wait: when this returns, the old version is freed. */
static void set_timeout(unsigned int ms)
{
	pthread_mutex_lock(&update_lock);
	/* Update side, lock held: no read-side section needed, the lock keeps `current` stable. */
	struct config *old = rcu_dereference_protected(current, 1 /* update_lock held */);
	struct config *n = config_copy(old);
	n->timeout_ms = ms;
	config_seal(n);
	rcu_assign_pointer(current, n); /* publish: readers now find n, or still old */
	pthread_mutex_unlock(&update_lock);

	synchronize_rcu(); /* every reader that could have found old has finished */
	old->check = 0;    /* poison it, so a buggy reader would notice */
	free(old);
}

static void config_free_cb(struct rcu_head *head)
{
	struct config *c = container_of(head, struct config, rcu);
	c->check = 0;
	free(c);
}

/* Replace the configuration without waiting: the old version is freed after a grace period. */
static void set_server(const char *server)
{
	pthread_mutex_lock(&update_lock);
	struct config *old = rcu_dereference_protected(current, 1 /* update_lock held */);
	struct config *n = config_copy(old);
	snprintf(n->server, sizeof(n->server), "%s", server);
	config_seal(n);
	rcu_assign_pointer(current, n);
	pthread_mutex_unlock(&update_lock);

	call_rcu(&old->rcu, config_free_cb); /* legal with locks held or inside a section, too */
}

/* ---- demo ---- */

static int stop;

static void *reader(void *arg)
{
	unsigned long n = 0;
	char server[32];

	(void)arg;
	/* No registration needed: the first rcu_read_lock() registers the thread. */
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		get_timeout(server, sizeof(server));
		n++;
	}
	return (void *)n;
}

int main(void)
{
	struct config *c = calloc(1, sizeof(*c));
	pthread_t r[3];
	unsigned long reads = 0;
	char server[32];

	c->timeout_ms = 100;
	snprintf(c->server, sizeof(c->server), "primary");
	config_seal(c);
	RCU_INIT_POINTER(current, c); /* no reader yet: no ordering needed */

	for (int i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	for (unsigned int i = 1; i <= 300; i++) {
		if (i % 2)
			set_timeout(100 + i);
		else
			set_server(i % 4 ? "primary" : "backup");
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++) {
		void *n;
		pthread_join(r[i], &n);
		reads += (unsigned long)n;
	}

	unsigned int t = get_timeout(server, sizeof(server));
	printf("config_pointer: %lu lock-free reads during 300 updates; now timeout %u ms, server %s\n",
	       reads, t, server);

	/* Shut down: unpublish, wait for readers, free; rcu_barrier() runs pending callbacks. */
	c = rcu_dereference_protected(current, 1);
	RCU_INIT_POINTER(current, NULL);
	synchronize_rcu();
	free(c);
	rcu_barrier();
	return t == 399 && strcmp(server, "backup") == 0 ? 0 : 1;
}
