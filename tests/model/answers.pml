/* SPDX-License-Identifier: MIT */
/*
 * Promela model of a blocking grace period's sleep for the answers (src/flavor/memb.c:
 * memb_await_answers(), memb_sleep_for_answers(), memb_answer() and its callers,
 * memb_unregister_blocked(), memb_thread_exit_blocked(); src/core/registry.c:
 * grace__registry_ask(), grace__registry_ask_arm(), grace__registry_answered(),
 * grace__registry_ask_state(), grace__registry_wake(); src/core/wait.c: grace__wait_wake()).
 * Checked by tests/model/check.sh.
 *
 * What it checks: liveness of the wake-up protocol, as "the driver never sleeps for good". The
 * futex wait has no timeout here, so a lost wake-up leaves the driver blocked after every reader
 * has finished: an invalid end state. Safety is not at stake (only the answers end the grace
 * period, memb.pml checks that with asking, STEP + ASK); what a broken wake-up costs in the
 * library is the bound ASK_SLEEP_NS, 10 ms, then barrier A. No test can see that (it is a
 * latency), hence this model.
 *
 * The driver (the grace-period engine's blocking driver, one at a time) runs NGP grace
 * periods. Each one asks every registered reader (the ASK bit, under the registry lock), then
 * waits as memb_await_answers() does: under the lock, if every reader answered, the grace
 * period ends; otherwise the hint (grace__registry_ask_state()) reads whether every reader still
 * to answer is inside a section. If one is outside, the driver falls back to barrier A (the end
 * of this model's grace period: what barrier A proves is memb.pml's business). If all are inside,
 * it sleeps for the answers, in rounds: store SLEEPING into the futex word; under the lock, flag
 * every reader still to answer with WAITING (an RMW that returns the old word; with ASK already
 * clear the flag is taken back) and look whether all have answered; if not, futex_wait(SLEEPING).
 *
 * A reader runs NSECT sections (the first may be under way when the model starts), then stops
 * outside any section, or, with UNREG, unregisters, or leaves by thread exit in the middle of its
 * last section (the exit destructor ends the section, wakes a flagged driver, then unregisters).
 * Its boundaries: the store of the nesting (in[]), then the load of its waiter word; a word with
 * ASK in it sends the boundary to the answer, an RMW that clears ASK and returns the old word,
 * whose WAITING (a flag set since the load) joins the loaded one; WAITING wakes the driver
 * (grace__registry_wake(): clear the flag, then if the futex word reads SLEEPING, exchange it
 * for AWAKE and, if the exchange returned SLEEPING, futex_wake). Nesting is left out: a nested
 * boundary neither answers nor wakes (memb.pml checks the nested answer's safety).
 *
 * Memory model: sequentially consistent. The protocol's cross-thread orders are two RMWs of one
 * word (the flag and the answer: coherence orders them) and the release of the flag against
 * the acquire fence of grace__wait_wake() (the reader that read the flag reads SLEEPING or
 * later): both are what SC gives. What SC hides is the reader's unlock store buffered past its
 * load of the waiter word, against the driver's ask and its hint's read of the nesting: the
 * reader misses the ask, the hint reads it inside a section it has left, and if it then goes
 * idle nobody answers. That is the case the bound of 10 ms covers (docs/design.md, section 3,
 * "Sleeping for the answers"), not a lost wake-up, and it is not modelled.
 *
 * Variants (cpp macros, see check.sh):
 *  (none)             must hold: the driver always ends its grace periods;
 *  UNREG              must hold: readers also unregister, or exit inside a section;
 *  SLEEPING_LATE      the store of SLEEPING after the flags and the look, just before the
 *                     futex wait: must fail (an answer between them reads AWAKE, wakes nobody);
 *  CHECK_BEFORE_ARM   the look before the flags: must fail (an answer between them makes the
 *                     flag's RMW take the flag back, and nobody wakes the driver);
 *  ANSWER_DROPS_FLAG  a boundary wakes only on the WAITING it loaded, not on the one its answer
 *                     returned (`w |= memb_answer(r)` without the `w |=`): must fail;
 *  UNREG_NO_WAKE      with UNREG: the unregistration clears the flag and wakes nobody: must
 *                     fail (the driver flagged a reader that then left without answering);
 *  PROBE=mask         reachability (safety mode): 1 the driver woke from a futex wait; 2 it
 *                     slept a second round in one grace period; 3 a flag was taken back;
 *                     4 an unregistration woke it; 5 a wake from a reader the driver had
 *                     flagged in an earlier round, while it sleeps in a later one.
 */

