/* SPDX-License-Identifier: MIT */
/*
 * What hazptr_protect() + hazptr_reset() cost a reader (issue 34: <= 10 instructions on x86-64,
 * no fence, no atomic read-modify-write). One noinline function per pair; check_instructions.sh
 * counts its instructions per call with callgrind and reads its disassembly for fences and
 * locked instructions. Usage: protect_cost N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <grace/hazptr.h>

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

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000, sum = 0;
	struct node x = { 1 };
	struct node *head = &x;
	struct grace_hazptr *h = hazptr_alloc();

	if (!h)
		return 1;
	for (long i = 0; i < n; i++)
		sum += hp_protect_reset(h, &head);
	hazptr_free(h);
	printf("%ld\n", sum);
	return sum == n ? 0 : 1;
}
