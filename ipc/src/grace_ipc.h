/* SPDX-License-Identifier: MIT */
/*
 * grace_ipc: System V IPC inside one process (semaphore sets, message queues, shared-memory
 * segments), the FREENIX 2003 case study (seed 000, section 4) as a usable component.
 *
 * A namespace (struct grace_ipc_ns) holds the objects of the three types, each type named by
 * its own integer IDs, with the calls and the error codes of semget(2), semop(2),
 * semtimedop(2), semctl(2), msgget(2), msgsnd(2), msgrcv(2), msgctl(2), shmget(2), shmat(2),
 * shmdt(2) and shmctl(2) (Linux 6.x, including the order in which the checks are made). Two
 * implementations are chosen at run time, when the namespace is created:
 *
 *  GRACE_IPC_GLOBAL_LOCK  the Linux 2.5.42 baseline: per type, one lock over the ID lookup and
 *                         the whole operation (the paper's `ipc_ids.ary` lock, Fig. 8).
 *  GRACE_IPC_RCU          the ipc-rcu design: each type's ID array is read under
 *                         rcu_read_lock(), each object has its own lock and a `deleted` flag
 *                         checked after taking it (Fig. 10, 11), a removed object is freed by
 *                         call_rcu() (Fig. 12), and the ID array (grace's ID registry,
 *                         grace/idr.h) grows while readers run (Fig. 13).
 *
 * Both give the same results for the same calls; only their scalability differs.
 *
 * Processes. The caller of every call is a client handle, struct grace_ipc_proc: it stands for
 * a process. It carries the credentials the permission checks use (effective user and group,
 * supplementary groups, the capabilities that matter to System V IPC), the process ID that
 * GETPID, msg_lspid/msg_lrpid and shm_cpid/shm_lpid report, the SEM_UNDO adjustments (applied
 * when the handle is closed, as at process exit) and the shared-memory attachments (detached
 * when the handle is closed). Several threads may use one handle at once, as the threads of a
 * process do.
 *
 * Errors are returned as -errno (the ID, value, count or byte count on success); errno is not
 * touched. The differences from the kernel are listed in ipc/README.md ("Limits and
 * differences"); the design, its correctness argument and measured figures are there too.
 *
 * Thread-safety: every call may be made from any thread concurrently with any other call on
 * the same namespace, except grace_ipc_ns_destroy(), and except that a handle may not be used
 * once grace_ipc_proc_close() has started on it. Threads need no registration.
 */
#ifndef GRACE_IPC_H
#define GRACE_IPC_H

#include <stddef.h>
#include <sys/types.h> /* ssize_t */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- flags and commands: the values of <sys/ipc.h>, <sys/sem.h>, <sys/msg.h>, <sys/shm.h> */

#define GRACE_IPC_PRIVATE 0      /* key: always create a new object */
#define GRACE_IPC_CREAT 01000    /* *get: create the object if the key has none */
#define GRACE_IPC_EXCL 02000     /* *get: with CREAT, fail with -EEXIST if the key has one */
#define GRACE_IPC_NOWAIT 04000   /* semop, msgsnd, msgrcv: -EAGAIN/-ENOMSG instead of sleeping */
#define GRACE_IPC_MODE_MASK 0777 /* *get, IPC_SET: permission bits */

#define GRACE_IPC_RMID 0 /* *ctl: remove */
#define GRACE_IPC_SET 1  /* *ctl: set owner, group, mode (and msg_qbytes) */
#define GRACE_IPC_STAT 2 /* *ctl: snapshot */
#define GRACE_IPC_INFO 3 /* *ctl: limits; returns the highest index in use */

#define GRACE_IPC_SEM_UNDO 0x1000 /* sem_flg: undo the operation when the handle is closed */
#define GRACE_IPC_GETPID 11
#define GRACE_IPC_GETVAL 12
#define GRACE_IPC_GETALL 13
#define GRACE_IPC_GETNCNT 14
#define GRACE_IPC_GETZCNT 15
#define GRACE_IPC_SETVAL 16
#define GRACE_IPC_SETALL 17
#define GRACE_IPC_SEM_STAT 18     /* semid is an index into the ID array; returns the ID */
#define GRACE_IPC_SEM_INFO 19     /* as IPC_INFO, with usage figures */
#define GRACE_IPC_SEM_STAT_ANY 20 /* SEM_STAT without the read-permission check */

