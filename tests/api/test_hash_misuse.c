/* SPDX-License-Identifier: MIT */
/*
 * Hash-table misuse diagnostics (issue 14): each message names the grace_hash_* call the program
 * made, never a call it did not make (synchronize_rcu, rcu_barrier), and resizing inside a
 * read-side section is diagnosed whichever way it resizes.
 *  - grace_hash_del() and grace_hash_replace() outside a read-side section: debug builds report
 *    it (the node is read before the lock, a concurrent deletion could free it);
 *  - grace_hash_resize() (growing or shrinking) and grace_hash_destroy() inside a read-side
 *    section or from a callback would deadlock: reported in every build;
 *  - a node added twice (it would be linked to itself): reported in every build when it is its
 *    chain's head, anywhere in the chain in debug builds; grace_hash_add_replace() of a node by
 *    itself (it would free a linked node): every build;
 *  - srcu tables and custom ops: resizing or destroying inside a section is reported by the
 *    flavor's own synchronize or barrier check (debug builds for srcu; it hangs otherwise);
 *  - a wait for a background resize held back for over 10 s by a stuck reader: one warning
 *    naming the call (not a misuse: the wait goes on and returns).
 * Each misuse runs in a child process (tests/common/misuse_child.h).
 */
#include <pthread.h>
#include <grace/grace.h>
#include <grace/hash.h>
#include "gtest_lite.h"
#include "misuse_child.h"
#include "hash_obj.h"

static struct grace_hash *table(const struct grace_flavor_ops *ops, unsigned nkeys)
{
	struct grace_hash_params p;
	memset(&p, 0, sizeof(p));
	p.hash = hash_key;
	p.match = match_key;
	p.free = obj_free;
	p.ops = ops;
	p.init_buckets = 64;
	p.min_buckets = 8;
	struct grace_hash *ht = grace_hash_create(&p);
	REQUIRE(ht);
	for (uint64_t k = 0; k < nkeys; k++) {
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		REQUIRE(o);
		o->key = k;
		REQUIRE(grace_hash_add(ht, &o->hn, &o->key) == 0);
	}
	return ht;
}

static struct grace_hash_node *first(struct grace_hash *ht)
{
	uint64_t k = 0;
	rcu_read_lock();
	struct grace_hash_node *n = grace_hash_lookup(ht, &k);
	rcu_read_unlock();
	return n;
}

static void del_outside(void)
{
	struct grace_hash *ht = table(NULL, 4);
	grace_hash_del(ht, first(ht)); /* no section: another deleter could free the node */
	grace_hash_destroy(ht);
}
TEST(del_outside_section)
{
	EXPECT_MISUSE_CHILD(del_outside, MC_DEBUG_ONLY, "grace_hash_del",
			    "outside a read-side section");
}

static void replace_outside(void)
{
	struct grace_hash *ht = table(NULL, 4);
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	o->key = 0;
	grace_hash_replace(ht, first(ht), &o->hn);
	grace_hash_destroy(ht);
}
TEST(replace_outside_section)
{
	EXPECT_MISUSE_CHILD(replace_outside, MC_DEBUG_ONLY, "grace_hash_replace",
			    "outside a read-side section");
}

static void grow_in_section(void)
{
	struct grace_hash *ht = table(NULL, 4);
	rcu_read_lock();
	grace_hash_resize(ht, 1024);
}
TEST(grow_inside_section_names_grace_hash_resize)
{
	EXPECT_MISUSE_CHILD(grow_in_section, MC_FATAL, "grace_hash_resize",
			    "inside a read-side section");
}

static void shrink_in_section(void)
{
	struct grace_hash *ht = table(NULL, 4);
	rcu_read_lock();
	grace_hash_resize(ht, 8); /* used to return 0 silently */
}
TEST(shrink_inside_section_is_diagnosed)
{
	EXPECT_MISUSE_CHILD(shrink_in_section, MC_FATAL, "grace_hash_resize",
			    "inside a read-side section");
}

