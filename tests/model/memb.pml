/* SPDX-License-Identifier: MIT */
/*
 * Promela model of grace's default flavor ("memb"): the reader's lock/unlock with nesting and a
 * per-thread section number in one word, the updater's grace period (barrier A = membarrier,
 * then scan S, whose first scan records what it must wait for), and the waiter flag / futex
 * sleep and wake-up (src/flavor/memb.c, src/core/registry.c, src/core/gp.c;
 * include/grace/rcu.h for the inline read side). Checked by tests/model/check.sh.
 *
 * The rule modelled (GRACE__REG_SEEN). Reader i's ctr is seq * 4 + nesting: the outermost
 * rcu_read_lock() stores c + 4 + 1 (c: its own ctr, nesting 0: the next section number,
 * nesting 1; library: c + GRACE__R_SEQ_UNIT + 1), a nested lock c + 1, every unlock c - 1; no
 * reader loads a counter shared with the updater (there is no grace__memb_rctr and no step P).
 * The grace period: barrier A; the first scan (seen_pass(), or the parking pass park_pass())
 * loads every scanned reader's ctr once and records seen[i] = ctr if in a section (nesting !=
 * 0), else none (0); reader i then holds the grace period iff seen[i] is not none and its ctr
 * now shows nesting != 0 and the section number of seen[i]. Every later test (the done check,
 * the flag loop, the recheck after barrier W) uses that rule (HOLDS). Holders only leave: a
 * reader leaves the section seen recorded by its own stores and never comes back to it (the
 * numbers only grow: seq <= 3 * NSECT here, never wraps in the byte; 47 bits in the library).
 *
 * Memory model: x86-TSO, the machine grace's tests run on. Every thread has a FIFO store buffer
 * of depth one (a new store first drains the pending one): its stores become visible to the
 * others at a time chosen by a flusher process, its loads read memory (a thread never reads the
 * variables it has a pending store to, so no forwarding is needed: a reader computes its next
 * ctr from its own last stored value, a local c). That admits the one reordering TSO allows, a
 * load overtaking an earlier store: the store-buffering pattern both the grace-period argument
 * and the wake-up argument rest on. Locked read-modify-writes (fetch_or, fetch_and, xchg, and
 * pthread_mutex_lock's) drain the buffer first: full barriers.
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
 *                  store buffer when the first scan reads its counter: seen = none);
 *  NO_MB_W         barrier W removed: must violate liveness (the store-buffering lost wake-up);
 *  FALLBACK_NO_RFENCE  fallback without the readers' fences: must violate safety;
 *  IDLE            the idle fast path (memb_wait_readers(), grace__registry_alone()): readers
 *                  start unregistered, register on their first section (registry_add():
 *                  count += 1 under the lock, a full fence, then the section) and unregister
 *                  after their last (registry_del(): a release store of count - 1); the updater
 *                  reads the count after the fence that follows seq_start and, if no thread is
 *                  registered, skips barrier A and the scan; a reader that registers after the
 *                  first scan has seen = none: must satisfy both;
 *  IDLE + NO_REG_FENCE  the idle fast path without registry_add()'s fence: must violate
 *                  safety (store buffering: the count still in the reader's store buffer while
 *                  its first section reads the old pointer, and the updater reads count 0);
 *  ONE_FLAG_PASS   the sleep protocol flags the holders once and sleeps if the re-read after W
 *                  finds any holder, with no second flag pass for holders without the flag:
 *                  must now satisfy both (it violated liveness under the old rule, a snapshot
 *                  of a shared counter, where a reader whose snapshot was loaded before step P
 *                  and whose lock store was delayed became a holder after the flag loop,
 *                  unflagged: a lost wake-up). Under the rule of seen no reader becomes a
 *                  holder after the first scan, so every holder the re-read finds was a holder
 *                  in the flag loop and got the flag; a flag is cleared only by its reader's
 *                  wake (grace__registry_wake(): fetch_and, then the xchg of the futex word),
 *                  which comes after the updater's SLEEPING store, so the FUTEX_WAIT that
 *                  follows returns at once. The library keeps the second pass (reg_recheck(),
 *                  shared with QSBR, whose readers still become holders late); the model says
 *                  the default flavor does not need it;
 *  SEQ_BUMP_NESTED every lock, nested ones included, takes a new section number (c + 4 + 1):
 *                  must violate safety (the updater takes a nested lock for the end of the
 *                  section it recorded while the outer section still uses the old object;
 *                  reader 0 nests);
 *  SEEN_ANY_CHANGE the holds rule ends a reader's hold at any change of its ctr (ctr !=
 *                  seen), nesting included: must violate safety (a nested lock or unlock ends
 *                  it; reader 0 nests);
 *  SEEN_BEFORE_A   the scan that records seen runs before barrier A instead of after it: must
 *                  violate safety (as NO_MB_A: a lock store still buffered reads as none);
 *  SEEN_SEQ_ONLY   the holds rule ignores the nesting (holds while the number is the one
 *                  recorded, until the reader's next outermost lock): must violate liveness
 *                  (a reader's last section never ends for the updater);
 *  SEQ_NO_BUMP     the outermost lock keeps the section number (stores c + 1): not a mutant,
 *                  must satisfy both. The rule then degenerates into "wait until the reader is
 *                  seen outside any section", the classic rule, which is safe; what the number
 *                  buys is progress (a reader entering sections back to back holds at most one
 *                  section), which bounded readers cannot show. Run with --full only;
 *  PARK            parking (src/core/registry.c, "Parking"; see the PARK section below): the
 *                  grace periods stop scanning readers seen idle across a barrier A, and a
 *                  parked reader's next lock (outermost, or nested: every lock tests waiter)
 *                  hands it back; another thread may exit (registry_del(): a drain of the
 *                  unpark stack) at any point of the wait: must satisfy both. The drain keeps
 *                  the seen of a reader the first scan scanned and resets (none) only that of a
 *                  reader that was parked (see DRAIN_RESETS_SEEN);
 *  PARK + DRAIN_RESETS_SEEN  every reader the drain takes back gets seen = none, as
 *                  src/core/registry.c's drain() did when this model was written: must violate
 *                  safety. A reader in a section whose outermost lock missed a PARK bit set at
 *                  that moment (the pass read its ctr idle while the lock store was buffered,
 *                  and the lock loaded waiter before the fetch_or) is found in that section by
 *                  the next grace period's first scan (seen recorded), then hands itself back
 *                  from a nested lock (its fetch_and beats the pass's: UNPARKING, pushed after
 *                  the first scan's drain); another thread's registry_del() drains it in the
 *                  middle of the wait, seen = none, and the grace period ends while the section
 *                  still uses the old object. Readers pushed after the first scan are not all
 *                  readers whose sections start after it;
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
 *                  rcu_read_lock(): without PARK_SIGNAL_FIX the nested lock tests nothing (the
 *                  reader's own nested locks neither) and the hand-back runs with signals open
 *                  (the library before this model found it): violates safety (docs/api.md
 *                  allows sections in signal handlers on registered threads); see handler()
 *                  below;
 *  PARK + PARK_SIGNAL=3 + PARK_SIGNAL_FIX  the library: the nested lock tests waiter too; the
 *                  hand-back runs with signals blocked: must satisfy both;
 *  PARK + ONE_FLAG_PASS  as ONE_FLAG_PASS, with parking (an outermost lock's test of waiter may
 *                  clear the flag of a holder, waking the updater): must satisfy both (--full);
 *  PARK + PROBE=mask  reachability probes: the assertion of probe n (bit n of mask) fails where
 *                  the model reaches event n (1: a grace period takes the quiet path; 2: a
 *                  drain takes back the push of a parked reader; 3: the quiet path is taken
 *                  while a reader is inside a section, i.e. a parked reader whose push the
 *                  drain missed, whose section must then see the new pointer; 4: a pending
 *                  reader clears PARK itself before the confirmation, which then marks it
 *                  unparking; 5: a scan waits for a holder while another reader is parked; 6:
 *                  a drain in the middle of the wait takes back a reader the first scan found
 *                  in a section, the case of DRAIN_RESETS_SEEN);
 *  PARK + PARK_ONLY=j  only reader j may be parked (a bound on the state space);
 *  STEP            stepped grace periods (src/core/gp.c, "Stepped grace periods"; memb_step()
 *                  and memb_resume_readers() in src/flavor/memb.c; see the STEP section
 *                  below): the grace-period sequence seq (idle, RUNNING, STEPPED) is modelled;
 *                  reader STEPPER (0) retires objects inside its own sections and there may
 *                  take a non-blocking step (or none: its try-lock of the registry failed):
 *                  begin (CAS idle -> RUNNING; barrier A; the first scan records seen[], the
 *                  stepper itself included) or adopt a STEPPED grace period (CAS STEPPED ->
 *                  RUNNING; rescan with HOLDS against the recorded seen[]), then seq_end if no
 *                  recorded reader holds, else park (exchange to STEPPED, then wake the
 *                  sleepers on event). The updater is grace__gp_wait(): its cookie is the
 *                  first grace period that starts after its removal; while the count has not
 *                  reached it: idle, start a grace period of its own (the usual path); STEPPED,
 *                  adopt it and run the rest of the usual wait (flags, barrier W, futex) against
 *                  the recorded seen[]; RUNNING (a step under way), sleep on event (nsleepers,
 *                  re-check of seq, FUTEX_WAIT); it frees once the count is reached, whoever
 *                  ended that grace period. seen[] is the registry's, shared: global. Must
 *                  satisfy both. Bounds of its own (check.sh: $sbounds): no nesting (NEST0=0),
 *                  the other reader one section (NSECT1=1), one update (two with --full);
 *  STEP + STEP_RESET_SEEN  an adoption (a poll step's or the updater's) loses the first
 *                  scan's records (seen[] none): must violate safety (the stepper found a
 *                  reader in a section, parked, and the adopter ends the grace period while
 *                  that section still uses the old object);
 *  STEP + STEP_NO_MB_A  the begin step runs no barrier A (only its own locked RMWs): must
 *                  violate safety (the other reader's lock store still buffered when the
 *                  stepper's first scan reads its ctr: seen = none, as NO_MB_A);
 *  STEP + STEP_SLEEP_ON_STEPPED  the waiter sleeps while it reads STEPPED too (the check
 *                  grace__gp_wait() made before stepping, grace__gp_in_progress()): must
 *                  violate liveness (its CAS reads RUNNING; the stepper parks and, finding no
 *                  sleeper counted yet, wakes nobody; the updater, counted, reads STEPPED and
 *                  sleeps; the stepper steps no more: no driver is left to wake it, and it
 *                  should have adopted the grace period);
 *  STEP + STEP_PARK_NO_WAKE  a park does not wake the sleepers (only seq_end does): must
 *                  violate liveness (the updater asleep while the step ran RUNNING is never
 *                  woken once the stepper parks and steps no more);
 *  STEP + PROBE=mask  probes 7 (the updater adopts the grace period it waits for, begun by
 *                  the stepper), 8 (a poll step ends that grace period), 9 (a step wakes the
 *                  updater asleep on it), and with ASK 10 (an asked grace period ends on the
 *                  answers alone).
 *  STEP + ASK      asking (src/flavor/memb.c, "Asking"; see the ASK section below): a step that
 *                  begins a grace period may, instead of barrier A and the first scan, set ASK
 *                  in every reader's word (a locked RMW each, one step each); a reader answers
 *                  after its outermost lock's store (before the section's loads) and after its
 *                  outermost unlock's store: a full fence, then a locked clear; a nested lock
 *                  never answers. A step that adopts an asked grace period ends it once no ASK
 *                  bit is set, or keeps it (still in time), or gives up: barrier A and the
 *                  first scan, then as without asking. The updater that adopts one sees the
 *                  answers or gives up the same way, then runs the whole wait from barrier A.
 *                  Must satisfy both. Not modelled: the driver answering for itself outside
 *                  any section (the stepper is always inside one here), the back-off's
 *                  counts (a start chooses freely between asking and barrier A);
 *  STEP + ASK + ASK_NESTED_ANSWER  a nested lock answers too: must violate safety (reader 0
 *                  nests: its nested lock answers while the outer section uses the old object);
 *  STEP + ASK + ASK_SELF_ONLY  the step asks only the stepper: must violate safety (the other
 *                  reader's section, begun before the removal, is not waited for).
 *  STEP + ASK      also: the updater's grace period of its own (memb_wait_readers()) asks the
 *                  same way, then ends on the answers or gives up (barrier A and the whole
 *                  wait), or starts with barrier A (the back-off); probe 11: it ends on the
 *                  answers.
 *  STEP + ASK + ASK_UPDATER_NO_WAIT  the updater ends its asked grace period without waiting
 *                  for the answers: must violate safety.
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
#ifndef NEST0
#define NEST0 1    /* 0: reader 0 does not nest either (a bound for STEP) */
#endif
#ifndef NSECT1
#define NSECT1 NSECT /* sections of the readers other than reader 0 (a bound for STEP) */
#endif
#define NSECT_OF(i) ((i) == 0 -> NSECT : NSECT1)
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
/* The section number: ctr = seq * 4 + nesting (nesting <= 2: a nested lock, or a signal
 * handler's, in an outermost section). Each outermost lock adds one (SEQ_BUMP_NESTED: every
 * lock), so seq <= NSECT * 3 here: it never wraps in a byte within a run (the library's 47 bits
 * never wrap in the life of a thread). */