#define GRACE_IPC_MSG_NOERROR 010000 /* msgrcv: truncate a message longer than the buffer */
#define GRACE_IPC_MSG_EXCEPT 020000  /* msgrcv: the first message whose type is not msgtyp */
#define GRACE_IPC_MSG_COPY 040000    /* msgrcv: copy the msgtyp-th message, leave it queued */
#define GRACE_IPC_MSG_STAT 11
#define GRACE_IPC_MSG_INFO 12
#define GRACE_IPC_MSG_STAT_ANY 13

#define GRACE_IPC_SHM_HUGETLB 04000    /* shmget: huge pages (size in bits 26..31, as mmap) */
#define GRACE_IPC_SHM_NORESERVE 010000 /* shmget: no swap reservation */
#define GRACE_IPC_SHM_RDONLY 010000    /* shmat: read-only attachment */
#define GRACE_IPC_SHM_RND 020000       /* shmat: round shmaddr down to GRACE_IPC_SHMLBA */
#define GRACE_IPC_SHM_REMAP 040000     /* shmat: replace the mapping at shmaddr */
#define GRACE_IPC_SHM_EXEC 0100000     /* shmat: executable attachment */
#define GRACE_IPC_SHM_LOCK 11          /* shmctl: lock the segment in memory */
#define GRACE_IPC_SHM_UNLOCK 12
#define GRACE_IPC_SHM_STAT 13
#define GRACE_IPC_SHM_INFO 14
#define GRACE_IPC_SHM_STAT_ANY 15
#define GRACE_IPC_SHM_DEST 01000   /* shm_perm.mode: removed, destroyed at the last detach */
#define GRACE_IPC_SHM_LOCKED 02000 /* shm_perm.mode: locked by SHM_LOCK */

#define GRACE_IPC_SEMVMX 32767 /* largest semaphore value (and largest SEM_UNDO adjustment) */
#define GRACE_IPC_IPCMNI \
	32768 /* largest *mni limit. IDs are seq * IPCMNI + slot, as Linux's;
				* treat them as opaque */

/* ---- credentials ---------------------------------------------------------------------------- */

/* The capabilities System V IPC checks (see "man 7 capabilities"). */
#define GRACE_IPC_CAP_IPC_OWNER 0x1    /* bypass the permission bits (EACCES) */
#define GRACE_IPC_CAP_SYS_ADMIN 0x2    /* IPC_SET and IPC_RMID of objects one does not own */
#define GRACE_IPC_CAP_SYS_RESOURCE 0x4 /* raise msg_qbytes above msgmnb */
#define GRACE_IPC_CAP_IPC_LOCK 0x8     /* SHM_LOCK/SHM_UNLOCK of segments one does not own */
#define GRACE_IPC_CAP_ALL 0xf

#define GRACE_IPC_NGROUPS_MAX 32

/* What a process is allowed to do: the credentials the kernel's checks read. */
struct grace_ipc_cred {
	unsigned int uid;  /* effective user ID (owner checks; a new object's cuid and uid) */
	unsigned int gid;  /* effective group ID (group checks; a new object's cgid and gid) */
	unsigned int caps; /* GRACE_IPC_CAP_* */
	unsigned int ngroups;
	unsigned int groups[GRACE_IPC_NGROUPS_MAX]; /* supplementary groups */
};

/* ---- data structures (the useful part of the kernel's) ---------------------------------------- */

/* One operation of grace_ipc_semop(): the layout of struct sembuf (<sys/sem.h>). */
struct grace_ipc_sembuf {
	unsigned short sem_num; /* semaphore index in the set */
	short sem_op;  /* > 0 add; < 0 subtract, blocking until possible; 0 wait for zero */
	short sem_flg; /* GRACE_IPC_NOWAIT, GRACE_IPC_SEM_UNDO; other bits are ignored */
};

