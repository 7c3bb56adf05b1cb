/* SPDX-License-Identifier: MIT */
/*
 * Thread churn: many cycles of a thread that reads and exits, while grace periods of every
 * flavor and callbacks run all the time. Nothing may leak (LSan in the ASan build) and the
 * resident set may not grow (VmRSS from /proc/self/status after a warm-up, compared with the
 * end, small slack: thread stacks are cached by glibc, the allocator keeps some free memory).
 *
 * Each cycle's thread takes one of eight shapes, in turn: implicit default-flavor registration
 * (unregistered by the exit hook), explicit register/unregister, explicit register then exit,
 * QSBR register then exit (online), QSBR register/unregister, QSBR offline then exit, an srcu
 * reader, and a reader that queues a call_rcu() callback before it exits.
 *
 * Cycles: GRACE_CHURN_CYCLES (default 100000; 20000 under ASan/TSan, whose thread creation is
 * 3-4x slower: LSan reports a leak of one cycle as surely as of 100000; the 100000-cycle run
 * under the sanitizers is the "long" test unit_churn_long).
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/srcu.h>

#include "gtest_lite.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define CHURNERS 2 /* threads creating readers concurrently */
#define SHAPES 8
#define RSS_SLACK_KB (8 * 1024)

struct obj {
	struct rcu_head rh;
	int value;
};

static struct obj *gp;
DEFINE_STATIC_SRCU(churn_srcu);
static int stop;
static uint64_t cb_posted, cb_invoked, gps, reads;

static long vm_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void free_obj(struct rcu_head *h)
{
	free(grace_container_of(h, struct obj, rh));
	__atomic_fetch_add(&cb_invoked, 1, __ATOMIC_RELAXED);
}

static void read_one(void)
{
	struct obj *p = rcu_dereference(gp);
	REQUIRE(p && p->value == 42);
	__atomic_fetch_add(&reads, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	unsigned int shape = (unsigned int)(uintptr_t)arg % SHAPES;
	int idx;

	switch (shape) {
	case 0: /* implicit registration, unregistered by the thread-exit hook */
		rcu_read_lock();
		read_one();
		rcu_read_unlock();
		break;
	case 1:
		rcu_register_thread();
		rcu_read_lock();
		read_one();
		rcu_read_unlock();
		rcu_unregister_thread();
		break;
	case 2:
		rcu_register_thread();
		rcu_read_lock();
		rcu_read_lock();
		read_one();
		rcu_read_unlock();
		rcu_read_unlock();
		break; /* exit hook unregisters */
	case 3:
		qsbr_register_thread();
		qsbr_read_lock();
		read_one();
		qsbr_read_unlock();
		qsbr_quiescent_state();
		break; /* exits online */
	case 4:
		qsbr_register_thread();
		qsbr_read_lock();
		read_one();
		qsbr_read_unlock();
		qsbr_unregister_thread();
		break;
	case 5:
		qsbr_register_thread();
		qsbr_read_lock();
		read_one();
		qsbr_read_unlock();
		qsbr_thread_offline();
		break; /* exits offline */
	case 6:
		idx = srcu_read_lock(&churn_srcu);
		{
			struct obj *p = srcu_dereference(gp, &churn_srcu);
			REQUIRE(p && p->value == 42);
		}
		srcu_read_unlock(&churn_srcu, idx);
		break;
	default: { /* queue a callback, then exit before it runs */
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		REQUIRE(o);
		o->value = 7;
		rcu_read_lock();
		read_one();
		rcu_read_unlock();
		__atomic_fetch_add(&cb_posted, 1, __ATOMIC_RELAXED);
		call_rcu(&o->rh, free_obj);
		break;
	}
	}
	return NULL;
}

/* Grace periods of every flavor, and object replacement with call_rcu, all the time. */
static void *updater(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct obj *n = (struct obj *)malloc(sizeof(*n));
		REQUIRE(n);
		n->value = 42;
		struct obj *old = rcu_xchg_pointer(&gp, n);
		/* Readers of every flavor may hold old: wait for srcu and QSBR here, the default
		 * flavor through call_rcu. */
		synchronize_srcu(&churn_srcu);
		synchronize_qsbr();
		__atomic_fetch_add(&cb_posted, 1, __ATOMIC_RELAXED);
		call_rcu(&old->rh, free_obj);
		if (__atomic_fetch_add(&gps, 1, __ATOMIC_RELAXED) % 4 == 0)
			synchronize_rcu();
		gt_sleep_ms(1);
	}
	return NULL;
}

