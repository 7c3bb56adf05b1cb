/* SPDX-License-Identifier: MIT */
/*
 * Peer: liburcu's memb flavor (Debian's liburcu-dev), call_rcu() and rcu_barrier() from
 * liburcu-memb.so (they are library functions in liburcu whatever _LGPL_SOURCE says; the read
 * side is inlined). liburcu requires every thread that calls call_rcu() or reads to register.
 *
 * Two configurations: "urcu-memb", liburcu as it comes (one call_rcu worker thread for the
 * process), and "urcu-memb-percpu", with create_all_cpu_call_rcu_data(0): one worker per CPU,
 * call_rcu() queuing on the worker of the CPU it runs on (sched_getcpu), liburcu's closest match
 * to grace's per-CPU design.
 */
#define _LGPL_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#include "cb.h"

_Static_assert(sizeof(struct rcu_head) <= CB_HEAD_BYTES, "liburcu's rcu_head fits struct cb_obj");
_Static_assert(offsetof(struct cb_obj, head_) == 0, "the rcu_head is at offset 0");

static void um_cb_flag(struct rcu_head *h)
{
	cb_done_flag((struct cb_obj *)(void *)h);
}

static void um_cb_lat(struct rcu_head *h)
{
	cb_done_lat((struct cb_obj *)(void *)h);
}

static void um_cb_lat_wake(struct rcu_head *h)
{
	cb_done_lat_wake((struct cb_obj *)(void *)h);
}

static void um_cb_free(struct rcu_head *h)
{
	cb_done_free((struct cb_obj *)(void *)h);
}

#define UM_CALL(o) urcu_memb_call_rcu((struct rcu_head *)(void *)(o), um_cb_flag)
#define UM_CALL_LAT(o) urcu_memb_call_rcu((struct rcu_head *)(void *)(o), um_cb_lat)
#define UM_CALL_FREE(o) urcu_memb_call_rcu((struct rcu_head *)(void *)(o), um_cb_free)

CB_DEFINE_ENQUEUE(cb_enqueue_urcu_memb, UM_CALL)
CB_DEFINE_FLOOD(cb_flood_urcu_memb, UM_CALL)
CB_DEFINE_FLOOD_FREE(cb_flood_free_urcu_memb, UM_CALL_FREE)
CB_DEFINE_PACED(cb_paced_urcu_memb, UM_CALL, UM_CALL_LAT)

static long um_value = 42;
static long *um_ptr = &um_value;

CB_DEFINE_READER(cb_reader_urcu_memb, urcu_memb_read_lock(), urcu_memb_read_unlock(),
		 rcu_dereference, um_ptr)

static void um_call_lat_wake(struct cb_obj *o)
{
	urcu_memb_call_rcu((struct rcu_head *)(void *)o, um_cb_lat_wake);
}

/* liburcu has one policy: its worker sleeps 10 ms after each batch (poll(NULL, 0, 10)). */
/* liburcu has one behaviour and no limit on queued callbacks. */
static int um_setup(const struct cb_setup *cs)
{
	return cs->policy == CB_POLICY_DEFAULT && cs->soft == 0 ? 0 : -1;
}

static int um_setup_percpu(const struct cb_setup *cs)
{
	if (um_setup(cs))
		return -1;
	if (urcu_memb_create_all_cpu_call_rcu_data(0) != 0) {
		perror("create_all_cpu_call_rcu_data");
		return -1;
	}
	return 0;
}

static void um_nothing(void) {}

static void um_teardown_percpu(void)
{
	urcu_memb_free_all_cpu_call_rcu_data();
}

static void um_init_thread(void)
{
	urcu_memb_register_thread();
}

static void um_fini_thread(void)
{
	urcu_memb_unregister_thread();
}

static uint64_t um_thread_cpu_ns(struct call_rcu_data *crdp)
{
	clockid_t cid;
	struct timespec ts;

	if (!crdp || pthread_getcpuclockid(urcu_memb_get_call_rcu_thread(crdp), &cid) ||
	    clock_gettime(cid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* liburcu counts no grace periods; its workers' CPU time is read from their thread clocks. */
static void um_stats(struct cb_engine_stats *s)
{
	s->have = CB_STATS_WORKER;
	s->worker_cpu_ns = um_thread_cpu_ns(urcu_memb_get_default_call_rcu_data());
}

static void um_stats_percpu(struct cb_engine_stats *s)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	um_stats(s);
	for (long cpu = 0; cpu < n; cpu++)
		s->worker_cpu_ns += um_thread_cpu_ns(urcu_memb_get_cpu_call_rcu_data((int)cpu));
}

static void um_barrier(void)
{
	urcu_memb_barrier();
}

/* What both liburcu designs share: they differ in set-up, teardown and statistics only. */
#define UM_DESIGN                                                                              \
	.enqueue_symbol = "cb_enqueue_urcu_memb", .thread_init = um_init_thread,               \
	.thread_fini = um_fini_thread, .enqueue = cb_enqueue_urcu_memb,                        \
	.flood = cb_flood_urcu_memb, .flood_free = cb_flood_free_urcu_memb,                    \
	.paced = cb_paced_urcu_memb, .call_lat_wake = um_call_lat_wake, .barrier = um_barrier, \
	.reader = cb_reader_urcu_memb

const struct cb_design cb_design_urcu_memb = {
	.name = "urcu-memb",
	.label = "liburcu 0.13 memb: urcu_memb_call_rcu, default (one worker thread)",
	.setup = um_setup,
	.teardown = um_nothing,
	.stats = um_stats,
	UM_DESIGN,
};

const struct cb_design cb_design_urcu_memb_percpu = {
	.name = "urcu-memb-percpu",
	.label = "liburcu 0.13 memb with create_all_cpu_call_rcu_data(0): one worker per CPU",
	.setup = um_setup_percpu,
	.teardown = um_teardown_percpu,
	.stats = um_stats_percpu,
	UM_DESIGN,
};