/* struct ipc_perm. */
struct grace_ipc_perm {
	int key;           /* GRACE_IPC_PRIVATE once a segment with attachments is removed */
	unsigned int uid;  /* owner */
	unsigned int gid;  /* owner's group */
	unsigned int cuid; /* creator */
	unsigned int cgid; /* creator's group */
	unsigned int mode; /* permission bits; GRACE_IPC_SHM_DEST, GRACE_IPC_SHM_LOCKED */
	unsigned int seq;  /* the sequence part of the ID */
};

/* struct semid_ds. Times are seconds since the Epoch (CLOCK_REALTIME), 0 if never. */
struct grace_ipc_semid_ds {
	struct grace_ipc_perm sem_perm;
	long long sem_otime; /* last successful semop */
	long long sem_ctime; /* creation, last IPC_SET, SETVAL or SETALL */
	unsigned long sem_nsems;
};

/* struct msqid_ds. */
struct grace_ipc_msqid_ds {
	struct grace_ipc_perm msg_perm;
	long long msg_stime; /* last msgsnd */
	long long msg_rtime; /* last msgrcv */
	long long msg_ctime; /* creation or last IPC_SET */
	unsigned long msg_cbytes;
	unsigned long msg_qnum;
	unsigned long msg_qbytes; /* set by IPC_SET */
	int msg_lspid;
	int msg_lrpid;
};

/* struct shmid_ds. */
struct grace_ipc_shmid_ds {
	struct grace_ipc_perm shm_perm;
	size_t shm_segsz;
	long long shm_atime;
	long long shm_dtime;
	long long shm_ctime;
	int shm_cpid;
	int shm_lpid;
	unsigned long shm_nattch;
};

/* struct seminfo (semctl IPC_INFO / SEM_INFO). */
struct grace_ipc_seminfo {
	int semmap, semmni, semmns, semmnu, semmsl, semopm, semume, semusz, semvmx, semaem;
};

/* struct msginfo (msgctl IPC_INFO / MSG_INFO). */
struct grace_ipc_msginfo {
	int msgpool, msgmap, msgmax, msgmnb, msgmni, msgssz, msgtql;
	unsigned short msgseg;
};

/* struct shminfo (shmctl IPC_INFO) and struct shm_info (SHM_INFO). */
struct grace_ipc_shminfo {
	unsigned long shmmax, shmmin, shmmni, shmseg, shmall;
};
struct grace_ipc_shm_info {
	int used_ids;
	unsigned long shm_tot, shm_rss, shm_swp, swap_attempts, swap_successes;
};

/* The fourth argument of grace_ipc_semctl(), as union semun. */
union grace_ipc_semun {
	int val;                        /* SETVAL */
	struct grace_ipc_semid_ds *buf; /* IPC_STAT, IPC_SET, SEM_STAT, SEM_STAT_ANY */
	unsigned short *array;          /* GETALL, SETALL: nsems values */
	struct grace_ipc_seminfo *info; /* IPC_INFO, SEM_INFO */
};

enum grace_ipc_impl {
	GRACE_IPC_GLOBAL_LOCK = 0,
	GRACE_IPC_RCU = 1,
};

/*
 * Limits of a namespace; 0 in a field selects the default: Linux's compiled-in value (in
 * brackets). grace_ipc_limits_kernel() reads the running kernel's instead.
 */
struct grace_ipc_limits {
	int semmsl;    /* semaphores per set (32000) */
	int semmns;    /* semaphores in the namespace (1024000000) */
	int semopm;    /* operations per semop call (500) */
	int semmni;    /* sets (32000; at most GRACE_IPC_IPCMNI) */
	int msgmax;    /* bytes per message (8192) */
	int msgmnb;    /* default msg_qbytes of a new queue (16384) */
	int msgmni;    /* queues (32000; at most GRACE_IPC_IPCMNI) */
	int shmmni;    /* segments (4096; at most GRACE_IPC_IPCMNI) */
	size_t shmmax; /* bytes per segment (ULONG_MAX - 2^24) */
	size_t shmall; /* pages in all segments (ULONG_MAX - 2^24) */
};

