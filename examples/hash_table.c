/* SPDX-License-Identifier: MIT */
/*
 * The RCU hash table: a session cache looked up by many threads with no lock.
 *
 * Lookups run inside rcu_read_lock() and take no lock, execute no atomic instruction and write
 * no shared memory (the Linux Journal 2003 hash benchmark's RCU design). Updates take one
 * striped per-bucket lock; deleted and replaced entries are freed by the table's `free`
 * callback after a grace period. With GRACE_HASH_AUTO_RESIZE the table doubles and halves in
 * the background while readers keep finding every entry.
 *
 * Build against an installed grace:
 *   cc -O2 hash_table.c $(pkg-config --cflags --libs grace) -pthread -o hash_table
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <grace/hash.h>
#include <grace/rcu.h>

struct session {
	struct grace_hash_node node; /* embedded: the table links and retires it */
	uint64_t id;
	uint64_t user;
	uint64_t check; /* == id * 31 + user while live */
};

static uint64_t session_hash(const void *key, void *arg)
{
	uint64_t x = *(const uint64_t *)key;
	(void)arg;
	/* Mix the bits: the low bits choose the bucket. */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static bool session_match(const struct grace_hash_node *n, const void *key, void *arg)
{
	(void)arg;
	return container_of(n, struct session, node)->id == *(const uint64_t *)key;
}

static void session_free(struct rcu_head *h)
{
	struct session *s = container_of(grace_hash_node_of_rcu(h), struct session, node);
	s->check = 0; /* poison */
	free(s);
}

static struct grace_hash *sessions;

static struct session *session_new(uint64_t id, uint64_t user)
{
	struct session *s = malloc(sizeof(*s));
	if (!s)
		abort();
	s->id = id;
	s->user = user;
	s->check = id * 31 + user;
	return s;
}

/* Reader: copy out the user of a session, or return 0. */
static uint64_t session_user(uint64_t id)
{
	uint64_t user = 0;

	rcu_read_lock();
	struct grace_hash_node *n = grace_hash_lookup(sessions, &id);
	if (n) {
		struct session *s = container_of(n, struct session, node);
		if (s->check != s->id * 31 + s->user) {
			fprintf(stderr, "reader saw a freed session\n");
			abort();
		}
		user = s->user;
	}
	rcu_read_unlock();
	return user;
}

/* The same lookup without the indirect match call: compare keys inline. */
static int session_exists_inline(uint64_t id)
{
	struct grace_hash_node *n;
	int found = 0;

	rcu_read_lock();
	grace_hash_for_each_possible_rcu(sessions, n, session_hash(&id, NULL))
		if (container_of(n, struct session, node)->id == id) {
			found = 1;
			break;
		}
	rcu_read_unlock();
	return found;
}

#define NSESSIONS 4096
static int stop;

static void *reader(void *arg)
{
	unsigned long found = 0;
	uint64_t id = (uint64_t)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		found += session_user(id % NSESSIONS) != 0;
		found += (unsigned long)session_exists_inline((id + 7) % NSESSIONS);
		id++;
	}
	return (void *)found;
}

int main(void)
{
	struct grace_hash_params p = { 0 };
	pthread_t r[2];
	unsigned long found = 0;

	p.hash = session_hash;
	p.match = session_match;
	p.free = session_free;     /* after a grace period, for deleted/replaced nodes */
	p.ops = &grace_flavor_rcu; /* the readers use the default flavor */
	p.init_buckets = 16;       /* small on purpose: watch it grow */
	p.flags = GRACE_HASH_AUTO_RESIZE;
	sessions = grace_hash_create(&p);
	if (!sessions) {
		perror("grace_hash_create");
		return 1;
	}

	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i * 1000));
	for (uint64_t id = 1; id < NSESSIONS; id++)
		grace_hash_add_unique(sessions, &session_new(id, id + 100)->node, &id);
	for (uint64_t id = 1; id < NSESSIONS; id += 3) {
		/* Re-assign a session: replace it with an updated copy. */
		rcu_read_lock(); /* the old node must not be freed while we copy it */
		struct grace_hash_node *n = grace_hash_lookup(sessions, &id);
		if (n) {
			struct session *old = container_of(n, struct session, node);
			grace_hash_replace(sessions, n, &session_new(id, old->user + 1)->node);
		}
		rcu_read_unlock();
	}
	for (uint64_t id = 2; id < NSESSIONS; id += 3)
		grace_hash_del_key(sessions, &id);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		void *n;
		pthread_join(r[i], &n);
		found += (unsigned long)n;
	}

	struct grace_hash_stats st;
	grace_hash_get_stats(sessions, &st);
	int ok = session_user(1) == 102 && session_user(2) == 0 && session_user(3) == 103 &&
		 grace_hash_count(sessions) == NSESSIONS - 1 - (NSESSIONS - 2 + 2) / 3;
	printf("hash_table: %zu sessions in %zu buckets (%llu grows, %llu shrinks); %lu hits by "
	       "lock-free readers\n",
	       st.count, st.buckets, (unsigned long long)st.grows, (unsigned long long)st.shrinks,
	       found);
	grace_hash_destroy(sessions); /* frees the remaining sessions through p.free */
	return ok ? 0 : 1;
}
