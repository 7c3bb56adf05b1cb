/* SPDX-License-Identifier: MIT */
/*
 * grace next to a program that registers its own rseq area (as tcmalloc and librseq do when
 * glibc registered none: GLIBC_TUNABLES=glibc.pthread.rseq=0, set by tests/unit/rseq.cmake).
 * grace registers its own area lazily, on a thread's first per-CPU operation, so loading the
 * library must leave the main thread free: the program's registration, made first thing in
 * main(), must succeed (the library's start-up used to register the thread that loaded it, and
 * the program's call then failed with EINVAL). The thread the program registered then falls
 * back (grace cannot use an area registered with another signature) while grace's primitives,
 * srcu and call_rcu keep working there and other threads still use grace's own area.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <grace/diag.h>
#include <grace/rcu.h>
#include <grace/srcu.h>
#include <grace/internal/rseq.h>
#include "gtest_lite.h"

/* The program's own area (the kernel's struct rseq, original 32-byte size). */
struct prog_rseq {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
	uint32_t pad[3];
} __attribute__((aligned(32)));

static __thread struct prog_rseq prog_area = { 0, (uint32_t)-1, 0, 0, { 0, 0, 0 } };
static int prog_reg = -ENOSYS; /* the program's registration of the main thread: 0 or -errno */

#define PROG_SIG 0x0badc0deu /* not grace's (nor glibc's) signature */

static void register_program_area(void)
{
#ifdef __NR_rseq
	prog_reg = syscall(__NR_rseq, &prog_area, (uint32_t)sizeof(prog_area), 0, PROG_SIG) == 0
			   ? 0
			   : -errno;
#endif
}

/* Is there a free thread to register? Not without rseq (qemu-user, Valgrind: ENOSYS), nor when
 * glibc registered every thread (run without the tunable: nothing to check then). */
extern const unsigned int __rseq_size __attribute__((weak)); /* glibc 2.35+ */

static int have_rseq(void)
{
	return prog_reg != -ENOSYS && !(&__rseq_size && __rseq_size > 0);
}

/* Does grace use rseq at all (not GRACE_NO_RSEQ=1)? */
static int grace_rseq(void)
{
	return have_rseq() && !getenv("GRACE_NO_RSEQ");
}

TEST(program_registers_its_own_area)
{
	printf("  program's registration: %d, grace's mode: %s\n", prog_reg, grace_rseq_mode());
	if (prog_reg == -ENOSYS)
		CHECK(strcmp(grace_rseq_mode(), "grace") != 0);
	if (!have_rseq())
		return;
	CHECK_MSG(prog_reg == 0, "rseq() of the program's own area failed: %d", prog_reg);
	/* The kernel updates the program's area: it names the CPU the thread runs on. */
	int c = sched_getcpu();
	CHECK((int32_t)prog_area.cpu_id >= 0);
	CHECK(c < 0 || prog_area.cpu_id_start < grace__rseq_nr_cpus());
}

TEST(grace_uses_its_own_area_elsewhere)
{
	if (!grace_rseq())
		return;
	CHECK_MSG(strcmp(grace_rseq_mode(), "grace") == 0, "mode %s", grace_rseq_mode());
	/* The main thread's registration is the program's: grace's is refused, so it falls back. */
	CHECK(!grace__rseq_thread_ready());
	CHECK(grace__rseq_cpu() >= 0 && (unsigned int)grace__rseq_cpu() < grace__rseq_nr_cpus());
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)grace__rseq_thread_ready();
}

TEST(a_new_thread_registers_graces_area)
{
	pthread_t t;
	void *ready = NULL;

	if (!grace_rseq())
		return;
	CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
	CHECK(pthread_join(t, &ready) == 0);
	/* Without the inline sections (TSan mode) no thread is "ready"; the mode is grace's. */
	CHECK_MSG((intptr_t)ready == GRACE__RSEQ_OPS, "new thread ready: %d", (int)(intptr_t)ready);
}

TEST(percpu_add_falls_back_on_the_programs_thread)
{
	uint64_t ctr[8 * 64] = { 0 };
	unsigned int n = grace__rseq_nr_cpus() < 8 ? grace__rseq_nr_cpus() : 8;

	if (!grace_rseq())
		return;
	/* No rseq for this thread: -1, nothing written; the caller uses its atomic word. */
	CHECK(grace__rseq_percpu_add(ctr, 64 * sizeof(uint64_t), n, 1) == -1);
	for (unsigned int i = 0; i < 8 * 64; i++)
		CHECK(ctr[i] == 0);
}

static DEFINE_SRCU(dom);
static int cb_ran;

static void cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&cb_ran, 1, __ATOMIC_RELEASE);
}

static void *srcu_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		int idx = srcu_read_lock(&dom);
		srcu_read_unlock(&dom, idx);
	}
	return NULL;
}

TEST(srcu_and_call_rcu_work_on_both_kinds_of_thread)
{
	static struct rcu_head h;
	pthread_t t;

	for (int i = 0; i < 1000; i++) {
		int idx = srcu_read_lock(&dom);
		srcu_read_unlock(&dom, idx);
	}
	CHECK(pthread_create(&t, NULL, srcu_reader, NULL) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	synchronize_srcu(&dom);
	call_rcu(&h, cb);
	rcu_barrier();
	CHECK(__atomic_load_n(&cb_ran, __ATOMIC_ACQUIRE) == 1);
	cleanup_srcu_struct(&dom);
	/* The program's area is still registered and updated. */
	if (have_rseq())
		CHECK((int32_t)prog_area.cpu_id >= 0);
}

int main(int argc, char **argv)
{
	/* First thing, before any per-CPU operation of grace: the library is loaded and its
	 * constructors have run, which must not have registered this thread. */
	register_program_area();
	return gt_main(argc, argv);
}