struct churner {
	unsigned long first, n;
	int err;
};

static void *churner(void *arg)
{
	struct churner *c = (struct churner *)arg;
	for (unsigned long i = 0; i < c->n; i++) {
		pthread_t t;
		int e = pthread_create(&t, NULL, reader, (void *)(uintptr_t)(c->first + i));
		if (e) {
			c->err = e;
			return NULL;
		}
		pthread_join(t, NULL);
	}
	return NULL;
}

/* Run n cycles on CHURNERS threads at once. Returns 0 or an errno of pthread_create. */
static int churn(unsigned long first, unsigned long n)
{
	struct churner c[CHURNERS];
	pthread_t t[CHURNERS];
	int err = 0;

	for (int i = 0; i < CHURNERS; i++) {
		c[i].first = first + i * (n / CHURNERS);
		c[i].n = n / CHURNERS + (i == CHURNERS - 1 ? n % CHURNERS : 0);
		c[i].err = 0;
		pthread_create(&t[i], NULL, churner, &c[i]);
	}
	for (int i = 0; i < CHURNERS; i++) {
		pthread_join(t[i], NULL);
		if (c[i].err)
			err = c[i].err;
	}
	return err;
}

TEST(thread_churn)
{
	const char *env = getenv("GRACE_CHURN_CYCLES");
	unsigned long cycles = env ? strtoul(env, NULL, 0) : (SANITIZED ? 20000 : 100000);
	unsigned long warm = cycles / 20 < 2000 ? cycles / 20 : 2000;
	struct obj *first = (struct obj *)malloc(sizeof(*first));
	pthread_t up;

	CHECK(first);
	first->value = 42;
	rcu_assign_pointer(gp, first);
	pthread_create(&up, NULL, updater, NULL);

	/* Warm-up: glibc's stack cache, the allocator's arenas, the library's workers. */
	CHECK(churn(0, warm) == 0);
	long rss0 = vm_rss_kb();
	uint64_t t0 = gt_now_ns();
	CHECK(churn(warm, cycles) == 0);
	double secs = (double)(gt_now_ns() - t0) / 1e9;
	long rss1 = vm_rss_kb();

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(up, NULL);
	struct obj *last = rcu_xchg_pointer(&gp, (struct obj *)NULL);
	synchronize_rcu();
	synchronize_qsbr();
	synchronize_srcu(&churn_srcu);
	free(last);
	rcu_barrier(); /* every callback queued by the readers and the updater has run */

	uint64_t posted = __atomic_load_n(&cb_posted, __ATOMIC_RELAXED);
	uint64_t invoked = __atomic_load_n(&cb_invoked, __ATOMIC_RELAXED);
	printf("  %lu cycles (+%lu warm-up) in %.1f s (%.0f threads/s), %" PRIu64 " reads, "
	       "%" PRIu64 " updates, callbacks %" PRIu64 "/%" PRIu64 "\n",
	       cycles, warm, secs, cycles / secs, __atomic_load_n(&reads, __ATOMIC_RELAXED),
	       __atomic_load_n(&gps, __ATOMIC_RELAXED), invoked, posted);
	printf("  VmRSS after warm-up %ld kB, at the end %ld kB (growth %ld kB, slack %d kB%s)\n",
	       rss0, rss1, rss1 - rss0, RSS_SLACK_KB,
	       SANITIZED ? "; not checked under a sanitizer: quarantine and shadow memory grow"
			 : "");
	CHECK(invoked == posted);
	CHECK(rss0 > 0 && rss1 > 0);
	if (!SANITIZED)
		CHECK_MSG(rss1 - rss0 <= RSS_SLACK_KB, "RSS grew by %ld kB over %lu cycles",
			  rss1 - rss0, cycles);
}

GT_MAIN()
