/* SPDX-License-Identifier: MIT */
/*
 * compat_contract: promises of docs/compat.md that no other test checked, each through
 * liburcu's API as a liburcu program uses it (tests/contract/promises-guide-compat.tsv names
 * the case of each). Flavors, registration, pointers, flavor tables, call_rcu_data handles, fork
 * hooks, defer_rcu()'s bounds and misuse, lists, the deprecated queue and stack, stall reports.
 * The cds_lfht promises are in test_compat_contract_lfht.c.
 *
 * Above each TEST: the break of the library it was checked against (the library edited, the
 * test seen failing, the edit undone).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every flavor's prefixed API first, then <urcu.h>, which maps the unprefixed names to memb
 * (a prefixed header included after it would map its flavor too: an #error). */
#include <urcu/urcu-mb.h>
#include <urcu/urcu-signal.h>
#include <urcu/urcu-bp.h>
#include <urcu/urcu-qsbr.h>
#include <urcu.h>
#include <urcu/rculfhash.h>
#include <urcu/list.h>
#include <urcu/uatomic.h>
/* The deprecated cds_wfq_* and cds_lfs_*_rcu, which a liburcu program may still use. */
#include <urcu/wfqueue.h>
#include <urcu/rculfstack.h>
#include <grace/diag.h> /* grace_set_stall_timeout_ms(): a short stall timeout */

#include "gtest_lite.h"
/* Every compat misuse reads "grace: misuse: CALL: ...": the colon tells rcu_defer_barrier from
 * rcu_defer_barrier_thread. */
#define MC_WANT_FMT "misuse: %s:"
#include "misuse_child.h"
#include "test_compat_contract.h"