static void destroy_in_section(void)
{
	struct grace_hash *ht = table(NULL, 4);
	rcu_read_lock();
	grace_hash_destroy(ht);
}
TEST(destroy_inside_section_names_grace_hash_destroy)
{
	EXPECT_MISUSE_CHILD(destroy_in_section, MC_FATAL, "grace_hash_destroy",
			    "inside a read-side section");
}

static struct grace_hash *cb_table;
static struct rcu_head cb_head;
static void cb_destroy(struct rcu_head *h)
{
	(void)h;
	grace_hash_destroy(cb_table);
}
static void destroy_from_callback(void)
{
	cb_table = table(NULL, 4);
	call_rcu(&cb_head, cb_destroy);
	rcu_barrier();
}
TEST(destroy_from_callback_names_grace_hash_destroy)
{
	EXPECT_MISUSE_CHILD(destroy_from_callback, MC_FATAL, "grace_hash_destroy",
			    "from a callback");
}

static void cb_resize(struct rcu_head *h)
{
	(void)h;
	grace_hash_resize(cb_table, 4096);
}
static void resize_from_callback(void)
{
	cb_table = table(NULL, 4);
	call_rcu(&cb_head, cb_resize);
	rcu_barrier();
}
TEST(resize_from_callback_names_grace_hash_resize)
{
	EXPECT_MISUSE_CHILD(resize_from_callback, MC_FATAL, "grace_hash_resize", "from a callback");
}

static void qsbr_resize_in_section(void)
{
	struct grace_hash *ht = table(&grace_flavor_qsbr, 4);
	qsbr_register_thread();
	qsbr_read_lock();
	grace_hash_resize(ht, 8);
	qsbr_read_unlock();
	qsbr_unregister_thread();
}
TEST(qsbr_resize_inside_qsbr_read_lock)
{
	/* Known only when the caller is compiled with GRACE_DEBUG (qsbr_read_lock() depth); an
	 * online QSBR thread is put offline for the wait otherwise, and returns. */
	EXPECT_MISUSE_CHILD(qsbr_resize_in_section, MC_DEBUG_ONLY, "grace_hash_resize",
			    "inside a read-side section of the table's qsbr flavor");
}

/*
 * docs/ds.md (Misuse: "srcu tables and custom ops: the flavor's own `synchronize`/`barrier` check
 * reports it"): the table cannot know an srcu domain's or a custom flavor's readers, so the
 * wait itself reports the call inside a section: synchronize_srcu() and srcu_barrier() of the
 * same domain (known when the section was entered from code built with GRACE_DEBUG; it would
 * hang otherwise), synchronize_rcu() under custom ops that wrap the default flavor (every build).
 */
static DEFINE_SRCU(misuse_srcu);
static struct grace_flavor_ops misuse_srcu_ops;

static void srcu_resize_in_section(void)
{
	grace_flavor_ops_srcu(&misuse_srcu_ops, &misuse_srcu);
	struct grace_hash *ht = table(&misuse_srcu_ops, 4);
	int idx = srcu_read_lock(&misuse_srcu);
	grace_hash_resize(ht, 1024);
	srcu_read_unlock(&misuse_srcu, idx);
}
TEST(srcu_resize_inside_own_section)
{
	EXPECT_MISUSE_CHILD(srcu_resize_in_section, MC_DEBUG_HANG, "synchronize_srcu",
			    "same srcu_struct");
}

static void srcu_destroy_in_section(void)
{
	grace_flavor_ops_srcu(&misuse_srcu_ops, &misuse_srcu);
	struct grace_hash *ht = table(&misuse_srcu_ops, 4);
	int idx = srcu_read_lock(&misuse_srcu);
	grace_hash_destroy(ht);
	srcu_read_unlock(&misuse_srcu, idx);
}
TEST(srcu_destroy_inside_own_section)
{
	EXPECT_MISUSE_CHILD(srcu_destroy_in_section, MC_DEBUG_HANG, "srcu_barrier",
			    "same srcu_struct");
}

