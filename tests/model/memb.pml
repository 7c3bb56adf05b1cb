/* SPDX-License-Identifier: MIT */
/*
 * Promela model of grace's default flavor ("memb"): the reader's lock/unlock with nesting and
 * snapshot in one word, the updater's grace period (barrier A = membarrier, publish P, scan S),
 * and the waiter flag / futex sleep and wake-up (src/flavor/memb.c, src/core/registry.c,
 * src/core/gp.c; include/grace/rcu.h for the inline read side). Checked by tests/model/check.sh.
 *
 * Memory model: x86-TSO, the machine grace's tests run on. Every thread has a FIFO store buffer
 * of depth one (a new store first drains the pending one): its stores become visible to the
 * others at a time chosen by a flusher process, its loads read memory (a thread never reads the
 * variables it has a pending store to, so no forwarding is needed). That admits the one
 * reordering TSO allows, a load overtaking an earlier store: the store-buffering pattern both
 * the grace-period argument and the wake-up argument rest on. Locked read-modify-writes
 * (fetch_or, fetch_and, xchg, and pthread_mutex_lock's) drain the buffer first: full barriers.
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every thread execute a full barrier while
 * the caller waits: modelled as one atomic step that drains every store buffer (the caller's
 * included); the readers' barriers at different instants inside the call cannot be told apart,
 * since the caller does nothing meanwhile and readers do not communicate with each other.
 *
 * Properties:
 *  safety    no reader holds a pointer the updater has freed: asserted where a violation would
 *            begin, at each free (no reader is inside a section using that object: ghost
 *            variables insec/held track what a reader uses) and at each rcu_dereference (the
 *            object loaded is not freed);
 *  liveness  no lost wake-up: the updater finishes every grace period (LTL updater_finishes,
 *            <> updater_done; the readers run a bounded number of sections, so a run in which
 *            the updater sleeps forever while every reader is quiescent violates it).
 *
 * Variants (cpp macros, see check.sh):
 *  (none)          membarrier mode: must satisfy both properties;
 *  FALLBACK        no membarrier: readers fence after the lock store and around the unlock
 *                  store, A and W are local fences: must satisfy both;
 *  NO_MB_A         barrier A removed: must violate safety (a reader's lock store still in its
 *                  store buffer when the scan reads its counter);
 *  NO_MB_W         barrier W removed: must violate liveness (the store-buffering lost wake-up);
 *  FALLBACK_NO_RFENCE  fallback without the readers' fences: must violate safety;
 *  IDLE            the idle fast path (memb_wait_readers(), grace__registry_alone()): readers
 *                  start unregistered, register on their first section (registry_add():
 *                  count += 1 under the lock, a full fence, then the section) and unregister
 *                  after their last (registry_del(): a release store of count - 1); the updater
 *                  reads the count after the fence that follows seq_start and, if no thread is
 *                  registered, skips barrier A, step P and the scan: must satisfy both;
 *  IDLE + NO_REG_FENCE  the idle fast path without registry_add()'s fence: must violate
 *                  safety (store buffering: the count still in the reader's store buffer while
 *                  its first section reads the old pointer, and the updater reads count 0);
 *  ONE_FLAG_PASS   the sleep protocol flags the holders once and sleeps if the re-read after W
 *                  finds any holder: must violate liveness. A reader that becomes a holder
 *                  after the flag loop (its section's snapshot was loaded before step P, its
 *                  lock store delayed: store buffer, or preemption between the two
 *                  instructions of rcu_read_lock) is counted by the re-read without carrying
 *                  the flag, so its unlock does not wake the updater: a lost wake-up (the
 *                  updater sleeps until the stall timeout, forever once a stall was reported
 *                  or with the timeout disabled). The default protocol re-reads holders and
 *                  flags in one pass after W and, if a holder lacks the flag, flags it and
 *                  runs W again before sleeping.
 */

#ifndef NR
#define NR 2      /* reader threads */
#endif
#ifndef NSECT
#define NSECT 2   /* read-side sections per reader */
#endif
#ifndef NUPD
#define NUPD 2    /* updates, each followed by a grace period and a free */
#endif
#ifndef NEST_ALL
#define NEST_ALL 0 /* 1: every reader may nest, not only reader 0 */
#endif
#define MAXSPIN 1 /* re-scans before the updater sleeps (the bounded spin phase) */
#define SLEEPING 1

