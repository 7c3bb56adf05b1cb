/* SPDX-License-Identifier: MIT */
/*
 * Regression of issue 12, fault 4: dlclose() of a plugin that pulled grace in. This program
 * does not link grace; the plugin (argv[1]) does, as a shared library (libgrace.so loaded as
 * its dependency) or with libgrace.a inside it. A thread of this program reads under the
 * default flavor and QSBR through the plugin (it registers: grace arranges a thread-exit
 * destructor), the plugin queues callbacks (worker threads start), the plugin is finished and
 * closed, and only then does the thread exit. grace must still be mapped when its destructor
 * and its workers run: the thread's exit and the process's must not crash.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int (*p_read_rcu)(void);
static void (*p_update)(int);
static void (*p_fini)(void);
static int state; /* 1: the thread has read; 2: the plugin is closed */

static void *reader(void *arg)
{
	(void)arg;
	if (p_read_rcu() != 0)
		abort();
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	return NULL; /* thread exit: grace's thread-exit destructors run now */
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 2;
		}
		*(void **)&p_read_rcu = dlsym(h, "plugin_read_rcu");
		*(void **)&p_update = dlsym(h, "plugin_update");
		*(void **)&p_fini = dlsym(h, "plugin_fini");
		if (!p_read_rcu || !p_update || !p_fini) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return 2;
		}
		__atomic_store_n(&state, 0, __ATOMIC_RELAXED);
		pthread_create(&th, NULL, reader, NULL);
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
			usleep(1000);
		p_update(100);
		p_fini();
		if (dlclose(h) != 0) {
			fprintf(stderr, "dlclose: %s\n", dlerror());
			return 2;
		}
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		usleep(20000); /* let idle workers, if any, be scheduled */
		printf("round %d: the reader thread exited after dlclose()\n", round);
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
