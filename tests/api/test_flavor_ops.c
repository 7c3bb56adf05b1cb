/* SPDX-License-Identifier: MIT */
/*
 * docs/api.md, "Flavor operations": every table (grace_flavor_rcu, grace_flavor_qsbr, and an
 * srcu domain's from grace_flavor_ops_srcu()) behaves as its flavor's named functions:
 *   - the thread functions are NULL where a flavor has none;
 *   - read_lock() returns the srcu index for srcu and 0 for the others; read_ongoing() is exact
 *     for rcu and qsbr ("online" for qsbr), and for srcu knows sections entered from code built
 *     with GRACE_DEBUG;
 *   - synchronize (and synchronize_expedited) waits for a reader inside the table's read side;
 *   - call and call_hurry run the callback by the time barrier returns, and callback_stats
 *     counts them; the polled API's cookies complete after a synchronize / cond_synchronize;
 *   - set_policy and set_callback_limits return what the named functions return (0, -EINVAL);
 *   - grace_flavor_ops_srcu() sets up a DEFINE_SRCU() domain not used yet, and writes *ops only.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <grace/grace.h>
#include "gtest_lite.h"

static DEFINE_SRCU(fo_srcu);
static struct srcu_struct fo_srcu2;

/* The three tables: rcu, qsbr, and an srcu domain's. */
static struct grace_flavor_ops srcu_ops;
static const struct grace_flavor_ops *table(int i)
{
	if (i == 0)
		return &grace_flavor_rcu;
	if (i == 1)
		return &grace_flavor_qsbr;
	grace_flavor_ops_srcu(&srcu_ops, &fo_srcu);
	return &srcu_ops;
}

TEST(thread_functions_are_null_where_a_flavor_has_none)
{
	const struct grace_flavor_ops *r = table(0), *q = table(1), *s = table(2);

	CHECK(strcmp(r->name, "rcu") == 0 && strcmp(q->name, "qsbr") == 0 &&
	      strcmp(s->name, "srcu") == 0);
	CHECK(r->register_thread && r->unregister_thread);
	CHECK(!r->quiescent_state && !r->thread_offline && !r->thread_online);
	CHECK(q->register_thread && q->unregister_thread && q->quiescent_state &&
	      q->thread_offline && q->thread_online);
	CHECK(!s->register_thread && !s->unregister_thread && !s->quiescent_state &&
	      !s->thread_offline && !s->thread_online);
	for (int i = 0; i < 3; i++) { /* every other operation is there */
		const struct grace_flavor_ops *t = table(i);
		CHECK(t->call && t->synchronize && t->barrier && t->synchronize_expedited &&
		      t->get_state && t->start_poll && t->poll_state && t->cond_synchronize &&
		      t->read_lock && t->read_unlock && t->read_ongoing && t->set_policy &&
		      t->set_callback_limits && t->callback_stats && t->call_hurry && t->free &&
		      t->free_headless && t->free_barrier);
	}
}

/* grace_flavor_ops_srcu(): "A DEFINE_SRCU() domain not used yet is set up"; "it writes *ops
 * only". The table of a domain first touched through it works at once. */
TEST(ops_srcu_sets_up_a_defined_domain_and_writes_ops_only)
{
	static DEFINE_SRCU(fresh);
	struct {
		uint64_t before;
		struct grace_flavor_ops ops;
		uint64_t after;
	} g = { 0x1122334455667788ull, { 0 }, 0x8877665544332211ull };

	grace_flavor_ops_srcu(&g.ops, &fresh);
	CHECK(g.before == 0x1122334455667788ull && g.after == 0x8877665544332211ull);
	int idx = g.ops.read_lock(g.ops.ctx);
	CHECK(grace_srcu_readers_active(&fresh) == 1);
	g.ops.read_unlock(g.ops.ctx, idx);
	CHECK(grace_srcu_readers_active(&fresh) == 0);
	g.ops.synchronize(g.ops.ctx);

	REQUIRE(init_srcu_struct(&fo_srcu2) == 0);
	grace_flavor_ops_srcu(&g.ops, &fo_srcu2);
	g.ops.synchronize(g.ops.ctx);
	cleanup_srcu_struct(&fo_srcu2);
}

TEST(read_side_tokens_and_ongoing)
{
	const struct grace_flavor_ops *r = table(0), *q = table(1), *s = table(2);

	/* rcu: token 0; ongoing exactly inside. */
	CHECK(!r->read_ongoing(r->ctx));
	int t = r->read_lock(r->ctx);
	CHECK(t == 0);
	CHECK(r->read_ongoing(r->ctx) && rcu_read_ongoing());
	r->read_unlock(r->ctx, t);
	CHECK(!r->read_ongoing(r->ctx) && !rcu_read_ongoing());

	/* qsbr: token 0; ongoing means online. */
	q->register_thread();
	CHECK(q->read_ongoing(q->ctx));
	t = q->read_lock(q->ctx);
	CHECK(t == 0);
	q->read_unlock(q->ctx, t);
	q->thread_offline();
	CHECK(!q->read_ongoing(q->ctx));
	q->thread_online();
	CHECK(q->read_ongoing(q->ctx));
	q->quiescent_state();
	q->unregister_thread();
	CHECK(!q->read_ongoing(q->ctx));

	/* srcu: the index, 0 or 1, as srcu_read_lock() gives it; the section counts. */
	t = s->read_lock(s->ctx);
	CHECK(t == 0 || t == 1);
	CHECK(grace_srcu_readers_active(&fo_srcu) == 1);
#ifdef GRACE_DEBUG
	CHECK(s->read_ongoing(s->ctx)); /* code built with GRACE_DEBUG */
#endif
	s->read_unlock(s->ctx, t);
	CHECK(grace_srcu_readers_active(&fo_srcu) == 0);
	CHECK(!s->read_ongoing(s->ctx));
	int i1 = srcu_read_lock(&fo_srcu); /* the same index as the named function */
	int i2 = s->read_lock(s->ctx);
	CHECK(i1 == i2);
	s->read_unlock(s->ctx, i2);
	srcu_read_unlock(&fo_srcu, i1);
}

