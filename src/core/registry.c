/* SPDX-License-Identifier: MIT */
/*
 * Reader registry (see registry.h). The wait is core/wait.c's; this file supplies its hooks:
 * done (no registered reader holds the grace period), arm (set WAITING in each holder's own
 * cache line), recheck (after barrier W: done, or is every holder flagged?), disarm (nothing:
 * each reader clears its own flag when it wakes the updater, and a flag left on a reader that
 * finished without seeing it costs that reader one wake-up call later) and stall (report the
 * holders once per grace period).
 */
#include "core/registry.h"

#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/wait.h"

void grace__registry_init(struct grace__registry *reg, bool (*holds)(uint64_t, uint64_t),
			  struct grace__reader *(*self)(void), const char *flavor)
{
	grace__lock_init(&reg->lock);
	reg->head = NULL;
	reg->futex = GRACE__WAIT_AWAKE;
	reg->holds = holds;
	reg->self = self;
	reg->flavor = flavor;
	reg->nthreads = 0;
}

void grace__registry_add(struct grace__registry *reg, struct grace__reader *r)
{
	grace__lock(&reg->lock);
	r->prev = NULL;
	r->next = reg->head;
	if (reg->head)
		reg->head->prev = r;
	reg->head = r;
	grace_store_relaxed(&reg->nthreads, reg->nthreads + 1);
	/* Full fence: the count before any read-side access of the new reader. Pairs with the
	 * fence after seq_start (core/gp.c) that precedes grace__registry_alone()'s load: with
	 * full fences on both sides (store-buffering), either the driver sees the new thread or
	 * the thread's first section sees the removal (see memb_wait_readers()). */
	grace_smp_mb();
	grace__unlock(&reg->lock);
}

void grace__registry_del(struct grace__registry *reg, struct grace__reader *r)
{
	grace__lock(&reg->lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		reg->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
	/* Release: the departing thread's last sections happen before a driver that reads the
	 * lower count with acquire and skips the wait (grace__registry_alone), so what it frees
	 * after that is no longer read. The mutex alone would not order the section's loads
	 * before this store on a weakly ordered CPU. */
	grace_store_release(&reg->nthreads, reg->nthreads - 1);
	grace__unlock(&reg->lock);
}

bool grace__registry_alone(struct grace__registry *reg, bool self_alone)
{
	/* Acquire: pairs with the release in grace__registry_del(). */
	unsigned long n = grace_load_acquire(&reg->nthreads);
	return n == 0 || (n == 1 && self_alone);
}

/* ---- the wait's hooks ---- */

struct reg_wait {
	struct grace__registry *reg;
	uint64_t cur;
	unsigned long cookie;
};

/* Count readers holding cur, and in *unflagged those without the WAITING flag. Acquire loads:
 * pair with the readers' release stores of a quiescent ctr, so their sections happen before
 * the updater goes on. */
static unsigned long count_holders(struct grace__registry *reg, uint64_t cur,
				   unsigned long *unflagged)
{
	unsigned long n = 0, u = 0;

	grace__lock_assert_held(&reg->lock);
	for (struct grace__reader *r = reg->head; r; r = r->next) {
		if (reg->holds(grace_load_acquire(&r->ctr), cur)) {
			n++;
			if (!(grace_load_relaxed(&r->waiter) & GRACE__W_WAITING))
				u++;
		}
	}
	*unflagged = u;
	return n;
}

static bool reg_done(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	unsigned long u, n;

	grace__lock(&w->reg->lock);
	n = count_holders(w->reg, w->cur, &u);
	grace__unlock(&w->reg->lock);
	return n == 0;
}

static void reg_arm(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	struct grace__registry *reg = w->reg;

	grace__lock(&reg->lock);
	for (struct grace__reader *r = reg->head; r; r = r->next)
		if (reg->holds(grace_load_relaxed(&r->ctr), w->cur))
			/* Release: the futex word's SLEEPING before the flag (core/wait.h). */
			grace_fetch_or(&r->waiter, GRACE__W_WAITING, __ATOMIC_RELEASE);
	grace__unlock(&reg->lock);
}

static enum grace__recheck reg_recheck(void *ctx)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	unsigned long u, n;

	/*
	 * A reader can become a holder after the flag loop (a section whose snapshot was loaded
	 * before the grace period's new counter became visible, its lock store delayed or
	 * preempted until now; a QSBR thread coming online): sleeping on an unflagged holder is
	 * a lost wake-up (found by the Promela model, tests/model/memb.pml), so such a holder
	 * sends the wait back to arm(). Bounded: a reader can start at most one such section per
	 * grace period.
	 */
	grace__lock(&w->reg->lock);
	n = count_holders(w->reg, w->cur, &u);
	grace__unlock(&w->reg->lock);
	if (n == 0)
		return GRACE__RECHECK_DONE;
	return u ? GRACE__RECHECK_AGAIN : GRACE__RECHECK_SLEEP;
}

static void reg_disarm(void *ctx)
{
	(void)ctx;
}

static void reg_stall(void *ctx, uint64_t waited_ns)
{
	struct reg_wait *w = (struct reg_wait *)ctx;
	struct grace__registry *reg = w->reg;
	int tids[64];
	unsigned int n = 0;

	/* Collect under the lock, report after it: a stall handler may register threads. */
	grace__lock(&reg->lock);
	for (struct grace__reader *r = reg->head; r && n < 64; r = r->next) {
		if (!reg->holds(grace_load_acquire(&r->ctr), w->cur) || r->stall_seq == w->cookie)
			continue;
		r->stall_seq = w->cookie; /* once per stall */
		tids[n++] = r->tid;
	}
	grace__unlock(&reg->lock);
	for (unsigned int i = 0; i < n; i++)
		grace__report_stall(reg->flavor, tids[i], waited_ns, w->cookie);
}

static const struct grace__wait_ops reg_wait_ops = {
	reg_done, reg_arm, reg_recheck, reg_disarm, reg_stall,
};

void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  uint64_t since_ns, bool expedited)
{
	struct reg_wait w = { reg, cur, cookie };

	grace__wait_for_readers(&reg_wait_ops, &w, &reg->futex, since_ns, expedited);
}

void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r)
{
	grace_fetch_and(&r->waiter, ~GRACE__W_WAITING, __ATOMIC_RELAXED);
	grace__wait_wake(&reg->futex);
}

/* ---- fork ---- */

void grace__registry_atfork_prepare(struct grace__registry *reg)
{
	grace__lock(&reg->lock);
}

void grace__registry_atfork_parent(struct grace__registry *reg)
{
	grace__unlock(&reg->lock);
}

void grace__registry_atfork_child(struct grace__registry *reg)
{
	struct grace__reader *self = reg->self();

	/* The lock was taken in prepare by this thread (the only one the child has): release it
	 * (which also clears the owner the parent's thread id was recorded as in debug builds),
	 * then keep only this thread's reader. */
	grace__unlock(&reg->lock);
	reg->head = NULL;
	reg->nthreads = 0;
	reg->futex = GRACE__WAIT_AWAKE;
	if (self->flags & GRACE__F_REGISTERED) {
		self->next = self->prev = NULL;
		self->waiter &= ~GRACE__W_WAITING;
		reg->head = self;
		reg->nthreads = 1;
	}
}