#define CHECK_EQL(a, b) \
	CHECK_MSG((long)(a) == (long)(b), "%s = %ld, want %ld", #a, (long)(a), (long)(b))

/* A liveness bound: generous, never a performance check. */
#define LIVE_NS (20ull * 1000000000ull)

/* ---- the liburcu flavors, by index ---- */

enum { F_MEMB, F_MB, F_SIGNAL, F_BP, F_QSBR, NR_F };
static const char *const fname[NR_F] = { "memb", "mb", "signal", "bp", "qsbr" };

static void f_read_lock(int f)
{
	switch (f) {
	case F_MEMB:
		urcu_memb_read_lock();
		break;
	case F_MB:
		urcu_mb_read_lock();
		break;
	case F_SIGNAL:
		urcu_signal_read_lock();
		break;
	case F_BP:
		urcu_bp_read_lock();
		break;
	default:
		urcu_qsbr_read_lock();
		break;
	}
}

static void f_read_unlock(int f)
{
	switch (f) {
	case F_MEMB:
		urcu_memb_read_unlock();
		break;
	case F_MB:
		urcu_mb_read_unlock();
		break;
	case F_SIGNAL:
		urcu_signal_read_unlock();
		break;
	case F_BP:
		urcu_bp_read_unlock();
		break;
	default:
		urcu_qsbr_read_unlock();
		break;
	}
}

static void f_synchronize(int f)
{
	switch (f) {
	case F_MEMB:
		urcu_memb_synchronize_rcu();
		break;
	case F_MB:
		urcu_mb_synchronize_rcu();
		break;
	case F_SIGNAL:
		urcu_signal_synchronize_rcu();
		break;
	case F_BP:
		urcu_bp_synchronize_rcu();
		break;
	default:
		urcu_qsbr_synchronize_rcu();
		break;
	}
}

static void f_call_rcu(int f, struct rcu_head *h, void (*fn)(struct rcu_head *))
{
	switch (f) {
	case F_MEMB:
		urcu_memb_call_rcu(h, fn);
		break;
	case F_MB:
		urcu_mb_call_rcu(h, fn);
		break;
	case F_SIGNAL:
		urcu_signal_call_rcu(h, fn);
		break;
	case F_BP:
		urcu_bp_call_rcu(h, fn);
		break;
	default:
		urcu_qsbr_call_rcu(h, fn);
		break;
	}
}

static void f_barrier(int f)
{
	switch (f) {
	case F_MEMB:
		urcu_memb_barrier();
		break;
	case F_MB:
		urcu_mb_barrier();
		break;
	case F_SIGNAL:
		urcu_signal_barrier();
		break;
	case F_BP:
		urcu_bp_barrier();
		break;
	default:
		urcu_qsbr_barrier();
		break;
	}
}

/*
 * Threads with a stack of their own (freed by thread_join()). Several tests start threads in a
 * fork child: glibc gives them the stacks of the parent's other threads, which TSan still
 * counts as running there ("dup thread with used id"); a stack from malloc is a new identity.
 */
struct thread {
	pthread_t t;
	void *stack;
};

static void thread_start(struct thread *th, void *(*fn)(void *), void *arg)
{
	const size_t size = 1 << 20;
	pthread_attr_t a;

	REQUIRE(posix_memalign(&th->stack, 4096, size) == 0);
	REQUIRE(pthread_attr_init(&a) == 0);
	REQUIRE(pthread_attr_setstack(&a, th->stack, size) == 0);
	REQUIRE(pthread_create(&th->t, &a, fn, arg) == 0);
	pthread_attr_destroy(&a);
}

static void thread_join(struct thread *th)
{
	REQUIRE(pthread_join(th->t, NULL) == 0);
	free(th->stack);
	th->stack = NULL;
}

static void wait_flag(int *flag)
{
	uint64_t t0 = gt_now_ns();

	while (!uatomic_load(flag, CMM_ACQUIRE)) {
		REQUIRE(gt_now_ns() - t0 < LIVE_NS);
		usleep(100);
	}
}

/*
 * A reader of flavor `flavor` that stays in its read-side section for `hold_ms`: `in` is set
 * once it is inside, `leaving` just before it unlocks. An update that waits for a grace period
 * begun while the reader is inside must see `leaving` set when it returns (or when its callback
 * runs): the safety property of RCU, whatever the timing.
 */
struct hold_reader {
	int flavor;
	unsigned int hold_ms;
	int in, leaving;
	struct thread t;
};

static void *hold_reader_fn(void *arg)
{
	struct hold_reader *r = (struct hold_reader *)arg;

	if (r->flavor == F_QSBR)
		urcu_qsbr_register_thread();
	f_read_lock(r->flavor);
	uatomic_store(&r->in, 1, CMM_RELEASE);
	gt_sleep_ms(r->hold_ms);
	uatomic_store(&r->leaving, 1, CMM_RELEASE);
	f_read_unlock(r->flavor);
	if (r->flavor == F_QSBR)
		urcu_qsbr_unregister_thread();
	return NULL;
}

static void hold_reader_start(struct hold_reader *r, int flavor, unsigned int hold_ms)
{
	r->flavor = flavor;
	r->hold_ms = hold_ms;
	r->in = 0;
	r->leaving = 0;
	thread_start(&r->t, hold_reader_fn, r);
	wait_flag(&r->in);
}

static int hold_reader_leaving(struct hold_reader *r)
{
	return uatomic_load(&r->leaving, CMM_ACQUIRE);
}

/* ---- registration ---- */

static void memb_register_twice(void)
{
	urcu_memb_register_thread();
	urcu_memb_register_thread(); /* liburcu: an assertion */
}

static void mb_register_twice(void)
{
	urcu_mb_register_thread();
	urcu_mb_register_thread();
}

static void signal_register_twice(void)
{
	urcu_signal_register_thread();
	urcu_signal_register_thread();
}

/*
 * docs/compat.md, Flavors: memb, mb, signal: "registering twice is reported as liburcu
 * asserts" (a message in every build; an abort in debug builds).
 * Checked against: <urcu/grace/flavor-api.h> register_thread of memb/mb/signal made idempotent
 * like bp's (an empty section instead of grace_rcu_register_thread()): no report, test fails.
 */
/* Registering with two of memb, mb and signal is allowed (liburcu keeps a registry per flavor),
 * and unregistering from one keeps the thread registered for the other: its sections still
 * hold grace periods. Checked against: grace_urcu__register() calling grace's registration for
 * every flavor (the second flavor's registration is reported as a second registration). */
static void memb_then_mb(void)
{
	urcu_memb_register_thread();
	urcu_mb_register_thread();
	urcu_mb_unregister_thread();
	urcu_memb_unregister_thread();
	fprintf(stderr, "registered with two flavors\n");
}

TEST(register_thread_with_two_flavors_is_allowed)
{
	char out[4096];
	mc_child_fn = memb_then_mb;
	int st = gt_run_child(mc_trampoline, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !strstr(out, "misuse"),
		  "registering with memb and then mb: %s", out);
}

TEST(register_thread_twice_is_reported)
{
	EXPECT_MISUSE_CHILD(memb_register_twice, MC_MISUSE, "rcu_register_thread",
			    "already registered");
	EXPECT_MISUSE_CHILD(mb_register_twice, MC_MISUSE, "rcu_register_thread",
			    "already registered");
	EXPECT_MISUSE_CHILD(signal_register_twice, MC_MISUSE, "rcu_register_thread",
			    "already registered");
}

/*
 * docs/compat.md, Flavors: QSBR's "rcu_read_ongoing() is "online", as in liburcu": true for a
 * registered online thread outside any rcu_read_lock(), false offline and unregistered. Through
 * the unprefixed name of a unit that includes <urcu-qsbr.h>, and the prefixed one.
 * Checked against: <urcu/grace/flavor-api.h> QSBR read_ongoing returning "inside a section"
 * (grace_urcu__qsbr_nest != 0): fails outside the section.
 */
TEST(qsbr_read_ongoing_means_online)
{
	contract_qsbr_register_thread();
	CHECK(contract_qsbr_read_ongoing());
	CHECK(urcu_qsbr_read_ongoing());
	contract_qsbr_read_lock();
	CHECK(contract_qsbr_read_ongoing());
	contract_qsbr_read_unlock();
	CHECK(contract_qsbr_read_ongoing()); /* still online after the section */
	contract_qsbr_thread_offline();
	CHECK(!contract_qsbr_read_ongoing());
	CHECK(!urcu_qsbr_read_ongoing());
	contract_qsbr_thread_online();
	CHECK(contract_qsbr_read_ongoing());
	contract_qsbr_unregister_thread();
	CHECK(!contract_qsbr_read_ongoing());
}

/* ---- memb, mb, signal and bp: one set of readers and grace periods ---- */

static struct rcu_head share_head;
static int share_cb_saw_leaving, share_cb_ran;
static struct hold_reader *share_reader;

static void share_cb(struct rcu_head *h)
{
	(void)h;
	uatomic_store(&share_cb_saw_leaving, hold_reader_leaving(share_reader), CMM_RELAXED);
	uatomic_store(&share_cb_ran, 1, CMM_RELEASE);
}

/*
 * docs/compat.md: "memb, mb, signal and bp share one set of readers and grace periods": a
 * reader of any of the four holds back synchronize_rcu() and call_rcu() of every one of them.
 * Checked against: <urcu/grace/flavor-api.h> bp's read_lock()/read_unlock() made empty (bp with
 * readers of its own that nobody waits for): the bp-reader cases fail.
 */
TEST(default_flavors_share_readers_and_grace_periods)
{
	static struct hold_reader r;

	for (int rf = F_MEMB; rf <= F_BP; rf++) {
		for (int uf = F_MEMB; uf <= F_BP; uf++) {
			share_reader = &r;
			share_cb_ran = 0;
			share_cb_saw_leaving = 0;
			hold_reader_start(&r, rf, 60);
			f_call_rcu(uf, &share_head, share_cb);
			f_synchronize(uf);
			int sync_waited = hold_reader_leaving(&r);
			thread_join(&r.t);
			f_barrier(uf);
			CHECK_MSG(sync_waited,
				  "urcu_%s_synchronize_rcu() returned while a urcu_%s "
				  "reader was inside its section",
				  fname[uf], fname[rf]);
			CHECK(uatomic_load(&share_cb_ran, CMM_ACQUIRE));
			CHECK_MSG(share_cb_saw_leaving,
				  "a urcu_%s_call_rcu() callback ran while a "
				  "urcu_%s reader was inside its section",
				  fname[uf], fname[rf]);
		}
	}
}

/* ---- rcu_init(), rcu_exit(), the bp fork hooks: nothing ---- */

static int works_cb_ran;
static void works_cb(struct rcu_head *h)
{
	(void)h;
	uatomic_inc(&works_cb_ran);
}

/* 0 if grace periods wait for a reader and callbacks run, in this process, now. */
static int rcu_still_works(void)
{
	static struct hold_reader r;
	static struct rcu_head h;
	int before = uatomic_read(&works_cb_ran), waited;

	hold_reader_start(&r, F_BP, 30);
	synchronize_rcu();
	waited = hold_reader_leaving(&r);
	thread_join(&r.t);
	call_rcu(&h, works_cb);
	rcu_barrier();
	if (!waited)
		return 1;
	if (uatomic_read(&works_cb_ran) != before + 1)
		return 2;
	return 0;
}

static void init_exit_fork_child(void *arg)
{
	int st = 0, r;

	(void)arg;
	alarm(20);
	rcu_init();
	urcu_bp_init();
	urcu_qsbr_init();
	if ((r = rcu_still_works()) != 0)
		_exit(10 + r);
	urcu_bp_before_fork();
	pid_t pid = fork();
	if (pid == 0) {
		urcu_bp_after_fork_child();
		_exit(rcu_still_works() ? 30 : 0);
	}
	urcu_bp_after_fork_parent();
	if ((r = rcu_still_works()) != 0)
		_exit(20 + r);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		_exit(40);
	if (WEXITSTATUS(st) != 0)
		_exit(WEXITSTATUS(st));
	rcu_exit();
	urcu_bp_exit();
	urcu_qsbr_exit();
	if ((r = rcu_still_works()) != 0)
		_exit(50 + r);
	_exit(0);
}

/*
 * docs/compat.md: "rcu_init(), rcu_exit(), urcu_bp_before_fork() and the other bp fork hooks
 * do nothing": around them and around a fork() made between the bp hooks, grace periods still
 * wait for readers and callbacks still run, in the parent and in the child.
 * Checked against: <urcu/grace/flavor-api.h> before_fork() entering a read-side section (as
 * liburcu-bp's takes its registry lock): the parent's and the child's synchronize_rcu() then
 * run inside a section, test fails; and exit() entering one: the checks after rcu_exit() fail.
 */
TEST(init_exit_and_bp_fork_hooks_do_nothing)
{
	static char out[8192];
	int st = gt_run_child(init_exit_fork_child, NULL, out, sizeof(out));

	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x (exit %d), stderr: %s", st,
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
}

/* ---- pointers ---- */

#define PUB_MAGIC 0x5ca1ab1e
struct pub {
	long a, b;
	int magic;
	struct rcu_head rh;
};
static struct pub *pub_gp;
static int pub_stop;
static long pub_bad, pub_seen;

static void pub_free(struct rcu_head *h)
{
	free(caa_container_of(h, struct pub, rh));
}

static void *pub_reader(void *arg)
{
	long bad = 0, seen = 0;

	(void)arg;
	while (!uatomic_load(&pub_stop, CMM_RELAXED)) {
		urcu_memb_read_lock();
		struct pub *p = rcu_dereference(pub_gp);
		/* Plain loads of what the writer initialised with plain stores. */
		if (p) {
			seen++;
			if (p->magic != PUB_MAGIC || p->b != ~p->a)
				bad++;
		}
		urcu_memb_read_unlock();
	}
	uatomic_add(&pub_bad, bad);
	uatomic_add(&pub_seen, seen);
	return NULL;
}

/*
 * docs/compat.md, Pointers: "rcu_assign_pointer(), rcu_set_pointer() publish with a
 * store-release": a writer initialises objects with plain stores and publishes each with one or
 * the other, readers read the fields with plain loads after rcu_dereference(). In the tsan
 * configuration (rcu_dereference() is an acquire load there) a publication that is not a
 * release is a data race TSan reports (halt_on_error). Elsewhere, on x86, the test passes
 * whatever the publication's order: the hardware keeps stores in order.
 * Checked against (tsan configuration): <urcu/pointer.h> rcu_set_pointer() made a relaxed
 * store; then rcu_assign_pointer() redefined there as a relaxed store: TSan reports the race on
 * the fields, test fails.
 */
TEST(assign_and_set_pointer_publish_initialised_objects)
{
	enum { NREADERS = 2, NPUB = 20000 };
	pthread_t rd[NREADERS];
	struct pub *cur = NULL;

	pub_stop = 0;
	pub_bad = pub_seen = 0;
	for (int i = 0; i < NREADERS; i++)
		REQUIRE(pthread_create(&rd[i], NULL, pub_reader, NULL) == 0);
	for (long i = 0; i < NPUB; i++) {
		struct pub *p = (struct pub *)malloc(sizeof(*p));

		REQUIRE(p);
		p->a = i;
		p->b = ~i;
		p->magic = PUB_MAGIC;
		if (i & 1)
			rcu_assign_pointer(pub_gp, p);
		else
			rcu_set_pointer(&pub_gp, p);
		if (cur)
			urcu_memb_call_rcu(&cur->rh, pub_free);
		cur = p;
	}
	uatomic_store(&pub_stop, 1, CMM_RELAXED);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(rd[i], NULL);
	rcu_set_pointer(&pub_gp, (struct pub *)NULL);
	urcu_memb_call_rcu(&cur->rh, pub_free);
	urcu_memb_barrier();
	CHECK_EQL(pub_bad, 0);
	printf("  %ld objects read\n", pub_seen);
}

/*
 * Store buffering through rcu_xchg_pointer() / rcu_cmpxchg_pointer(): in each round both sides
 * exchange their own slot to the round number, then load the other's slot. With a full barrier
 * between each side's exchange and its load, at least one side sees the other's store of the
 * round: both seeing the previous round's value is forbidden.
 */
static void *sb_x[2];
static unsigned long sb_arrive;
static int sb_saw[2], sb_stop, sb_kind;

/* Both sides meet at k (the k-th barrier: 2k arrivals); full barrier (uatomic_add_return()). */
static void sb_barrier(unsigned long k)
{
	unsigned long spins = 0;

	(void)uatomic_add_return(&sb_arrive, 1);
	while (uatomic_load(&sb_arrive, CMM_ACQUIRE) < 2 * k) {
		if (++spins % 4096 == 0)
			sched_yield();
		else
			caa_cpu_relax();
	}
}

static void sb_side(int me, unsigned long round)
{
	void *prev = (void *)(uintptr_t)(round - 1), *now = (void *)(uintptr_t)round;

	if (sb_kind == 0) {
		REQUIRE(rcu_xchg_pointer(&sb_x[me], now) == prev);
	} else {
		REQUIRE(rcu_cmpxchg_pointer(&sb_x[me], prev, now) == prev);
	}
	uatomic_store(&sb_saw[me], uatomic_load(&sb_x[1 - me], CMM_RELAXED) == now, CMM_RELAXED);
}

static void *sb_other(void *arg)
{
	(void)arg;
	for (unsigned long r = 1;; r++) {
		sb_barrier(2 * r - 1);
		if (uatomic_load(&sb_stop, CMM_RELAXED))
			break;
		sb_side(1, r);
		sb_barrier(2 * r);
	}
	return NULL;
}

/*
 * docs/compat.md, Pointers: "rcu_xchg_pointer(), rcu_cmpxchg_pointer() are full barriers": the
 * store-buffering litmus above, for each of the two, never shows both sides missing the
 * other's store.
 * Checked against: <urcu/pointer.h> rcu_xchg_pointer() as a load and a store-release (no
 * read-modify-write: no barrier between the store and a later load), then rcu_cmpxchg_pointer()
 * likewise: the forbidden outcome shows on x86 within the rounds (in about one round in three
 * on an idle machine), test fails. A relaxed exchange is still a locked instruction on x86,
 * which orders like a full barrier: that break shows only on a weakly ordered CPU. The rounds
 * need both threads on a CPU at once, so a heavily loaded machine sees few that count.
 */
TEST(xchg_and_cmpxchg_pointer_are_full_barriers)
{
	for (sb_kind = 0; sb_kind < 2; sb_kind++) {
		const char *what = sb_kind ? "rcu_cmpxchg_pointer" : "rcu_xchg_pointer";
		unsigned long forbidden = 0, r;
		uint64_t t0 = gt_now_ns();
		pthread_t t;

		sb_x[0] = sb_x[1] = NULL;
		sb_arrive = 0;
		sb_stop = 0;
		REQUIRE(pthread_create(&t, NULL, sb_other, NULL) == 0);
		/* At most 2 million rounds or 2 s each. */
		for (r = 1;; r++) {
			int stop = r > 2000000 || gt_now_ns() - t0 > 2000000000ull;

			if (stop)
				uatomic_store(&sb_stop, 1, CMM_RELAXED);
			sb_barrier(2 * r - 1);
			if (stop)
				break;
			sb_side(0, r);
			sb_barrier(2 * r);
			if (!uatomic_load(&sb_saw[0], CMM_RELAXED) &&
			    !uatomic_load(&sb_saw[1], CMM_RELAXED))
				forbidden++;
		}
		pthread_join(t, NULL);
		printf("  %s: %lu rounds\n", what, r - 1);
		CHECK_MSG(forbidden == 0, "%s: %lu rounds of %lu saw neither side's store", what,
			  forbidden, r - 1);
	}
}

/* ---- DEFINE_RCU_FLAVOR ---- */

static DEFINE_RCU_FLAVOR(my_flavor);

static int flav_cb_ran, flav_cb_saw_leaving, flav_deferred, flav_hooks;
static struct hold_reader *flav_reader;
static void flav_cb(struct rcu_head *h)
{
	(void)h;
	uatomic_store(&flav_cb_saw_leaving, hold_reader_leaving(flav_reader), CMM_RELAXED);
	uatomic_store(&flav_cb_ran, 1, CMM_RELEASE);
}
static void flav_defer(void *p)
{
	uatomic_inc((int *)p);
}
static void flav_hook(void *p)
{
	(void)p;
	flav_hooks++;
}

struct flav_item {
	unsigned long key;
	struct cds_lfht_node node;
	struct rcu_head rh;
};
static int flav_match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct flav_item, node)->key == *(const unsigned long *)key;
}
static void flav_item_free(struct rcu_head *h)
{
	free(caa_container_of(h, struct flav_item, rh));
}

