/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers in the torture program (issue 34): a "section" of the hazptr flavors is a
 * protection. read_lock takes the next of the thread's hazard pointers (one per nesting level),
 * deref is hazptr_protect() of the slot into it, read_unlock resets it. Heap elements are
 * retired with hazptr_retire() (the paths free, headless and retire), counted by the free
 * hook; free_barrier is hazptr_barrier().
 *
 * Pool elements age by "synchronize", which hazard pointers do not have: this file gives them
 * one, written over the public layout (struct grace_hazptr's ptr and fence) the way the
 * library's scan works: barrier M (membarrier, or a full fence where the library chose the
 * fallback), then every reader hazard pointer that holds a value is waited for until its
 * protection ends (its value changes, or the unlock count of its nesting level moves). So the
 * pool paths check the library's protect (publish, barrier P, validate) against an independent scan,
 * and the heap paths check the library's own scan and free.
 *
 *   hazptr         correct protect: must pass (tests/torture/runs.list: hazptr*)
 *   hazptr-broken  protect that publishes without validating (load, publish, use). One load
 *                  in 64 waits, before its publication, for the writer to replace the element
 *                  and age it through a scan (at most 20 ms), as a debug pause site would: a
 *                  race of a few instructions is not hit by chance in seconds (a yield there
 *                  was caught only while two threads' records shared a cache line and slowed
 *                  every protect). The run must end in FAILURE (a reader finds its element aged twice or recycled while
 *                  it held it; tests/torture/torture.cmake, torture_broken_hazptr).
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <grace/arch/atomic.h>
#include <grace/diag.h>
#include <grace/hazptr.h>

#include "torture.h"

#define HP_NEST 8       /* nesting levels per thread (the engine nests up to 4) */
#define HP_THREADS 1024 /* reader threads at once (thread slots are reused after exit) */

struct hp_tslot {
	struct grace_hazptr *h[HP_NEST];
	/* atomic, one per nesting level: bumped after that level's protection ends. Per level,
	 * not per thread: an inner protection that ends must not let a scan stop waiting for the
	 * outer one, which still holds its element. */
	uint64_t unlocks[HP_NEST];
	int used; /* under slot_lock */
};

static struct hp_tslot slots[HP_THREADS];
static unsigned int nslots; /* high-water mark, atomic */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static __thread struct hp_tslot *me;
static __thread unsigned int level;
static __thread unsigned int window; /* hazptr-broken: loads since the last wait */
static int broken;

static void slot_release(void *arg)
{
	struct hp_tslot *s = (struct hp_tslot *)arg;

	for (int i = 0; i < HP_NEST; i++)
		hazptr_reset(s->h[i]); /* kept allocated: the slot is reused by a later thread */
	pthread_mutex_lock(&slot_lock);
	s->used = 0;
	pthread_mutex_unlock(&slot_lock);
}

static void key_init(void)
{
	(void)pthread_key_create(&slot_key, slot_release);
}

static struct hp_tslot *slot_get(void)
{
	struct hp_tslot *s = NULL;

	pthread_once(&key_once, key_init);
	pthread_mutex_lock(&slot_lock);
	for (unsigned int i = 0; i < HP_THREADS; i++) {
		if (slots[i].used)
			continue;
		s = &slots[i];
		s->used = 1;
		if (!s->h[0])
			for (int k = 0; k < HP_NEST; k++) {
				s->h[k] = hazptr_alloc();
				if (!s->h[k])
					abort();
			}
		if (i + 1 > __atomic_load_n(&nslots, __ATOMIC_RELAXED))
			__atomic_store_n(&nslots, i + 1, __ATOMIC_RELEASE);
		break;
	}
	pthread_mutex_unlock(&slot_lock);
	if (!s)
		abort(); /* more reader threads at once than HP_THREADS */
	(void)pthread_setspecific(slot_key, s);
	return s;
}

static int hp_lock(unsigned int d)
{
	(void)d;
	if (!me)
		me = slot_get();
	if (level >= HP_NEST)
		abort();
	return (int)level++;
}

static void hp_unlock(unsigned int d, int idx)
{
	(void)d;
	hazptr_reset(me->h[idx]);
	/* Release: after the reset; the scan below reads it with acquire. */
	__atomic_fetch_add(&me->unlocks[idx], 1, __ATOMIC_RELEASE);
	level = (unsigned int)idx;
}