#ifdef NO_MB_A
#define MB_A 0
#else
#define MB_A 1
#endif
#ifdef NO_MB_W
#define MB_W 0
#else
#define MB_W 1
#endif
#ifdef FALLBACK_NO_RFENCE
#define FALLBACK 1
#define RFENCE 0
#else
#define RFENCE 1
#endif

/* ---- memory ---- */
byte ptr = 0;        /* the RCU-protected pointer: index of the current object */
byte rctr = 1;       /* grace__memb_rctr: snapshot published by step P */
byte ctr[NR];        /* reader word: snapshot * 4 + nesting depth (0: not in a section) */
bool waiter[NR];     /* GRACE__W_WAITING in the reader's line */
bit futex = 0;       /* registry futex word: SLEEPING while the updater sleeps */
bool in_wait = 0;    /* the updater is blocked in FUTEX_WAIT */

/* ---- the registry's thread count (IDLE) ---- */
bool registered[NR]; /* on the registry's list (changed under its lock: visible at once to the
                      * scans, which take the lock too) */
byte nthreads = 0;   /* registry count, read without the lock by the idle fast path */
#ifdef IDLE
#define REG_INIT 0
#else
#define REG_INIT 1   /* every reader registered from the start */
#endif

/* ---- store buffers (depth one) ---- */
bool rsb_full[NR];   /* reader i has a pending store to ctr[i] */
byte rsb_val[NR];
/* Reader i's pending store to nthreads (IDLE): 0 none, 1 +1, 2 -1. A slot of its own, so that
 * it can stay pending while the reader's ctr store goes out: TSO keeps the two in order, the
 * model does not, which only adds behaviours no check depends on (the idle path reads the
 * count, never a ctr; a scan reads ctrs, never the count). */
byte rsb_nth[NR];
#define V_PTR 0
#define V_RCTR 1
#define V_FUTEX 2
bool usb_full;       /* the updater has a pending store of usb_val to variable usb_var */
byte usb_var;
byte usb_val;

/* ---- ghost state for the properties ---- */
bool freed[2];       /* the object has been freed by the updater */
bool insec[NR];      /* reader i is using the object held[i] */
byte held[NR];
bool updater_done = 0;

inline r_commit(i) {
	ctr[i] = rsb_val[i];
	rsb_full[i] = 0
}
/* a store of reader i to its ctr */
inline r_store(i, v) {
	atomic {
		if
		:: rsb_full[i] -> r_commit(i)
		:: else -> skip
		fi;
		rsb_full[i] = 1;
		rsb_val[i] = v
	}
}
inline r_commit_nth(i) {
	if
	:: rsb_nth[i] == 1 -> nthreads++
	:: rsb_nth[i] == 2 -> nthreads--
	fi;
	rsb_nth[i] = 0
}
/* a store of reader i to nthreads: +1 (d = 1) or -1 (d = 2) */
inline r_store_nth(i, d) {
	atomic {
		if
		:: rsb_nth[i] != 0 -> r_commit_nth(i)
		:: else -> skip
		fi;
		rsb_nth[i] = d
	}
}
/* full fence of reader i */
inline r_fence(i) {
	atomic {
		if
		:: rsb_full[i] -> r_commit(i)
		:: else -> skip
		fi;
		if
		:: rsb_nth[i] != 0 -> r_commit_nth(i)
		:: else -> skip
		fi
	}
}

