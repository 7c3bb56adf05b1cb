/* SPDX-License-Identifier: MIT */
/*
 * Promela model of the callback engine's barrier markers and in-flight batch across fork()
 * (src/engine/callback.c: barrier_timed(), queue_collect(), invoke(), worker_pause(),
 * fork_pause_workers(), grace__cb_atfork_child()). Checked by tests/model/check.sh.
 *
 * One queue and its worker. call_* pushes callbacks on the queue's list; the worker harvests
 * the list, takes the barrier requests (appending their markers behind what it harvested),
 * takes everything waiting as its batch (grace periods are abstracted away: what is harvested
 * becomes ready; they do not change the order, which is what a barrier relies on) and invokes
 * it in order through a cursor. A barrier asks for a marker and waits until its marker has run.
 * The process forks at any moment: the forking thread (init) goes on as the child, every other
 * thread of the parent stops where it stands (`unless forked`), and the child's memory is the
 * parent's at that instant. The child runs its fork handler, restarts the worker, queues a
 * callback and runs a barrier.
 *
 * fork's prepare handler pauses the worker between two callbacks (ATTN_PAUSE / busy: the
 * store-buffering handshake, sequentially consistent here as it is in the code), or gives up
 * after 100 ms: modelled as "while a callback runs" (in_cb), since only a callback that blocks
 * can keep the worker from its next pause point for that long. (The code also gives up if the
 * worker is preempted for 100 ms in the few instructions between its cursor update and the
 * call; the model treats that as the callback having started, which is what the child assumes.)
 *
 * Properties (asserted when a barrier returns): every callback whose call_* returned before the
 * barrier began has been claimed by exactly one invocation (the cursor passed it once, in the
 * parent or in the child, never twice, never zero times) and has started; a parent's barrier
 * that gave up (the exit drain's timed barrier) and then a new barrier: the same.
 *
 * Variants (cpp macros, see check.sh):
 *  (none)         markers owned by their barrier, the batch in the worker's shared structure
 *                 with a cursor, fork pauses the worker: must hold;
 *  SHARED_MARKER  one marker per queue and one done counter per domain, reset by each barrier
 *                 (the code before issue 12, fault 1): must fail (a stale marker is counted);
 *  LOCAL_BATCH    the batch on the worker's stack (fault 2): must fail (the child never runs
 *                 the batch the parent was invoking);
 *  NO_PAUSE       fork does not wait for the worker: must fail (the cursor says a callback has
 *                 started that never did).
 */

#ifndef NCB
#define NCB 3 /* callbacks 1..NCB: 1, 2 queued by the parent, NCB by the child */
#endif
#define MK 100   /* barrier b's marker is MK + b; SHARED_MARKER: MK for every barrier */
#define QCAP 10

chan list = [QCAP] of { byte }; /* pushed, not yet harvested */
chan pend = [QCAP] of { byte }; /* harvested, waiting (the segments) */
chan breq = [4] of { byte };    /* barrier requests: markers to append */

/* the batch being invoked (struct worker: inv, inv_n, the cursor) */
byte inv[QCAP];
byte inv_n, cursor;
bit busy, pause, in_cb, forked;
byte claimed[NCB + 1], started[NCB + 1];
bit pushed[NCB + 1];  /* ghost: call_* returned */
byte bdone[4];         /* markers of barrier b invoked */
byte done_shared;     /* SHARED_MARKER: the domain's one counter */
byte req, seen;       /* SHARED_MARKER: barrier requests and the worker's last seen */

inline push(k) {
	atomic {
		list ! k;
		pushed[k] = 1
	}
}

#ifdef LOCAL_BATCH
#define BATCH lb
#define BATCH_N lbn
#define LOCALS byte lb[QCAP]; byte lbn
#else
#define BATCH inv
#define BATCH_N inv_n
#define LOCALS skip
#endif

