/* SPDX-License-Identifier: MIT */
/*
 * Reader registry and wait (see registry.h).
 *
 * Lost wake-up argument. The updater stores waiter = WAITING into each reader that holds the
 * grace period, then executes barrier W (membarrier, or a fence in the fallback), then re-reads
 * the readers' ctr before sleeping. The reader stores its quiescent ctr, then (compiler barrier
 * only) loads waiter. This is the store-buffering pattern: membarrier W makes every running
 * reader execute a full barrier somewhere in its instruction stream. If that point precedes the
 * reader's ctr store, the reader's later load of waiter sees WAITING and it wakes the updater;
 * if it follows the store, the store is visible to the updater's re-read and the updater does
 * not sleep. Readers not running are ordered by the context switch. In the fallback (no
 * membarrier) the readers execute a fence between the store and the load themselves.
 * The wake itself is an exchange of the registry futex word: the updater sleeps with
 * FUTEX_WAIT(futex, SLEEPING), which returns at once if a reader already cleared it.
 */
#include "core/registry.h"

#include <limits.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/sys.h"

bool grace__use_membarrier;

void grace__heavy_barrier(void)
{
	if (grace__use_membarrier)
		grace__sys_membarrier();
	else
		grace_smp_mb();
}

void grace__registry_init(struct grace__registry *reg, bool (*holds)(uint64_t, uint64_t),
			  const char *flavor)
{
	pthread_mutex_init(&reg->lock, NULL);
	reg->head = NULL;
	reg->futex = 0;
	reg->holds = holds;
	reg->flavor = flavor;
	reg->nthreads = 0;
}

void grace__registry_add(struct grace__registry *reg, struct grace__reader *r)
{
	pthread_mutex_lock(&reg->lock);
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
	pthread_mutex_unlock(&reg->lock);
}

void grace__registry_del(struct grace__registry *reg, struct grace__reader *r)
{
	pthread_mutex_lock(&reg->lock);
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
	pthread_mutex_unlock(&reg->lock);
}

bool grace__registry_alone(struct grace__registry *reg, bool self_alone)
{
	/* Acquire: pairs with the release in grace__registry_del(). */
	unsigned long n = grace_load_acquire(&reg->nthreads);
	return n == 0 || (n == 1 && self_alone);
}

/* Count readers holding cur. Acquire loads: pair with the readers' release stores of a
 * quiescent ctr, so their sections happen before the updater goes on. Lock held. */
static unsigned long count_holders(struct grace__registry *reg, uint64_t cur)
{
	unsigned long n = 0;
	for (struct grace__reader *r = reg->head; r; r = r->next)
		if (reg->holds(grace_load_acquire(&r->ctr), cur))
			n++;
	return n;
}

