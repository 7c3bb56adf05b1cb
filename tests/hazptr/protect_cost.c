/* SPDX-License-Identifier: MIT */
/*
 * What hazptr_protect() + hazptr_reset() cost a reader (issue 34: <= 10 instructions on x86-64,
 * no fence, no atomic read-modify-write). One noinline function per pair; check_instructions.sh
 * counts its instructions per call with callgrind and reads its disassembly for fences and
 * locked instructions. Usage: protect_cost N [protect|alloc|retire|rcu_retire].
 *
 *   protect   hp_protect_reset: hazptr_protect() + hazptr_reset() around one load (default)
 *   alloc     hp_alloc_free: hazptr_alloc() + hazptr_free(), from and to the thread's cache
 *   retire    hp_retire: hazptr_retire(NULL, p) of a fresh object (malloc'd outside it); the
 *             inline fast path, and one call in a few out of line (counted apart, as callees)
 *   rcu_retire  rc_retire: rcu_retire(p), the default flavor's inline retire (issue 31: <= 20
 *             instructions, no call, no fence, no atomic read-modify-write), whose append
 *             hazptr_retire() shares; here so that one script checks both
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/hazptr.h>
#include <grace/rcu.h>

struct node {
	long v;
};

long hp_protect_reset(struct grace_hazptr *h, struct node **src);
__attribute__((noinline)) long hp_protect_reset(struct grace_hazptr *h, struct node **src)
{
	struct node *n = hazptr_protect(h, src);
	long v = n->v;

	hazptr_reset(h);
	return v;
}

struct grace_hazptr *hp_alloc_free(void);
__attribute__((noinline)) struct grace_hazptr *hp_alloc_free(void)
{
	struct grace_hazptr *h = hazptr_alloc();

	hazptr_free(h);
	return h;
}

void hp_retire(void *p);
__attribute__((noinline)) void hp_retire(void *p)
{
	hazptr_retire(NULL, p);
}

void rc_retire(void *p);
__attribute__((noinline)) void rc_retire(void *p)
{
	rcu_retire(p);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000, sum = 0;
	const char *mode = argc > 2 ? argv[2] : "protect";
	struct node x = { 1 };
	struct node *head = &x;
	struct grace_hazptr *h = hazptr_alloc();

	if (!h)
		return 1;
	if (!strcmp(mode, "alloc")) {
		/* The first call fills the thread's cache (out of line); the rest are fast. */
		for (long i = 0; i < n; i++)
			sum += hp_alloc_free() != NULL;
		hazptr_free(h);
		printf("%ld\n", sum);
		return sum == n ? 0 : 1;
	}
	if (!strcmp(mode, "retire") || !strcmp(mode, "rcu_retire")) {
		bool rcu = !strcmp(mode, "rcu_retire");

		for (long i = 0; i < n; i++) {
			struct node *o = (struct node *)malloc(sizeof(*o));

			if (!o)
				return 1;
			if (rcu)
				rc_retire(o);
			else
				hp_retire(o);
		}
		if (rcu)
			rcu_barrier();
		else
			hazptr_barrier(NULL);
		hazptr_free(h);
		printf("%ld\n", n);
		return 0;
	}
	for (long i = 0; i < n; i++)
		sum += hp_protect_reset(h, &head);
	hazptr_free(h);
	printf("%ld\n", sum);
	return sum == n ? 0 : 1;
}
