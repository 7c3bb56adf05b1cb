/* SPDX-License-Identifier: MIT */
/*
 * rseq(2) registration, fallbacks and the remote drain of per-CPU lists. The inline primitives
 * and the contract their users follow are in include/grace/internal/rseq.h (the critical
 * sections themselves in internal/arch/rseq-<arch>.h); the system calls in core/sys.c.
 *
 * Which area. At start-up (first use, or the library constructor) grace looks at glibc's
 * __rseq_size: > 0 means glibc registered an area in every thread at thread pointer +
 * __rseq_offset, and grace uses it (grace__rseq_delta = that address - &grace__rseq_own, the same
 * in every thread since both live in the static TLS block). Otherwise grace registers its own
 * area, grace__rseq_own, in each thread on the first per-CPU operation (cpu_id == -1 sends the
 * thread to grace__rseq_cpu_slow()), and only then: start-up asks the kernel whether it has rseq
 * without registering any thread (see rseq_probe()), so a thread that never makes a per-CPU
 * operation stays free for the program or another library to register. If the kernel refuses a
 * thread (another library registered an area for it: EINVAL, or EBUSY for the same area) the
 * thread's own cpu_id becomes -2 and the thread uses the fallbacks; the other threads are not
 * affected. GRACE_NO_RSEQ=1 makes every thread use them.
 *
 * Thread exit: a registration grace made is not undone. The kernel forgets it when the task
 * exits, and the area (static TLS) stays valid until then, so nothing can write to freed memory;
 * glibc does the same for its own area. fork(): the child's thread keeps its registration (same
 * address in the child); new threads start unregistered (the TLS image has cpu_id == -1).
 */
#include <grace/internal/rseq.h>

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/debug.h"
#include "core/diag.h"
#include "core/options.h"
#include "core/sys.h"

/* glibc 2.35+; weak so that the library still loads on older C libraries (then both are 0). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

GRACE_API __thread struct grace__rseq_abi grace__rseq_own GRACE_TLS_IE = {
	.cpu_id_start = 0,
	.cpu_id = GRACE__RSEQ_CPU_UNINIT,
};
GRACE_API intptr_t grace__rseq_delta;

_Static_assert(sizeof(struct grace__rseq_abi) == 32, "rseq ABI area is 32 bytes");
_Static_assert(offsetof(struct grace__rseq_abi, cpu_id) == 4, "rseq ABI: cpu_id at 4");
_Static_assert(offsetof(struct grace__rseq_abi, rseq_cs) == 8, "rseq ABI: rseq_cs at 8");
_Static_assert(offsetof(struct grace__rseq_list, head) == 0, "the arch asm writes head at 0");
_Static_assert(offsetof(struct grace__rseq_list, mode) == 16, "the aarch64 asm reads mode at 16");
_Static_assert(offsetof(struct rcu_head, next) == 0, "the list asm links through offset 0");

enum { MODE_NONE, MODE_GLIBC, MODE_OWN };

#define RSEQ_UNREGISTER 1 /* RSEQ_FLAG_UNREGISTER of linux/rseq.h (kernel ABI) */

/* List modes (mode word of struct grace__rseq_list). */
#define LIST_DRAINING GRACE__RSEQ_LIST_ATOMIC
#define LIST_PERMANENT (GRACE__RSEQ_LIST_ATOMIC | 2u)

static pthread_once_t rseq_once = PTHREAD_ONCE_INIT;
static int rseq_mode = MODE_NONE;
static const char *rseq_none_reason = "not initialised";
static bool rseq_remote_ok; /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ registered */
static unsigned int rseq_nr_cpus = 1;

/* Highest possible CPU + 1, from /sys/devices/system/cpu/possible ("0-3", "0,2-5"): the kernel's
 * nr_cpu_ids, which bounds every CPU number rseq or getcpu report. */
static unsigned int read_possible_cpus(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int n = conf > 0 ? (unsigned int)conf : 1u;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");

	if (f) {
		char buf[4096];
		if (fgets(buf, sizeof(buf), f)) {
			char *s = buf;
			while (*s) {
				char *end;
				unsigned long v = strtoul(s, &end, 10);
				if (end == s)
					break;
				if (v + 1 > n && v < 1u << 20)
					n = (unsigned int)v + 1;
				s = end;
				if (*s == '-' || *s == ',')
					s++;
			}
		}
		fclose(f);
	}
	return n;
}

/* Register grace's own area for the calling thread: 0 or -errno. */
static int register_own(void)
{
#if GRACE__RSEQ_ARCH
	return grace__sys_rseq(&grace__rseq_own, sizeof(grace__rseq_own), 0, GRACE__RSEQ_SIG);
#else
	return -ENOSYS;
#endif
}

