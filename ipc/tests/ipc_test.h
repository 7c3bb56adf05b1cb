/* SPDX-License-Identifier: MIT */
/*
 * What the per-type tests (test_ipc_sem.c, test_ipc_msg.c, test_ipc_shm.c) share: both
 * implementations, a fresh namespace per test body, and caller credentials. Include after
 * gtest_lite.h.
 */
#ifndef GRACE_IPC_TEST_H
#define GRACE_IPC_TEST_H

#include <string.h>
#include <grace_ipc.h>

static const enum grace_ipc_impl impls[2] = { GRACE_IPC_GLOBAL_LOCK, GRACE_IPC_RCU };

/* Each body runs once per implementation with p, a handle (root, every capability) of a
 * fresh namespace; destroying the namespace closes the handle. */
#define FOR_EACH_IMPL(p, lim)                                                          \
	for (int impl_i_ = 0; impl_i_ < 2; impl_i_++)                                  \
		for (struct grace_ipc_proc *p = mk_proc(impls[impl_i_], lim, NULL); p; \
		     grace_ipc_ns_destroy(grace_ipc_proc_ns(p)), p = NULL)

static inline struct grace_ipc_cred cred(unsigned uid, unsigned gid, unsigned caps)
{
	struct grace_ipc_cred c;

	memset(&c, 0, sizeof(c));
	c.uid = uid;
	c.gid = gid;
	c.caps = caps;
	return c;
}

/* A handle (pid 4242) of a fresh namespace of impl; c NULL: root with every capability. */
static inline struct grace_ipc_proc *mk_proc(enum grace_ipc_impl impl,
					     const struct grace_ipc_limits *lim,
					     const struct grace_ipc_cred *c)
{
	struct grace_ipc_ns *ns = NULL;
	struct grace_ipc_proc *p = NULL;
	struct grace_ipc_cred root = cred(0, 0, GRACE_IPC_CAP_ALL);

	REQUIRE(grace_ipc_ns_create(impl, lim, &ns) == 0);
	REQUIRE(ns != NULL);
	REQUIRE(grace_ipc_proc_open(ns, c ? c : &root, 4242, &p) == 0);
	printf("  impl %s\n", grace_ipc_impl_name(impl));
	return p;
}

/* Another process of p's namespace. */
static inline struct grace_ipc_proc *other(struct grace_ipc_proc *p, unsigned uid, unsigned gid,
					   unsigned caps, int pid)
{
	struct grace_ipc_proc *q = NULL;
	struct grace_ipc_cred c = cred(uid, gid, caps);

	REQUIRE(grace_ipc_proc_open(grace_ipc_proc_ns(p), &c, pid, &q) == 0);
	return q;
}

#endif /* GRACE_IPC_TEST_H */
