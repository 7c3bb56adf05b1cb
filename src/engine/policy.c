/* SPDX-License-Identifier: MIT */
/* The callback engine's grace-period policy (see policy.h). */
#include "engine/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"
#include "core/gp.h"
#include "core/options.h"
#include "core/sys.h"

/* The option table's defaults and ranges are this module's (core/options.def). */
#define GRACE_OPTION(name, kind, def, lo, hi, unit, doc) \
	enum { opt_def_##name = (def), opt_lo_##name = (lo), opt_hi_##name = (hi) };
#include "core/options.def"
#undef GRACE_OPTION
_Static_assert(opt_def_GRACE_BATCH_PERIOD_US == GRACE__POLICY_DEFAULT_PERIOD_US &&
		       opt_hi_GRACE_BATCH_PERIOD_US == GRACE__POLICY_MAX_PERIOD_US &&
		       opt_lo_GRACE_BATCH_PERIOD_US == 1,
	       "GRACE_BATCH_PERIOD_US: options.def and policy.h disagree");
_Static_assert(opt_def_GRACE_LAZY_PERIOD_US == GRACE__POLICY_DEFAULT_LAZY_PERIOD_US &&
		       opt_hi_GRACE_LAZY_PERIOD_US == GRACE__POLICY_MAX_PERIOD_US &&
		       opt_lo_GRACE_LAZY_PERIOD_US == 1,
	       "GRACE_LAZY_PERIOD_US: options.def and policy.h disagree");
_Static_assert(opt_def_GRACE_PACE_CAP_US == 0 &&
		       opt_hi_GRACE_PACE_CAP_US == GRACE__POLICY_MAX_PERIOD_US,
	       "GRACE_PACE_CAP_US: options.def and policy.h disagree");
_Static_assert(opt_def_GRACE_POLL_MIN_GAP_US == GRACE__POLICY_DEFAULT_MIN_GAP_US &&
		       opt_hi_GRACE_POLL_MIN_GAP_US == GRACE__POLICY_MAX_PERIOD_US,
	       "GRACE_POLL_MIN_GAP_US: options.def and policy.h disagree");

static uint64_t pace_cap_ns(const struct grace__policy *p)
{
	uint32_t cap = grace_load_relaxed(&p->period_us);
	return (uint64_t)(cap ? cap : GRACE__POLICY_DEFAULT_PACE_CAP_US) * 1000;
}

void grace__policy_init(struct grace__policy *p)
{
	/* The option table's ranges are grace__policy_set()'s (core/options.def). */
	static const enum grace_gp_policy kinds[] = { GRACE_POLICY_ADAPTIVE, GRACE_POLICY_POLL,
						      GRACE_POLICY_BATCH, GRACE_POLICY_LAZY };

	p->kind = kinds[grace__opt(GRACE__OPT_GRACE_POLICY)];
	if (grace__opt(GRACE__OPT_GRACE_POLICY_BATCH) && !grace__opt_given(GRACE__OPT_GRACE_POLICY))
		p->kind = GRACE_POLICY_BATCH;
	/* BATCH: the period; ADAPTIVE: the cap of the pacing (0: GRACE__POLICY_DEFAULT_PACE_CAP_US),
	 * in the ranges grace__policy_set() takes them. */
	if (p->kind == GRACE_POLICY_BATCH)
		p->period_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_BATCH_PERIOD_US);
	else if (p->kind == GRACE_POLICY_LAZY)
		p->period_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_LAZY_PERIOD_US);
	else
		p->period_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_PACE_CAP_US);
	/* Range-checked like the periods: the gap also spaces hurried grace periods and barriers
	 * in every policy, and a negative value cast to 32 bits would make it 71 minutes. */
	p->min_gap_us = (uint32_t)grace__opt(GRACE__OPT_GRACE_POLL_MIN_GAP_US);
	p->pace_ns = GRACE__POLICY_PACE_MIN_NS;
	p->last_end = 0;
	p->pressure = 0;
}

int grace__policy_set(struct grace__policy *p, enum grace_gp_policy kind, unsigned int period_us)
{
	switch (kind) {
	case GRACE_POLICY_POLL:
		break;
	case GRACE_POLICY_BATCH:
		if (period_us == 0 || period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us, period_us);
		break;
	case GRACE_POLICY_ADAPTIVE:
		if (period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us, period_us);
		break;
	case GRACE_POLICY_LAZY:
		if (period_us > GRACE__POLICY_MAX_PERIOD_US)
			return -EINVAL;
		grace_store_relaxed(&p->period_us,
				    period_us ? period_us : GRACE__POLICY_DEFAULT_LAZY_PERIOD_US);
		break;
	default:
		return -EINVAL;
	}
	grace_store_relaxed(&p->kind, (uint32_t)kind);
	return 0;
}

/* POLL's back-to-back rule: when the last grace period has just ended, the next starts
 * min_gap_us after it; a lone request (none ended recently) starts at once. */
static uint64_t gap_start(const struct grace__policy *p, const struct grace__policy_view *v)
{
	uint64_t gap = (uint64_t)grace_load_relaxed(&p->min_gap_us) * 1000;
	return gap && v->last_gp_end ? v->last_gp_end + gap : 0;
}

