/* SPDX-License-Identifier: MIT */
/* Misuse and fatal-error reporting, stall reports. */
#ifndef GRACE_SRC_DIAG_H
#define GRACE_SRC_DIAG_H

#include <stdint.h>
#include <grace/compiler.h>
#include <grace/diag.h>

/* GRACE__DEBUG (grace/compiler.h): GRACE_DEBUG defined and not 0. */
#define GRACE__LIB_DEBUG GRACE__DEBUG

/* "grace: fatal: CALL: message", then abort(). For errors nothing can recover from. */
GRACE_NORETURN void grace__fatal(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "grace: misuse: CALL: message"; aborts in debug builds, returns otherwise. */
void grace__misuse(const char *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Misuse that cannot be survived (a deadlock or corruption would follow): always aborts. */
GRACE_NORETURN void grace__misuse_fatal(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning that is not a misuse (always returns). */
void grace__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Stall timeout in ns (0: disabled). */
uint64_t grace__stall_timeout_ns(void);
void grace__report_stall(const char *flavor, int tid, uint64_t duration_ns, unsigned long cookie);
/* srcu: its readers are anonymous; the report names the domain (its struct srcu_struct). */
void grace__report_stall_domain(const char *flavor, const void *domain, uint64_t duration_ns,
				unsigned long cookie);

#endif
