/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc: System V semaphore sets inside one process, the FREENIX 2003 case study (seed 000,
 * section 4) as a usable component.
 *
 * A namespace (struct grace_ipc_ns) holds semaphore sets named by integer IDs, with the calls and
 * the error codes of semget(2), semop(2), semtimedop(2) and semctl(2). Two implementations are
 * chosen at run time, when the namespace is created:
 *
 *  GRACE_IPC_GLOBAL_LOCK  the Linux 2.5.42 baseline: one lock over the ID lookup and the whole
 *                         operation (the paper's `ipc_ids.ary` lock, Fig. 8).
 *  GRACE_IPC_RCU          the ipc-rcu design: the ID array is read under rcu_read_lock(), each set
 *                         has its own lock and a `deleted` flag checked after taking it (Fig. 10,
 *                         11), a removed set is freed by call_rcu() (Fig. 12), and the ID array
 *                         (grace's ID registry, grace/idr.h) grows while readers run (Fig. 13).
 *
 * Both give the same results for the same calls; only their scalability differs. The design, its
 * correctness argument and measured figures are in ipc/README.md.
 *
 * Differences from the system calls (all deliberate, none silent):
 *  - no permissions, owners, SEM_UNDO or signals: the low nine bits of semflg (mode) are accepted
 *    and ignored; any other unknown flag bit in semflg or sem_flg gives -EINVAL;
 *  - errors are returned as -errno (the ID or value on success), errno is not touched;
 *  - grace_ipc_getall() takes the capacity of the buffer and fails with -EINVAL if it is too small
 *    (semctl(GETALL) would write past it).
 *
 * Thread-safety: every call may be made from any thread concurrently with any other call on the
 * same namespace, except grace_ipc_ns_destroy(). Threads need no registration.
 */
#ifndef GRACE_IPC_H
#define GRACE_IPC_H

#include <stddef.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flag values are those of <sys/ipc.h>, so code written for the system calls keeps its flags. */
#define GRACE_IPC_PRIVATE 0      /* key: always create a new set */
#define GRACE_IPC_CREAT 01000    /* semflg: create the set if the key has none */
#define GRACE_IPC_EXCL 02000     /* semflg: with CREAT, fail with -EEXIST if the key has a set */
#define GRACE_IPC_NOWAIT 04000   /* sem_flg: fail with -EAGAIN instead of blocking */
#define GRACE_IPC_MODE_MASK 0777 /* semflg: permission bits, accepted and ignored */

#define GRACE_IPC_SEMVMX 32767 /* largest semaphore value */
#define GRACE_IPC_IPCMNI \
	32768 /* largest semmni. IDs are seq << slot_bits | slot, slot_bits
				  * the bits needed to index semmni slots (15 by default, as
				  * Linux's seq * IPCMNI + slot); treat them as opaque */

/* One operation of grace_ipc_semop(): the layout of struct sembuf (<sys/sem.h>). */
struct grace_ipc_sembuf {
	unsigned short sem_num; /* semaphore index in the set */
	short sem_op;  /* > 0 add; < 0 subtract, blocking until possible; 0 wait for zero */
	short sem_flg; /* GRACE_IPC_NOWAIT or 0 */
};

enum grace_ipc_impl {
	GRACE_IPC_GLOBAL_LOCK = 0,
	GRACE_IPC_RCU = 1,
};

/* Limits of a namespace; 0 in a field selects the default (Linux's, in brackets). */
struct grace_ipc_limits {
	int semmsl; /* semaphores per set (32000) */
	int semmns; /* semaphores in the namespace (1024000000) */
	int semopm; /* operations per semop call (500) */
	int semmni; /* sets in the namespace (32000; at most GRACE_IPC_IPCMNI) */
};

/* Snapshot of a set: the useful part of struct semid_ds. */
struct grace_ipc_semid_ds {
	int key;
	int nsems;
	long long otime_ns; /* CLOCK_REALTIME of the last successful semop (0: none) */
};

/* Counters of a namespace (for tests and benchmarks; a racy snapshot under concurrency). */
struct grace_ipc_ns_info {
	enum grace_ipc_impl impl;
	int sets;            /* sets in use */
	int sems;            /* semaphores in use */
	int ary_size;        /* slots in the current ID array (RCU mode: derived from the
			       * highest slot used, the registry doubling from 16) */
	unsigned long grows; /* times the ID array was replaced by a larger one */
};

struct grace_ipc_ns;

/**
 * grace_ipc_ns_create() - create an empty namespace.
 * @impl:   GRACE_IPC_GLOBAL_LOCK or GRACE_IPC_RCU.
 * @limits: NULL for the defaults; fields that are 0 take their default.
 * @out:    receives the namespace.
 * Return: 0, -EINVAL (unknown impl, negative limit, semmni > GRACE_IPC_IPCMNI), -ENOMEM.
 */
int grace_ipc_ns_create(enum grace_ipc_impl impl, const struct grace_ipc_limits *limits,
			struct grace_ipc_ns **out);

/**
 * grace_ipc_ns_destroy() - remove every set (threads blocked in semop wake with -EIDRM), wait
 * until those threads have left the namespace and the deferred frees have run, then free it.
 * Context: blocks; not inside a read-side section. No other call on ns may start once it runs.
 */
void grace_ipc_ns_destroy(struct grace_ipc_ns *ns);

/** grace_ipc_impl_name() - "global" or "rcu". */
const char *grace_ipc_impl_name(enum grace_ipc_impl impl);

/**
 * grace_ipc_semget() - semget(2): find the set of key, or create one.
 * @key:    GRACE_IPC_PRIVATE (always a new set) or any other value.
 * @nsems:  semaphores in a new set (1..semmsl); for an existing set, at most its size (0 allowed).
 * @semflg: GRACE_IPC_CREAT, GRACE_IPC_EXCL, mode bits (ignored).
 * Return: the set's ID (>= 0), or -EINVAL (nsems out of range, or larger than the existing
 *   set's), -EEXIST (CREAT|EXCL and the key has a set), -ENOENT (no set and no CREAT), -ENOSPC
 *   (semmni sets or semmns semaphores would be exceeded), -ENOMEM.
 * New semaphores are 0. Context: may block on the namespace's update lock.
 */
int grace_ipc_semget(struct grace_ipc_ns *ns, int key, int nsems, int semflg);

/**
 * grace_ipc_semop() - semop(2): apply nsops operations to set semid, all of them or none.
 * Operations are applied in array order (an index may appear several times). If one cannot
 * proceed (a subtraction below zero, or a wait-for-zero on a non-zero value) the call sleeps
 * until all of them can, unless that operation has GRACE_IPC_NOWAIT.
 * Return: 0, -EINVAL (semid < 0, no such set, nsops == 0, unknown sem_flg bit), -E2BIG
 *   (nsops > semopm), -EFAULT (sops NULL), -EFBIG (sem_num >= nsems), -ERANGE (a value would
 *   exceed GRACE_IPC_SEMVMX), -EAGAIN (would block with GRACE_IPC_NOWAIT), -EIDRM (the set was
 *   removed while the call looked at it or slept on it).
 * Context: may sleep. The implementation never sleeps inside a read-side section of its own;
 *   a caller inside its own rcu_read_lock() section should use GRACE_IPC_NOWAIT, or its sleep
 *   delays every grace period (and a set removal's free) until it wakes.
 * Cost: about 240 instructions (18 ns on the 2-CPU EPYC of ipc/README.md) without contention,
 *   either implementation; scaling with threads: ipc/README.md ("semopbench").
 */
int grace_ipc_semop(struct grace_ipc_ns *ns, int semid, const struct grace_ipc_sembuf *sops,
		    size_t nsops);

/**
 * grace_ipc_semtimedop() - semtimedop(2): grace_ipc_semop() that sleeps at most *timeout
 * (relative; NULL: no limit). Return: as grace_ipc_semop(), plus -EAGAIN when the time runs
 * out and -EINVAL for a timeout with tv_sec < 0 or tv_nsec outside [0, 1e9).
 */
int grace_ipc_semtimedop(struct grace_ipc_ns *ns, int semid, const struct grace_ipc_sembuf *sops,
			 size_t nsops, const struct timespec *timeout);

/**
 * grace_ipc_rmid() - semctl(IPC_RMID): remove the set. Threads sleeping in semop on it wake and
 * return -EIDRM; the ID fails with -EINVAL from now on, even once its slot holds a new set.
 * Return: 0, -EINVAL (semid < 0 or no such set), -EIDRM (removed concurrently).
 */
int grace_ipc_rmid(struct grace_ipc_ns *ns, int semid);

/** semctl(GETVAL): the value (>= 0), or -EINVAL (bad semid or semnum), -EIDRM. */
int grace_ipc_getval(struct grace_ipc_ns *ns, int semid, int semnum);

/**
 * semctl(SETVAL): set one value and wake the sleepers it lets proceed.
 * Return: 0, -ERANGE (val < 0 or > GRACE_IPC_SEMVMX, checked first), -EINVAL, -EIDRM.
 */
int grace_ipc_setval(struct grace_ipc_ns *ns, int semid, int semnum, int val);

/** semctl(GETALL): copy the nsems values to vals. Return: nsems, -EINVAL (bad semid, or
 * cap < nsems), -EFAULT (vals NULL), -EIDRM. */
int grace_ipc_getall(struct grace_ipc_ns *ns, int semid, unsigned short *vals, size_t cap);

/** semctl(SETALL): set every value (n must be nsems). Return: 0, -ERANGE (a value above
 * GRACE_IPC_SEMVMX), -EINVAL (bad semid, or n != nsems), -EFAULT, -EIDRM. */
int grace_ipc_setall(struct grace_ipc_ns *ns, int semid, const unsigned short *vals, size_t n);

/** semctl(GETNCNT) / semctl(GETZCNT): threads sleeping until semaphore semnum grows / becomes
 * zero. Return: the count (>= 0), -EINVAL, -EIDRM. */
int grace_ipc_getncnt(struct grace_ipc_ns *ns, int semid, int semnum);
int grace_ipc_getzcnt(struct grace_ipc_ns *ns, int semid, int semnum);

/** semctl(IPC_STAT). Return: 0, -EINVAL, -EFAULT (out NULL), -EIDRM. */
int grace_ipc_stat(struct grace_ipc_ns *ns, int semid, struct grace_ipc_semid_ds *out);

/** Counters of the namespace. */
void grace_ipc_info(struct grace_ipc_ns *ns, struct grace_ipc_ns_info *out);

#ifdef __cplusplus
}
#endif

#endif /* GRACE_IPC_H */