struct grace__policy_decision grace__policy_decide(const struct grace__policy *p,
						   const struct grace__policy_view *v)
{
	struct grace__policy_decision d = { 0, 0, false };
	uint64_t start;

	if (v->urgent) {
		d.gpflags = GRACE__GP_EXPEDITED;
		return d;
	}
	if (v->stopping || v->flush)
		return d;
	if (v->hurry) {
		/* No pacing and no batch period, but the back-to-back rule of POLL: a flood of
		 * hurried callbacks would otherwise run grace periods with no gap, each for a
		 * handful of callbacks, and starve the callbacks of the CPU it spends. */
		start = gap_start(p, v);
		d.gap = true;
		goto out;
	}
	switch (grace_load_relaxed(&p->kind)) {
	case GRACE_POLICY_BATCH:
		start = v->oldest_ns + (uint64_t)grace_load_relaxed(&p->period_us) * 1000;
		break;
	case GRACE_POLICY_LAZY:
		if (v->requested) {
			/* A polled request is not lazy (in Linux only call_rcu() is): at once, with
			 * POLL's least gap, as a hurried callback. Memory pressure comes as a hurry
			 * (see policy.h). */
			start = gap_start(p, v);
			d.gap = true;
		} else {
			start = v->oldest_ns + (uint64_t)grace_load_relaxed(&p->period_us) * 1000;
		}
		break;
	case GRACE_POLICY_POLL:
		/* When grace periods run back to back (a steady stream of callbacks), leave a short
		 * gap so each serves a larger batch; a lone callback (no grace period just ended)
		 * never waits for it. */
		start = gap_start(p, v);
		break;
	default: { /* ADAPTIVE: at once, or pace after the domain's last grace period */
		uint64_t last = grace_load_relaxed(&p->last_end);
		start = last ? last + grace_load_relaxed(&p->pace_ns) : 0;
		break;
	}
	}
out:
	if (v->now < start)
		d.sleep_ns = (int64_t)(start - v->now);
	return d;
}

void grace__policy_gp_done(struct grace__policy *p, uint64_t now, uint64_t cost_ns)
{
	grace_store_relaxed(&p->last_end, now);
	if (cost_ns) {
		uint64_t pace = cost_ns * GRACE__POLICY_COST_FACTOR, cap = pace_cap_ns(p);
		if (pace < GRACE__POLICY_PACE_MIN_NS)
			pace = GRACE__POLICY_PACE_MIN_NS;
		if (pace > cap)
			pace = cap;
		grace_store_relaxed(&p->pace_ns, pace);
	}
}

int64_t grace__policy_linger_ns(const struct grace__policy *p, uint64_t now, uint64_t arrival_ns,
				uint64_t last_new)
{
	uint32_t kind = grace_load_relaxed(&p->kind);

	if (kind == GRACE_POLICY_LAZY) {
		/* Busy: callbacks found within the last two periods, and at least once per two
		 * periods on average. Then a nap of one period costs one timer wake-up and finds
		 * the callbacks of that period, stamped with its start (grace__policy_stamp()):
		 * their grace period starts when the nap ends, one per period. Sleeping until
		 * woken would cost each period a heavy barrier, a wake-up call from the first
		 * call_rcu(), and a timed wait of a period after it. Two periods, not one: the
		 * passes of a napping worker are a period apart, so callbacks found at every
		 * pass measure a period between passes, plus the grace period. A domain that goes
		 * quiet costs at most one empty nap before the worker sleeps until woken. */
		uint64_t two = 2000ull * grace_load_relaxed(&p->period_us);
		if (last_new && now - last_new < two && arrival_ns && arrival_ns <= two)
			return (int64_t)(two / 2);
		return 0;
	}
	if (kind != GRACE_POLICY_ADAPTIVE)
		return 0;
	uint64_t pace = grace_load_relaxed(&p->pace_ns), last = grace_load_relaxed(&p->last_end);
	/* Busy: a grace period ended within the last two paces and callbacks arrive at least
	 * once per two paces. Two, not one: a napping worker finds callbacks at most once per
	 * nap, so the gaps it measures are never shorter than pace (plus the grace period),
	 * and a steady 1/pace callbacks per second would read as "not busy" and pay, per
	 * callback, a heavy barrier, a wake-up call and two wake-ups instead of one timer
	 * (measured on the 2-CPU VM at 1000 callbacks/s: 21-29 us of engine CPU per callback
	 * with one pace, 14-15 us with two). A domain that goes quiet costs at most two naps
	 * before the worker sleeps until woken. */
	if (last && now - last < 2 * pace && arrival_ns && arrival_ns <= 2 * pace)
		return (int64_t)pace;
	return 0;
}