/*
 * docs/compat.md, Flavor tables: "DEFINE_RCU_FLAVOR(x) builds one from the mapped names, as in
 * liburcu": after <urcu.h>, every member of the table built does what memb's function does
 * (read side, grace periods that wait for a memb reader, callbacks, defer_rcu, barrier,
 * polling, fork hooks, registration), and cds_lfht_new_flavor() runs a table on it.
 * Checked against: <urcu/flavor.h> DEFINE_RCU_FLAVOR with rcu_quiescent_state in the read_lock
 * slot (a function of the same type that is empty for memb): fails at read_ongoing(); with
 * urcu_qsbr_call_rcu in the call_rcu slot (another flavor's): the callback runs inside the memb
 * reader, fails.
 */
TEST(define_rcu_flavor_builds_a_working_table)
{
	static struct hold_reader r;
	static struct rcu_head h;
	const void *const members[] = {
		(const void *)my_flavor.read_lock,
		(const void *)my_flavor.read_unlock,
		(const void *)my_flavor.read_ongoing,
		(const void *)my_flavor.read_quiescent_state,
		(const void *)my_flavor.update_call_rcu,
		(const void *)my_flavor.update_synchronize_rcu,
		(const void *)my_flavor.update_defer_rcu,
		(const void *)my_flavor.thread_offline,
		(const void *)my_flavor.thread_online,
		(const void *)my_flavor.register_thread,
		(const void *)my_flavor.unregister_thread,
		(const void *)my_flavor.barrier,
		(const void *)my_flavor.register_rculfhash_atfork,
		(const void *)my_flavor.unregister_rculfhash_atfork,
		(const void *)my_flavor.update_start_poll_synchronize_rcu,
		(const void *)my_flavor.update_poll_state_synchronize_rcu,
	};

	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
		CHECK_MSG(members[i] != NULL, "member %zu is NULL", i);
	CHECK(sizeof(members) == sizeof(struct rcu_flavor_struct));

	my_flavor.register_thread();
	CHECK(!my_flavor.read_ongoing());
	my_flavor.read_lock();
	CHECK(my_flavor.read_ongoing());
	CHECK(urcu_memb_read_ongoing());
	my_flavor.read_unlock();
	CHECK(!my_flavor.read_ongoing());
	my_flavor.read_quiescent_state();
	my_flavor.thread_offline();
	my_flavor.thread_online();

	/* Grace periods wait for a memb reader, and so do callbacks (each with a reader of its
	 * own: the barrier must not be what waits for the reader). */
	hold_reader_start(&r, F_MEMB, 60);
	struct urcu_gp_poll_state ps = my_flavor.update_start_poll_synchronize_rcu();
	my_flavor.update_synchronize_rcu();
	CHECK_MSG(hold_reader_leaving(&r), "its synchronize_rcu did not wait for a memb reader");
	thread_join(&r.t);
	CHECK(my_flavor.update_poll_state_synchronize_rcu(ps));
	flav_reader = &r;
	flav_cb_ran = flav_cb_saw_leaving = 0;
	hold_reader_start(&r, F_MEMB, 60);
	my_flavor.update_call_rcu(&h, flav_cb);
	thread_join(&r.t);
	my_flavor.barrier();
	CHECK(uatomic_load(&flav_cb_ran, CMM_ACQUIRE));
	CHECK_MSG(flav_cb_saw_leaving, "its call_rcu callback ran inside the memb reader");

	/* defer_rcu. */
	flav_deferred = 0;
	CHECK(rcu_defer_register_thread() == 0);
	my_flavor.update_defer_rcu(flav_defer, &flav_deferred);
	rcu_defer_barrier();
	CHECK_EQL(uatomic_read(&flav_deferred), 1);
	rcu_defer_unregister_thread();

	/* Fork hooks: call_rcu_before_fork() of the mapped flavor runs them. */
	static struct urcu_atfork af = { flav_hook, flav_hook, flav_hook, NULL };
	flav_hooks = 0;
	my_flavor.register_rculfhash_atfork(&af);
	call_rcu_before_fork();
	call_rcu_after_fork_parent();
	my_flavor.unregister_rculfhash_atfork(&af);
	call_rcu_before_fork();
	call_rcu_after_fork_parent();
	CHECK_EQL(flav_hooks, 2);

	/* A table on it: add, look up, resize both ways (its call_rcu and barrier), delete. */
	struct cds_lfht *ht = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE, &my_flavor, NULL);
	CHECK(ht != NULL);
	for (unsigned long k = 0; k < 2000; k++) {
		struct flav_item *it = (struct flav_item *)calloc(1, sizeof(*it));

		REQUIRE(it);
		it->key = k;
		my_flavor.read_lock();
		cds_lfht_add(ht, k * 0x9e3779b97f4a7c15ul, &it->node);
		my_flavor.read_unlock();
	}
	cds_lfht_resize(ht, 8192);
	cds_lfht_resize(ht, 4);
	for (unsigned long k = 0; k < 2000; k++) {
		struct cds_lfht_iter iter;

		my_flavor.read_lock();
		cds_lfht_lookup(ht, k * 0x9e3779b97f4a7c15ul, flav_match, &k, &iter);
		struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
		int ok = n && cds_lfht_del(ht, n) == 0;
		my_flavor.read_unlock();
		CHECK_MSG(ok, "key %lu", k);
		my_flavor.update_call_rcu(&caa_container_of(n, struct flav_item, node)->rh,
					  flav_item_free);
	}
	my_flavor.barrier();
	CHECK_EQL(cds_lfht_destroy(ht, NULL), 0);
	my_flavor.unregister_thread();
}