/* Counters of one type in a namespace (for tests and benchmarks; a racy snapshot). */
struct grace_ipc_ids_info {
	int objects;         /* objects in the ID array (a removed segment that is still
			      * attached counts until its last detach) */
	int ary_size;        /* slots in the current ID array (RCU mode: derived from the
			      * highest slot used, the registry doubling from 16) */
	unsigned long grows; /* times the ID array was replaced by a larger one */
};

struct grace_ipc_ns_info {
	enum grace_ipc_impl impl;
	struct grace_ipc_ids_info sem, msg, shm;
	int sems;                /* semaphores in all sets */
	long msgs;               /* messages queued */
	long msg_bytes;          /* bytes queued */
	unsigned long shm_pages; /* pages in all segments */
	int procs;               /* open handles */
	int sleepers;            /* threads asleep in semop, msgsnd or msgrcv (a thread counted
				  * here holds or waits on its object's lock, so a call that
				  * needs that lock runs after it is asleep) */
};

struct grace_ipc_ns;
struct grace_ipc_proc;

/* ---- namespaces and handles ------------------------------------------------------------------ */

/**
 * grace_ipc_ns_create() - create an empty namespace.
 * @impl:   GRACE_IPC_GLOBAL_LOCK or GRACE_IPC_RCU.
 * @limits: NULL for the defaults; fields that are 0 take their default.
 * @out:    receives the namespace.
 * Return: 0, -EINVAL (out NULL, unknown impl, a negative limit, a *mni above
 *   GRACE_IPC_IPCMNI, semmsl above 65536), -ENOMEM.
 */
int grace_ipc_ns_create(enum grace_ipc_impl impl, const struct grace_ipc_limits *limits,
			struct grace_ipc_ns **out);

/**
 * grace_ipc_ns_destroy() - remove every object (threads sleeping in semop, msgsnd or msgrcv
 * wake with -EIDRM), wait until those threads have left the namespace, close every handle
 * still open (its attachments are unmapped), wait for the deferred frees, then free it.
 * Context: blocks; not inside a read-side section. No other call on ns may start once it
 * runs, and no handle of ns may be used after it.
 */
void grace_ipc_ns_destroy(struct grace_ipc_ns *ns);

/** grace_ipc_impl_name() - "global" or "rcu". */
const char *grace_ipc_impl_name(enum grace_ipc_impl impl);

/**
 * grace_ipc_limits_kernel() - the running kernel's limits (/proc/sys/kernel/sem, msgmax,
 * msgmnb, msgmni, shmmax, shmall, shmmni), with *mni capped at GRACE_IPC_IPCMNI.
 * Return: 0, or -errno of the first file that could not be read (out then holds zeros there).
 */
int grace_ipc_limits_kernel(struct grace_ipc_limits *out);

/**
 * grace_ipc_cred_self() - the calling process's credentials: geteuid(), getegid(),
 * getgroups() (the first GRACE_IPC_NGROUPS_MAX) and the four capabilities from its
 * effective capability set. Return: 0, -errno (getgroups or capget failed).
 */
int grace_ipc_cred_self(struct grace_ipc_cred *out);

/**
 * grace_ipc_proc_open() - open a client handle: a process of the namespace.
 * @cred: its credentials, copied; NULL: grace_ipc_cred_self().
 * @pid:  the process ID to report (GETPID, lspid, lrpid, cpid, lpid); 0: getpid().
 * Return: 0, -EINVAL (ns or out NULL, pid < 0, cred->ngroups above GRACE_IPC_NGROUPS_MAX),
 *   -ENOMEM, or the error of grace_ipc_cred_self().
 */
int grace_ipc_proc_open(struct grace_ipc_ns *ns, const struct grace_ipc_cred *cred, int pid,
			struct grace_ipc_proc **out);

