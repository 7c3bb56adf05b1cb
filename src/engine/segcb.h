/* SPDX-License-Identifier: MIT */
/*
 * The segmented callback list of one queue (Linux's rcu_segcblist, in grace's shape): the
 * callbacks that wait, as chains, in segments ordered by the cookie of the grace period they
 * need. A unit of its own, with no threads and no locks (the queue's lock is the caller's), so
 * that tests drive it alone (tests/unit/test_segcb.c).
 *
 * Rules (what callback.c's order and memory bound rest on):
 *  - A chain goes behind every chain queued before it: into the last segment if that one waits
 *    for the same cookie, or if every segment is in use (then the last segment waits for the
 *    later of the two cookies: waiting longer is always safe); else into a new segment.
 *  - Cookies of successive segments never decrease, because the caller's cookies never do
 *    (grace__gp_snap() is monotonic): so the first segment is always the first to be ready.
 *  - grace__segcb_take_ready() takes, oldest first, the chains of every segment whose cookie
 *    has completed, in the order they were queued: a queue's callbacks run in order.
 *  - A segment holds GRACE__SEGCB_NCHAIN chains; more (many harvests for one grace period)
 *    are appended behind its last chain, in order.
 */
#ifndef GRACE_SRC_ENGINE_SEGCB_H
#define GRACE_SRC_ENGINE_SEGCB_H

#include <stdbool.h>
#include <stdint.h>
#include <grace/pointer.h>

#include "core/gp.h"

#define GRACE__SEGCB_NSEG 8
#define GRACE__SEGCB_NCHAIN 16
/* The most chains one grace__segcb_take_ready() can return. */
#define GRACE__SEGCB_MAX_READY (GRACE__SEGCB_NSEG * GRACE__SEGCB_NCHAIN)

struct grace__seg {
	struct rcu_head *chain[GRACE__SEGCB_NCHAIN];
	unsigned int nchain;
	uint64_t cookie;
	uint64_t t_ns; /* when its oldest chain was queued */
};

struct grace__segcb {
	struct grace__seg segs[GRACE__SEGCB_NSEG];
	unsigned int nseg;
};

/* Queue chain l (non-empty, NULL-terminated, in the order it must run) behind everything,
 * waiting for cookie c; now: the time, for the oldest-waiter report. */
void grace__segcb_enqueue(struct grace__segcb *s, struct rcu_head *l, uint64_t c, uint64_t now);
/* Take into ready[] (room for GRACE__SEGCB_MAX_READY) the chains of every segment whose cookie
 * gp has completed (grace__gp_done(): acquire), oldest first. Returns how many. */
unsigned int grace__segcb_take_ready(struct grace__segcb *s, struct grace__gp *gp,
				     struct rcu_head **ready);

static inline bool grace__segcb_empty(const struct grace__segcb *s)
{
	return s->nseg == 0;
}
/* The cookie and the time of the first segment (the next to be ready), and the cookie of the
 * last (every callback queued is complete once it is). Not empty. */
static inline uint64_t grace__segcb_first_cookie(const struct grace__segcb *s)
{
	return s->segs[0].cookie;
}
static inline uint64_t grace__segcb_first_time(const struct grace__segcb *s)
{
	return s->segs[0].t_ns;
}
static inline uint64_t grace__segcb_last_cookie(const struct grace__segcb *s)
{
	return s->segs[s->nseg - 1].cookie;
}

#endif