/* count_holders(), and in *unflagged the holders whose waiter flag is not set. Lock held. */
static unsigned long count_holders_unflagged(struct grace__registry *reg, uint64_t cur,
					     unsigned long *unflagged)
{
	unsigned long n = 0, u = 0;
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

/* Collect the readers that hold cur and were not reported yet for this grace period (lock
 * held); the reports themselves are made after the lock is dropped, so a stall handler may
 * register threads or read. Returns the number collected (at most max). */
static unsigned int collect_stalls(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
				   int *tids, unsigned int max)
{
	unsigned int n = 0;
	for (struct grace__reader *r = reg->head; r && n < max; r = r->next) {
		if (!reg->holds(grace_load_acquire(&r->ctr), cur) || r->stall_seq == cookie)
			continue;
		r->stall_seq = cookie; /* once per stall */
		tids[n++] = r->tid;
	}
	return n;
}

void grace__registry_wait(struct grace__registry *reg, uint64_t cur, unsigned long cookie,
			  bool expedited)
{
	/* Spin budget before sleeping: long enough to catch a short section running on another
	 * CPU, short enough not to burn a CPU a preempted reader needs. */
	const uint64_t spin_ns = expedited ? 200000 : 20000;
	uint64_t t0 = 0, now, stall_ns = grace__stall_timeout_ns();
	bool reported = false;

	pthread_mutex_lock(&reg->lock);
	if (count_holders(reg, cur) == 0)
		goto out;
	t0 = grace__now_ns();
	for (unsigned int spins = 1;; spins = spins < 64 ? spins * 2 : 64) {
		for (unsigned int i = 0; i < spins; i++)
			grace_cpu_relax();
		if (count_holders(reg, cur) == 0)
			goto out;
		now = grace__now_ns();
		if (now - t0 < spin_ns)
			continue;

		/* Sleep. Announce it in the futex word and in each holder's own cache line. A
		 * reader can become a holder after the flag loop (a section whose snapshot was
		 * loaded before the grace period's new counter became visible, its lock store
		 * delayed or preempted until now; a QSBR thread coming online): the re-read after
		 * barrier W also checks that every holder carries the flag, and flags the new ones
		 * and runs W again if not. Sleeping on an unflagged holder is a lost wake-up (found
		 * by the Promela model, tests/model/memb.pml). Bounded: a reader can start at most
		 * one such section per grace period. */
		unsigned long holders, unflagged;
		grace_store_relaxed(&reg->futex, GRACE__REG_SLEEPING);
		do {
			for (struct grace__reader *r = reg->head; r; r = r->next)
				if (reg->holds(grace_load_relaxed(&r->ctr), cur))
					grace_fetch_or(&r->waiter, GRACE__W_WAITING,
						       __ATOMIC_RELAXED);
			/* Barrier W: the waiter stores above before the re-read of ctr below. Pairs
			 * with the compiler barrier (fence in the fallback) between a reader's
			 * quiescent store and its load of waiter; see the argument at the top of
			 * this file. */
			grace__heavy_barrier();
			holders = count_holders_unflagged(reg, cur, &unflagged);
		} while (holders && unflagged);
		if (holders == 0) {
			grace_store_relaxed(&reg->futex, 0u);
			goto out;
		}
		/* Re-read: a change of the stall timeout applies to waits already under way. */
		stall_ns = grace__stall_timeout_ns();
		int64_t timeout = -1;
		if (stall_ns && !reported) {
			uint64_t waited = now - t0;
			timeout = waited >= stall_ns ? 0 : (int64_t)(stall_ns - waited);
		}
		pthread_mutex_unlock(&reg->lock);
		if (timeout != 0)
			grace__futex_wait(&reg->futex, GRACE__REG_SLEEPING, timeout);
		now = grace__now_ns();
		if (stall_ns && !reported && now - t0 >= stall_ns) {
			int tids[64];
			pthread_mutex_lock(&reg->lock);
			unsigned int n = collect_stalls(reg, cur, cookie, tids, 64);
			pthread_mutex_unlock(&reg->lock);
			for (unsigned int i = 0; i < n; i++)
				grace__report_stall(reg->flavor, tids[i], now - t0, cookie);
			reported = true;
		}
		pthread_mutex_lock(&reg->lock);
		if (count_holders(reg, cur) == 0)
			goto out;
	}
out:
	pthread_mutex_unlock(&reg->lock);
}

void grace__registry_wake(struct grace__registry *reg, struct grace__reader *r)
{
	grace_fetch_and(&r->waiter, ~GRACE__W_WAITING, __ATOMIC_RELAXED);
	if (grace_xchg(&reg->futex, 0u, __ATOMIC_SEQ_CST) == GRACE__REG_SLEEPING)
		grace__futex_wake(&reg->futex, INT_MAX);
}

void grace__registry_after_fork(struct grace__registry *reg, struct grace__reader *self)
{
	/* The lock was taken in the prepare handler and released by the caller. */
	reg->head = NULL;
	reg->nthreads = 0;
	reg->futex = 0;
	if (self) {
		self->next = self->prev = NULL;
		self->waiter &= ~GRACE__W_WAITING;
		reg->head = self;
		reg->nthreads = 1;
	}
}
