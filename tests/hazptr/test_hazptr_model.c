/* SPDX-License-Identifier: MIT */
/*
 * Hazard pointers against a reference model of include/grace/hazptr.h: random sequences of
 * hazptr_alloc(), hazptr_free(), hazptr_protect(), hazptr_try_protect(), hazptr_set(),
 * hazptr_reset(), the retires (with a function of the object's own, and without: the domain's
 * free hook) and hazptr_barrier(), on a domain of the test's own. The model knows which objects
 * each hazard pointer protects and which are retired; the functions that free record each
 * free. What must hold: an object is freed only once it was retired and while no hazard
 * pointer protects it (checked at the free, against the model); each object is freed once;
 * after hazptr_barrier() (no hazard pointer of the caller protecting anything, as the header
 * requires) every object retired before it has been freed; protect and try_protect return what
 * the source held. In the second case another thread holds the protections, so that retires
 * and barriers scan a hazard pointer that is not their own thread's (the header's "by any
 * domain"): the main thread asks it, through a handshake, to protect or let go.
 * GRACE_MODEL_SEEDS and GRACE_MODEL_OPS set the work.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>
#include <grace/hazptr.h>
#include "gtest_lite.h"
#include "model.h"

/* Enough objects that a thread's retired objects pass its scan threshold (at least 32 entries,
 * up to GRACE_HAZPTR_BATCH) while protections are held, not only in barriers. */
enum { OBJS = 1536, HPS = 6 };
enum { O_LIVE, O_RETIRED, O_FREED }; /* the model's states of an object */

struct hobj {
	unsigned magic;
	int id;
};

static struct hobj *objs[OBJS]; /* the current incarnation in each slot */
static int ostate[OBJS];
static void *src[OBJS];              /* where protect() loads from: the object, or NULL */
static struct grace_hazptr *hp[HPS]; /* NULL: not allocated */
static int prot[HPS];                /* the object each protects, -1 none */
static struct grace_hazptr_domain *dom;
static struct gt_model_rng rng;
static struct gt_model_where w;
#define MCHECK(cond, ...) GT_MODEL_CHECK(&w, cond, __VA_ARGS__)

static unsigned below(unsigned n)
{
	return gt_model_below(&rng, n);
}

static bool protected_now(int id)
{
	for (int i = 0; i < HPS; i++)
		if (prot[i] == id)
			return true;
	return false;
}

/* Both ways an object is freed: its own function, or the domain's hook. */
static void freed_obj(void *p)
{
	struct hobj *o = (struct hobj *)p;
	int id = o->id;
	MCHECK(o->magic == 0x0b1ec7u, "a free of an object already freed (id %d)", id);
	MCHECK(ostate[id] == O_RETIRED, "object %d freed in state %d, not retired", id, ostate[id]);
	MCHECK(!protected_now(id), "object %d freed while a hazard pointer protects it", id);
	ostate[id] = O_FREED;
	o->magic = 0xdeadu;
	free(o);
}

static void new_obj(int id)
{
	struct hobj *o = (struct hobj *)malloc(sizeof(*o));
	REQUIRE(o);
	o->magic = 0x0b1ec7u;
	o->id = id;
	objs[id] = o;
	ostate[id] = O_LIVE;
	src[id] = o;
}

/* The protections, by the calling thread or (second case) by the helper thread. */
static void do_protect(int i, int id, int how)
{
	if (!hp[i])
		hp[i] = hazptr_alloc();
	REQUIRE(hp[i]);
	void *p;
	if (how == 0) {
		p = grace_hazptr_protect(hp[i], &src[id]);
	} else if (how == 1) {
		p = src[id];
		if (!grace_hazptr_try_protect(hp[i], &p, &src[id]))
			p = NULL; /* the source changed: not when nobody else writes it */
	} else {
		p = src[id];
		hazptr_set(hp[i], p); /* the source keeps it: the object is not retired */
	}
	MCHECK(p == src[id], "protect of slot %d returned %p, the source holds %p", id, p, src[id]);
}

static void do_unprotect(int i, int how)
{
	if (!hp[i])
		return;
	if (how == 0) {
		hazptr_reset(hp[i]);
	} else {
		hazptr_free(hp[i]);
		hp[i] = NULL;
	}
}

/* ---- the helper thread of the second case: it runs what the main thread asks ---- */

struct ask {
	int op, i, id, how; /* op: 0 none, 1 protect, 2 unprotect, 3 quit */
	unsigned seq, done;
};
static struct ask ask;
static bool remote;