inline u_commit() {
	if
	:: usb_var == V_PTR -> ptr = usb_val
	:: usb_var == V_RCTR -> rctr = usb_val
	:: usb_var == V_FUTEX -> futex = usb_val
	fi;
	usb_full = 0
}
inline u_store(var, v) {
	atomic {
		if
		:: usb_full -> u_commit()
		:: else -> skip
		fi;
		usb_full = 1;
		usb_var = var;
		usb_val = v
	}
}
inline u_fence() {
	atomic {
		if
		:: usb_full -> u_commit()
		:: else -> skip
		fi
	}
}
/* membarrier(PRIVATE_EXPEDITED): a full barrier in every thread, the caller included */
inline membarrier() {
	atomic {
		u_fence();
		j = 0;
		do
		:: j < NR ->
			if
			:: rsb_full[j] -> r_commit(j)
			:: else -> skip
			fi;
			if
			:: rsb_nth[j] != 0 -> r_commit_nth(j)
			:: else -> skip
			fi;
			j++
		:: else -> break
		od
	}
}
/* the updater's heavy barrier: membarrier, or a local fence in the fallback */
inline heavy_barrier() {
#ifdef FALLBACK
	u_fence()
#else
	membarrier()
#endif
}

/* memb_holds(): in a section, with a snapshot older than cur */
#define HOLDS(c, cur) (((c) % 4) != 0 && ((c) / 4) != (cur))

/* count_holders(): one acquire load of each registered reader's ctr */
inline count_holders(cur) {
	nh = 0;
	j = 0;
	do
	:: j < NR ->
		if
		:: registered[j] && HOLDS(ctr[j], cur) -> nh++
		:: else -> skip
		fi;
		j++
	:: else -> break
	od
}

/* The store buffers drain at times of their own. */
active [NR] proctype reader_flusher() {
	byte i = _pid; /* pids 0..NR-1 */
end:	do
	:: atomic { rsb_full[i] -> r_commit(i) }
	:: atomic { rsb_nth[i] != 0 -> r_commit_nth(i) }
	od
}

active proctype updater_flusher() {
end:	do
	:: atomic { usb_full -> u_commit() }
	od
}

proctype reader(byte i) {
	byte s, p, k = 0;
	bool w;
	bit old;

#ifdef IDLE
	/* registry_add() on the first section (memb_lock_slow): lock (a locked RMW: drains the
	 * buffer), link, count + 1, full fence (not in NO_REG_FENCE), unlock */
	atomic {
		r_fence(i);
		registered[i] = 1
	};
	r_store_nth(i, 1);
#ifndef NO_REG_FENCE
	r_fence(i);
#endif
#endif
	do
	:: k < NSECT ->
		/* rcu_read_lock(), outermost: snapshot, nesting 1, compiler barrier only */
		s = rctr;
		r_store(i, s * 4 + 1);
#ifdef FALLBACK
		if
		:: RFENCE -> r_fence(i) /* memb_lock_slow: smp_mb after the lock store */
		:: else -> skip
		fi;
#endif
		/* p = rcu_dereference(ptr); the reader uses *p until its last access below */
		atomic {
			p = ptr;
			assert(!freed[p]); /* never published after its free */
			held[i] = p;
			insec[i] = 1
		}
		/* sometimes a nested section: rcu_read_lock(); rcu_read_unlock(); (reader 0 only,
		 * unless NEST_ALL: the nesting bits never change whether a reader holds) */
		if
		:: (i == 0 || NEST_ALL) -> r_store(i, s * 4 + 2); r_store(i, s * 4 + 1)
		:: skip
		fi;
		insec[i] = 0; /* last access to *p (TSO: loads are not delayed past later stores) */
		/* rcu_read_unlock(), outermost: store-release of a quiescent ctr */
#ifdef FALLBACK
		if
		:: RFENCE -> r_fence(i)
		:: else -> skip
		fi;
#endif
		r_store(i, 0);
#ifdef FALLBACK
		if
		:: RFENCE -> r_fence(i) /* fence between the ctr store and the waiter load */
		:: else -> skip
		fi;
#endif
		/* compiler barrier, then the load of waiter (may overtake the buffered store) */
		w = waiter[i];
		if
		:: w ->
			/* grace__registry_wake(): fetch_and (locked: drains the buffer), then
			 * xchg of the futex word, FUTEX_WAKE if the updater announced sleep */
			atomic {
				r_fence(i);
				waiter[i] = 0
			};
			atomic {
				r_fence(i);
				old = futex;
				futex = 0
			};
			if
			:: old == SLEEPING -> in_wait = 0 /* futex_wake */
			:: else -> skip
			fi
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
#ifdef IDLE
	/* thread exit: registry_del(): lock (drains), unlink, store-release of count - 1 */
	atomic {
		r_fence(i);
		registered[i] = 0
	};
	r_store_nth(i, 2)
#else
	skip
#endif
}

