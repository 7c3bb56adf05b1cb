/* SPDX-License-Identifier: MIT */
/*
 * free-later: the floor under every deferred-free design (issue 13, item 3). Readers use grace
 * default's read side; an update frees the element it retired HB_FLOOR_DELAY updates earlier
 * (16384 by default) on the same thread, through a ring: no grace period, no library call, no
 * bookkeeping beyond a ring slot. So the old element is reused at about the distance a real
 * grace period puts between retire and reuse (grace-free's grace periods span thousands of
 * updates per thread), and what this design costs over the per-bucket spinlock is what RCU's
 * update pattern costs on this machine, with reclamation free. A deferred free cannot beat it,
 * and a target above it cannot be met by any reclamation scheme (docs/figures/hashtable.md,
 * "The floor under every deferred free").
 *
 * UNSAFE by construction: a reader preempted for longer than HB_FLOOR_DELAY updates can reach a
 * freed element (and then loop or crash). It is hidden (run by name only), never part of the
 * report's sweep, and floor.sh runs it one process per run under a timeout, counting the runs
 * that failed. Check mode (hashbench-check) leaves it out: it would be caught, as broken-rcu is.
 */
#include <pthread.h>
#include <grace/rcu.h>
#define HB_DEREF(p) rcu_dereference(p)
#define HB_PUBLISH(p, v) rcu_assign_pointer(p, v)

/* Updates between an element's retirement and its free, per thread: HB_FLOOR_DELAY in the
 * environment (a power of two), 16384 by default, a ring of 128 KiB. grace-free at 25% updates
 * completes about 1000 grace periods a second while each thread updates about 10 million
 * times, so its reuse distance is of this order; floor.sh --delays sweeps it. */
#define FLOOR_DELAY_DEFAULT 16384u
#define FLOOR_DELAY_MAX (1u << 24)

struct floor_ring {
	struct floor_ring *next; /* on fl_all once the thread stops */
	unsigned int pos, mask;
	void *slot[];
};
static __thread struct floor_ring *fl_ring;
static pthread_mutex_t fl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct floor_ring *fl_all;

static void fl_start(void);
static void fl_stop(void);
static void fl_settle(void);
static inline void fl_retire(void *p);

#define RD_LOCK() rcu_read_lock()
#define RD_UNLOCK() rcu_read_unlock()
#define RD_RETIRE(el) fl_retire(el)
#define RD_THREAD_START(th) fl_start()
#define RD_THREAD_STOP(th) fl_stop()
#define RD_BATCH_END(th) ((void)(th))
#define RD_SETTLE() fl_settle()

#define HB_SYM free_later
#define HB_NAME "free-later"
#define HB_LABEL "floor: free HB_FLOOR_DELAY updates later, no grace period (UNSAFE; floor.sh)"
#define HB_KIND "ref"
#define HB_HIDDEN 1
#define HB_UNAVAILABLE NULL
#include "rcudesign.h"

static unsigned int fl_delay(void)
{
	const char *e = getenv("HB_FLOOR_DELAY");
	unsigned long d = e ? strtoul(e, NULL, 10) : FLOOR_DELAY_DEFAULT;

	if (d == 0 || d > FLOOR_DELAY_MAX || (d & (d - 1)))
		hb_fatal("free-later: HB_FLOOR_DELAY must be a power of two from 1 to %u",
			 FLOOR_DELAY_MAX);
	return (unsigned int)d;
}

static void fl_start(void)
{
	unsigned int n = fl_delay();

	fl_ring = (struct floor_ring *)calloc(1, sizeof(*fl_ring) + n * sizeof(void *));
	if (!fl_ring)
		hb_fatal("free-later: no memory for the ring");
	fl_ring->mask = n - 1;
}

static inline void fl_retire(void *p)
{
	struct floor_ring *r = fl_ring;
	void *old = r->slot[r->pos];

	r->slot[r->pos] = p;
	r->pos = (r->pos + 1) & r->mask;
	if (old)
		hb_el_free((struct hb_el *)old);
}

/* The thread stops while others may still read: its ring waits for the end of the run. */
static void fl_stop(void)
{
	pthread_mutex_lock(&fl_lock);
	fl_ring->next = fl_all;
	fl_all = fl_ring;
	pthread_mutex_unlock(&fl_lock);
	fl_ring = NULL;
}

/* After the run (no reader left): free what the rings still hold. */
static void fl_settle(void)
{
	struct floor_ring *r;

	pthread_mutex_lock(&fl_lock);
	r = fl_all;
	fl_all = NULL;
	pthread_mutex_unlock(&fl_lock);
	while (r) {
		struct floor_ring *next = r->next;

		for (unsigned int i = 0; i <= r->mask; i++)
			if (r->slot[i])
				hb_el_free((struct hb_el *)r->slot[i]);
		free(r);
		r = next;
	}
}
