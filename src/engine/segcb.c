/* SPDX-License-Identifier: MIT */
/* The segmented callback list (see segcb.h for its rules). */
#include "engine/segcb.h"

#include <string.h>

void grace__segcb_enqueue(struct grace__segcb *s, struct rcu_head *l, uint64_t c, uint64_t now)
{
	struct grace__seg *g;

	if (s->nseg && (s->segs[s->nseg - 1].cookie == c || s->nseg == GRACE__SEGCB_NSEG)) {
		g = &s->segs[s->nseg - 1]; /* same grace period (or full: wait for the later one) */
		g->cookie = c;
	} else {
		g = &s->segs[s->nseg++];
		g->nchain = 0;
		g->cookie = c;
		g->t_ns = now;
	}
	if (g->nchain < GRACE__SEGCB_NCHAIN) {
		g->chain[g->nchain++] = l;
		return;
	}
	/* Rare (many harvests for one grace period): append behind the last chain. */
	struct rcu_head *t = g->chain[GRACE__SEGCB_NCHAIN - 1];
	while (t->next)
		t = t->next;
	t->next = l;
}

unsigned int grace__segcb_take_ready(struct grace__segcb *s, struct grace__gp *gp,
				     struct rcu_head **ready)
{
	unsigned int nready = 0, k = 0;

	/* Acquire (grace__gp_done): the readers' sections happen before the callbacks run. */
	while (k < s->nseg && grace__gp_done(gp, s->segs[k].cookie)) {
		for (unsigned int c = 0; c < s->segs[k].nchain; c++)
			ready[nready++] = s->segs[k].chain[c];
		k++;
	}
	if (k) {
		memmove(s->segs, s->segs + k, (s->nseg - k) * sizeof(s->segs[0]));
		s->nseg -= k;
	}
	return nready;
}