static struct grace_flavor_ops custom_ops;
static void custom_resize_in_section(void)
{
	custom_ops = grace_flavor_rcu; /* another address: the table knows nothing of it */
	struct grace_hash *ht = table(&custom_ops, 4);
	rcu_read_lock();
	grace_hash_resize(ht, 1024);
	rcu_read_unlock();
}
TEST(custom_ops_resize_inside_section)
{
	EXPECT_MISUSE_CHILD(custom_resize_in_section, MC_FATAL, "synchronize_rcu",
			    "would deadlock");
}

/*
 * docs/ds.md (fork(): "A wait for a background resize that lasts over the stall timeout ...
 * is reported once with a warning naming the call"): a table past
 * the inline-resize size queues its resize as a callback, which a reader stuck in a section
 * holds back; grace_hash_resize() waits for it past the stall timeout (set to 200 ms; the reader
 * leaves 1 s after the call began), says so once, naming grace_hash_resize, when the grace
 * period it waits for ends, and then returns; meanwhile the flavor's stall warning names the
 * reader.
 */
static int stuck_in, stuck_go;

static void *stuck_reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&stuck_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stuck_go, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	gt_sleep_ms(1000); /* from just before the resize: its wait outlasts the stall timeout */
	rcu_read_unlock();
	return NULL;
}

static void resize_behind_stuck_reader(void)
{
	struct grace_hash_params p;
	struct grace_hash_stats st;
	pthread_t t;

	alarm(60);
	grace_set_stall_timeout_ms(200);
	memset(&p, 0, sizeof(p));
	p.hash = hash_key;
	p.match = match_key;
	p.free = obj_free;
	p.init_buckets = 32768; /* above the inline-resize size: resizes run as callbacks */
	p.flags = GRACE_HASH_AUTO_RESIZE;
	struct grace_hash *ht = grace_hash_create(&p);
	if (!ht)
		_exit(2);
	if (pthread_create(&t, NULL, stuck_reader, NULL) != 0)
		_exit(3);
	while (!__atomic_load_n(&stuck_in, __ATOMIC_ACQUIRE))
		gt_sleep_ms(1);
	for (uint64_t k = 0; k < 32768 + 2048 + 1; k++) { /* past the limit, approximate count */
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		if (!o)
			_exit(4);
		o->key = k;
		grace_hash_add(ht, &o->hn, &o->key);
	}
	grace_hash_get_stats(ht, &st);
	if (!st.resizing)
		_exit(5); /* the background resize must be queued, held back by the reader */
	__atomic_store_n(&stuck_go, 1, __ATOMIC_RELEASE);
	if (grace_hash_resize(ht, 1 << 17) != 0)
		_exit(6);
	pthread_join(t, NULL);
	grace_hash_destroy(ht);
	fprintf(stderr, "fine\n");
}

TEST(wait_for_stuck_background_resize_is_reported_once)
{
	static char out[16384];
	const char *what = "grace_hash_resize: still waiting for a background resize";
	mc_child_fn = resize_behind_stuck_reader;
	int st = gt_run_child(mc_trampoline, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "fine"), "status 0x%x: %s",
		  st, out);
	const char *first = strstr(out, what);
	CHECK_MSG(first != NULL, "no warning naming grace_hash_resize: %s", out);
	printf("  stderr: %.400s%s", out, strlen(out) > 400 ? "...\n" : "");
	CHECK_MSG(strstr(first + 1, what) == NULL, "warned more than once: %s", out);
	/* While the reader stays, the flavor's stall warning names it. */
	CHECK_MSG(strstr(out, "stall warning: rcu reader thread"), "no stall warning: %s", out);
	CHECK_MSG(!strstr(out, "misuse"), "%s", out);
}

