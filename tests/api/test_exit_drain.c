/* SPDX-License-Identifier: MIT */
/* Exit with callbacks pending: the library runs them before the process ends (nothing leaks,
 * no worker left behind). The checker is registered with atexit() before the library's own
 * exit handler, so it runs after it. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <grace/grace.h>

#define N 5000
static unsigned long invoked;

struct obj {
	struct rcu_head rh;
};

static void obj_free(struct rcu_head *h)
{
	__atomic_fetch_add(&invoked, 1, __ATOMIC_RELAXED);
	free(grace_container_of(h, struct obj, rh));
}

static void check(void)
{
	unsigned long n = __atomic_load_n(&invoked, __ATOMIC_RELAXED);
	if (n != 2 * N) {
		printf("exit drain: %lu of %d callbacks ran\n0 passed, 1 failed\n", n, 2 * N);
		fflush(stdout);
		_exit(1);
	}
	printf("exit drain: all %d pending callbacks ran at exit\n1 passed, 0 failed\n", 2 * N);
	fflush(stdout);
}

int main(void)
{
	atexit(check);
	qsbr_register_thread();
	for (int i = 0; i < N; i++) {
		call_rcu(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free);
		call_qsbr(&((struct obj *)malloc(sizeof(struct obj)))->rh, obj_free);
	}
	qsbr_thread_offline(); /* an online QSBR main thread would hold the grace period at exit */
	return 0;
}