/*
 * Does the kernel accept rseq(2), without registering the calling thread? An unregistration of
 * grace's area, which no thread has registered yet: a kernel with rseq refuses it with EINVAL
 * (the thread has no area, or another one), one without answers ENOSYS (as Valgrind and
 * qemu-user do), a seccomp filter what it was told. Registering the probing thread instead (the
 * thread that loads the library, usually the main thread) would take it from a program or
 * library that registers its own area when glibc did not (tcmalloc, librseq), even if that
 * thread never makes a per-CPU operation. Returns 0 (rseq usable) or -errno.
 */
static int rseq_probe(void)
{
#if GRACE__RSEQ_ARCH
	int r = grace__sys_rseq(&grace__rseq_own, sizeof(grace__rseq_own), RSEQ_UNREGISTER,
				GRACE__RSEQ_SIG);

	if (r == -EINVAL)
		return 0;
	if (r == 0) /* cannot happen (nothing registered it): register it again, lazily */
		grace_store_relaxed(&grace__rseq_own.cpu_id, GRACE__RSEQ_CPU_UNINIT);
	return r;
#else
	return -ENOSYS;
#endif
}

static void rseq_init(void)
{
	rseq_nr_cpus = read_possible_cpus();
	if (grace__opt(GRACE__OPT_GRACE_NO_RSEQ)) {
		rseq_none_reason = "disabled by GRACE_NO_RSEQ";
	} else if (!GRACE__RSEQ_ARCH) {
		rseq_none_reason = "architecture not supported";
	} else if (&__rseq_size && &__rseq_offset && __rseq_size > 0) {
		/* glibc's area; its address minus ours is the same in every thread. */
		uintptr_t area = (uintptr_t)__builtin_thread_pointer() + (uintptr_t)__rseq_offset;
		uintptr_t own = (uintptr_t)&grace__rseq_own;
		/* Opaque to the optimiser: folding tp - &own into one "sub GOTTPOFF" instruction
		 * is a form the static linker cannot relax to the local-exec model. */
		__asm__("" : "+r"(own));
		grace_store_relaxed(&grace__rseq_delta, (intptr_t)(area - own));
		rseq_mode = MODE_GLIBC;
	} else {
		/* Each thread registers on its first per-CPU operation (grace__rseq_cpu_slow());
		 * one that another library registered already is refused and falls back alone. */
		int r = rseq_probe();

		if (r == 0) {
			rseq_mode = MODE_OWN;
		} else {
			rseq_none_reason = r == -ENOSYS ? "kernel without rseq"
							: "rseq registration refused";
			grace_store_relaxed(&grace__rseq_own.cpu_id, GRACE__RSEQ_CPU_FAILED);
		}
	}
#if GRACE__RSEQ_OPS
	if (rseq_mode != MODE_NONE) {
		int mask = grace__sys_membarrier_cmd(MEMBARRIER_CMD_QUERY, 0);
		int reg = MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ;

		if (mask > 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) &&
		    grace__sys_membarrier_cmd(reg, 0) == 0)
			rseq_remote_ok = true;
	}
#endif
}

static inline void rseq_init_once(void)
{
	pthread_once(&rseq_once, rseq_init);
}

__attribute__((constructor)) static void rseq_constructor(void)
{
	rseq_init_once();
}

int grace__rseq_cpu_slow(void)
{
	struct grace__rseq_abi *rs;
	int32_t c;
	int s;

	rseq_init_once();
	rs = grace__rseq_area();
	c = (int32_t)grace_load_relaxed(&rs->cpu_id);
	if (c >= 0)
		return c;
	if (rs == &grace__rseq_own && (uint32_t)c == GRACE__RSEQ_CPU_UNINIT) {
		/* First operation of this thread on grace's own area. */
		if (rseq_mode == MODE_OWN && register_own() == 0) {
			/* The kernel filled cpu_id on the way back to user space. */
			c = (int32_t)grace_load_relaxed(&rs->cpu_id);
			if (c >= 0)
				return c;
		} else {
			/* Not registered with the kernel: the area is ours to mark. */
			grace_store_relaxed(&grace__rseq_own.cpu_id, GRACE__RSEQ_CPU_FAILED);
		}
	}
	s = sched_getcpu();
	/* Every CPU number is below the possible count (the kernel's nr_cpu_ids); should one not
	 * be (a failure, or a count read wrong at start-up), CPU 0's slot is as good as any. */
	return s >= 0 && (unsigned int)s < rseq_nr_cpus ? s : 0;
}

int grace__rseq_thread_ready(void)
{
	(void)grace__rseq_cpu();
	return GRACE__RSEQ_OPS && (int32_t)grace_load_relaxed(&grace__rseq_area()->cpu_id) >= 0;
}

unsigned int grace__rseq_nr_cpus(void)
{
	rseq_init_once();
	return rseq_nr_cpus;
}