/* A reader holds the table's read side for 150 ms; synchronize must not return before. */
struct hold {
	const struct grace_flavor_ops *t;
	int inside, released;
};
static void *holder(void *arg)
{
	struct hold *h = (struct hold *)arg;
	if (h->t->register_thread)
		h->t->register_thread();
	int tok = h->t->read_lock(h->t->ctx);
	__atomic_store_n(&h->inside, 1, __ATOMIC_RELEASE);
	usleep(150 * 1000);
	__atomic_store_n(&h->released, 1, __ATOMIC_RELEASE);
	h->t->read_unlock(h->t->ctx, tok);
	if (h->t->unregister_thread)
		h->t->unregister_thread();
	return NULL;
}

static void waits_for_reader(const struct grace_flavor_ops *t, bool expedited)
{
	struct hold h = { t, 0, 0 };
	pthread_t th;

	REQUIRE(pthread_create(&th, NULL, holder, &h) == 0);
	while (!__atomic_load_n(&h.inside, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (expedited)
		t->synchronize_expedited(t->ctx);
	else
		t->synchronize(t->ctx);
	CHECK_MSG(__atomic_load_n(&h.released, __ATOMIC_ACQUIRE),
		  "%s: %s returned while a reader was inside", t->name,
		  expedited ? "synchronize_expedited" : "synchronize");
	pthread_join(th, NULL);
}

TEST(synchronize_waits_for_a_reader_of_the_table)
{
	for (int i = 0; i < 3; i++) {
		waits_for_reader(table(i), false);
		waits_for_reader(table(i), true);
	}
}

static int cb_ran;
static void cb(struct rcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&cb_ran, 1, __ATOMIC_RELAXED);
}

TEST(call_barrier_polled_and_stats)
{
	for (int i = 0; i < 3; i++) {
		const struct grace_flavor_ops *t = table(i);
		struct rcu_head h1, h2;
		struct grace_cb_stats s0, s1;

		t->callback_stats(t->ctx, &s0);
		cb_ran = 0;
		t->call(t->ctx, &h1, cb);
		t->call_hurry(t->ctx, &h2, cb);
		t->barrier(t->ctx);
		CHECK_MSG(cb_ran == 2, "%s: %d of 2 callbacks ran by barrier", t->name, cb_ran);
		t->callback_stats(t->ctx, &s1);
		CHECK_MSG(s1.queued >= s0.queued + 2 && s1.invoked >= s0.invoked + 2,
			  "%s: callback_stats did not count the calls", t->name);

		unsigned long c = t->get_state(t->ctx);
		t->synchronize(t->ctx);
		CHECK_MSG(t->poll_state(t->ctx, c), "%s: cookie incomplete after synchronize",
			  t->name);
		c = t->start_poll(t->ctx);
		t->cond_synchronize(t->ctx, c);
		CHECK_MSG(t->poll_state(t->ctx, c), "%s: cookie incomplete after cond_synchronize",
			  t->name);

		/* free and free_headless: the objects are gone by free_barrier (LSan would see a
		 * leak in the sanitizer build; the callback-counting above covers the timing). */
		struct fobj {
			struct rcu_head rh;
			int v;
		} *o = (struct fobj *)malloc(sizeof(*o));
		REQUIRE(o);
		t->free(t->ctx, o, &o->rh);
		t->free_headless(t->ctx, malloc(32));
		t->free_barrier(t->ctx);
	}
}

TEST(controls_return_what_the_named_functions_return)
{
	for (int i = 0; i < 3; i++) {
		const struct grace_flavor_ops *t = table(i);

		CHECK(t->set_callback_limits(t->ctx, 0, 10) == -EINVAL);
		CHECK(t->set_callback_limits(t->ctx, 20, 10) == -EINVAL);
		CHECK(t->set_callback_limits(t->ctx, 10000, 100000) == 0);
		CHECK(t->set_policy(t->ctx, (enum grace_gp_policy)99, 0) == -EINVAL);
		CHECK(t->set_policy(t->ctx, GRACE_POLICY_BATCH, 0) == -EINVAL);
		CHECK(t->set_policy(t->ctx, GRACE_POLICY_BATCH, 10000001) == -EINVAL);
		CHECK(t->set_policy(t->ctx, GRACE_POLICY_POLL, 0) == 0);
		CHECK(t->set_policy(t->ctx, GRACE_POLICY_ADAPTIVE, 0) == 0);
	}
	CHECK(grace_rcu_set_callback_limits(0, 10) == -EINVAL); /* the named function agrees */
	CHECK(grace_rcu_set_policy(GRACE_POLICY_BATCH, 0) == -EINVAL);
}

GT_MAIN()