#if NSECT * 3 * 4 + 3 > 255
#error "NSECT too large: the section number would wrap in ctr"
#endif
#if defined(STEP) && (defined(PARK) || defined(IDLE) || defined(FALLBACK) || defined(SEEN_BEFORE_A))
#error "STEP models the membarrier mode only: not with PARK, IDLE, FALLBACK, SEEN_BEFORE_A"
#endif
#if defined(ASK) && (!defined(STEP) || NR != 2)
#error "ASK is a part of STEP, with two readers (the updater's test of the answers)"
#endif
#if defined(SEEN_BEFORE_A) && (defined(PARK) || defined(IDLE))
#error "SEEN_BEFORE_A is a mutant of the plain membarrier variant"
#endif

/* ---- memory ---- */
byte ptr = 0;        /* the RCU-protected pointer: index of the current object */
byte ctr[NR];        /* reader word: section number * 4 + nesting depth (0: not in a section);
                      * only reader i writes ctr[i] */
bool waiter[NR];     /* GRACE__W_WAITING in the reader's line */
bit futex = 0;       /* registry futex word: SLEEPING while the updater sleeps */
bool in_wait = 0;    /* the updater is blocked in FUTEX_WAIT */

/* The reader's new ctr at an outermost lock (c: nesting 0) and at a nested one. The library:
 * c + GRACE__R_SEQ_UNIT + 1 and c + 1. The mutants SEQ_NO_BUMP (the outermost lock keeps the
 * number) and SEQ_BUMP_NESTED (every lock takes a new number): see the top. */