/* The legal forms of the same calls go through without a word. */
/*
 * The same node added twice with no deletion between (review of src/ds/hash.c): the second add
 * linked the node to itself, and a lookup of another key in its chain never returned. Every
 * build catches the add of the node at its chain's head; debug builds the node anywhere in it.
 */
static uint64_t hash_const(const void *key, void *arg)
{
	(void)arg;
	(void)key;
	return 42; /* one chain: every key meets the twice-added node */
}

static struct grace_hash *one_chain(void)
{
	struct grace_hash_params p;
	memset(&p, 0, sizeof(p));
	p.hash = hash_const;
	p.match = match_key;
	struct grace_hash *ht = grace_hash_create(&p);
	REQUIRE(ht);
	return ht;
}

static struct obj twice_a = { 1, { { NULL, NULL }, 0, { NULL, NULL } } };
static struct obj twice_b = { 2, { { NULL, NULL }, 0, { NULL, NULL } } };

static void lookup_absent(struct grace_hash *ht)
{
	uint64_t k = 3; /* absent: the lookup walks the whole chain */
	rcu_read_lock();
	(void)grace_hash_lookup(ht, &k);
	rcu_read_unlock();
}

static void add_twice_head(void)
{
	struct grace_hash *ht = one_chain();
	REQUIRE(grace_hash_add(ht, &twice_b.hn, &twice_b.key) == 0);
	REQUIRE(grace_hash_add(ht, &twice_a.hn, &twice_a.key) == 0);
	grace_hash_add(ht, &twice_a.hn, &twice_a.key); /* a is the chain's head */
	lookup_absent(ht);
}
TEST(add_same_node_twice_names_grace_hash_add)
{
	EXPECT_MISUSE_CHILD(add_twice_head, MC_FATAL, "grace_hash_add", "already in the table");
}

static void add_twice_inside(void)
{
	struct grace_hash *ht = one_chain();
	REQUIRE(grace_hash_add(ht, &twice_a.hn, &twice_a.key) == 0);
	REQUIRE(grace_hash_add(ht, &twice_b.hn, &twice_b.key) == 0);
	grace_hash_add(ht, &twice_a.hn, &twice_a.key); /* a is behind b: a loop without the check */
	lookup_absent(ht);
}
TEST(add_same_node_twice_inside_chain)
{
	EXPECT_MISUSE_CHILD(add_twice_inside, MC_DEBUG_HANG, "grace_hash_add",
			    "already in the table");
}

static void add_replace_itself(void)
{
	struct grace_hash *ht = one_chain();
	REQUIRE(grace_hash_add(ht, &twice_a.hn, &twice_a.key) == 0);
	REQUIRE(grace_hash_add(ht, &twice_b.hn, &twice_b.key) == 0);
	grace_hash_add_replace(ht, &twice_a.hn, &twice_a.key); /* would retire a, still linked */
	lookup_absent(ht);
}
TEST(add_replace_of_itself_names_grace_hash_add_replace)
{
	EXPECT_MISUSE_CHILD(add_replace_itself, MC_FATAL, "grace_hash_add_replace",
			    "already in the table");
}

static void legal_forms(void)
{
	struct grace_hash *ht = table(NULL, 64);
	rcu_read_lock();
	struct grace_hash_node *n = grace_hash_lookup(ht, &(uint64_t){ 1 });
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	o->key = 1;
	if (grace_hash_replace(ht, n, &o->hn) != 0 || grace_hash_del(ht, first(ht)) != 0)
		abort();
	rcu_read_unlock();
	if (grace_hash_resize(ht, 2048) != 0 || grace_hash_resize(ht, 8) != 0)
		abort();
	grace_hash_destroy(ht);
	fprintf(stderr, "fine\n");
}
TEST(legal_forms_are_silent)
{
	CHECK(mc_child_is_fine(legal_forms));
}

GT_MAIN()