/* ---- free_all_cpu_call_rcu_data() ---- */

struct fa_reader {
	int flavor;
	int in, leaving, saw_cleared;
	struct thread t;
};

static struct call_rcu_data *f_get_cpu(int f, int cpu)
{
	return f == F_QSBR ? urcu_qsbr_get_cpu_call_rcu_data(cpu)
			   : urcu_memb_get_cpu_call_rcu_data(cpu);
}

static void *fa_reader_fn(void *arg)
{
	struct fa_reader *r = (struct fa_reader *)arg;
	uint64_t t0;

	if (r->flavor == F_QSBR)
		urcu_qsbr_register_thread();
	f_read_lock(r->flavor);
	struct call_rcu_data *c = f_get_cpu(r->flavor, 0);
	REQUIRE(c != NULL);
	uatomic_store(&r->in, 1, CMM_RELEASE);
	/* The freeing thread clears the slot, then waits for this section. */
	t0 = gt_now_ns();
	while (f_get_cpu(r->flavor, 0) != NULL && gt_now_ns() - t0 < LIVE_NS)
		usleep(200);
	r->saw_cleared = f_get_cpu(r->flavor, 0) == NULL;
	gt_sleep_ms(50); /* still holding c */
	uatomic_store(&r->leaving, 1, CMM_RELEASE);
	f_read_unlock(r->flavor);
	if (r->flavor == F_QSBR)
		urcu_qsbr_unregister_thread();
	return NULL;
}