intptr_t grace__rseq_tp_offset(void)
{
	uintptr_t own = (uintptr_t)&grace__rseq_own;

	rseq_init_once();
	__asm__("" : "+r"(own)); /* see rseq_init(): keep the TLS access relaxable */
	return (intptr_t)(own + (uintptr_t)grace_load_relaxed(&grace__rseq_delta) -
			  (uintptr_t)__builtin_thread_pointer());
}

int grace__rseq_enabled(void)
{
	rseq_init_once();
	return rseq_mode != MODE_NONE;
}

const char *grace_rseq_mode(void)
{
	rseq_init_once();
	switch (rseq_mode) {
	case MODE_GLIBC:
		return "glibc";
	case MODE_OWN:
		return "grace";
	default:
		return rseq_none_reason;
	}
}

#if GRACE__RSEQ_OPS
/* The calling thread's area after making sure it is registered; NULL without rseq. */
static struct grace__rseq_abi *ready_area(void)
{
	struct grace__rseq_abi *rs = grace__rseq_area();
	int32_t id = (int32_t)grace_load_relaxed(&rs->cpu_id);

	if (id >= 0)
		return rs;
	if ((uint32_t)id != GRACE__RSEQ_CPU_UNINIT)
		return NULL;
	(void)grace__rseq_cpu_slow(); /* first operation of the thread: register */
	rs = grace__rseq_area();
	return (int32_t)grace_load_relaxed(&rs->cpu_id) >= 0 ? rs : NULL;
}
#endif

int grace__rseq_percpu_add_slow(uint64_t *base, size_t stride, unsigned int nslots, uint64_t v,
				int release)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *rs = ready_area();

	if (!rs)
		return -1;
	for (;;) {
		uint32_t cpu = grace_load_relaxed(&rs->cpu_id_start);

		if (cpu >= nslots)
			return -1;
		uint64_t *p = (uint64_t *)((char *)base + (size_t)cpu * stride);

		if (grace__rseq_add_on(rs, p, v, cpu, release) == 0)
			return (int)cpu;
		/* Aborted: preempted, migrated or signalled; the next attempt starts afresh. */
		if ((int32_t)grace_load_relaxed(&rs->cpu_id) < 0)
			return -1;
	}
#else
	(void)base, (void)stride, (void)nslots, (void)v, (void)release;
	return -1;
#endif
}

#if GRACE__RSEQ_OPS /* its one caller, grace__rseq_list_push_slow(), uses it only with them */
/*
 * Push node on ahead while a take drains l, and only then (contract rule 7 of internal/rseq.h):
 * the compare-and-swap requires GRACE__RSEQ_AHEAD_DRAINING, which the take's exchange of ahead
 * clears. Returns false once the bit is clear: the caller pushes with rseq again. The acquire
 * loads pair with the take's release exchange: a pusher that sees the bit cleared then reads
 * mode 0, stored before that exchange, or a later take's mode.
 */