/**
 * grace_ipc_proc_setcred() - change the handle's credentials (as seteuid(2) and friends do
 * for a process). Calls that start afterwards use the new ones; calls under way finish with
 * either. Return: 0, -EINVAL (p or cred NULL, ngroups too large), -ENOMEM.
 */
int grace_ipc_proc_setcred(struct grace_ipc_proc *p, const struct grace_ipc_cred *cred);

/**
 * grace_ipc_proc_close() - the process exits: apply its SEM_UNDO adjustments (each value
 * clamped to [0, GRACE_IPC_SEMVMX], sleepers woken, as Linux's exit_sem()), detach its
 * shared-memory attachments (a removed segment is destroyed at its last detach), free it.
 * No call on p may be under way or start. NULL is ignored.
 */
void grace_ipc_proc_close(struct grace_ipc_proc *p);

/** The namespace of a handle. */
struct grace_ipc_ns *grace_ipc_proc_ns(const struct grace_ipc_proc *p);

/** Counters of the namespace. */
void grace_ipc_info(struct grace_ipc_ns *ns, struct grace_ipc_ns_info *out);

/* ---- semaphores ------------------------------------------------------------------------------ */

/**
 * grace_ipc_semget() - semget(2): find the set of key, or create one.
 * @key:    GRACE_IPC_PRIVATE (always a new set) or any other value.
 * @nsems:  semaphores in a new set (1..semmsl); for an existing set, at most its size (0 allowed).
 * @semflg: GRACE_IPC_CREAT, GRACE_IPC_EXCL, mode bits; other bits are ignored (as Linux).
 * Return: the set's ID (>= 0), or -EINVAL (nsems out of range, or larger than the existing
 *   set's), -EEXIST (CREAT|EXCL and the key has a set), -EACCES (the key's set does not grant
 *   the mode bits asked for), -ENOENT (no set and no CREAT), -ENOSPC (semmni sets or semmns
 *   semaphores would be exceeded), -ENOMEM.
 * New semaphores are 0. Context: may block on the namespace's update lock.
 */
int grace_ipc_semget(struct grace_ipc_proc *p, int key, int nsems, int semflg);

/**
 * grace_ipc_semop() - semop(2): apply nsops operations to set semid, all of them or none.
 * Operations are applied in array order (an index may appear several times). If one cannot
 * proceed (a subtraction below zero, or a wait-for-zero on a non-zero value) the call sleeps
 * until all of them can, unless that operation has GRACE_IPC_NOWAIT. GRACE_IPC_SEM_UNDO
 * records the opposite adjustment for the handle, applied when it is closed.
 * Return: 0, -E2BIG (nsops > semopm), -EINVAL (nsops == 0, semid < 0, no such set), -EFAULT
 *   (sops NULL), -EFBIG (sem_num >= nsems), -EACCES (no write permission for an operation
 *   that changes a value, no read permission otherwise), -EIDRM (the set was removed while
 *   the call looked at it or slept on it), -ERANGE (a value would exceed GRACE_IPC_SEMVMX, or
 *   an adjustment leave [-32768, 32767]), -EAGAIN (would block with GRACE_IPC_NOWAIT), -ENOMEM.
 * Context: may sleep. The implementation never sleeps inside a read-side section of its own;
 *   a caller inside its own rcu_read_lock() section should use GRACE_IPC_NOWAIT, or its sleep
 *   delays every grace period (and every removal's free) until it wakes.
 * Cost: a few hundred instructions without contention, either implementation (callgrind
 *   figures and scaling with threads: ipc/README.md, "semopbench").
 */
int grace_ipc_semop(struct grace_ipc_proc *p, int semid, const struct grace_ipc_sembuf *sops,
		    size_t nsops);

/**
 * grace_ipc_semtimedop() - semtimedop(2): grace_ipc_semop() that sleeps at most *timeout
 * (relative; NULL, or a deadline beyond what time_t holds: no limit). Return: as
 * grace_ipc_semop(), plus -EAGAIN when the time runs out and -EINVAL for a timeout with
 * tv_sec < 0 or tv_nsec outside [0, 1e9).
 */