/*
 * docs/compat.md, call_rcu worker control: free_all_cpu_call_rcu_data() "clears the per-CPU
 * handles and frees them after a grace period (readers of get_cpu_call_rcu_data() may still
 * hold one)": a reader that took CPU 0's handle inside its section sees the slot cleared while
 * the call is still waiting, and the call returns (the handle freed) only after the section.
 * memb and QSBR (each flavor has its own handles).
 * Checked against: compat/src/callrcu.c without the grace period (the synchronize before
 * free_handles() removed): the call returns inside the reader's section, test fails.
 */
TEST(free_all_cpu_call_rcu_data_frees_after_a_grace_period)
{
	static struct fa_reader r;
	const int flavors[] = { F_MEMB, F_QSBR };

	for (int i = 0; i < 2; i++) {
		int f = flavors[i];
		struct call_rcu_data *c = f == F_QSBR ? urcu_qsbr_create_call_rcu_data(0, 0)
						      : urcu_memb_create_call_rcu_data(0, 0);

		CHECK(c != NULL);
		CHECK((f == F_QSBR ? urcu_qsbr_set_cpu_call_rcu_data(0, c)
				   : urcu_memb_set_cpu_call_rcu_data(0, c)) == 0);
		memset(&r, 0, sizeof(r));
		r.flavor = f;
		thread_start(&r.t, fa_reader_fn, &r);
		wait_flag(&r.in);
		if (f == F_QSBR)
			urcu_qsbr_free_all_cpu_call_rcu_data();
		else
			urcu_memb_free_all_cpu_call_rcu_data();
		int waited = uatomic_load(&r.leaving, CMM_ACQUIRE);
		thread_join(&r.t);
		CHECK_MSG(r.saw_cleared, "%s: the slot was not cleared while the call waited",
			  fname[f]);
		CHECK_MSG(waited,
			  "%s: free_all_cpu_call_rcu_data() returned inside a reader "
			  "holding the handle",
			  fname[f]);
		CHECK(f_get_cpu(f, 0) == NULL);
	}
}

