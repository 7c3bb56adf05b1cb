/* SPDX-License-Identifier: MIT */
/*
 * An RCU-protected list: the reader-writer-lock code of the FREENIX 2003 paper's Table 2,
 * converted to RCU by its Table 1 substitutions (docs/guide.md, section 3):
 *   pthread_rwlock_t           -> pthread_mutex_t (updaters only)
 *   rdlock / unlock            -> rcu_read_lock() / rcu_read_unlock()
 *   grace_list_add_tail()      -> grace_list_add_tail_rcu()
 *   grace_list_del()           -> grace_list_del_rcu()
 *   grace_list_for_each_entry  -> grace_list_for_each_entry_rcu
 *   free(p)                    -> call_rcu(&p->rcu, el_free)
 * Updating an element's data in place would let readers see it half-changed: update() replaces
 * the element with a modified copy instead (grace_list_replace_rcu()).
 *
 * Build against an installed grace:
 *   cc -O2 list_rcu.c $(pkg-config --cflags --libs grace) -pthread -o list_rcu
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <grace/list.h>
#include <grace/rcu.h>

struct el {
	struct grace_list_head list;
	long key;
	long data;
	long check; /* == key ^ data while the element is live: readers verify */
	struct rcu_head rcu;
};

static GRACE_LIST_HEAD(head);
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

/* Callers: inside a read-side section (readers, and updaters under list_lock: see below). */
static struct el *search(long key)
{
	struct el *p;

	grace_list_for_each_entry_rcu(p, &head, list)
		if (p->key == key)
			return p;
	return NULL;
}

static void el_free(struct rcu_head *h)
{
	struct el *p = container_of(h, struct el, rcu);
	p->check = ~(p->key ^ p->data); /* poison */
	free(p);
}

static void insert(long key, long data)
{
	struct el *p = malloc(sizeof(*p));
	if (!p)
		abort();
	p->key = key;
	p->data = data;
	p->check = key ^ data;
	pthread_mutex_lock(&list_lock);
	grace_list_add_tail_rcu(&p->list, &head); /* publishes p: its fields are set already */
	pthread_mutex_unlock(&list_lock);
}

static void delete (long key)
{
	struct el *p;

	pthread_mutex_lock(&list_lock);
	/* search() uses rcu_dereference(); debug builds check it runs inside a section, and a
	 * section under the update lock is cheap and legal. */
	rcu_read_lock();
	p = search(key);
	if (p)
		grace_list_del_rcu(&p->list);
	rcu_read_unlock();
	pthread_mutex_unlock(&list_lock);
	if (p)
		call_rcu(&p->rcu, el_free); /* readers still on p finish first */
}

/* Change an element's data: copy, modify the copy, replace, retire the original. */
static void update(long key, long data)
{
	struct el *old, *n = malloc(sizeof(*n));
	if (!n)
		abort();
	pthread_mutex_lock(&list_lock);
	rcu_read_lock();
	old = search(key);
	if (old) {
		*n = *old;
		n->data = data;
		n->check = key ^ data;
		grace_list_replace_rcu(&old->list, &n->list);
	}
	rcu_read_unlock();
	pthread_mutex_unlock(&list_lock);
	if (old)
		call_rcu(&old->rcu, el_free);
	else
		free(n);
}

/* Read-only search: the rwlock's read side becomes a read-side section. */
static int lookup(long key, long *data)
{
	int found = 0;

	rcu_read_lock();
	struct el *p = search(key);
	if (p) {
		if (p->check != (p->key ^ p->data)) {
			fprintf(stderr, "reader saw a freed or half-updated element\n");
			abort();
		}
		*data = p->data;
		found = 1;
	}
	rcu_read_unlock();
	return found;
}

#define NKEYS 64
static int stop;

static void *reader(void *arg)
{
	unsigned long hits = 0, n = 0;
	long d;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		hits += (unsigned long)lookup((long)(n++ % NKEYS), &d);
	}
	return (void *)hits;
}

int main(void)
{
	pthread_t r[2];
	unsigned long hits = 0;
	long d;

	for (long k = 0; k < NKEYS; k++)
		insert(k, k * 10);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	for (int round = 0; round < 200; round++) {
		long k = round % NKEYS;
		delete (k);
		insert(k, round);
		update((k + 1) % NKEYS, round * 3);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		void *h;
		pthread_join(r[i], &h);
		hits += (unsigned long)h;
	}

	int ok = lookup(7, &d) && d == 199; /* round 199 deleted key 7 and inserted it again */
	printf("list_rcu: %lu lock-free lookups found their key during 600 updates; key 7 -> %ld\n",
	       hits, d);

	/* Teardown: unlink everything, then wait for the callbacks. */
	struct el *p, *nx;
	pthread_mutex_lock(&list_lock);
	grace_list_for_each_entry_safe(p, nx, &head, list) {
		grace_list_del_rcu(&p->list);
		call_rcu(&p->rcu, el_free);
	}
	pthread_mutex_unlock(&list_lock);
	rcu_barrier();
	return ok ? 0 : 1;
}
