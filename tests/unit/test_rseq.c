/* SPDX-License-Identifier: MIT */
/*
 * The rseq module (include/grace/internal/rseq.h): which area is used, the CPU number, per-CPU
 * add and per-CPU lists under migration and signal storms, local pop and remote take.
 * Registered three times (tests/unit/rseq.cmake): glibc's area, grace's own registration
 * (GLIBC_TUNABLES=glibc.pthread.rseq=0) and no rseq at all (GRACE_NO_RSEQ=1); EXPECT_RSEQ names
 * the mode each run must see, so a run that silently tested the wrong path fails.
 *
 * Two tests check the architecture's critical sections without the kernel's help, so that they
 * also run where rseq(2) is refused (qemu-user): every descriptor passes the checks the kernel
 * makes before it restarts a section, and every section, run on an area the kernel does not know,
 * commits, exits and aborts the way the pseudo-code in internal/rseq.h says.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/time.h>
#include <grace/diag.h>
#include <grace/internal/rseq.h>
#include "gtest_lite.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The descriptors of every critical section linked into this program (the test's own and the
 * static library's): the linker defines these for the section __grace_rseq_cs. */
extern const char __start___grace_rseq_cs[] __attribute__((weak, visibility("hidden")));
extern const char __stop___grace_rseq_cs[] __attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif

static unsigned int ncpus_online(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	return (unsigned int)CPU_COUNT(&set);
}