static void *helper(void *arg)
{
	(void)arg;
	unsigned seen = 0;
	for (;;) {
		unsigned s;
		/* Acquire: pairs with run()'s release of seq; the request's fields are read after. */
		while ((s = __atomic_load_n(&ask.seq, __ATOMIC_ACQUIRE)) == seen)
			sched_yield();
		seen = s;
		if (ask.op == 1)
			do_protect(ask.i, ask.id, ask.how);
		else if (ask.op == 2)
			do_unprotect(ask.i, ask.how);
		int quit = ask.op == 3;
		/* Release: the protection (or its end) comes before run()'s acquire of done. */
		__atomic_store_n(&ask.done, s, __ATOMIC_RELEASE);
		if (quit)
			break;
	}
	return NULL;
}

static void run(int op, int i, int id, int how)
{
	if (!remote) {
		if (op == 1)
			do_protect(i, id, how);
		else if (op == 2)
			do_unprotect(i, how);
		return;
	}
	ask.op = op;
	ask.i = i;
	ask.id = id;
	ask.how = how;
	unsigned s = ask.seq + 1;
	/* Release: the request's fields and the sources' values before the helper's acquire. */
	__atomic_store_n(&ask.seq, s, __ATOMIC_RELEASE);
	/* Acquire: pairs with the helper's release of done: its protection is published. */
	while (__atomic_load_n(&ask.done, __ATOMIC_ACQUIRE) != s)
		sched_yield();
}

static void step(void)
{
	unsigned what = below(100);
	int id = (int)below(OBJS), i = (int)below(HPS);

	if (what < 30) {
		/* Protect a live object (set only with a live, unretired one: the header's rule). */
		if (ostate[id] != O_LIVE)
			return;
		run(1, i, id, (int)below(3));
		prot[i] = id;
	} else if (what < 50) {
		run(2, i, 0, below(4) == 0);
		prot[i] = -1;
	} else if (what < 80) {
		/* Unlink and retire a live object, a protected one a quarter of the time; a new one
		 * takes its slot once it is freed. */
		if (below(4) == 0 && prot[i] >= 0)
			id = prot[i];
		if (ostate[id] != O_LIVE)
			return;
		src[id] = NULL;
		ostate[id] = O_RETIRED;
		if (below(2))
			hazptr_retire_fn(dom, freed_obj, objs[id]);
		else
			hazptr_retire(dom, objs[id]); /* the domain's hook: freed_obj */
	} else if (what < 95) {
		/* A slot whose object was freed gets a new one. */
		if (ostate[id] == O_FREED)
			new_obj(id);
	} else {
		/* The barrier, with no protection held (the header: not while the caller protects
		 * an object of the domain); every object retired before it is freed after it. */
		for (int k = 0; k < HPS; k++) {
			run(2, k, 0, 0);
			prot[k] = -1;
		}
		int retired[OBJS], n = 0;
		for (int k = 0; k < OBJS; k++)
			if (ostate[k] == O_RETIRED)
				retired[n++] = k;
		hazptr_barrier(dom);
		for (int k = 0; k < n; k++)
			MCHECK(ostate[retired[k]] == O_FREED,
			       "object %d retired before the barrier was not freed by it",
			       retired[k]);
	}
}

static void run_seed(unsigned long long seed, unsigned long nops)
{
	w.seed = seed;
	gt_model_seed(&rng, seed, 19);
	dom = grace_hazptr_domain_create();
	REQUIRE(dom);
	REQUIRE(grace_hazptr_set_free_hook(dom, freed_obj) == 0);
	for (int k = 0; k < OBJS; k++)
		new_obj(k);
	for (int k = 0; k < HPS; k++)
		prot[k] = -1;
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++)
		step();
	for (int k = 0; k < HPS; k++) {
		run(2, k, 0, 1); /* free every hazard pointer */
		prot[k] = -1;
	}
	/* Destroy: every object retired into the domain is freed first. */
	grace_hazptr_domain_destroy(dom);
	for (int k = 0; k < OBJS; k++) {
		MCHECK(ostate[k] != O_RETIRED, "object %d retired but not freed by destroy", k);
		if (ostate[k] == O_LIVE)
			free(objs[k]);
	}
}

TEST(calls_match_the_model)
{
	remote = false;
	gt_model_run_seeds(run_seed, 24, 4000, 1, 0);
}

TEST(protections_of_another_thread_match_the_model)
{
	pthread_t th;
	remote = true;
	memset(&ask, 0, sizeof(ask));
	REQUIRE(pthread_create(&th, NULL, helper, NULL) == 0);
	gt_model_run_seeds(run_seed, 24, 1500, 4, 1000000);
	run(3, 0, 0, 0);
	pthread_join(th, NULL);
}

GT_MAIN()