int grace_ipc_semtimedop(struct grace_ipc_proc *p, int semid, const struct grace_ipc_sembuf *sops,
			 size_t nsops, const struct timespec *timeout);

/**
 * grace_ipc_semctl() - semctl(2). cmd: GRACE_IPC_RMID, _SET, _STAT, _INFO, GETVAL, SETVAL,
 * GETALL, SETALL, GETPID, GETNCNT, GETZCNT, SEM_STAT, SEM_STAT_ANY, SEM_INFO; arg as
 * union semun (GETALL writes nsems values: the array must hold them; grace_ipc_getall()
 * checks a capacity instead).
 * Return: as semctl(2): the value (GETVAL, GETPID, GETNCNT, GETZCNT), the ID (SEM_STAT*), the
 *   highest index in use (IPC_INFO, SEM_INFO), else 0; or -EINVAL (semid < 0, unknown cmd, no
 *   such set, semnum out of range, an invalid uid or gid for IPC_SET), -EACCES (read
 *   permission for the GET and STAT commands, write permission for SETVAL and SETALL), -EPERM
 *   (IPC_SET and IPC_RMID by neither owner nor creator, without GRACE_IPC_CAP_SYS_ADMIN),
 *   -ERANGE (SETVAL or SETALL above GRACE_IPC_SEMVMX), -EFAULT (a NULL buffer), -EIDRM.
 * IPC_RMID wakes every sleeper with -EIDRM; SETVAL and SETALL clear the SEM_UNDO adjustments
 * of the semaphores they set, in every handle.
 */
int grace_ipc_semctl(struct grace_ipc_proc *p, int semid, int semnum, int cmd,
		     union grace_ipc_semun arg);

/** semctl(GETALL) with the capacity of vals: nsems on success (not 0), -EINVAL also when
 * cap < nsems. */
int grace_ipc_getall(struct grace_ipc_proc *p, int semid, unsigned short *vals, size_t cap);

/** semctl(SETALL) with the number of values: -EINVAL also when n != nsems. */
int grace_ipc_setall(struct grace_ipc_proc *p, int semid, const unsigned short *vals, size_t n);

static inline int grace_ipc_getval(struct grace_ipc_proc *p, int semid, int semnum)
{
	union grace_ipc_semun a;

	a.val = 0;
	return grace_ipc_semctl(p, semid, semnum, GRACE_IPC_GETVAL, a);
}

static inline int grace_ipc_setval(struct grace_ipc_proc *p, int semid, int semnum, int val)
{
	union grace_ipc_semun a;

	a.val = val;
	return grace_ipc_semctl(p, semid, semnum, GRACE_IPC_SETVAL, a);
}

static inline int grace_ipc_getncnt(struct grace_ipc_proc *p, int semid, int semnum)
{
	union grace_ipc_semun a;

	a.val = 0;
	return grace_ipc_semctl(p, semid, semnum, GRACE_IPC_GETNCNT, a);
}

static inline int grace_ipc_getzcnt(struct grace_ipc_proc *p, int semid, int semnum)
{
	union grace_ipc_semun a;

	a.val = 0;
	return grace_ipc_semctl(p, semid, semnum, GRACE_IPC_GETZCNT, a);
}

static inline int grace_ipc_getpid(struct grace_ipc_proc *p, int semid, int semnum)
{
	union grace_ipc_semun a;

	a.val = 0;
	return grace_ipc_semctl(p, semid, semnum, GRACE_IPC_GETPID, a);
}

static inline int grace_ipc_sem_stat(struct grace_ipc_proc *p, int semid,
				     struct grace_ipc_semid_ds *out)
{
	union grace_ipc_semun a;

	a.buf = out;
	return grace_ipc_semctl(p, semid, 0, GRACE_IPC_STAT, a);
}