static bool list_push_draining(struct grace__rseq_list *l, struct rcu_head *node)
{
	struct rcu_head *old = grace_load_acquire(&l->ahead);

	for (;;) {
		if (!((uintptr_t)old & GRACE__RSEQ_AHEAD_DRAINING))
			return false;
		grace_store_relaxed(&node->next, (struct rcu_head *)((uintptr_t)old &
								     ~GRACE__RSEQ_AHEAD_DRAINING));
		/* Release: the node's fields before its publication (pairs with the take's
		 * acquire exchange). */
		if (grace_cmpxchg_mo(&l->ahead, &old,
				     (struct rcu_head *)((uintptr_t)node |
							 GRACE__RSEQ_AHEAD_DRAINING),
				     __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return true;
	}
}
#endif

int grace__rseq_list_push_slow(struct grace__rseq_list *base, size_t stride, unsigned int nslots,
			       struct rcu_head *node)
{
	struct grace__rseq_list *l;
	uint32_t cpu;

	if (nslots == 0) /* the inline push sent it here: no CPU is below the bound */
		grace__misuse_fatal("grace__rseq_list_push",
				    "per-CPU list array of 0 slots (nslots must be at least 1)");
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *rs = ready_area();

	while (rs) {
		int r;

		cpu = grace_load_relaxed(&rs->cpu_id_start);
		if (cpu >= nslots)
			break;
		l = (struct grace__rseq_list *)((char *)base + (size_t)cpu * stride);
		r = grace__rseq_list_push_on(rs, l, node, cpu);
		if (r == 0)
			return (int)cpu;
		if (r > 0) {
			/* Atomic mode for good: every pusher of the list uses ahead. */
			if (grace_load_relaxed(&l->mode) == LIST_PERMANENT) {
				grace__rseq_list_push_atomic(l, node);
				return (int)cpu;
			}
			/* A remote take in progress: ahead, while it lasts (contract rule 7). Debug
			 * builds: tests stop here to let the take end first (GRACE_TEST_PAUSE). */
			GRACE__TEST_PAUSE("rseq_drain");
			if (list_push_draining(l, node))
				return (int)cpu;
			continue; /* the take is over: push with rseq again */
		}
		if ((int32_t)grace_load_relaxed(&rs->cpu_id) < 0)
			break;
	}
#endif
	/* No rseq for this thread: the atomic head of the CPU it runs on (contract rule 1). */
	cpu = (uint32_t)grace__rseq_cpu();
	if (cpu >= nslots)
		cpu %= nslots;
	l = (struct grace__rseq_list *)((char *)base + (size_t)cpu * stride);
	grace__rseq_list_push_atomic(l, node);
	return (int)cpu;
}

void grace__rseq_list_init(struct grace__rseq_list *l)
{
	rseq_init_once();
	l->head = NULL;
	l->ahead = NULL;
	/* Without the membarrier command that aborts rseq critical sections, a list pushed with
	 * rseq could be consumed only on its own CPU: keep it atomic for good. */
	l->mode = (GRACE__RSEQ_OPS && rseq_mode != MODE_NONE && rseq_remote_ok) ? 0u
										: LIST_PERMANENT;
	l->pad_ = 0;
}

struct rcu_head *grace__rseq_list_take(struct grace__rseq_list *l)
{
	struct rcu_head *r = NULL, *a;

	/* An empty head is not drained: there is nothing to detach, and the membarrier (IPIs to
	 * every CPU running the process) would be spent on nothing. Relaxed: rule 2. A push whose
	 * commit happens before this take (the caller learned of it through some release/acquire
	 * chain: a wake-up, a barrier's request) is seen here, by coherence; one merely running
	 * at the same time, committed or not, stays on the list untouched for the next take, as a
	 * push that starts just after a take does. The callback workers' sleep protocol does not
	 * rely on this take's membarrier: worker_sleep() issues its own before it re-checks. */
	if (grace_load_relaxed(&l->mode) == 0 && grace_load_relaxed(&l->head) != NULL) {
		/*
		 * Switch the list to atomic mode, then abort every rseq critical section running
		 * in this process. A push reads `mode` inside its critical section, after setting
		 * rseq_cs: one that read 0 either committed before the membarrier's IPI reached its
		 * CPU (and the IPI's full barrier made the commit visible to the exchange below)
		 * or is restarted and reads `mode` again, now seeing LIST_DRAINING (the membarrier
		 * starts with a full barrier on this side, and every CPU executes one before its
		 * threads resume: pairs with the load of mode in the push). A thread that was not
		 * running is restarted anyway when it resumes (preemption aborts the section).
		 */
		/* The DRAINING bit of ahead first (contract rule 7 of internal/rseq.h), then the
		 * mode with release: a pusher whose acquire load of mode reads DRAINING finds the
		 * bit set (or cleared by this take's exchange below: then the take is over). */
		struct rcu_head *old = grace_load_relaxed(&l->ahead);
		while (!grace_cmpxchg(&l->ahead, &old,
				      (struct rcu_head *)((uintptr_t)old |
							  GRACE__RSEQ_AHEAD_DRAINING),
				      __ATOMIC_RELAXED)) {
		}
		grace_store_release(&l->mode, LIST_DRAINING);
		if (grace__sys_membarrier_cmd(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0) != 0) {
			/* Registration lost (a fork child): register again once. */
			int reg = MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ;
			int err = grace__sys_membarrier_cmd(reg, 0);

			if (err == 0)
				err = grace__sys_membarrier_cmd(
					MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0);
			if (err != 0)
				grace__fatal(
					"grace__rseq_list_take",
					"membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) failed "
					"(errno %d): per-CPU list cannot be drained safely",
					-err);
		}
		/* Acquire: the nodes' fields (pairs with the release commit of the push). */
		r = grace_xchg(&l->head, (struct rcu_head *)NULL, __ATOMIC_ACQUIRE);
		/* Release: the head is empty before rseq pushers write it again. Pairs with the
		 * acquire load of mode inside the push's critical section (ldar on aarch64, a TSO
		 * load on x86), so a push that sees 0 here also sees the emptied head. */
		grace_store_release(&l->mode, 0u);
	}
	/* Acquire: pairs with the release CAS of the atomic and draining pushes. Release: this
	 * exchange clears the DRAINING bit, so a draining pusher that sees it cleared (acquire)
	 * then reads mode 0, stored above (list_push_draining()). Every push that got into ahead
	 * while the bit was set is taken here (contract rule 7). */
	a = grace_xchg(&l->ahead, (struct rcu_head *)NULL, __ATOMIC_ACQ_REL);
	return grace__rseq_chain_fifo(r, a);
}
