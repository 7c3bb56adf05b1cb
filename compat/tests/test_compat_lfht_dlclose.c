/* SPDX-License-Identifier: MIT */
/*
 * libgrace-urcu loaded with dlopen(), a cds_lfht created (which registers the table's fork
 * handlers, lfht.c "fork()") and destroyed, the library closed, then fork(): the handlers must
 * not outlive the library (glibc registers pthread_atfork() handlers under the calling object's
 * __dso_handle and drops them when it is unloaded). Three rounds, so a reload registers them
 * again. Usage: compat_lfht_dlclose <path of libgrace-urcu.so>. This loader does not link it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*new_fn)(unsigned long, unsigned long, unsigned long, int, const void *, void *);
typedef int (*destroy_fn)(void *, void **);

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
		const void *flavor = dlsym(h, "grace_urcu_flavor_memb");
		if (!mk || !rm || !flavor)
			return fail("a symbol is missing");
		void *ht = mk(16, 1, 0, 0, flavor, NULL);
		if (!ht || rm(ht, NULL) != 0)
			return fail("cds_lfht_new / cds_lfht_destroy failed");
		if (dlclose(h) != 0)
			return fail(dlerror());
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
	printf("compat_lfht_dlclose: 3 rounds, the library unloaded in %d\n", unloaded);
	return 0;
}
