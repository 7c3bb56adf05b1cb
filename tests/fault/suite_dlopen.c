/* SPDX-License-Identifier: MIT */
/*
 * Fault-injection suite: dlopen()/dlclose() cycles of a plugin that uses every flavor.
 *
 * This program does not link grace. Each cycle loads the plugin (argv[1]: tests/fault/plugin.c,
 * linked against libgrace.so, or with libgrace.a inside), runs several threads that read under
 * every flavor (the default flavor and QSBR, and srcu through the plugin's inline read side)
 * and replace the plugin's objects, retiring them with call_rcu(), call_qsbr() and
 * call_srcu() from several threads at once; keeps one more thread that read under the default
 * flavor and QSBR alive across the dlclose() (it exits in the next cycle: grace's thread-exit
 * destructors then run after the plugin is gone); then finishes the plugin (its barriers and
 * cleanup_srcu_struct(), the contract of docs/guide.md) and closes it. No reader may find a
 * freed object; nothing may crash; the workers of grace must keep running (the next cycle
 * uses them). The srcu readers are joined before the dlclose(): a thread that ran the inline
 * srcu read side of an object that is then unloaded is the subject of another test (its rseq
 * area points into that object). GRACE_FAULT_RUNS sets the number of cycles.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int (*p_read_rcu)(void);
static int (*p_read_srcu)(void);
static void (*p_update)(int);
static void (*p_fini)(void);
static unsigned long (*p_freed)(void);

static int stop, bad;

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	for (int i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++) {
		int b = p_read_rcu() + p_read_srcu();
		if (b)
			__atomic_fetch_add(&bad, b, __ATOMIC_RELAXED);
		if ((i + (int)id) % 4 == 0)
			p_update(8);
	}
	return NULL;
}

/* Reads through the plugin, then outlives its dlclose(): exits during the next cycle. */
static int survivor_state; /* 1: has read; 2: may exit */

static void *survivor(void *arg)
{
	(void)arg;
	if (p_read_rcu())
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&survivor_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&survivor_state, __ATOMIC_ACQUIRE) != 2)
		usleep(500);
	return NULL;
}

#define SYM(h, name, var)                                                     \
	do {                                                                  \
		*(void **)&(var) = dlsym((h), (name));                        \
		if (!(var)) {                                                 \
			fprintf(stderr, "dlsym %s: %s\n", (name), dlerror()); \
			return 2;                                             \
		}                                                             \
	} while (0)

int main(int argc, char **argv)
{
	const char *e = getenv("GRACE_FAULT_RUNS");
	unsigned int cycles = e ? (unsigned int)strtoul(e, NULL, 0) : 20;
	pthread_t surv;
	bool have_surv = false;
	unsigned long freed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned int c = 0; c < cycles; c++) {
		pthread_t th[4];
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 2;
		}
		SYM(h, "plugin_read_rcu", p_read_rcu);
		SYM(h, "plugin_read_srcu", p_read_srcu);
		SYM(h, "plugin_update", p_update);
		SYM(h, "plugin_fini", p_fini);
		SYM(h, "plugin_freed", p_freed);
		__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
		usleep(20000);
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		/* The survivor of the previous cycle exits now, its plugin long closed. */
		if (have_surv) {
			__atomic_store_n(&survivor_state, 2, __ATOMIC_RELEASE);
			pthread_join(surv, NULL);
		}
		__atomic_store_n(&survivor_state, 0, __ATOMIC_RELAXED);
		pthread_create(&surv, NULL, survivor, NULL);
		have_surv = true;
		while (__atomic_load_n(&survivor_state, __ATOMIC_ACQUIRE) != 1)
			usleep(500);
		p_update(16);
		p_fini();
		freed = p_freed();
		if (dlclose(h) != 0) {
			fprintf(stderr, "dlclose: %s\n", dlerror());
			return 2;
		}
	}
	__atomic_store_n(&survivor_state, 2, __ATOMIC_RELEASE);
	pthread_join(surv, NULL);
	printf("%u dlopen/dlclose cycles, 4 threads each; %lu objects freed by the plugin's "
	       "callbacks (last cycle's count); readers found %d freed objects\n",
	       cycles, freed, bad);
	if (bad || freed == 0) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
