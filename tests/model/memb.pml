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
 *  PARK            parking (src/core/registry.c, "Parking"; see the PARK section below): the
 *                  grace periods stop scanning readers seen idle across a barrier A, and a
 *                  parked reader's next lock hands it back: must satisfy both;
 *  PARK + PARK_CHECK_BEFORE_STORE  the lock loads waiter (and acts on PARK) before its ctr
 *                  store: must violate safety;
 *  PARK + PARK_NO_CHECK  the lock never looks at PARK: must violate safety;
 *  PARK + PARK_NO_DRAIN  the driver never takes the unpark stack: must violate safety;
 *  PARK + PARK_NO_BARRIER  the pass that sets PARK confirms it at once (re-reading ctr and the
 *                  bit), with no barrier A in between: must violate safety;
 *  PARK + PARK_NO_PUSH_FENCE  the push is a plain store (no locked RMW, no fence after it): it
 *                  may wait in the store buffer while the section's loads run: must violate
 *                  safety;
 *  PARK + PARK_SIGNAL=m  a signal handler's section nested in reader 0's outermost lock
 *                  (m = 1: between its ctr store and its load of waiter; 2: between its
 *                  fetch_and clearing PARK and its push; 3: both), taking the nested path of
 *                  rcu_read_lock(): without PARK_SIGNAL_FIX the nested lock tests nothing and
 *                  the hand-back runs with signals open (the library before this model found
 *                  it): violates safety (docs/api.md allows sections in signal handlers on
 *                  registered threads); see handler() below;
 *  PARK + PARK_SIGNAL=3 + PARK_SIGNAL_FIX  the library: the nested lock tests waiter too; the
 *                  hand-back runs with signals blocked: must satisfy both;
 *  PARK + PROBE=mask  reachability probes: the assertion of probe n (bit n of mask) fails where
 *                  the model reaches event n (1: a grace period takes the quiet path; 2: a
 *                  drain takes back the push of a parked reader; 3: the quiet path is taken
 *                  while a reader is inside a section, i.e. a parked reader whose push the
 *                  drain missed, whose section must then see the new pointer; 4: a pending
 *                  reader clears PARK itself before the confirmation, which then marks it
 *                  unparking; 5: a scan waits for a holder while another reader is parked);
 *  PARK + PARK_ONLY=j  only reader j may be parked (a bound on the state space).
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

/* ---- parking (PARK) ----
 * The driver's side (grace__registry_quiet(), park_pass(), drain()): the registry lock is held
 * by the one updater throughout, so its bookkeeping (park_state: pstate) is a local of the
 * updater, and the registry's two parts (scanned, parked) are that state, not slots. Per grace
 * period, after the removal and the fences that follow it: the quiet check (lock, drain; no
 * scanned reader left: the grace period is over, no barrier A, no step P, no scan); barrier A;
 * step P; the pass (drain; load every scanned reader's ctr; then reader by reader: a PENDING
 * reader idle with its PARK bit still set becomes PARKED, otherwise fetch_and(~PARK) and
 * ACTIVE if that cleared the bit, UNPARKING if the reader had; an ACTIVE reader seen idle may
 * get fetch_or(PARK) and become PENDING); done if no scanned reader holds; otherwise the usual
 * wait (spin, flags, barrier W, sleep) over the scanned readers. The pass's ctr loads, its
 * loads of the PARK bit and its locked RMWs on it are steps of their own. Which readers to park
 * (in the library: idle with the same ctr for k passes, k adaptive) is nondeterministic here:
 * any reader a pass sees idle may be parked, which covers every heuristic. The unpark stack is
 * a flag per reader (pushed), set by the reader's locked compare-and-swap; the drain takes the
 * whole stack in one step (one exchange of its head in the library) and puts every reader on it
 * back among the scanned ones (ACTIVE). Not modelled: the streak and k bookkeeping, the
 * statistics, the slot moves, registration and exit (registry_del's drain), the driver being a
 * registered reader itself (grace__registry_quiet()'s self_idle case), the fallback (parking
 * is off there).
 * The reader's side (rcu_read_lock(), grace__memb_lock_flagged()): after the ctr store, one
 * load of the waiter word (PARK and WAITING; the library loads it again in
 * grace__memb_lock_flagged(), which the fetch_and's own read covers); PARK: fetch_and clearing
 * it (locked) and, if that cleared it, the push (locked) and a full fence, then the section;
 * WAITING (stale, set after an earlier unlock's load): wake the updater, as an unlock does. The
 * unlock is unchanged: ctr store, load of waiter, wake if WAITING. */