static inline int grace_ipc_sem_rmid(struct grace_ipc_proc *p, int semid)
{
	union grace_ipc_semun a;

	a.val = 0;
	return grace_ipc_semctl(p, semid, 0, GRACE_IPC_RMID, a);
}

/* ---- message queues ---------------------------------------------------------------------------- */

/* The layout msgsnd and msgrcv expect: a long type, then the text (struct msgbuf). */
struct grace_ipc_msgbuf {
	long mtype;
	char mtext[1];
};

/**
 * grace_ipc_msgget() - msgget(2). msgflg: GRACE_IPC_CREAT, GRACE_IPC_EXCL, mode bits; other
 * bits are ignored. A new queue's msg_qbytes is msgmnb.
 * Return: the queue's ID, or -EEXIST, -EACCES, -ENOENT, -ENOSPC (msgmni queues), -ENOMEM.
 */
int grace_ipc_msgget(struct grace_ipc_proc *p, int key, int msgflg);

/**
 * grace_ipc_msgsnd() - msgsnd(2): queue a message of msgsz bytes of text; msgp points to a
 * long type (> 0) followed by the text. A message fits when msg_cbytes + msgsz <= msg_qbytes
 * and msg_qnum + 1 <= msg_qbytes; otherwise the call sleeps until it fits (FIFO among
 * senders that fit), unless msgflg has GRACE_IPC_NOWAIT. A receiver already sleeping for
 * such a message is handed it directly (Linux's pipelined send).
 * Return: 0, -EFAULT (msgp NULL), -EINVAL (msgsz > msgmax or negative as ssize_t, msqid < 0,
 *   mtype < 1, no such queue), -EACCES (no write permission), -EAGAIN (full, NOWAIT), -EIDRM
 *   (removed while the call looked at it or slept on it), -ENOMEM.
 * Context: may sleep (never inside a read-side section of its own).
 */
int grace_ipc_msgsnd(struct grace_ipc_proc *p, int msqid, const void *msgp, size_t msgsz,
		     int msgflg);

/**
 * grace_ipc_msgrcv() - msgrcv(2): take a message off the queue and copy its type and at
 * most msgsz bytes of its text to msgp. msgtyp 0: the first message; > 0: the first of that
 * type (of another type with GRACE_IPC_MSG_EXCEPT); < 0: the first of the lowest type
 * <= -msgtyp. GRACE_IPC_MSG_COPY (with IPC_NOWAIT, without MSG_EXCEPT) copies the
 * msgtyp-th message (from 0) and leaves it queued. Sleeps until a message is there unless
 * msgflg has GRACE_IPC_NOWAIT.
 * Return: the number of bytes of text copied, or -EFAULT (msgp NULL), -EINVAL (msqid < 0,
 *   msgsz negative as ssize_t, no such queue, MSG_COPY without IPC_NOWAIT or with
 *   MSG_EXCEPT, MSG_COPY of a message longer than min(msgsz, msgmax)), -EACCES (no read
 *   permission), -E2BIG (the message is longer than msgsz and no GRACE_IPC_MSG_NOERROR: it
 *   stays queued; a sleeping receiver also fails with it when a sender offers it a message
 *   too long), -ENOMSG (none, NOWAIT), -EIDRM.
 * Context: may sleep.
 */
ssize_t grace_ipc_msgrcv(struct grace_ipc_proc *p, int msqid, void *msgp, size_t msgsz, long msgtyp,
			 int msgflg);

/**
 * grace_ipc_msgctl() - msgctl(2). cmd: GRACE_IPC_RMID, _SET (uid, gid, mode, msg_qbytes),
 * _STAT, _INFO, MSG_STAT, MSG_STAT_ANY, MSG_INFO (for the INFO commands buf points to a
 * struct grace_ipc_msginfo, as with the system call).
 * Return: 0, the ID (MSG_STAT*), the highest index (INFO); -EINVAL, -EACCES, -EPERM (not
 *   owner or creator, or msg_qbytes above msgmnb without GRACE_IPC_CAP_SYS_RESOURCE),
 *   -EFAULT, -EIDRM. IPC_RMID wakes every sleeper with -EIDRM; IPC_SET makes sleeping
 *   receivers check their permission again and sleeping senders check whether they fit.
 */