/* ---- fork hooks of urcu_register_rculfhash_atfork() ---- */

static int af_calls[2][3]; /* [memb, qsbr][before, parent, child] */
static void af_before(void *p)
{
	((int *)p)[0]++;
}
static void af_parent(void *p)
{
	((int *)p)[1]++;
}
static void af_child(void *p)
{
	((int *)p)[2]++;
}

/*
 * docs/compat.md, call_rcu worker control: urcu_register_rculfhash_atfork() / unregister keep
 * "one set of hooks per flavor, reference-counted, as in liburcu": registered twice and
 * unregistered once, memb's hooks still run at memb's call_rcu_before_fork() and the after-fork
 * calls (the child's in the child); memb's never run for QSBR's fork calls nor QSBR's for
 * memb's; unregistered a second time, they no longer run.
 * Checked against: compat/src/callrcu.c unregister clearing the hooks at once (no count): the
 * hooks do not run after the first unregister, test fails; and before_fork/after_fork_parent
 * using memb's state for every flavor: memb's hooks run for QSBR's calls, test fails.
 */
TEST(rculfhash_atfork_hooks_are_per_flavor_and_counted)
{
	static struct urcu_atfork af_memb = { af_before, af_parent, af_child, af_calls[0] };
	static struct urcu_atfork af_qsbr = { af_before, af_parent, af_child, af_calls[1] };
	int st = 0;

	memset(af_calls, 0, sizeof(af_calls));
	urcu_memb_register_rculfhash_atfork(&af_memb);
	urcu_memb_register_rculfhash_atfork(&af_memb);
	urcu_memb_unregister_rculfhash_atfork(&af_memb);
	urcu_qsbr_register_rculfhash_atfork(&af_qsbr);

	urcu_memb_call_rcu_before_fork();
	pid_t pid = fork();
	if (pid == 0) {
		urcu_memb_call_rcu_after_fork_child();
		_exit(af_calls[0][2] == 1 && af_calls[1][0] == 0 && af_calls[1][2] == 0 ? 0 : 1);
	}
	urcu_memb_call_rcu_after_fork_parent();
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's hooks: status %#x", st);
	CHECK(af_calls[0][0] == 1 && af_calls[0][1] == 1 && af_calls[0][2] == 0);
	CHECK_MSG(af_calls[1][0] == 0 && af_calls[1][1] == 0, "memb's fork calls ran QSBR's hooks");

	urcu_qsbr_call_rcu_before_fork();
	urcu_qsbr_call_rcu_after_fork_parent();
	CHECK_MSG(af_calls[0][0] == 1 && af_calls[0][1] == 1, "QSBR's fork calls ran memb's hooks");
	CHECK(af_calls[1][0] == 1 && af_calls[1][1] == 1);

	urcu_memb_unregister_rculfhash_atfork(&af_memb);
	urcu_memb_call_rcu_before_fork();
	urcu_memb_call_rcu_after_fork_parent();
	CHECK_MSG(af_calls[0][0] == 1 && af_calls[0][1] == 1,
		  "memb's hooks ran after their last unregister");
	urcu_qsbr_unregister_rculfhash_atfork(&af_qsbr);
	urcu_qsbr_call_rcu_before_fork();
	urcu_qsbr_call_rcu_after_fork_parent();
	CHECK(af_calls[1][0] == 1 && af_calls[1][1] == 1);
}

/* ---- defer_rcu(): the bounded second wait ---- */

#define DEFER_CAP 16320 /* docs/compat.md: the pending deferrals past which the owner waits */
static pthread_mutex_t stuck_lock = PTHREAD_MUTEX_INITIALIZER;
static long stuck_count;

static void takes_stuck_lock(void *p)
{
	(void)p;
	pthread_mutex_lock(&stuck_lock);
	pthread_mutex_unlock(&stuck_lock);
}

static void bump(void *p)
{
	uatomic_inc((long *)p);
}