#ifdef PARK
#define P_ACTIVE 0     /* scanned */
#define P_PENDING 1    /* scanned, PARK set by the last pass */
#define P_PARKED 2     /* not scanned */
#define P_UNPARKING 3  /* scanned: cleared PARK itself, its push not taken yet */
#ifdef IDLE
#error "PARK models registered readers only: not with IDLE"
#endif
bool park[NR];         /* GRACE__W_PARK in the reader's waiter word */
bool pushed[NR];       /* on the unpark stack */
/* park_state: the driver's, under the registry lock, so a local array of the updater (pstate,
 * see updater()); every reader is registered throughout */
#define SCANNED(j) (pstate[j] != P_PARKED)
#ifdef PARK_ONLY
#define PARKABLE(j) ((j) == PARK_ONLY) /* a bound on the state space: the other readers stay
                                        * scanned */
#else
#define PARKABLE(j) 1  /* a pass may park any reader it sees idle */
#endif
#else
#define SCANNED(j) registered[j]
#endif
#ifdef PARK_NO_PUSH_FENCE
bool rsb_push[NR];     /* the mutant's plain store pushed[i] = 1 is pending in the store buffer
                        * (depth one: a ctr store and a push are never pending together) */
#endif
#ifdef PROBE
/* PROBE: a bit mask of the probes (bit n: probe n); a probe reached fails its assertion */
#define REACH(n) assert(((PROBE >> n) & 1) == 0)
#else
#define REACH(n) skip
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
#ifdef PARK_NO_PUSH_FENCE
inline r_commit_push(i) {
	assert(!pushed[i]); /* pushed once per clear of PARK */
	pushed[i] = 1;
	rsb_push[i] = 0
}
#define R_COMMIT_PUSH(i) if :: rsb_push[i] -> r_commit_push(i) :: else -> skip fi
#else
#define R_COMMIT_PUSH(i) skip
#endif
/* a store of reader i to its ctr */
inline r_store(i, v) {
	atomic {
		if
		:: rsb_full[i] -> r_commit(i)
		:: else -> skip
		fi;
		R_COMMIT_PUSH(i);
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
		fi;
		R_COMMIT_PUSH(i)
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
			R_COMMIT_PUSH(j);
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
		:: SCANNED(j) && HOLDS(ctr[j], cur) -> nh++
		:: else -> skip
		fi;
		j++
	:: else -> break
	od
}

/* grace__registry_wake(): fetch_and (locked: drains the buffer), then xchg of the futex word,
 * FUTEX_WAKE if the updater announced sleep */
inline wake(i) {
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
}

#ifdef PARK
/* grace__registry_unpark(): push onto the unpark stack, a seq_cst compare-and-swap (locked),
 * then grace_smp_mb_after_rmw(); the mutant: a plain store into the store buffer */
inline push(i) {
#ifdef PARK_NO_PUSH_FENCE
	atomic {
		if
		:: rsb_full[i] -> r_commit(i)
		:: else -> skip
		fi;
		R_COMMIT_PUSH(i);
		rsb_push[i] = 1
	}
#else
	atomic {
		r_fence(i);
		assert(!pushed[i]); /* pushed once per clear of PARK */
		pushed[i] = 1
	}
#endif
}

/* the outermost lock's test of the waiter word after its ctr store (rcu_read_lock(), then
 * grace__memb_lock_flagged()) */
inline lock_check(i) {
	atomic { /* one load of the word */
		pk = park[i];
		w = waiter[i]
	};
	if
	:: pk ->
		atomic { /* fetch_and(~PARK), seq_cst: locked */
			r_fence(i);
			got = park[i];
			park[i] = 0
		};
		if
		:: got ->
#if defined(PARK_SIGNAL) && (PARK_SIGNAL & 2) && !defined(PARK_SIGNAL_FIX)
			if
			:: i == 0 -> handler(i, s) /* or between the clear and the push */
			:: skip
			fi;
#endif
			push(i)
		:: else -> skip
		fi
	:: else -> skip
	fi;
	if
	:: w -> wake(i) /* a stale WAITING: wake once */
	:: else -> skip
	fi;
	d_step {
		pk = 0;
		got = 0
	}
}

#ifdef PARK_SIGNAL
/* A signal handler's section on reader i, inside the outermost lock of the section with
 * snapshot s (at most one per run): the nested path of rcu_read_lock() (ctr + 1, no test of
 * waiter), rcu_dereference, the nested unlock (its test of waiter does nothing when nested).
 * PARK_SIGNAL: 1 the handler may run between the lock's ctr store and its test of waiter, 2
 * between its fetch_and clearing PARK and its push, 3 both.
 * PARK_SIGNAL_FIX, a possible fix: the nested lock tests waiter after its store too (a PARK
 * bit sends it to the same hand-back), and the hand-back runs with signals blocked, from before
 * its fetch_and to after the fence that follows the push (window 2 closed). */
inline handler(i, s) {
	if
	:: !sig ->
		sig = 1;
		r_store(i, s * 4 + 2);
#ifdef PARK_SIGNAL_FIX
		lock_check(i);
#endif
		atomic {
			p = ptr;
			assert(!freed[p]);
			held[i] = p;
			insec[i] = 1
		}
		insec[i] = 0;
		r_store(i, s * 4 + 1)
	:: else -> skip
	fi
}
#endif

/* drain(): take the unpark stack (an exchange of its head, locked) and scan its readers again */
inline drain() {
#ifndef PARK_NO_DRAIN
	j = 0;
	do
	:: j < NR ->
		if
		:: pushed[j] ->
			if
			:: pstate[j] == P_PARKED -> REACH(2)
			:: else -> skip
			fi;
			pushed[j] = 0;
			pstate[j] = P_ACTIVE
		:: else -> skip
		fi;
		j++
	:: else -> break
	od
#else
	skip
#endif
}
#endif

/* The store buffers drain at times of their own. */
active [NR] proctype reader_flusher() {
	byte i = _pid; /* pids 0..NR-1 */
end:	do
	:: atomic { rsb_full[i] -> r_commit(i) }
	:: atomic { rsb_nth[i] != 0 -> r_commit_nth(i) }
#ifdef PARK_NO_PUSH_FENCE
	:: atomic { rsb_push[i] -> r_commit_push(i) }
#endif
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
#ifdef PARK
	bool pk, got;
#endif
#ifdef PARK_SIGNAL
	bool sig = 0;
#endif

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
#if defined(PARK) && defined(PARK_CHECK_BEFORE_STORE)
		lock_check(i); /* the mutant: the waiter word loaded before the store */
#endif
		r_store(i, s * 4 + 1);
#if defined(PARK_SIGNAL) && (PARK_SIGNAL & 1)
		if
		:: i == 0 -> handler(i, s) /* the handler may run between the store and the test */
		:: skip
		fi;
#endif
#if defined(PARK) && !defined(PARK_CHECK_BEFORE_STORE) && !defined(PARK_NO_CHECK)
		/* then the load of waiter (may overtake the buffered store): any bit set sends
		 * the lock to grace__memb_lock_flagged() */
		lock_check(i);
#endif
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
		:: w -> wake(i)
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
#ifdef PARK
	byte pstate[NR]; /* park_state (P_ACTIVE at registration) */
	byte cv[NR];     /* park_pass(): the ctrs, loaded first */
	bool got;
	byte act;        /* park_pass(): what the pass does with reader j */
#endif

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
#ifdef PARK
		/* grace__registry_quiet(): under the registry lock (a locked RMW), after the fence
		 * that follows seq_start: take the unpark stack; if no reader is scanned any more,
		 * no barrier A, no step P, no scan */
		atomic {
			u_fence();
			drain();
			nh = 0;
			j = 0;
			do
			:: j < NR ->
				if
				:: SCANNED(j) -> nh++
				:: else -> skip
				fi;
				j++
			:: else -> break
			od
		};
		if
		:: nh == 0 ->
#ifdef PROBE
			atomic {
				j = 0;
				do
				:: j < NR && insec[j] -> REACH(3); break
				:: j < NR && !insec[j] -> j++
				:: else -> break
				od
			};
#endif
			REACH(1);
			goto gp_over
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
#ifdef PARK
		/* park_pass(): take the stack; load every scanned reader's ctr; then, reader by
		 * reader, confirm or undo the parks the last pass set, and set PARK on readers seen
		 * idle (any of them: the heuristic does not matter); done if no scanned reader
		 * holds cur */
		atomic {
			drain()
		};
		j = 0;
		do
		:: j < NR ->
			atomic {
				if
				:: SCANNED(j) -> cv[j] = ctr[j]
				:: else -> skip
				fi;
				j++
			}
		:: else -> break
		od;
		nh = 0;
		j = 0;
		do
		:: j < NR ->
			/* the bookkeeping is the updater's own: one step per shared access */
			atomic {
				if
				:: SCANNED(j) && HOLDS(cv[j], cur) -> nh++
				:: else -> skip
				fi;
				if
				:: !SCANNED(j) -> act = 0
				:: SCANNED(j) && pstate[j] == P_PENDING ->
					/* barrier A of this grace period ran after the bit was set:
					 * idle and the bit still set (a load of waiter): parked */
					if
					:: (cv[j] % 4) == 0 && park[j] -> pstate[j] = P_PARKED; act = 0
					:: else -> act = 1
					fi
				:: SCANNED(j) && pstate[j] == P_ACTIVE && (cv[j] % 4) == 0 && PARKABLE(j) ->
					act = 2
				:: SCANNED(j) && pstate[j] == P_ACTIVE && ((cv[j] % 4) != 0 || !PARKABLE(j)) ->
					act = 0
				:: SCANNED(j) && pstate[j] == P_UNPARKING -> act = 0
				fi
			};
			if
			:: act == 1 ->
				/* in a section, or the reader cleared the bit: undo; whoever clears
				 * it decides (fetch_and: locked) */
				atomic {
					u_fence();
					got = park[j];
					park[j] = 0;
					if
					:: got -> pstate[j] = P_ACTIVE
					:: else -> pstate[j] = P_UNPARKING; REACH(4)
					fi;
					got = 0
				}
			:: act == 2 ->
				/* idle: may be parked (the heuristic does not matter) */
				atomic { /* fetch_or(PARK): locked */
					u_fence();
					park[j] = 1;
					pstate[j] = P_PENDING
				};
#ifdef PARK_NO_BARRIER
				/* the mutant: confirmed at once, no barrier A in between */
				atomic {
					cv[j] = ctr[j]
				};
				atomic {
					if
					:: (cv[j] % 4) == 0 && park[j] -> pstate[j] = P_PARKED
					:: else -> skip /* the next pass undoes it */
					fi
				}
#else
				skip
#endif
			:: act == 2 -> skip /* not chosen */
			:: act == 0 -> skip
			fi;
			atomic {
				act = 0;
				cv[j] = 0;
				j++
			}
		:: else -> break
		od;
		if
		:: nh == 0 -> goto gp_over
		:: else -> skip
		fi;
#ifdef PROBE
		atomic {
			j = 0;
			do
			:: j < NR && pstate[j] == P_PARKED -> REACH(5); break
			:: j < NR && pstate[j] != P_PARKED -> j++
			:: else -> break
			od
		};
#endif
#endif
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
					:: SCANNED(j) && HOLDS(ctr[j], cur) ->
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
					:: SCANNED(j) && HOLDS(ctr[j], cur) ->
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
