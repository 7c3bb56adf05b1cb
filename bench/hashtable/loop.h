/* SPDX-License-Identifier: MIT */
/*
 * The measured loop, instantiated once per design (include it at the end of the design's
 * translation unit). The design defines, before including it:
 *
 *   HB_SYM                 identifier suffix: the design object is hb_design_<HB_SYM>
 *   HB_NAME, HB_LABEL      CSV id and human label (strings)
 *   HB_KIND                "ideal", "lock", "rcu" or "peer"
 *   HB_SINGLE              1 for the ideal design (one thread, scaled), else 0
 *   HB_UNAVAILABLE         a function returning NULL or why the design cannot run, or NULL
 *   struct hb_bucket       a bucket; its chain sentinel is the member `head`
 *   D_EL_SIZE              size of the design's element type (struct hb_el first)
 *   d_table_init(b, n, run), d_table_fini(b, n)      per-bucket lock set-up and tear-down
 *   d_thread_start(th), d_thread_stop(th)            thread registration and the like
 *   d_lookup(b, mask, th, key, &sum) -> bool         one search (inline)
 *   d_update(b, mask, th, key)                       one delete + reinsert (inline)
 *   d_batch_end(th)                                  after every HB_BATCH operations (inline)
 *   d_settle(run)                                    after the threads are joined: wait for
 *                                                    deferred frees (rcu_barrier and such)
 *
 * Everything here is static to the design's translation unit, so d_lookup and d_update inline
 * into the loop and each design gets its own machine code.
 */
#ifndef HB_SYM
#error "define HB_SYM and the design hooks before including loop.h"
#endif

#ifndef HB_HIDDEN
#define HB_HIDDEN 0
#endif

#define HB_CAT_(a, b) a##b
#define HB_CAT(a, b) HB_CAT_(a, b)
#define HB_STR_(a) #a
#define HB_STR(a) HB_STR_(a)

static struct hb_bucket *HB_CAT(hb_tab_, HB_SYM);

static void *HB_CAT(hb_thread_, HB_SYM)(void *arg)
{
	struct hb_thread *th = (struct hb_thread *)arg;
	struct hb_run *run = th->run;
	/* Locals, so the compiler keeps them in registers across the designs' barriers. */
	struct hb_bucket *const b = HB_CAT(hb_tab_, HB_SYM);
	const unsigned long mask = run->mask;
	const uint64_t thresh = run->upd_thresh;
	uint64_t rng = th->seed;
	unsigned long lookups = 0, updates = 0, misses = 0, sum = 0;

	hb_wait_go(th);
	d_thread_start(th);
	while (!hb_stopped(run)) {
		for (int i = 0; i < HB_BATCH; i++) {
			uint64_t r = hb_rng(&rng);
			unsigned long key = (unsigned long)r & mask;

			if ((r >> 32) < thresh) {
				d_update(b, mask, th, key);
				updates++;
			} else {
				lookups++;
				if (!d_lookup(b, mask, th, key, &sum))
					misses++;
			}
		}
		d_batch_end(th);
	}
	d_thread_stop(th);
	th->lookups = lookups;
	th->updates = updates;
	th->misses = misses;
	th->sum = sum;
	return NULL;
}

static void HB_CAT(hb_run_, HB_SYM)(struct hb_run *run)
{
	unsigned long n = run->nbuckets;
	struct hb_bucket *b = (struct hb_bucket *)aligned_alloc(HB_LINE,
								(n * sizeof(*b) + HB_LINE - 1) /
									HB_LINE * HB_LINE);
	double t;

	if (!b)
		hb_fatal("out of memory for %lu buckets", n);
	for (unsigned long i = 0; i < n; i++)
		hb_chain_init(&b[i].head);
	d_table_init(b, n, run);
	for (unsigned long k = 0; k < n; k++)
		hb_chain_add(&hb_el_new(D_EL_SIZE, k)->node, &b[k & run->mask].head);
	HB_CAT(hb_tab_, HB_SYM) = b;

	hb_run_threads(run, HB_CAT(hb_thread_, HB_SYM));

	t = hb_now();
	d_settle(run);
	run->settle_seconds = hb_now() - t;

	/* The table after the run: one live element per bucket, with its own key. Catches an
	 * update that lost or duplicated an element. */
	for (unsigned long i = 0; i < n; i++) {
		struct hb_node *h = &b[i].head, *p = h->next;
		unsigned long cnt = 0;

		for (; p != h; p = p->next, cnt++) {
			struct hb_el *e = hb_el_of(p);

			if (e->magic != HB_MAGIC_LIVE || e->key != i || e->data != HB_DATA(i) ||
			    p->next->prev != p)
				hb_fatal("%s: bucket %lu holds a corrupt element (key %lu)",
					 HB_NAME, i, e->key);
		}
		if (cnt != 1)
			hb_fatal("%s: bucket %lu holds %lu elements after the run, not 1", HB_NAME,
				 i, cnt);
	}
	for (unsigned long i = 0; i < n; i++) {
		struct hb_node *h = &b[i].head, *p = h->next;

		while (p != h) {
			struct hb_node *next = p->next;

			free(p);
			p = next;
		}
	}
	d_table_fini(b, n);
	HB_CAT(hb_tab_, HB_SYM) = NULL;
	free(b);
	hb_quarantine_drain();
}

const struct hb_design HB_CAT(hb_design_, HB_SYM) = {
	.name = HB_NAME,
	.label = HB_LABEL,
	.kind = HB_KIND,
	.loop_symbol = HB_STR(HB_CAT(hb_thread_, HB_SYM)),
	.single_thread = HB_SINGLE,
	.hidden = HB_HIDDEN,
	.unavailable = HB_UNAVAILABLE,
	.run = HB_CAT(hb_run_, HB_SYM),
};