int grace_ipc_msgctl(struct grace_ipc_proc *p, int msqid, int cmd, struct grace_ipc_msqid_ds *buf);

/* ---- shared memory ---------------------------------------------------------------------------- */

/* Attachment addresses are multiples of this (Linux's SHMLBA: the page size here). */
size_t grace_ipc_shmlba(void);

/**
 * grace_ipc_shmget() - shmget(2): find the segment of key, or create one of size bytes
 * (zero-filled). shmflg: GRACE_IPC_CREAT, GRACE_IPC_EXCL, mode bits, GRACE_IPC_SHM_HUGETLB,
 * GRACE_IPC_SHM_NORESERVE; other bits are ignored.
 * Return: the segment's ID, or -EINVAL (a new segment's size below 1 or above shmmax, an
 *   existing segment smaller than size, an unknown huge page size), -EEXIST, -EACCES,
 *   -ENOENT, -ENOSPC (shmall pages or shmmni segments), -EPERM (SHM_HUGETLB without
 *   GRACE_IPC_CAP_IPC_LOCK, outside the vm.hugetlb_shm_group group), -ENOMEM.
 */
int grace_ipc_shmget(struct grace_ipc_proc *p, int key, size_t size, int shmflg);

/**
 * grace_ipc_shmat() - shmat(2): map the segment into the process (this one: every handle of
 * every namespace shares its address space) and return the address in *addr. The memory
 * stays valid until grace_ipc_shmdt() or grace_ipc_proc_close() detaches it, whatever
 * happens to the segment meanwhile (IPC_RMID only marks an attached segment
 * GRACE_IPC_SHM_DEST; it is destroyed at its last detach).
 * @shmaddr: NULL (the system chooses), or an address: a multiple of grace_ipc_shmlba(), or
 *   any address with GRACE_IPC_SHM_RND (rounded down). Without GRACE_IPC_SHM_REMAP the range
 *   must be free; with it, what is mapped there is replaced.
 * @shmflg:  GRACE_IPC_SHM_RDONLY, _RND, _REMAP, _EXEC; other bits are ignored.
 * Return: 0, -EINVAL (shmid < 0, a misaligned address without SHM_RND, SHM_REMAP without
 *   an address (or rounded to 0), the range not free, no such segment, addr NULL), -EACCES
 *   (read, and write unless SHM_RDONLY, and execute with SHM_EXEC), -EIDRM, -ENOMEM.
 */
int grace_ipc_shmat(struct grace_ipc_proc *p, int shmid, const void *shmaddr, int shmflg,
		    void **addr);

/**
 * grace_ipc_shmdt() - shmdt(2): detach the handle's attachment that starts at shmaddr.
 * Return: 0, -EINVAL (shmaddr not page-aligned, or no attachment of p starts there).
 */
int grace_ipc_shmdt(struct grace_ipc_proc *p, const void *shmaddr);

/**
 * grace_ipc_shmctl() - shmctl(2). cmd: GRACE_IPC_RMID, _SET, _STAT, _INFO, SHM_STAT,
 * SHM_STAT_ANY, SHM_INFO, SHM_LOCK, SHM_UNLOCK (for IPC_INFO buf points to a struct
 * grace_ipc_shminfo, for SHM_INFO to a struct grace_ipc_shm_info).
 * Return: as msgctl; SHM_LOCK/SHM_UNLOCK: 0, -EINVAL, -EIDRM, -EPERM (neither owner nor
 *   creator without GRACE_IPC_CAP_IPC_LOCK, or SHM_LOCK with RLIMIT_MEMLOCK 0), -ENOMEM.
 */
int grace_ipc_shmctl(struct grace_ipc_proc *p, int shmid, int cmd, struct grace_ipc_shmid_ds *buf);

#ifdef __cplusplus
}
#endif

#endif /* GRACE_IPC_H */