#ifndef NR
#define NR 2
#endif
#ifndef NSECT
#define NSECT 2
#endif
#ifndef NGP
#define NGP 2
#endif

#define W_ASK 1
#define W_WAITING 2
#define AWAKE 0
#define SLEEPING 1

#ifdef PROBE
#define REACH(n) assert(((PROBE >> n) & 1) == 0)
#else
#define REACH(n) skip
#endif

byte waiter[NR];    /* the reader's waiter word: W_ASK, W_WAITING */
bit in[NR];         /* inside a section (ctr's nesting, 0 or 1) */
bit reg[NR];     /* registered: in the registry's active set */
bit reglock;        /* the registry lock */
byte futex = AWAKE; /* the registry's futex word (wq.futex) */
bit asleep;         /* the driver is inside futex_wait */
byte gp;            /* the driver's grace period, 1..NGP */
#ifdef PROBE
byte round;          /* ghost: the driver's sleeping rounds, over all grace periods */
byte flagged_in[NR]; /* ghost: the round that last flagged reader i */
#endif
bit finished;
bit ready;       /* init has set the readers up */

inline lock() { atomic { reglock == 0 -> reglock = 1 } }
inline unlock() { reglock = 0 }

/* futex_wake(futex, INT_MAX): wakes whoever is inside futex_wait now */
inline futex_wake() { asleep = 0 }