static void defer_stuck_child(void *arg)
{
	long want = 0;

	(void)arg;
	alarm(30); /* the wait that is not bounded: a deadlock (this thread holds stuck_lock) */
	urcu_memb_defer_register_thread();
	for (int episode = 0; episode < 2; episode++) {
		/* Deferrals that run: the queue has made progress before it sticks. */
		for (int i = 0; i < 10; i++)
			urcu_memb_defer_rcu(bump, &stuck_count);
		want += 10;
		urcu_memb_defer_barrier_thread();
		/* The next deferred function waits for a lock this thread holds while it defers
		 * three times the bound: the pass cannot run a thing past it. */
		pthread_mutex_lock(&stuck_lock);
		urcu_memb_defer_rcu(takes_stuck_lock, NULL);
		for (int i = 0; i < 3 * DEFER_CAP; i++)
			urcu_memb_defer_rcu(bump, &stuck_count);
		want += 3 * DEFER_CAP;
		pthread_mutex_unlock(&stuck_lock);
		urcu_memb_defer_barrier_thread();
		if (uatomic_read(&stuck_count) != want) {
			fprintf(stderr, "contract: %ld deferrals ran, want %ld\n",
				uatomic_read(&stuck_count), want);
			_exit(2);
		}
	}
	urcu_memb_defer_unregister_thread();
	fprintf(stderr, "contract: done\n");
	_exit(0);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/*
 * docs/compat.md, defer_rcu: "That second wait is bounded: after 100 ms in which no deferred
 * function ran, the thread goes on and the program is told once": a thread defers three times
 * the bound while the deferred function before them waits for a lock the thread holds. Its
 * defer_rcu() calls return (liveness: 30 s; without the bound the thread and the pass wait for
 * each other for ever), twice in a row, and the warning appears once.
 * Checked against: compat/src/defer.c dq_backlog() without its give-up (it waits until the
 * pass runs the backlog): the child deadlocks, its alarm ends it, test fails; and without the
 * once-only flag: two warnings, test fails.
 */
TEST(defer_rcu_backlog_wait_is_bounded_and_told_once)
{
	static char out[16384];
	int st = gt_run_child(defer_stuck_child, NULL, out, sizeof(out));
	const char *warn = "defer_rcu: no deferred function has run for 100 ms";

	printf("  stderr: %.600s\n", out);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	CHECK(strstr(out, "contract: done") != NULL);
	CHECK_MSG(count_of(out, warn) == 1, "%d warnings, want 1", count_of(out, warn));
	CHECK(strstr(out, "grace: warning: defer_rcu: no deferred function") != NULL);
}

/* ---- defer_rcu(): barriers where they would deadlock ---- */

static void calls_defer_barrier(void *p)
{
	(void)p;
	urcu_memb_defer_barrier();
}

static void calls_defer_barrier_thread(void *p)
{
	(void)p;
	urcu_memb_defer_barrier_thread();
}

static void defer_barrier_from_deferred(void)
{
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(calls_defer_barrier, NULL);
	urcu_memb_defer_barrier(); /* runs it here, or waits for the pass that runs it */
	urcu_memb_defer_unregister_thread();
}

static void defer_barrier_thread_from_deferred(void)
{
	urcu_memb_defer_register_thread();
	urcu_memb_defer_rcu(calls_defer_barrier_thread, NULL);
	urcu_memb_defer_barrier_thread();
	urcu_memb_defer_unregister_thread();
}

static void defer_barrier_thread_in_section(void)
{
	urcu_memb_defer_register_thread();
	urcu_memb_read_lock();
	urcu_memb_defer_barrier_thread();
	urcu_memb_read_unlock();
}

/*
 * docs/compat.md, defer_rcu: rcu_defer_barrier() and rcu_defer_barrier_thread() "are misuse
 * inside a read-side section or inside a deferred function" (reported in every build, abort):
 * each from a deferred function, and rcu_defer_barrier_thread() inside a section (compat_misuse
 * has rcu_defer_barrier() inside a section).
 * Checked against: compat/src/defer.c barrier_checks() without its in_run check: the deferred
 * function waits for itself, the child hangs, test fails; and without its section check:
 * synchronize inside the section is reported under another name, test fails.
 */
TEST(defer_barriers_in_a_deferred_function_or_section_are_misuse)
{
	EXPECT_MISUSE_CHILD(defer_barrier_from_deferred, MC_FATAL, "rcu_defer_barrier",
			    "called from a deferred function");
	EXPECT_MISUSE_CHILD(defer_barrier_thread_from_deferred, MC_FATAL,
			    "rcu_defer_barrier_thread", "called from a deferred function");
	EXPECT_MISUSE_CHILD(defer_barrier_thread_in_section, MC_FATAL, "rcu_defer_barrier_thread",
			    "inside rcu_read_lock()");
}

/* ---- lists ---- */

struct lent {
	int v;
	struct cds_list_head l;
};

/*
 * docs/compat.md, Lists: "cds_list_del() leaves the entry's links as they were (no poisoning:
 * code that deletes while walking with a non-safe iterator behaves as it did)", in every build.
 * Checked against: <urcu/list.h> cds_list_del() poisoning the entry (next and prev set to
 * NULL after the unlink): test fails.
 */
TEST(list_del_leaves_the_entry_links)
{
	CDS_LIST_HEAD(head);
	struct lent e[5];
	struct cds_list_head *pos;
	struct lent *it;
	int n = 0, sum = 0;

	for (int i = 0; i < 5; i++) {
		e[i].v = i;
		cds_list_add_tail(&e[i].l, &head);
	}
	cds_list_del(&e[2].l);
	CHECK(e[2].l.next == &e[3].l && e[2].l.prev == &e[1].l);
	CHECK(e[1].l.next == &e[3].l && e[3].l.prev == &e[1].l);

	/* A non-safe iterator that deletes the entry it stands on goes on to the next. */
	cds_list_for_each(pos, &head) {
		sum += cds_list_entry(pos, struct lent, l)->v;
		n++;
		cds_list_del(pos);
	}
	CHECK(n == 4 && sum == 0 + 1 + 3 + 4);
	CHECK(cds_list_empty(&head));

	for (int i = 0; i < 5; i++)
		cds_list_add_tail(&e[i].l, &head);
	n = sum = 0;
	cds_list_for_each_entry(it, &head, l) {
		sum += it->v;
		n++;
		cds_list_del(&it->l);
	}
	CHECK(n == 5 && sum == 10);
	CHECK(cds_list_empty(&head));
}

/* ---- the deprecated queue and stack ---- */

#define DEP_PER_PRODUCER 20000
struct dep_elem {
	unsigned int id;
	struct cds_wfq_node q;
	struct cds_lfs_node_rcu s;
};
static struct dep_elem dep_pool[2 * DEP_PER_PRODUCER];
static unsigned char dep_seen[2 * DEP_PER_PRODUCER];
static unsigned long dep_taken, dep_dupes;
static int dep_kind, dep_producers_done;
static struct cds_wfq_queue dep_q;
static struct cds_lfs_stack_rcu dep_s;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void *dep_producer(void *arg)
{
	unsigned int base = (unsigned int)(uintptr_t)arg * DEP_PER_PRODUCER;

	for (unsigned int k = 0; k < DEP_PER_PRODUCER; k++) {
		struct dep_elem *e = &dep_pool[base + k];

		e->id = base + k;
		if (dep_kind == 0) {
			cds_wfq_node_init(&e->q);
			cds_wfq_enqueue(&dep_q, &e->q);
		} else {
			cds_lfs_node_init_rcu(&e->s);
			cds_lfs_push_rcu(&dep_s, &e->s);
		}
	}
	uatomic_inc(&dep_producers_done);
	return NULL;
}

static int dep_take(void)
{
	struct dep_elem *e = NULL;

	if (dep_kind == 0) {
		struct cds_wfq_node *n = cds_wfq_dequeue_blocking(&dep_q);

		if (n)
			e = caa_container_of(n, struct dep_elem, q);
	} else {
		/* Inside a section; the nodes are never reused, so none is freed. */
		urcu_memb_read_lock();
		struct cds_lfs_node_rcu *n = cds_lfs_pop_rcu(&dep_s);
		urcu_memb_read_unlock();
		if (n)
			e = caa_container_of(n, struct dep_elem, s);
	}
	if (!e)
		return 0;
	if (__atomic_fetch_add(&dep_seen[e->id], 1, __ATOMIC_RELAXED))
		uatomic_inc(&dep_dupes);
	uatomic_inc(&dep_taken);
	return 1;
}

static void *dep_consumer(void *arg)
{
	(void)arg;
	for (;;) {
		int done = uatomic_read(&dep_producers_done) == 2;

		if (!dep_take() && done)
			break;
	}
	return NULL;
}

/* One producers/consumers run of dep_kind, in a child process: a queue that loses a link makes
 * its consumers wait for ever, and the child's alarm ends that. */
static void dep_run_child(void *arg)
{
	struct thread p[2], c[2];

	dep_kind = (int)(uintptr_t)arg;
	alarm(20);
	if (dep_kind == 0)
		cds_wfq_init(&dep_q);
	else
		cds_lfs_init_rcu(&dep_s);
	for (int i = 0; i < 2; i++) {
		thread_start(&p[i], dep_producer, (void *)(uintptr_t)i);
		thread_start(&c[i], dep_consumer, NULL);
	}
	for (int i = 0; i < 2; i++) {
		thread_join(&p[i]);
		thread_join(&c[i]);
	}
	if (dep_taken != 2 * DEP_PER_PRODUCER || dep_dupes != 0) {
		fprintf(stderr, "contract: taken %lu of %d, %lu twice\n", dep_taken,
			2 * DEP_PER_PRODUCER, dep_dupes);
		_exit(1);
	}
	if (dep_kind == 0) {
		if (cds_wfq_dequeue_blocking(&dep_q) != NULL || cds_wfq_destroy(&dep_q) != 0)
			_exit(2);
	} else {
		urcu_memb_read_lock();
		struct cds_lfs_node_rcu *n = cds_lfs_pop_rcu(&dep_s);
		urcu_memb_read_unlock();
		if (n)
			_exit(2);
	}
	_exit(0);
}

/*
 * docs/compat.md, Queues and stacks: "the deprecated cds_wfq_* and cds_lfs_*_rcu" are provided,
 * with the same guarantees as the others: two producers and two consumers, every element taken
 * exactly once (each kind in a child process).
 * Checked against: <urcu/wfqueue.h> enqueue taking the tail with a load and a store instead of
 * the exchange: a link is lost, the consumers wait for it until the child's alarm, test fails;
 * and <urcu/rculfstack.h> cds_lfs_push_rcu() storing the head instead of its compare-and-swap:
 * elements lost or taken twice, test fails.
 */
TEST(deprecated_wfq_and_lfs_rcu_take_every_element_once)
{
	static char out[4096];

	for (int kind = 0; kind < 2; kind++) {
		int st = gt_run_child(dep_run_child, (void *)(uintptr_t)kind, out, sizeof(out));

		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x, stderr: %s",
			  kind ? "cds_lfs_*_rcu" : "cds_wfq_*", st, out);
	}
}
#pragma GCC diagnostic pop