static struct elem *hp_deref(unsigned int d, struct elem **slot)
{
	struct grace_hazptr *h = me->h[level - 1];

	(void)d;
	if (!broken)
		return hazptr_protect(h, slot);
	/* The bug: publish without validate. */
	struct elem *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (p && (++window & 63) == 0) {
		struct timespec ts = { 0, 50000 };
		for (int i = 0; i < 400 && torture_elem_age(p) < 2; i++)
			nanosleep(&ts, NULL);
	}
	hazptr_set(h, p);
	return p;
}

static bool hp_ongoing(void)
{
	return level != 0;
}

/* The scan's barrier M: membarrier (pairs with barrier P, a compiler barrier in every reader's
 * publish), or in the fallback (the records' fence word) a full fence that pairs with the
 * readers' fence. */
static void barrier_m(void)
{
	/* The library's choice, which every record's fence word follows (src/hazptr/record.c):
	 * read here rather than from a record, which may not exist yet. */
	if (strcmp(grace_membarrier_mode(), "fence") == 0) {
		grace_smp_mb(); /* TSan builds: an RMW it models (arch/atomic.h) */
		return;
	}
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		abort(); /* the library registered the process at start-up */
}

/* Every protection in force after barrier M has ended (see the top of the file). */
static void hp_sync(unsigned int d)
{
	uint64_t seq[HP_THREADS][HP_NEST]; /* 64 KiB each: several threads sync at once */
	void *val[HP_THREADS][HP_NEST];
	unsigned int n;

	(void)d;
	barrier_m();
	/* After barrier M, as every record's value: a reader that took a new slot and then
	 * published before M is seen here, its slot count with its publication. (Loaded before
	 * M, the count could miss a slot whose reader validated against the old element.) */
	n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < n; i++)
		for (int k = 0; k < HP_NEST; k++) {
			struct grace_hazptr *h = __atomic_load_n(&slots[i].h[k], __ATOMIC_ACQUIRE);
			seq[i][k] = __atomic_load_n(&slots[i].unlocks[k], __ATOMIC_ACQUIRE);
			val[i][k] = h ? __atomic_load_n(&h->ptr, __ATOMIC_ACQUIRE) : NULL;
		}
	for (unsigned int i = 0; i < n; i++)
		for (int k = 0; k < HP_NEST; k++) {
			if (!val[i][k])
				continue;
			while (__atomic_load_n(&slots[i].h[k]->ptr, __ATOMIC_ACQUIRE) ==
				       val[i][k] &&
			       __atomic_load_n(&slots[i].unlocks[k], __ATOMIC_ACQUIRE) == seq[i][k])
				sched_yield();
		}
}

static void hp_retire(unsigned int d, void *p)
{
	(void)d;
	hazptr_retire(NULL, p);
}
static void hp_free(unsigned int d, void *p, struct rcu_head *h)
{
	(void)h;
	hp_retire(d, p);
}
static void hp_free_barrier(unsigned int d)
{
	(void)d;
	hazptr_barrier(NULL);
}
static int hp_hook(unsigned int d, void (*fn)(void *))
{
	(void)d;
	return grace_hazptr_set_free_hook(NULL, fn);
}
static const char *hp_mode(void)
{
	return strcmp(grace_membarrier_mode(), "fence") == 0 ? "fence fallback" : "membarrier";
}
static int hp_init(void)
{
	/* A first slot, so that hp_mode() and barrier_m() read a record. */
	me = slot_get();
	return 0;
}
static int hp_broken_init(void)
{
	broken = 1;
	return hp_init();
}

#define HP_OPS                                                                             \
	.ndomains = 1, .read_lock = hp_lock, .read_unlock = hp_unlock, .deref = hp_deref,  \
	.read_ongoing = hp_ongoing, .sync = hp_sync, .exp_sync = hp_sync, .free = hp_free, \
	.free_headless = hp_retire, .retire = hp_retire, .free_barrier = hp_free_barrier,  \
	.set_free_hook = hp_hook, .mode = hp_mode

const struct torture_ops torture_hazptr_ops = {
	.name = "hazptr",
	.desc = "hazard pointers (hazptr.h): protect per element, retire of heap elements",
	.init = hp_init,
	HP_OPS,
};

const struct torture_ops torture_hazptr_broken_ops = {
	.name = "hazptr-broken",
	.desc = "hazard pointers whose protect does not validate: the run must report FAILURE",
	.broken = true,
	.init = hp_broken_init,
	HP_OPS,
};
