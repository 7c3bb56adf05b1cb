/* SPDX-License-Identifier: MIT */
/* Locking baseline: pthread_rwlock_rdlock/unlock on one shared lock (default attributes). */
#include <pthread.h>

#include "readside.h"

static pthread_rwlock_t rw_lock = PTHREAD_RWLOCK_INITIALIZER;

static void rw_nothing(void) {}

RS_DEFINE_LOOP(rs_loop_rwlock, pthread_rwlock_rdlock(&rw_lock), pthread_rwlock_unlock(&rw_lock))

const struct rs_design rs_design_rwlock = {
	.name = "rwlock",
	.loop_symbol = "rs_loop_rwlock",
	.label = "pthread_rwlock read lock/unlock",
	.thread_init = rw_nothing,
	.thread_fini = rw_nothing,
	.loop = rs_loop_rwlock,
	.loop8 = rs_loop_rwlock_x8,
};
