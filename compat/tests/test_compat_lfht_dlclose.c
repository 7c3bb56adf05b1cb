/* SPDX-License-Identifier: MIT */
/*
 * libgrace-urcu loaded with dlopen(), used, and closed, then fork(); three rounds. Each round
 *   - creates and destroys a cds_lfht (which registers the tables' fork handlers, lfht.c
 *     "fork()");
 *   - has a thread register for defer_rcu(), defer a function of this loader and exit without
 *     unregistering, which leaves its queue to a callback libgrace-urcu posts for itself
 *     (defer.c), invoked by grace's workers after the dlclose() below.
 * libgrace-urcu is linked with -z nodelete, as libgrace is, so neither that callback nor the
 * fork handlers run unmapped code; without it the library is unloaded and the process dies.
 * Usage: compat_lfht_dlclose <path of libgrace-urcu.so>. This loader does not link it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*new_fn)(unsigned long, unsigned long, unsigned long, int, const void *, void *);
typedef int (*destroy_fn)(void *, void **);

typedef int (*reg_fn)(int);
typedef void (*defer_fn)(int, void (*)(void *), void *);

static reg_fn defer_register;
static defer_fn defer_rcu;
static long deferred_ran;

static void count(void *arg)
{
	__atomic_fetch_add((long *)arg, 1, __ATOMIC_RELAXED);
}

/* Register for defer_rcu() (flavor 0, memb), defer, exit registered. */
static void *deferrer(void *arg)
{
	(void)arg;
	if (defer_register(0) != 0)
		return (void *)1;
	for (int i = 0; i < 1000; i++)
		defer_rcu(0, count, &deferred_ran);
	return NULL;
}

static int fail(const char *what)
{
	fprintf(stderr, "compat_lfht_dlclose: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	int unloaded = 0;

	if (argc != 2)
		return fail("usage: compat_lfht_dlclose <libgrace-urcu.so>");
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return fail(dlerror());
		new_fn mk;
		destroy_fn rm;
		*(void **)&mk = dlsym(h, "grace_urcu_lfht_new");
		*(void **)&rm = dlsym(h, "grace_urcu_lfht_destroy");
		const void *flavor = dlsym(h, "urcu_memb_flavor");
		if (!mk || !rm || !flavor)
			return fail("a symbol is missing");
		void *ht = mk(16, 1, 0, 0, flavor, NULL);
		if (!ht || rm(ht, NULL) != 0)
			return fail("cds_lfht_new / cds_lfht_destroy failed");
		*(void **)&defer_register = dlsym(h, "grace_urcu_defer_register_thread");
		*(void **)&defer_rcu = dlsym(h, "grace_urcu_defer_rcu");
		if (!defer_register || !defer_rcu)
			return fail("a defer symbol is missing");
		pthread_t t;
		void *tr;
		if (pthread_create(&t, NULL, deferrer, NULL) != 0 || pthread_join(t, &tr) != 0 ||
		    tr != NULL)
			return fail("the deferring thread failed");
		if (dlclose(h) != 0)
			return fail(dlerror());
		/* The queue's callback runs after the unload: give it the time. */
		for (int i = 0; i < 200 && __atomic_load_n(&deferred_ran, __ATOMIC_RELAXED) <
						   1000L * (round + 1);
		     i++)
			usleep(5000);
		/* RTLD_NOLOAD: NULL when the library is gone (then its fork handlers must be too). */
		void *still = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
		if (still)
			dlclose(still);
		else
			unloaded++;

		pid_t pid = fork(); /* a dangling prepare handler would crash here */
		if (pid < 0)
			return fail("fork failed");
		if (pid == 0)
			_exit(0);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return fail("the fork child failed");
	}
	if (__atomic_load_n(&deferred_ran, __ATOMIC_RELAXED) != 3000)
		return fail("deferred functions did not all run");
	printf("compat_lfht_dlclose: 3 rounds, the library unloaded in %d, %ld deferrals ran\n",
	       unloaded, deferred_ran);
	return 0;
}