/* queue_collect() + batch_take(), under the queue lock (one step: fork holds the lock) */
inline collect() {
	atomic {
		do
		:: nempty(list) -> list ? x; pend ! x
		:: empty(list) -> break
		od;
#ifdef SHARED_MARKER
		if
		:: req != seen -> seen = req; pend ! MK
		:: else -> skip
		fi;
#else
		do
		:: nempty(breq) -> breq ? x; pend ! x
		:: empty(breq) -> break
		od;
#endif
		BATCH_N = 0;
		do
		:: nempty(pend) -> pend ? x; BATCH[BATCH_N] = x; BATCH_N++
		:: empty(pend) -> break
		od;
		cursor = 0
	}
}

inline marker(x) {
#ifdef SHARED_MARKER
	done_shared++
#else
	bdone[x - MK]++
#endif
}

/* invoke(): from the cursor, pausing for fork between callbacks */
inline invoke() {
	busy = 1;
	do
	:: cursor < BATCH_N ->
		/* the pause point (worker_pause()) */
		if
		:: pause -> busy = 0; (pause == 0); busy = 1
		:: else -> skip
		fi;
		/* the cursor: this one has started (a fork child counts it as run) */
		atomic {
			x = BATCH[cursor];
			cursor++;
			if
			:: x < MK -> claimed[x]++
			:: else -> skip
			fi
		};
		if
		:: x < MK ->
			atomic { in_cb = 1; started[x]++ };
			in_cb = 0
		:: else -> marker(x)
		fi
	:: else -> break
	od;
	BATCH_N = 0;
	busy = 0
}


proctype worker() {
	byte x;
	LOCALS;
	/* a fork child's worker first finishes the batch its parent was invoking */
	invoke();
end:	do
	:: (nempty(list) || nempty(breq) || req != seen) ->
		collect();
		invoke()
	od
}

proctype parent_worker() {
	byte x;
	LOCALS;
	{
end:		do
		:: (nempty(list) || nempty(breq) || req != seen) ->
			collect();
			invoke()
		od
	} unless { forked }
}

/* A barrier b: the callbacks pushed before it must all have run when it returns. may_give_up:
 * the exit drain's timed barrier, which may return before its marker ran. */
inline barrier(b, may_give_up) {
	atomic {
		k = 1;
		do
		:: k <= NCB -> before[k] = pushed[k]; k++
		:: else -> break
		od;
#ifdef SHARED_MARKER
		done_shared = 0;
		req++
#else
		breq ! MK + b
#endif
	};
	if
#ifdef SHARED_MARKER
	:: done_shared >= 1 ->
#else
	:: bdone[b] >= 1 ->
#endif
		atomic {
			k = 1;
			do
			:: k <= NCB ->
				assert(!before[k] || (claimed[k] == 1 && started[k] == 1));
				k++
			:: else -> break
			od
		}
	:: may_give_up -> skip
	fi
}

proctype parent_barriers() {
	byte k;
	bit before[NCB + 1];
	{
		barrier(1, 1); /* timed: may give up, its marker still queued */
		barrier(2, 0)
	} unless { forked }
}

proctype parent_pusher() {
	{
		push(1);
		push(2)
	} unless { forked }
}

init {
	byte k;
	bit before[NCB + 1];

	atomic {
		run parent_worker();
		run parent_pusher();
		run parent_barriers()
	};
	/* fork(), at any moment: prepare pauses the worker between callbacks (or gives up while a
	 * callback runs), then the copy */
#ifndef NO_PAUSE
	pause = 1;
	if
	:: busy == 0 -> skip
	:: in_cb == 1 -> skip /* 100 ms passed: a callback blocks */
	fi;
#endif
	atomic {
		forked = 1;
		/* the child's handler: no worker runs, nothing is paused, nobody waits */
		pause = 0;
		busy = 0;
		in_cb = 0;
#ifdef SHARED_MARKER
		done_shared = 0;
#endif
		skip
	};
	/* the child: its own callback, its worker, its barrier */
	push(NCB);
	run worker();
	barrier(3, 0)
}
