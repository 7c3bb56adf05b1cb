/* SPDX-License-Identifier: MIT */
/*
 * Promela model of hazard-pointer protect against the asymmetric fence and the scan
 * (include/grace/hazptr.h: grace_hazptr_protect(), grace__hazptr_publish(); src/hazptr/hazptr.c:
 * snapshot(), Claim 1). Checked by tests/model/check.sh.
 *
 * Memory is x86-TSO: each thread's stores go through a FIFO store buffer that drains to memory
 * at any moment; a thread's loads read its own buffer first (store forwarding), else memory.
 * Loads are not reordered with loads, nor stores with stores: the only reordering is a store
 * overtaken by a later load, which the buffer gives. A full fence (smp_mb) drains the buffer.
 * membarrier(2) puts a full barrier in every running thread's instruction stream at some point
 * between its start and its return, and orders the caller's earlier accesses before that: in
 * the model it drains the caller's buffer, then (atomically, at the moment the IPI lands) the
 * reader's.
 *
 * Reader R: p = src; hp = p (publish: a store, then barrier P: a compiler barrier, no code);
 * q = src; if q != p: p = q, publish again; else use *p (assert it is not freed); hp = 0.
 * Updater S: src = B (unlinks A; A is retired); scan: barrier M (membarrier), then load hp; if
 * hp != A, free A.
 *
 * Property: R never uses a freed object (assert at the use).
 *
 * Variants (cpp macros, see check.sh):
 *  (none)              the asymmetric fence: must hold;
 *  FALLBACK            both sides fence (smp_mb after the publish, smp_mb in the scan): must hold;
 *  NO_MEMBARRIER       the scan loads hp with no barrier M: must fail;
 *  NO_VALIDATE         protect publishes and uses p without the reload ("publish without
 *                      validate"): must fail;
 *  FALLBACK_NO_RFENCE  the fallback with the reader's fence removed (the scan fences): must
 *                      fail;
 *  SCAN_FIRST          the scan's barrier and load before the unlink (a scan judging an object
 *                      retired after it began): must fail;
 *  NO_BARRIER_P        barrier P removed: the compiler may hoist the validating reload above
 *                      the publishing store: must fail.
 */

#define NONE 0
#define A 1
#define B 2

byte src = A;   /* memory */
byte hp = NONE; /* memory: the reader's hazard pointer */
bit freed_a;
bit used;       /* ghost: R used an object */

/* R's store buffer (to hp only) and S's (to src only), FIFO */
chan rbuf = [2] of { byte };
chan sbuf = [1] of { byte };

/* Drain one store of a buffer to memory. */
inline rdrain1() {
	byte v_;
	rbuf?v_;
	hp = v_;
}
inline rdrain() {
	do
	:: nempty(rbuf) -> rdrain1()
	:: empty(rbuf) -> break
	od
}
inline sdrain() {
	byte w_;
	do
	:: nempty(sbuf) -> sbuf?w_; src = w_
	:: empty(sbuf) -> break
	od
}

/* The buffers drain at any moment. */
active proctype drainer()
{
	byte v, w;
end:
	do
	:: atomic { nempty(rbuf) -> rbuf?v; hp = v }
	:: atomic { nempty(sbuf) -> sbuf?w; src = w }
	od
}

/* S's load of src after its own store: store forwarding (R loads src: no forwarding). */

active proctype reader()
{
	byte p, q;

	p = src;
again:
#ifdef NO_BARRIER_P
	q = src; /* the reload, hoisted above the store */
	rbuf!p;
#else
	rbuf!p; /* publish: hp = p (release store: a plain store on x86) */
#endif
#ifdef FALLBACK
#ifndef FALLBACK_NO_RFENCE
	atomic { rdrain() } /* smp_mb: pairs with the scan's fence */
#endif
#endif
	/* barrier P: a compiler barrier, no code */
#ifdef NO_VALIDATE
	q = p;
#elif !defined(NO_BARRIER_P)
	q = src;
#endif
	if
	:: q != p -> p = q; goto again
	:: else
	fi;
	/* use *p */
	atomic {
		assert(!(p == A && freed_a));
		used = 1
	}
	rbuf!NONE /* hazptr_reset(): release store */
}

active proctype updater()
{
	byte h;

#ifdef SCAN_FIRST
	goto scan;
unlink:
#endif
	sbuf!B; /* unlink A (then hazptr_retire(A)) */
#ifdef SCAN_FIRST
	goto done;
scan:
#endif
	/* barrier M */
#ifndef NO_MEMBARRIER
#ifdef FALLBACK
	atomic { sdrain() } /* smp_mb: pairs with the reader's fence */
#else
	/* membarrier(): the caller's earlier stores first, then a full barrier in R's stream */
	atomic { sdrain() };
	atomic { rdrain() }
#endif
#endif
	h = hp;
	if
	:: h != A -> freed_a = 1
	:: else
	fi;
#ifdef SCAN_FIRST
	goto unlink;
done:
#endif
	skip
}