#ifdef SEQ_NO_BUMP
#define OUTER_LOCK(c) ((c) + 1)
#else
#define OUTER_LOCK(c) ((c) + 4 + 1)
#endif
#ifdef SEQ_BUMP_NESTED
#define NESTED_LOCK(c) ((c) + 4 + 1)
#else
#define NESTED_LOCK(c) ((c) + 1)
#endif

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
 * scanned reader left: the grace period is over, no barrier A, no scan); barrier A; the pass,
 * which is the grace period's first scan (drain; load every scanned reader's ctr; then reader
 * by reader: record seen, the ctr loaded if in a section, else none; a PENDING reader idle
 * with its PARK bit still set becomes PARKED, otherwise fetch_and(~PARK) and ACTIVE if that
 * cleared the bit, UNPARKING if the reader had; an ACTIVE reader seen idle may get
 * fetch_or(PARK) and become PENDING); done if the pass found no scanned reader in a section;
 * otherwise the usual wait (spin, flags, barrier W, sleep) over the scanned readers. A reader
 * the drain puts back gets seen = none (library: drain()); here every drain precedes the first
 * scan of its grace period, which records seen afresh. The pass's ctr loads, its
 * loads of the PARK bit and its locked RMWs on it are steps of their own. Which readers to park
 * (in the library: idle with the same ctr for k passes, k adaptive) is nondeterministic here:
 * any reader a pass sees idle may be parked, which covers every heuristic. The unpark stack is
 * a flag per reader (pushed), set by the reader's locked compare-and-swap; the drain takes the
 * whole stack in one step (one exchange of its head in the library) and puts every reader on it
 * back among the scanned ones (ACTIVE). Another registered thread's exit (registry_del(),
 * which drains the stack under the registry lock) may come at any point of a grace period's
 * wait: modelled as a drain the updater may run at the top of each round of the wait (the
 * drain's effect is seen by nothing but the updater's next test), with no thread of its own.
 * Not modelled: the streak and k bookkeeping, the statistics, the slot moves (pk[].seen moves
 * with its slot), registration, the driver being a registered reader itself
 * (grace__registry_quiet()'s self_idle case), the fallback (parking is off there).
 * The reader's side (rcu_read_lock(), grace__memb_lock_flagged()): after the ctr store of every
 * lock, outermost or nested, one load of the waiter word (PARK and WAITING; the library loads
 * it again in grace__memb_lock_flagged(), which the fetch_and's own read covers); PARK:
 * fetch_and clearing it (locked) and, if that cleared it, the push (locked) and a full fence,
 * then the section; WAITING, at nesting 1 only (an outermost lock): wake the updater, as an
 * unlock does (a stale flag, set after an earlier unlock's load, or one set on this very
 * section after the first scan read its store). The unlock is unchanged: ctr store, load of
 * waiter, wake if WAITING (the outermost one; a nested unlock's test does nothing). */
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
#define V_FUTEX 1
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

/* The first scan's record of a ctr c (pk[].seen): c if in a section, else none (0; a ctr in a
 * section is never 0). SEEN_ANY_CHANGE, SEEN_SEQ_ONLY: mutants of the rule (see the top). */
#define SEEN_OF(c) ((((c) % 4) != 0) -> (c) : 0)
#if defined(SEEN_ANY_CHANGE)
#define HOLDS(j, c) (seen[j] != 0 && (c) == seen[j])
#elif defined(SEEN_SEQ_ONLY)
#define HOLDS(j, c) (seen[j] != 0 && ((c) / 4) == (seen[j] / 4))
#else
/* holds_at() in GRACE__REG_SEEN mode: reader j, whose ctr reads c, is still in the section the
 * first scan found it in: that scan found it in a section, it is in one, with the same number */
#define HOLDS(j, c) (seen[j] != 0 && ((c) % 4) != 0 && ((c) / 4) == (seen[j] / 4))
#endif

/* count_holders(): one acquire load of each registered reader's ctr */
inline count_holders() {
	nh = 0;
	j = 0;
	do
	:: j < NR ->
		if
		:: SCANNED(j) && HOLDS(j, ctr[j]) -> nh++
		:: else -> skip
		fi;
		j++
	:: else -> break
	od
}

/* seen_pass() (the first scan without parking): load each scanned reader's ctr, record it in
 * seen if the reader is in a section; nh: how many are (0: the grace period is over) */
inline seen_pass() {
	nh = 0;
	j = 0;
	do
	:: j < NR ->
		atomic {
			if
			:: SCANNED(j) -> seen[j] = SEEN_OF(ctr[j])
			:: else -> seen[j] = 0
			fi;
			if
			:: seen[j] != 0 -> nh++
			:: else -> skip
			fi;
			j++
		}
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

#ifdef STEP
/* ---- stepped grace periods (STEP; src/core/gp.c, "Stepped grace periods") ----
 * The sequence seq = count * 4 + state (0 idle, 1 RUNNING: a driver runs it, 2 STEPPED: under
 * way, no driver); written only by locked read-modify-writes (compare-and-swap, exchange), so
 * never buffered, each a full barrier of the thread that runs it. seen[] is the registry's scan
 * state (pk[].seen), shared by whoever drives or steps the grace period under way: global here.
 * The waiters' futex: event (bumped by a park or seq_end that finds nsleepers > 0, then
 * FUTEX_WAKE), nsleepers, and gsleep (the updater blocked in FUTEX_WAIT on event).
 * Abstracted: the registry try-lock is a locked RMW of the stepper (a full barrier), and its
 * failure is the choice not to step (the state bits already keep the stepper out of a grace
 * period a driver runs, and the driver holds the lock only while RUNNING); when to begin
 * (engine/free.c's step_of(): garbage not covered by a started grace period) is a free choice
 * too, before or after the updater's snapshot. Not modelled: barrier B (not TSO), a stepper
 * outside any section, several sleepers, the engine's worker as a second waiter. */
#define SEQ_RUNNING 1
#define SEQ_STEPPED 2
#define SEQ_ST (seq % 4)
#define SEQ_CNT (seq / 4)
byte seq = 0;
byte seen[NR];
byte tgt = 0;          /* the updater's cookie, a count (global for the probes) */
byte event = 0;
byte nsleepers = 0;
bool gsleep = 0;
#define STEPPER 0      /* the reader that steps, from inside its own sections */
#ifndef ASK
#define asking 0
#endif
#ifdef ASK
/* ---- asking (ASK; src/flavor/memb.c, "Asking") ----
 * ask[i]: GRACE__W_ASK in reader i's waiter word, set by a step's locked RMW and cleared by the
 * reader's locked RMW (never buffered: each a full barrier of its thread). asking: the grace
 * period under way waits for answers (memb_ask.asking, the driver's, handed on with seq). */
bool ask[NR];
bool asking = 0;
#endif

/* seq_end of the grace period under way (exchange, seq_cst: the caller fenced first): the next
 * count, idle; the scan state is dead until the next first scan */
inline seq_end_step() {
	seq = (SEQ_CNT + 1) * 4;
#ifdef ASK
	asking = 0;
#endif
	j = 0;
	do
	:: j < NR -> seen[j] = 0; j++
	:: else -> break
	od;
	j = 0
}

/* gp_wake_sleepers(), after the exchange of seq and its barrier: the load of nsleepers, then
 * (fetch_add of event, locked; FUTEX_WAKE) */
inline gp_wake_sleepers(i) {
	if
	:: nsleepers != 0 ->
		atomic {
			r_fence(i);
			event++;
			if
			:: gsleep -> REACH(9) /* a step wakes the updater asleep on it */
			:: else -> skip
			fi
		};
		gsleep = 0 /* FUTEX_WAKE */
	:: else -> skip
	fi
}

#ifdef ASK
/* the reader's answer (memb_answer()): it loaded its waiter word and saw ASK; a full fence,
 * then the locked clear (drains the buffer first: a full barrier) */
inline answer(i) {
	if
	:: ask[i] -> atomic { r_fence(i); ask[i] = 0 }
	:: else -> skip
	fi
}
/* grace__registry_answered(): nh = the readers whose ASK bit is still set */
inline asked_count() {
	atomic {
		nh = 0;
		j = 0;
		do
		:: j < NR ->
			if
			:: ask[j] -> nh++
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		j = 0
	}
}
#endif

/* memb_step(), one non-blocking step of reader i from inside its section (its lock store done):
 * the try-lock of the registry (a locked RMW: drains the stepper's buffer; failing, the step
 * does nothing: the caller's choice to skip it), then adopt a STEPPED grace period (CAS
 * STEPPED -> RUNNING) and rescan the recorded readers (HOLDS against seen[], no new first
 * scan), or begin one (CAS idle -> RUNNING; barrier A; the first scan records seen[], the
 * stepper itself included: it holds until its next section); unlock; any holder left: park
 * (exchange RUNNING -> STEPPED, seq_cst, then wake the sleepers), else seq_end (and wake). */
inline step(i) {
	atomic {
		r_fence(i); /* the try-lock */
		if
		:: SEQ_ST == SEQ_STEPPED -> seq--; smode = 2 /* adopt */
		:: SEQ_ST == 0 -> seq++; smode = 1           /* begin */
		:: SEQ_ST == SEQ_RUNNING -> smode = 0        /* a driver runs it: nothing */
		fi
	};
	if
	:: smode == 1 ->
#ifdef ASK
		if
		:: true ->
			/* ask: every reader's ASK bit, one locked RMW each (ASK_SELF_ONLY: the
			 * stepper's own only), then whether all have answered */
			asking = 1;
			j = 0;
			do
#ifdef ASK_SELF_ONLY
			:: j < NR -> atomic { if :: j == i -> ask[j] = 1 :: else -> skip fi; j++ }
#else
			:: j < NR -> atomic { ask[j] = 1; j++ }
#endif
			:: else -> break
			od;
			asked_count()
		:: true ->
			/* the back-off: barrier A at once */
			membarrier();
			seen_pass()
		fi
#else
#ifndef STEP_NO_MB_A
		membarrier(); /* barrier A */
#endif
		seen_pass()
#endif
	:: smode == 2 && asking ->
#ifdef ASK
		asked_count();
		if
		:: nh == 0 -> skip /* answered: the grace period ends */
		:: nh != 0 -> skip /* still in time: held */
		:: nh != 0 ->      /* out of time: barrier A and the first scan */
			asking = 0;
			membarrier();
			seen_pass()
		fi
#else
		skip
#endif
	:: smode == 2 && !asking ->
#ifdef STEP_RESET_SEEN
		/* the mutant: the adoption loses the first scan's records */
		atomic {
			j = 0;
			do
			:: j < NR -> seen[j] = 0; j++
			:: else -> break
			od;
			j = 0
		};
#endif
		count_holders()
	:: smode == 0 -> skip
	fi;
	if
	:: smode != 0 && nh != 0 ->
		atomic { /* park: exchange RUNNING -> STEPPED, seq_cst */
			r_fence(i);
			seq++
		};
#ifndef STEP_PARK_NO_WAKE
		gp_wake_sleepers(i)
#else
		skip /* the mutant: a park wakes nobody */
#endif
	:: smode != 0 && nh == 0 ->
		atomic {
			r_fence(i);
			if
			:: smode == 2 && SEQ_CNT + 1 == tgt -> REACH(8) /* a poll ends the updater's */
			:: else -> skip
			fi;
#ifdef ASK
			if
			:: asking -> REACH(10) /* ended on the answers alone */
			:: else -> skip
			fi;
#endif
			seq_end_step()
		};
		gp_wake_sleepers(i)
	:: else -> skip
	fi;
	atomic {
		smode = 0;
		nh = 0
	}
}
#endif

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

/* the lock's test of the waiter word after its ctr store (rcu_read_lock(), then
 * grace__memb_lock_flagged()); outer: the outermost lock (nesting 1), the only one that wakes
 * the updater on WAITING (a nested lock's test only hands a parked reader back) */
inline lock_check(i, outer) {
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
			:: i == 0 -> handler(i, c) /* or between the clear and the push */
			:: skip
			fi;
#endif
			push(i)
		:: else -> skip
		fi
	:: else -> skip
	fi;
	if
	:: w && outer -> wake(i) /* WAITING seen by an outermost lock: wake once */
	:: else -> skip
	fi;
	d_step {
		pk = 0;
		got = 0
	}
}

#ifdef PARK_SIGNAL
/* A signal handler's section on reader i, inside an outermost lock whose ctr store (ctr c,
 * nesting 1) is done (at most one per run): the nested path of rcu_read_lock() (ctr + 1, no
 * test of waiter), rcu_dereference, the nested unlock (its test of waiter does nothing when
 * nested).
 * PARK_SIGNAL: 1 the handler may run between the lock's ctr store and its test of waiter, 2
 * between its fetch_and clearing PARK and its push, 3 both.
 * PARK_SIGNAL_FIX, a possible fix: the nested lock tests waiter after its store too (a PARK
 * bit sends it to the same hand-back), and the hand-back runs with signals blocked, from before
 * its fetch_and to after the fence that follows the push (window 2 closed). */
inline handler(i, c) {
	if
	:: !sig ->
		sig = 1;
		c = NESTED_LOCK(c);
		r_store(i, c);
#ifdef PARK_SIGNAL_FIX
		lock_check(i, 0);
#endif
		atomic {
			p = ptr;
			assert(!freed[p]);
			held[i] = p;
			insec[i] = 1
		}
		insec[i] = 0;
		c = c - 1; /* the nested unlock */
		r_store(i, c)
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
#ifdef DRAIN_RESETS_SEEN
			seen[j] = 0; /* every reader taken back: holds nothing */
#else
			if
			:: pstate[j] == P_PARKED -> seen[j] = 0 /* not scanned by the first scan */
			:: else ->
				/* scanned by the first scan: keeps what it recorded (a drain in the
				 * middle of the wait taking a reader found in a section: probe 6) */
				if
				:: seen[j] != 0 -> REACH(6)
				:: else -> skip
				fi
			fi;
#endif
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
	byte c = 0, p, k = 0; /* c: ctr as this reader last stored it (its own view of ctr[i]) */
	bool w;
	bit old;
#ifdef PARK
	bool pk, got;
#endif
#ifdef PARK_SIGNAL
	bool sig = 0;
#endif
#ifdef STEP
	byte j, nh, smode; /* the stepper's, for step() */
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
	:: k < NSECT_OF(i) ->
		/* rcu_read_lock(), outermost: the next section number, nesting 1, computed from
		 * the reader's own word (no shared load); compiler barrier only */
		c = OUTER_LOCK(c);
#if defined(PARK) && defined(PARK_CHECK_BEFORE_STORE)
		lock_check(i, 1); /* the mutant: the waiter word loaded before the store */
#endif
		r_store(i, c);
#if defined(PARK_SIGNAL) && (PARK_SIGNAL & 1)
		if
		:: i == 0 -> handler(i, c) /* the handler may run between the store and the test */
		:: skip
		fi;
#endif
#if defined(PARK) && !defined(PARK_CHECK_BEFORE_STORE) && !defined(PARK_NO_CHECK)
		/* then the load of waiter (may overtake the buffered store): any bit set sends
		 * the lock to grace__memb_lock_flagged() */
		lock_check(i, 1);
#endif
#ifdef FALLBACK
		if
		:: RFENCE -> r_fence(i) /* memb_lock_slow: smp_mb after the lock store */
		:: else -> skip
		fi;
#endif
#ifdef ASK
		/* then the load of waiter: ASK sends the outermost lock to the answer, before the
		 * section reads anything */
		answer(i);
#endif
		/* p = rcu_dereference(ptr); the reader uses *p until its last access below */
		atomic {
			p = ptr;
			assert(!freed[p]); /* never published after its free */
			held[i] = p;
			insec[i] = 1
		}
#ifdef STEP
		/* the stepper retires objects inside its sections: a step, or none (the try-lock
		 * failed, or nothing to step) */
		if
		:: i == STEPPER -> step(i)
		:: skip
		fi;
#endif
		/* sometimes a nested section: rcu_read_lock() (ctr + 1: the number unchanged);
		 * rcu_read_unlock() (ctr - 1) (reader 0 only, unless NEST_ALL: the nesting bits never
		 * change whether a reader holds, but under the mutants SEEN_ANY_CHANGE and
		 * SEQ_BUMP_NESTED). The nested lock tests waiter after its store as the outermost
		 * one does: with PARK it may hand a parked reader back (in the middle of a section
		 * whose outermost lock missed a PARK bit set meanwhile); WAITING wakes from nesting 1
		 * only, and outside PARK there is no other bit, so the test is left out there; the
		 * nested unlock's test does nothing (nested). PARK_SIGNAL without PARK_SIGNAL_FIX:
		 * the library before that fix, whose nested locks tested nothing. */
		if
		:: ((i == 0 && NEST0) || NEST_ALL) ->
			c = NESTED_LOCK(c);
			r_store(i, c);
#ifdef ASK_NESTED_ANSWER
			answer(i); /* the mutant: a nested lock answers */
#endif
#if defined(PARK) && !defined(PARK_NO_CHECK) && !(defined(PARK_SIGNAL) && !defined(PARK_SIGNAL_FIX))
			lock_check(i, 0); /* the nested lock's test: may hand a parked reader back */
#endif
			c = c - 1;
			r_store(i, c)
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
		c = c - 1; /* nesting 0, the section number kept */
		r_store(i, c);
#ifdef FALLBACK
		if
		:: RFENCE -> r_fence(i) /* fence between the ctr store and the waiter load */
		:: else -> skip
		fi;
#endif
#ifdef ASK
		/* the unlock's load of waiter: ASK, at nesting 0: the answer */
		answer(i);
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
	byte u = 0, cur_obj = 0, new_obj, spins, nh, j, unflagged;
#ifdef STEP
	byte ev, umode;  /* the event read, what the CAS did (tgt: global, for the probes) */
#else
	byte seen[NR];   /* pk[].seen: the first scan's record of reader j (0: none), under the
	                  * registry lock; reset to 0 when a grace period ends (a dead value) */
#endif
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
#ifdef STEP
		/* grace__gp_snap(): the count of the first grace period that starts after this
		 * load (the next one if idle, the one after the one under way otherwise) */
		atomic {
			if
			:: SEQ_ST == 0 -> tgt = SEQ_CNT + 1
			:: else -> tgt = SEQ_CNT + 2
			fi
		};
		/* grace__gp_wait(): until the count reaches tgt (gp_done, an acquire load) */
gp_next:
		if
		:: SEQ_CNT >= tgt -> goto gp_free
		:: else -> skip
		fi;
		ev = event; /* before the checks: a wake after it changes event */
		atomic { /* gp_start's CAS idle -> RUNNING, else gp_adopt's STEPPED -> RUNNING */
			u_fence();
			if
			:: SEQ_ST == 0 -> seq++; umode = 1
			:: SEQ_ST == SEQ_STEPPED -> seq--; umode = 2
			:: SEQ_ST == SEQ_RUNNING -> umode = 0
			fi
		};
		if
		:: umode == 1 -> skip /* a grace period of its own: barrier A, the first scan, ... */
		:: umode == 2 ->
			/* adopted: the rest of the wait (memb_resume_readers()), HOLDS against the
			 * recorded seen[], no barrier A, no first scan */
#ifdef STEP_RESET_SEEN
			atomic {
				j = 0;
				do
				:: j < NR -> seen[j] = 0; j++
				:: else -> break
				od;
				j = 0
			};
#endif
			if
			:: SEQ_CNT + 1 == tgt -> REACH(7) /* adopts the grace period it waits for */
			:: else -> skip
			fi;
			umode = 0;
#ifdef ASK
			/* memb_resume_readers(): an asked grace period ends on the answers, or
			 * (out of time) runs barrier A and the whole wait */
			if
			:: asking ->
				if
				:: atomic { !ask[0] && !ask[1] -> asking = 0 }; goto gp_over
				:: atomic { asking = 0 }; goto gp_fresh
				fi
			:: else -> skip
			fi;
#endif
			goto gp_resume
		:: umode == 0 ->
			/* a driver (the stepper, mid-step) runs it: sleep on event while RUNNING */
			atomic { /* fetch_add of nsleepers, seq_cst, and the barrier after it */
				u_fence();
				nsleepers++
			};
			if
#ifdef STEP_SLEEP_ON_STEPPED
			:: SEQ_CNT < tgt && SEQ_ST != 0 -> /* the mutant: STEPPED too (in_progress) */
#else
			:: SEQ_CNT < tgt && SEQ_ST == SEQ_RUNNING ->
#endif
				atomic { /* FUTEX_WAIT(event, ev) */
					if
					:: event == ev -> gsleep = 1
					:: else -> skip
					fi
				};
				(gsleep == 0) /* blocked until FUTEX_WAKE */
			:: else -> skip
			fi;
			nsleepers--; /* fetch_sub, relaxed (a locked RMW on x86) */
			goto gp_next
		fi;
#endif
#ifdef IDLE
		/* the idle fast path: no registered thread (the updater is not one): no barrier A,
		 * no scan (grace__registry_alone(), an acquire load of the count) */
		if
		:: nthreads == 0 -> goto gp_over
		:: else -> skip
		fi;
#endif
#ifdef PARK
		/* grace__registry_quiet(): under the registry lock (a locked RMW), after the fence
		 * that follows seq_start: take the unpark stack; if no reader is scanned any more,
		 * no barrier A, no scan */
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
#ifdef SEEN_BEFORE_A
		/* the mutant: the first scan, which records seen, before barrier A */
		seen_pass();
#endif
#ifdef ASK
		/* memb_wait_readers(), a grace period of its own (umode 1; the adopted path jumps
		 * to gp_fresh below): ask every reader, one locked RMW each, under the lock after
		 * the fence that follows seq_start; then end on the answers, or (out of time) run
		 * barrier A and the whole wait. Or the back-off: barrier A at once. */
		if
		:: true ->
			asking = 1;
			j = 0;
			do
			:: j < NR -> atomic { ask[j] = 1; j++ }
			:: else -> break
			od;
			if
#ifdef ASK_UPDATER_NO_WAIT
			:: atomic { asking = 0 }; REACH(11); goto gp_over /* the mutant */
#else
			:: atomic { !ask[0] && !ask[1] -> asking = 0 }; REACH(11); goto gp_over
#endif
			:: atomic { asking = 0 }
			fi
		:: true -> skip
		fi;
gp_fresh:
#endif
		/* memb_wait_readers(): barrier A (no step P: no counter is shared with readers) */
		if
		:: MB_A -> heavy_barrier()
		:: else -> u_fence() /* the bug variant: the updater's own fence only */
		fi;
		u_fence(); /* pthread_mutex_lock(&reg->lock) in grace__registry_wait() */
#ifdef PARK
		/* park_pass(), the first scan: take the stack; load every scanned reader's ctr;
		 * then, reader by reader, record seen (the ctr if in a section, else none), confirm
		 * or undo the parks the last pass set, and set PARK on readers seen idle (any of
		 * them: the heuristic does not matter); done if no scanned reader was in a
		 * section */
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
				:: SCANNED(j) ->
					seen[j] = SEEN_OF(cv[j]);
					if
					:: seen[j] != 0 -> nh++
					:: else -> skip
					fi
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
#else
#ifndef SEEN_BEFORE_A
		/* seen_pass(), the first scan (under the registry lock, after barrier A) */
		seen_pass();
#endif
		if
		:: nh == 0 -> goto gp_over /* no reader in a section */
		:: else -> skip
		fi;
#endif
		/* step S: wait until no reader the first scan found in a section is still in that
		 * section (holders only leave: a reader's ctr changes its number or its nesting
		 * only by its own stores, and seen stays) */
#ifdef STEP
gp_resume:
#endif
		spins = 0;
		do
		:: true ->
#ifdef PARK
			/* meanwhile another registered thread (not modelled otherwise) may exit:
			 * registry_del() takes the registry lock and drains the unpark stack, in the
			 * middle of the wait */
			if
			:: atomic { drain() }
			:: skip
			fi;
#endif
			count_holders();
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
					:: SCANNED(j) && HOLDS(j, ctr[j]) ->
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
				/* one pass: holders, and holders whose flag is not set: flag those and
				 * run W again (reg_recheck(); under the rule of seen no reader becomes a
				 * holder after the flag loop, but a holder's flag may be cleared by its
				 * own outermost lock, which found WAITING and woke the updater) */
				nh = 0;
				unflagged = 0;
				j = 0;
				do
				:: j < NR ->
					if
					:: SCANNED(j) && HOLDS(j, ctr[j]) ->
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
				count_holders();
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
#ifdef STEP
		/* seq_end (exchange, seq_cst); the only sleeper is this updater: no wake */
		atomic {
			u_fence();
			seq_end_step()
		};
		goto gp_next;
		/* the cookie's grace period is over */
gp_free:
#endif
		atomic {
			j = 0;
			do
			:: j < NR ->
				assert(!(insec[j] && held[j] == cur_obj));
				j++
			:: else -> break
			od;
			freed[cur_obj] = 1;
#ifndef STEP
			j = 0;
			do
			:: j < NR -> seen[j] = 0; j++ /* dead until the next first scan */
			:: else -> break
			od;
#endif
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