static int pin_to(unsigned int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void unpin(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (unsigned int i = 0; i < grace__rseq_nr_cpus() && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

TEST(mode_is_as_expected)
{
	const char *want = getenv("EXPECT_RSEQ");
	const char *mode = grace_rseq_mode();
	printf("  rseq mode: %s, %u possible CPUs, ops %s\n", mode, grace__rseq_nr_cpus(),
	       GRACE__RSEQ_OPS ? "inline asm" : "atomic fallback");
	if (want && strcmp(want, "none") == 0) {
		/* docs/api.md (grace_rseq_mode()): with no area, the reason, not a mode name. */
		CHECK(strcmp(mode, "glibc") != 0 && strcmp(mode, "grace") != 0);
		CHECK_MSG(mode[0] != '\0' && strcmp(mode, "not initialised") != 0,
			  "no reason given: \"%s\"", mode);
		const char *off = getenv("GRACE_NO_RSEQ");
		if (off && strcmp(off, "1") == 0)
			CHECK_MSG(strcmp(mode, "disabled by GRACE_NO_RSEQ") == 0,
				  "GRACE_NO_RSEQ=1, but the reason is \"%s\"", mode);
	} else if (want)
		CHECK_MSG(strcmp(mode, want) == 0, "mode %s, expected %s", mode, want);
	CHECK(grace__rseq_nr_cpus() >= ncpus_online());
}

TEST(cpu_number_follows_affinity)
{
	unsigned int n = grace__rseq_nr_cpus();
	int pinned = 0;
	for (unsigned int c = 0; c < n && c < CPU_SETSIZE; c++) {
		if (pin_to(c) != 0)
			continue;
		pinned++;
		int got = grace__rseq_cpu();
		CHECK_MSG(got == (int)c, "pinned to %u, grace__rseq_cpu() says %d", c, got);
		CHECK(sched_getcpu() == (int)c);
	}
	unpin();
	CHECK(pinned > 0);
}

TEST(thread_ready_matches_mode)
{
	const char *want = getenv("EXPECT_RSEQ");
	int ready = grace__rseq_thread_ready();
	printf("  thread ready: %d\n", ready);
	if (want && strcmp(want, "none") == 0)
		CHECK(!ready);
	else if (want && GRACE__RSEQ_OPS)
		CHECK(ready);
}

#if GRACE__RSEQ_OPS
/* A critical section built from the architecture's building blocks that spins until *flag is
 * set. The flag is set by a signal handler: the kernel must abort the section (descriptor,
 * signature and abort label all correct) before the handler runs, so the commit after the spin
 * is never reached. */
static volatile int cs_flag;

static int spinning_section(struct grace__rseq_abi *rs, uint32_t cpu, uint64_t *word)
{
	/* clang-format off */
#if defined(__x86_64__)
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		GRACE__RSEQ_ASM_START("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"5:\n\t"
		"pause\n\t"
		"cmpl $0, %[flag]\n\t"
		"je 5b\n\t"
		"addq $1, %[mem]\n\t" /* commit: must not happen */
		GRACE__RSEQ_ASM_END("%[rseq_cs]")
		GRACE__RSEQ_ASM_ABORT("%[rseq_cs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [mem] "m"(*word), [flag] "m"(cs_flag)
		: "memory", "cc", "rax"
		: aborted);
#elif defined(__aarch64__)
	__asm__ __volatile__ goto(
		GRACE__RSEQ_ASM_DESC
		GRACE__RSEQ_ASM_START("%[rs]")
		"ldr w17, [%[rs], #4]\n\t"
		"cmp w17, %w[cpu]\n\t"
		"b.ne 4f\n\t"
		"5:\n\t"
		"yield\n\t"
		"ldr w17, [%[flag]]\n\t"
		"cbz w17, 5b\n\t"
		"ldr x17, [%[mem]]\n\t"
		"add x17, x17, #1\n\t"
		"str x17, [%[mem]]\n\t" /* commit: must not happen */
		GRACE__RSEQ_ASM_END("%[rs]")
		GRACE__RSEQ_ASM_ABORT("%[rs]", "%l[aborted]")
		:
		: [cpu] "r"(cpu), [rs] "r"(rs), [mem] "r"(word), [flag] "r"(&cs_flag)
		: "memory", "cc", "x17"
		: aborted);
#endif
	/* clang-format on */
	return 0;
aborted:
	return -1;
}

static void set_flag(int sig)
{
	(void)sig;
	cs_flag = 1;
}

TEST(signal_aborts_critical_section)
{
	if (!grace__rseq_thread_ready()) {
		printf("  skipped (no rseq in this run)\n");
		return;
	}
	struct grace__rseq_abi *rs = grace__rseq_area();
	uint64_t word = 0;
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = set_flag;
	sigaction(SIGALRM, &sa, NULL);
	cs_flag = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	int r;
	do /* preemption may abort it too: retry until the signal came */
		r = spinning_section(rs, grace_load_relaxed(&rs->cpu_id_start), &word);
	while (r == -1 && !cs_flag);
	signal(SIGALRM, SIG_IGN);
	CHECK_MSG(r == -1 && word == 0, "section committed after a signal (r %d, word %llu)", r,
		  (unsigned long long)word);
	CHECK(cs_flag == 1);
}
#endif

/* ---- per-CPU add ---- */

struct slot {
	uint64_t rseq_ctr;   /* rseq only (contract rule 1) */
	uint64_t atomic_ctr; /* threads without rseq */
	uint64_t pad_[6];
};

static struct slot *slots;
static unsigned int nslots;
static uint64_t signal_adds;

static void add_one(void)
{
	if (grace__rseq_percpu_add(&slots[0].rseq_ctr, sizeof(struct slot), nslots, 1) < 0) {
		unsigned int c = (unsigned int)grace__rseq_cpu();
		__atomic_fetch_add(&slots[c % nslots].atomic_ctr, 1, __ATOMIC_RELAXED);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	add_one(); /* interrupts critical sections of the thread: the abort path must retry */
	__atomic_fetch_add(&signal_adds, 1, __ATOMIC_RELAXED);
}

struct adder_arg {
	unsigned long iters;
	int migrate;
};

static void *adder(void *p)
{
	struct adder_arg *a = (struct adder_arg *)p;
	unsigned int online = ncpus_online();
	for (unsigned long i = 0; i < a->iters; i++) {
		if (a->migrate && (i & 1023) == 0)
			pin_to((unsigned int)(i >> 10) % online); /* force migrations */
		add_one();
	}
	unpin();
	return NULL;
}

static uint64_t total(void)
{
	uint64_t t = 0;
	for (unsigned int i = 0; i < nslots; i++)
		t += __atomic_load_n(&slots[i].rseq_ctr, __ATOMIC_RELAXED) +
		     __atomic_load_n(&slots[i].atomic_ctr, __ATOMIC_RELAXED);
	return t;
}

TEST(percpu_add_is_exact_under_migration_and_signals)
{
	enum { NT = 4 };
	const unsigned long iters = 400000;
	pthread_t t[NT];
	struct adder_arg args[NT];
	struct sigaction sa;
	struct itimerval it = { { 0, 200 }, { 0, 200 } };

	nslots = grace__rseq_nr_cpus();
	slots = (struct slot *)aligned_alloc(64, nslots * sizeof(struct slot));
	memset(slots, 0, nslots * sizeof(struct slot));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	signal_adds = 0;
	setitimer(ITIMER_REAL, &it, NULL); /* a signal storm on whichever thread runs */
	for (int i = 0; i < NT; i++) {
		args[i].iters = iters;
		args[i].migrate = i & 1;
		pthread_create(&t[i], NULL, adder, &args[i]);
	}
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	uint64_t want = NT * iters + __atomic_load_n(&signal_adds, __ATOMIC_RELAXED);
	uint64_t got = total();
	printf("  %llu increments (%llu from signal handlers), counted %llu\n",
	       (unsigned long long)want, (unsigned long long)signal_adds, (unsigned long long)got);
	free(slots);
	CHECK(got == want);
}

TEST(percpu_add_rejects_out_of_range_cpu)
{
	uint64_t one = 0;
	/* One slot: any CPU but 0 must be refused rather than written out of bounds. */
	if (pin_to(1) != 0 || !grace__rseq_thread_ready()) {
		unpin();
		printf("  skipped (needs CPU 1 and rseq)\n");
		return;
	}
	int r = grace__rseq_percpu_add(&one, 64, 1, 1);
	unpin();
	CHECK(r == -1);
	CHECK(one == 0);
}

TEST(inc_line_hits_the_current_cpu_line_and_respects_the_bound)
{
#if GRACE__RSEQ_OPS
	if (!grace__rseq_enabled() || !grace__rseq_thread_ready()) {
		printf("  skipped (no rseq in this run)\n");
		return;
	}
	unsigned int n = grace__rseq_nr_cpus();
	struct slot *a = (struct slot *)aligned_alloc(64, n * sizeof(struct slot));
	struct grace__rseq_ref ref = { (int32_t)grace__rseq_tp_offset(), n };
	struct grace__rseq_ref none = { (int32_t)grace__rseq_tp_offset(), 0 };
	memset(a, 0, n * sizeof(struct slot));
	int hits = 0;
	for (unsigned int c = 0; c < n && c < CPU_SETSIZE; c++) {
		if (pin_to(c) != 0)
			continue;
		while (grace__rseq_inc_line(&ref, &a[0].rseq_ctr, (int)(c & 1)) != 0) {
		} /* retry aborts */
		CHECK_MSG(a[c].rseq_ctr == 1, "CPU %u: its line holds %llu", c,
			  (unsigned long long)a[c].rseq_ctr);
		CHECK(grace__rseq_inc_line(&none, &a[0].rseq_ctr, 0) == -1); /* bound 0: never */
		CHECK(a[c].rseq_ctr == 1);
		hits++;
	}
	unpin();
	uint64_t sum = 0;
	for (unsigned int c = 0; c < n; c++)
		sum += a[c].rseq_ctr;
	free(a);
	CHECK(hits > 0 && sum == (uint64_t)hits);
#else
	printf("  skipped (no rseq operations in this build)\n");
#endif
}

/* ---- the critical sections themselves, without the kernel ---- */

/* struct rseq_cs of the kernel ABI, as GRACE__RSEQ_ASM_DESC lays it out. */
struct cs_desc {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
};

TEST(descriptors_pass_the_kernel_checks)
{
#if GRACE__RSEQ_OPS
	const char *p = __start___grace_rseq_cs, *end = __stop___grace_rseq_cs;
	unsigned int n = 0;

	REQUIRE(p != NULL && end != NULL);
	CHECK_MSG((end - p) % 32 == 0, "descriptor section of %ld bytes", (long)(end - p));
	for (; p + 32 <= end; p += 32, n++) {
		struct cs_desc d;
		uint32_t sig;

		memcpy(&d, p, sizeof(d));
		/* What the kernel refuses before restarting a section (SIGSEGV for the thread). */
		CHECK_MSG(d.version == 0 && d.flags == 0, "descriptor %u: version %u flags %u", n,
			  d.version, d.flags);
		CHECK_MSG(d.post_commit_offset > 0 && d.post_commit_offset < 4096,
			  "descriptor %u: section of %llu bytes", n,
			  (unsigned long long)d.post_commit_offset);
		CHECK_MSG(d.abort_ip - d.start_ip >= d.post_commit_offset,
			  "descriptor %u: abort handler inside the section", n);
		memcpy(&sig, (const void *)(uintptr_t)(d.abort_ip - 4), sizeof(sig));
		CHECK_MSG(sig == GRACE__RSEQ_SIG,
			  "descriptor %u: signature %#x before the abort handler", n, sig);
	}
	printf("  %u descriptors checked\n", n);
	CHECK(n >= 8); /* this file's sections and the library's */
#else
	printf("  skipped (no rseq operations in this build)\n");
#endif
}

#if GRACE__RSEQ_OPS
/* An area the kernel does not know: the sections run straight through (nothing aborts them). */
static __thread struct grace__rseq_abi fake_area;

struct line {
	uint64_t w[8];
} __attribute__((aligned(64)));
#endif

/* A check of one call that also requires rseq_cs to be 0 afterwards (contract rule 6). */
#define CHECK_CLEAR(cond)                                                            \
	do {                                                                         \
		CHECK(cond);                                                         \
		CHECK_MSG(fake_area.rseq_cs == 0, "rseq_cs left at %#llx after: %s", \
			  (unsigned long long)fake_area.rseq_cs, #cond);             \
	} while (0)

TEST(sections_run_straight_through_on_an_unregistered_area)
{
#if GRACE__RSEQ_OPS
	struct grace__rseq_abi *fa = &fake_area;
	struct line lines[8];
	struct grace__rseq_list l;
	struct rcu_head a, b, *out = NULL;
	uint64_t w = 0;

	fa->cpu_id_start = 3;
	fa->cpu_id = 3;
	/* add_on: commits on its CPU, relaxed and release; refuses another CPU. After every call,
	 * committed or not, rseq_cs is back to 0 (contract rule 6: a stale pointer into unloaded
	 * code kills the thread at its next preemption). */
	CHECK_CLEAR(grace__rseq_add_on(fa, &w, 5, 3, 0) == 0 && w == 5);
	CHECK_CLEAR(grace__rseq_add_on(fa, &w, 5, 3, 1) == 0 && w == 10);
	CHECK_CLEAR(grace__rseq_add_on(fa, &w, 5, 2, 0) == -1 && w == 10);

	/* inc_line: the area found from the thread pointer, line cpu_id, bound respected. */
	struct grace__rseq_ref ref = { (int32_t)((char *)fa - (char *)__builtin_thread_pointer()),
				       8 };
	memset(lines, 0, sizeof(lines));
	CHECK_CLEAR(grace__rseq_inc_line(&ref, lines[0].w, 0) == 0 && lines[3].w[0] == 1);
	CHECK_CLEAR(grace__rseq_inc_line(&ref, lines[0].w, 1) == 0 && lines[3].w[0] == 2);
	ref.bound = 3;
	CHECK_CLEAR(grace__rseq_inc_line(&ref, lines[0].w, 0) == -1 && lines[3].w[0] == 2);
	fa->cpu_id = GRACE__RSEQ_CPU_FAILED; /* an unregistered thread: huge unsigned */
	ref.bound = 8;
	CHECK_CLEAR(grace__rseq_inc_line(&ref, lines[0].w, 1) == -1 && lines[3].w[0] == 2);
	fa->cpu_id = 3;

	/* list push and pop: link and commit, atomic mode, wrong CPU. */
	memset(&l, 0, sizeof(l));
	CHECK_CLEAR(grace__rseq_list_push_on(fa, &l, &a, 3) == 0 && l.head == &a && a.next == NULL);
	CHECK_CLEAR(grace__rseq_list_push_on(fa, &l, &b, 3) == 0 && l.head == &b && b.next == &a);
	CHECK_CLEAR(grace__rseq_list_push_on(fa, &l, &a, 1) == -1 && l.head == &b);
	l.mode = GRACE__RSEQ_LIST_ATOMIC;
	CHECK_CLEAR(grace__rseq_list_push_on(fa, &l, &a, 3) == 1 && l.head == &b);
	CHECK_CLEAR(grace__rseq_list_pop_on(fa, &l, 3, &out) == 1 && l.head == &b);
	l.mode = 0;
	CHECK_CLEAR(grace__rseq_list_pop_on(fa, &l, 2, &out) == 1 && l.head == &b);
	CHECK_CLEAR(grace__rseq_list_pop_on(fa, &l, 3, &out) == 0 && out == &b && l.head == NULL);
#else
	printf("  skipped (no rseq operations in this build)\n");
#endif
}

static void push_zero_slots(void *arg)
{
	struct grace__rseq_list l;
	struct rcu_head h;

	(void)arg;
	grace__rseq_list_init(&l);
	grace__rseq_list_push(&l, sizeof(l), 0, &h);
}

TEST(list_push_with_zero_slots_is_reported)
{
	char out[512];
	int st = gt_run_child(push_zero_slots, NULL, out, sizeof(out));

	/* Before: "cpu %= nslots" divided by zero (SIGFPE). */
	CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "child status %#x: %s", st, out);
	CHECK_MSG(strstr(out, "grace__rseq_list_push") != NULL, "child said: %s", out);
}

/* ---- lists ---- */

struct item {
	struct rcu_head h;
	unsigned int producer;
	unsigned int seq;
};

struct plist {
	struct grace__rseq_list l;
	char pad_[64 - sizeof(struct grace__rseq_list)];
};

static struct plist *lists;
static unsigned int nlists;
static unsigned char *seen;
static uint64_t consumed;

enum { NPROD = 3, PER_PROD = 60000 };

static void consume_chain(struct rcu_head *h)
{
	while (h) {
		struct item *it = container_of(h, struct item, h);
		struct rcu_head *next = h->next;
		unsigned int k = it->producer * PER_PROD + it->seq;
		REQUIRE(it->seq < PER_PROD);
		REQUIRE(seen[k] == 0); /* taken twice: the drain protocol is broken */
		seen[k] = 1;
		consumed++;
		h = next;
	}
}

static void *producer(void *p)
{
	unsigned int id = (unsigned int)(uintptr_t)p;
	struct item *items = (struct item *)calloc(PER_PROD, sizeof(struct item));
	unsigned int online = ncpus_online();
	for (unsigned int i = 0; i < PER_PROD; i++) {
		items[i].producer = id;
		items[i].seq = i;
		if (id == 0 && (i & 511) == 0)
			pin_to((i >> 9) % online);
		int c = grace__rseq_list_push(&lists[0].l, sizeof(struct plist), nlists,
					      &items[i].h);
		REQUIRE(c >= 0 && (unsigned int)c < nlists);
	}
	unpin();
	return items;
}

TEST(list_push_take_and_local_pop_lose_nothing)
{
	pthread_t t[NPROD];
	void *mem[NPROD];
	unsigned int online = ncpus_online();

	nlists = grace__rseq_nr_cpus();
	lists = (struct plist *)aligned_alloc(64, nlists * sizeof(struct plist));
	for (unsigned int i = 0; i < nlists; i++)
		grace__rseq_list_init(&lists[i].l);
	printf("  list mode: %s\n", lists[0].l.mode ? "atomic" : "rseq");
	seen = (unsigned char *)calloc(NPROD * PER_PROD, 1);
	consumed = 0;
	for (unsigned int i = 0; i < NPROD; i++)
		pthread_create(&t[i], NULL, producer, (void *)(uintptr_t)i);
	/* Consume while they push: alternate local pops (pinned) and remote takes. */
	unsigned long rounds = 0, local_ok = 0;
	while (__atomic_load_n(&consumed, __ATOMIC_RELAXED) < NPROD * PER_PROD) {
		unsigned int c = (unsigned int)(rounds % online);
		struct rcu_head *h = NULL;
		if ((rounds & 1) && pin_to(c) == 0 &&
		    grace__rseq_list_pop_local(&lists[c].l, c, &h) == 0) {
			local_ok++;
			consume_chain(h);
			struct rcu_head *none = NULL;
			consume_chain(
				__atomic_exchange_n(&lists[c].l.ahead, none, __ATOMIC_ACQUIRE));
		} else {
			unpin();
			for (unsigned int i = 0; i < nlists; i++)
				consume_chain(grace__rseq_list_take(&lists[i].l));
		}
		rounds++;
		if ((rounds & 63) == 0)
			sched_yield();
		if (rounds > 50000000)
			break;
	}
	unpin();
	for (unsigned int i = 0; i < NPROD; i++)
		pthread_join(t[i], &mem[i]);
	for (unsigned int i = 0; i < nlists; i++)
		consume_chain(grace__rseq_list_take(&lists[i].l));
	printf("  %lu rounds, %lu local pops, consumed %llu of %u\n", rounds, local_ok,
	       (unsigned long long)consumed, NPROD * PER_PROD);
	for (unsigned int i = 0; i < NPROD; i++)
		free(mem[i]);
	free(seen);
	free(lists);
	CHECK(consumed == NPROD * PER_PROD);
}

/* A take of a list whose rseq head is empty issues no membarrier (internal/rseq.h: the take's
 * context); one with a node pushed before it detaches the node. Other threads of the process
 * might make a membarrier meanwhile: 1000 empty takes must not cost 1000. */
TEST(take_of_an_empty_list_makes_no_membarrier)
{
	struct grace__rseq_list l;
	struct item it;

	grace__rseq_list_init(&l);
	uint64_t before = grace_membarrier_calls();
	for (int i = 0; i < 1000; i++)
		CHECK(grace__rseq_list_take(&l) == NULL);
	uint64_t spent = grace_membarrier_calls() - before;
	CHECK_MSG(spent < 10, "1000 takes of an empty list made %llu membarriers",
		  (unsigned long long)spent);
	CHECK(grace__rseq_list_push(&l, 0, 1, &it.h) >= 0);
	CHECK(grace__rseq_list_take(&l) == &it.h);
	CHECK(grace__rseq_list_take(&l) == NULL);
}

TEST(pop_local_refuses_other_cpu)
{
	struct grace__rseq_list l;
	struct item it;
	struct rcu_head *h = (struct rcu_head *)&it;
	grace__rseq_list_init(&l);
	if (pin_to(0) != 0) {
		printf("  skipped\n");
		return;
	}
	l.head = &it.h; /* as if pushed on CPU 1 */
	it.h.next = NULL;
	CHECK(grace__rseq_list_pop_local(&l, 1, &h) == -1);
	CHECK(l.head == &it.h);
	if (grace__rseq_thread_ready() && l.mode == 0) {
		CHECK(grace__rseq_list_pop_local(&l, 0, &h) == 0);
		CHECK(h == &it.h);
		CHECK(l.head == NULL);
	}
	unpin();
}

static void fork_child(void *arg)
{
	(void)arg;
	uint64_t ctr[64] = { 0 };
	struct grace__rseq_list l;
	struct item it;
	unsigned int n = grace__rseq_nr_cpus() < 8 ? grace__rseq_nr_cpus() : 8;
	if (grace__rseq_percpu_add(ctr, 64, n, 1) < 0)
		__atomic_fetch_add(&ctr[1], 1, __ATOMIC_RELAXED);
	grace__rseq_list_init(&l);
	grace__rseq_list_push(&l, 0, 1, &it.h);
	struct rcu_head *h = grace__rseq_list_take(&l);
	uint64_t sum = 0;
	for (unsigned int i = 0; i < 64; i++)
		sum += ctr[i];
	fprintf(stderr, "child ok %d %d\n", sum == 1, h == &it.h);
}

TEST(fork_child_keeps_working)
{
	char out[256];
	int st = gt_run_child(fork_child, NULL, out, sizeof(out));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d: %s", st, out);
	CHECK_MSG(strstr(out, "child ok 1 1") != NULL, "child said: %s", out);
}

GT_MAIN()
