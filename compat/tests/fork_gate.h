/* SPDX-License-Identifier: MIT */
/*
 * A fork handler for the compat fork tests: while in_test is set, its prepare lets the code
 * under test go on (go = 1) and waits up to 3 s for it to return (returned = 1: a deadlock
 * detector, not a timing check), then records what it saw in prepare_saw. Registered by a
 * constructor, so before the handlers defer.c or lfht.c register at their first use: it runs
 * after theirs and before libgrace's (registered at libgrace's start-up). Include after
 * <urcu/uatomic.h>.
 */
#ifndef GRACE_COMPAT_TEST_FORK_GATE_H
#define GRACE_COMPAT_TEST_FORK_GATE_H

#include <pthread.h>
#include <unistd.h>

static int in_test, go, started, returned, prepare_saw;

static void fork_gate_prepare(void)
{
	if (!uatomic_read(&in_test))
		return;
	uatomic_set(&go, 1);
	for (int i = 0; i < 3000 && !uatomic_read(&returned); i++)
		usleep(1000);
	uatomic_set(&prepare_saw, uatomic_read(&returned));
}

__attribute__((constructor)) static void fork_gate_register(void)
{
	pthread_atfork(fork_gate_prepare, NULL, NULL);
}

#endif