/* ---- stall reports ---- */

static int stall_in;
static void *stuck_reader(void *arg)
{
	(void)arg;
	urcu_memb_read_lock();
	uatomic_store(&stall_in, 1, CMM_RELEASE);
	usleep(1500 * 1000); /* inside the section past the stall timeout */
	urcu_memb_read_unlock();
	return NULL;
}

static void memb_stuck_reader_child(void *arg)
{
	struct thread t;

	(void)arg;
	alarm(30);
	grace_set_stall_timeout_ms(200);
	thread_start(&t, stuck_reader, NULL);
	wait_flag(&stall_in);
	urcu_memb_synchronize_rcu(); /* waits for the stuck reader */
	thread_join(&t);
	fprintf(stderr, "contract: done\n");
}

/*
 * docs/compat.md, Debug builds...: "a reader stuck inside rcu_read_lock() likewise names
 * rcu_read_unlock": a urcu_memb reader inside its section past a short stall timeout while
 * urcu_memb_synchronize_rcu() waits (compat_misuse checks the QSBR report). Every build.
 * Checked against: compat/src/diag.c stall_handler() taking every report for a QSBR one: the
 * report names rcu_quiescent_state, test fails.
 */
TEST(stalled_memb_reader_report_names_rcu_read_unlock)
{
	static char out[8192];
	int st = gt_run_child(memb_stuck_reader_child, NULL, out, sizeof(out));

	printf("  stderr: %.400s\n", out);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
	CHECK(strstr(out, "grace: stall: rcu_read_unlock: ") != NULL);
	CHECK(strstr(out, "inside rcu_read_lock()") != NULL);
	CHECK(strstr(out, "contract: done") != NULL);
}

GT_MAIN()