proctype updater() {
	byte u = 0, cur, cur_obj = 0, new_obj, spins, nh, j, unflagged;

	do
	:: u < NUPD ->
		/* the update: allocate a new object, publish it (store-release: plain on TSO) */
		new_obj = 1 - cur_obj;
		freed[new_obj] = 0;
		u_store(V_PTR, new_obj);
		/* synchronize_rcu(): grace__gp_snap() and seq_start are separated from the
		 * flavor's part by full fences (core/gp.c argument (1)) */
		u_fence();
#ifdef IDLE
		/* the idle fast path: no registered thread (the updater is not one): no barrier A,
		 * no step P, no scan (grace__registry_alone(), an acquire load of the count) */
		if
		:: nthreads == 0 -> goto gp_over
		:: else -> skip
		fi;
#endif
		/* memb_wait_readers(): barrier A */
		if
		:: MB_A -> heavy_barrier()
		:: else -> u_fence() /* the bug variant: the updater's own fence only */
		fi;
		/* step P: publish the new snapshot (relaxed) */
		cur = rctr + 1;
		u_store(V_RCTR, cur);
		u_fence(); /* pthread_mutex_lock(&reg->lock) in grace__registry_wait() */
		/* step S: wait until no reader holds cur */
		spins = 0;
		do
		:: true ->
			count_holders(cur);
			if
			:: nh == 0 -> break
			:: nh != 0 && spins < MAXSPIN -> spins++ /* spin, re-scan */
			:: nh != 0 && spins >= MAXSPIN ->
				/* sleep: announce it in the futex word and in each holder's line */
				u_store(V_FUTEX, SLEEPING);
				j = 0;
				do
				:: j < NR ->
					if
					:: registered[j] && HOLDS(ctr[j], cur) ->
						atomic { /* fetch_or: a locked RMW */
							u_fence();
							waiter[j] = 1
						}
					:: else -> skip
					fi;
					j++
				:: else -> break
				od;
				/* barrier W */
				if
				:: MB_W -> heavy_barrier()
				:: else -> skip
				fi;
#ifndef ONE_FLAG_PASS
				/* one pass: holders, and holders whose flag is not set (they became
				 * holders after the flag loop): flag those and run W again */
				nh = 0;
				unflagged = 0;
				j = 0;
				do
				:: j < NR ->
					if
					:: registered[j] && HOLDS(ctr[j], cur) ->
						nh++;
						if
						:: !waiter[j] -> unflagged++
						:: else -> skip
						fi
					:: else -> skip
					fi;
					j++
				:: else -> break
				od;
#else
				count_holders(cur);
				unflagged = 0;
#endif
				if
				:: nh == 0 ->
					u_store(V_FUTEX, 0);
					break
				:: nh != 0 && unflagged != 0 -> skip /* flag them: next round */
				:: nh != 0 && unflagged == 0 ->
					/* unlock the registry, FUTEX_WAIT(futex, SLEEPING) */
					atomic {
						u_fence();
						if
						:: futex == SLEEPING -> in_wait = 1
						:: else -> skip
						fi
					};
					(in_wait == 0); /* blocked until a reader's FUTEX_WAKE */
					u_fence() /* pthread_mutex_lock again */
				fi
			fi
		od;
		/* the grace period is over: free the old object. Safety: no reader is using it. */
gp_over:
		atomic {
			j = 0;
			do
			:: j < NR ->
				assert(!(insec[j] && held[j] == cur_obj));
				j++
			:: else -> break
			od;
			freed[cur_obj] = 1;
			j = 0;
			nh = 0
		};
		cur_obj = new_obj;
		u++
	:: else -> break
	od;
	updater_done = 1
}

init {
	byte i;
	atomic {
		i = 0;
		do
		:: i < NR ->
			registered[i] = REG_INIT;
			nthreads = nthreads + REG_INIT;
			run reader(i);
			i++
		:: else -> break
		od;
		run updater()
	}
}

/* Liveness: the updater finishes every grace period (no lost wake-up, no hang). */
ltl updater_finishes { <> updater_done }