uint64_t grace__policy_stamp(const struct grace__policy *p, uint64_t now, uint64_t floor_ns)
{
	/* LAZY: a callback found now was pushed after the worker last looked, and a push does not
	 * end a nap or a timed wait: it may have waited since floor_ns, and its period counts
	 * from there, so that no callback waits more than the period (a callback pushed early in
	 * a nap would otherwise wait the nap and then a whole period). After a sleep that the
	 * first push ends (floor 0), the push was a moment ago: now. */
	if (floor_ns && grace_load_relaxed(&p->kind) == GRACE_POLICY_LAZY)
		return floor_ns;
	return now;
}

/*
 * The PSI file, sampled for every lazy domain of the process (memory pressure is the system's
 * or the cgroup's, not a domain's). A sampler claims the next slot by compare-and-exchange on
 * next_ns, so one thread reads per GRACE__POLICY_PSI_EVERY_NS; total_us and at_ns are written
 * by that thread only (relaxed atomics: a sampler delayed past the next slot may race with the
 * next one, which at worst skews one estimate). No lock, so a fork child, whose parent may
 * have been sampling, samples as well.
 */
#define PSI_UNOPENED (-2)
#define PSI_NONE (-1)
static struct {
	uint64_t next_ns;  /* earliest time of the next sample */
	uint64_t total_us; /* the "some" line's total stall time at the last sample */
	uint64_t at_ns;    /* when it was read (0: no sample yet) */
	int fd;            /* PSI_UNOPENED, PSI_NONE, or the open file */
} psi = { 0, 0, 0, PSI_UNOPENED };

/* The open PSI file, or PSI_NONE: none configured ("off"), or it cannot be opened. */
static int psi_fd(void)
{
	int fd = grace_load_relaxed(&psi.fd);

	if (fd != PSI_UNOPENED)
		return fd;
	const char *path = grace__opt_str(GRACE__OPT_GRACE_MEMORY_PRESSURE);
	if (!path)
		path = "/proc/pressure/memory";
	fd = strcmp(path, "off") ? open(path, O_RDONLY | O_CLOEXEC) : PSI_NONE;
	if (fd < 0)
		fd = PSI_NONE;
	int expect = PSI_UNOPENED;
	/* Relaxed: the descriptor is the only thing published; a sampler that lost the race (a
	 * delayed one, see above) closes its own. */
	if (!grace_cmpxchg_mo(&psi.fd, &expect, fd, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		if (fd >= 0)
			close(fd);
		fd = expect;
	}
	return fd;
}

/* The total of the file's "some" line (microseconds tasks stalled on memory), or -1. */
static int64_t psi_total_us(int fd)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	const char *t = strncmp(buf, "some ", 5) == 0 ? strstr(buf, " total=") : NULL;
	if (!t)
		return -1;
	char *end;
	unsigned long long v = strtoull(t + 7, &end, 10);
	return end == t + 7 ? -1 : (int64_t)(v & INT64_MAX);
}

/* One PSI sample if one is due and this thread claims it: did tasks stall on memory at least
 * GRACE__POLICY_PSI_STALL_PPM of the time since the last sample? */
static bool psi_pressure(uint64_t now)
{
	uint64_t next = grace_load_relaxed(&psi.next_ns);

	if (now < next)
		return false;
	/* Relaxed: the claim orders nothing, the fields below are each the claimer's. */
	if (!grace_cmpxchg_mo(&psi.next_ns, &next, now + GRACE__POLICY_PSI_EVERY_NS,
			      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return false;
	int fd = psi_fd();
	int64_t total = fd >= 0 ? psi_total_us(fd) : -1;
	if (total < 0) {
		/* No PSI here (or "off"): look again in a minute, not every 100 ms. */
		grace_store_relaxed(&psi.next_ns, now + 600 * GRACE__POLICY_PSI_EVERY_NS);
		return false;
	}
	uint64_t last_total = grace_load_relaxed(&psi.total_us),
		 last_at = grace_load_relaxed(&psi.at_ns);
	grace_store_relaxed(&psi.total_us, (uint64_t)total);
	grace_store_relaxed(&psi.at_ns, now);
	if (!last_at || now <= last_at || (uint64_t)total <= last_total)
		return false;
	/* Stall share in parts per million: stalled us * 1e6 / elapsed us. */
	uint64_t elapsed_us = (now - last_at) / 1000 + 1;
	return ((uint64_t)total - last_total) * 1000000ull / elapsed_us >=
	       GRACE__POLICY_PSI_STALL_PPM;
}

bool grace__policy_pressure(struct grace__policy *p, uint64_t now, int64_t backlog,
			    int64_t soft_total)
{
	if (!(backlog > soft_total / GRACE__POLICY_LAZY_SOFT_SHARE) && !psi_pressure(now))
		return false;
	grace__policy_press(p);
	return true;
}

void grace__policy_press(struct grace__policy *p)
{
	/* Relaxed: the caller's full barrier before it loads the workers' sleeping words orders
	 * it before them; it pairs with a sleeping worker's fence before its re-check
	 * (worker_sleep()): either the worker sees the new generation or the caller sees it
	 * asleep and wakes it. */
	grace_fetch_add(&p->pressure, 1u, __ATOMIC_RELAXED);
}

uint32_t grace__policy_pressure_gen(const struct grace__policy *p)
{
	return grace_load_relaxed(&p->pressure);
}