/* grace__wait_wake(): a load, then the exchange only if it read SLEEPING */
inline wait_wake(old) {
	if
	:: futex == SLEEPING ->
		atomic { old = futex; futex = AWAKE };
		if
		:: old == SLEEPING ->
			if
			:: asleep -> REACH(1)
			:: else -> skip
			fi;
			futex_wake()
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* grace__registry_wake(): clear the flag (a relaxed RMW), then wake */
inline registry_wake(i, old) {
#ifdef PROBE
	if
	:: flagged_in[i] != 0 && flagged_in[i] != round && asleep -> REACH(5)
	:: else -> skip
	fi;
#endif
	waiter[i] = waiter[i] & ~W_WAITING;
	wait_wake(old)
}

/* memb_answer(): the seq_cst RMW that clears ASK, returning the old word */
inline answer(i, w, old) {
	atomic { old = waiter[i]; waiter[i] = waiter[i] & ~W_ASK };
#ifndef ANSWER_DROPS_FLAG
	w = w | old
#else
	skip
#endif
}

/* an outermost boundary after its store of the nesting: the fast path's load, then the flagged
 * path's (grace__memb_lock_flagged(), grace__memb_unlock_flagged()) */
inline boundary(i, w, old) {
	w = waiter[i];
	if
	:: w != 0 ->
		w = waiter[i];
		if
		:: w & W_ASK -> answer(i, w, old)
		:: else -> skip
		fi;
		if
		:: w & W_WAITING -> registry_wake(i, old)
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* memb_unregister_blocked(): out of the registry under the lock, then exchange the word for 0 and
 * wake on the flag it held */
inline unregister(i, old) {
	lock();
	reg[i] = 0;
	unlock();
	atomic { old = waiter[i]; waiter[i] = 0 };
#ifndef UNREG_NO_WAKE
	if
	:: old & W_WAITING ->
		if
		:: asleep -> REACH(4)
		:: else -> skip
		fi;
		wait_wake(old)
	:: else -> skip
	fi
#endif
}

proctype reader(byte i) {
	byte w, old, s;

	/* the first section may be under way (in[i] set by init) */
	do
	:: s == NSECT -> break
	:: s < NSECT && in[i] == 0 ->
		in[i] = 1;
		boundary(i, w, old)
	:: s < NSECT && in[i] == 1 ->
#ifdef UNREG
		if
		:: s == NSECT - 1 ->
			/* thread exit inside the section (memb_thread_exit_blocked()): the section
			 * ends, a flagged driver is woken, no answer; then the unregistration */
			in[i] = 0;
			w = waiter[i];
			if
			:: w & W_WAITING -> registry_wake(i, old)
			:: else -> skip
			fi;
			unregister(i, old);
			goto out
		:: true -> skip
		fi;
#endif
		in[i] = 0;
		boundary(i, w, old);
		s++
	od;
#ifdef UNREG
	if
	:: unregister(i, old)
	:: skip
	fi;
#endif
out:
	skip
}

/* grace__registry_answered() (lock held) */
inline all_answered(i, r) {
	r = 1;
	i = 0;
	do
	:: i < NR ->
		if
		:: reg[i] && (waiter[i] & W_ASK) -> r = 0
		:: else -> skip
		fi;
		i++
	:: else -> break
	od
}

/* grace__registry_ask_arm() (lock held) */
inline arm(i, old) {
	i = 0;
	do
	:: i < NR ->
		if
		:: reg[i] && (waiter[i] & W_ASK) ->
			atomic { old = waiter[i]; waiter[i] = waiter[i] | W_WAITING };
#ifdef PROBE
			flagged_in[i] = round;
#endif
			if
			:: !(old & W_ASK) ->
				REACH(3);
				waiter[i] = waiter[i] & ~W_WAITING
			:: else -> skip
			fi
		:: else -> skip
		fi;
		i++
	:: else -> break
	od
}

active proctype driver() {
	byte i, old, rounds;
	bit r, allin;

	ready;
	gp = 1;
	do
	:: gp > NGP -> break
	:: gp <= NGP ->
		/* grace__registry_ask(), under the lock */
		lock();
		i = 0;
		do
		:: i < NR ->
			if
			:: reg[i] -> atomic { waiter[i] = waiter[i] | W_ASK }
			:: else -> skip
			fi;
			i++
		:: else -> break
		od;
		unlock();
		/* memb_await_answers(): a look and the hint, under the lock */
		lock();
		all_answered(i, r);
		allin = 1;
		i = 0;
		do
		:: i < NR ->
			if
			:: reg[i] && (waiter[i] & W_ASK) && in[i] == 0 -> allin = 0
			:: else -> skip
			fi;
			i++
		:: else -> break
		od;
		unlock();
		if
		:: r -> skip /* answered */
		:: !r && !allin -> skip /* barrier A: the fallback */
		:: !r && allin ->
			/* memb_sleep_for_answers() */
			rounds = 0;
			do
			:: true ->
#ifndef SLEEPING_LATE
				futex = SLEEPING;
#endif
#ifdef PROBE
				round++;
#endif
				lock();
#ifndef CHECK_BEFORE_ARM
				arm(i, old);
				all_answered(i, r);
#else
				all_answered(i, r);
				arm(i, old);
#endif
				unlock();
				if
				:: r -> break
				:: else -> skip
				fi;
#ifdef SLEEPING_LATE
				futex = SLEEPING;
#endif
				if
				:: rounds == 1 -> REACH(2)
				:: else -> rounds = 1
				fi;
				/* futex_wait(futex, SLEEPING): sleeps only if the word still reads it */
				atomic {
					if
					:: futex == SLEEPING -> asleep = 1
					:: else -> skip
					fi
				};
				(asleep == 0)
			od;
			futex = AWAKE
		fi;
		gp++
	od;
	finished = 1
}

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i < NR ->
			reg[i] = 1;
			if
			:: in[i] = 0
			:: in[i] = 1
			fi;
			run reader(i);
			i++
		:: else -> break
		od;
		ready = 1
	}
}
