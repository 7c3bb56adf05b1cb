/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/tls-compat.h>: thread-local variables under liburcu's macro names. */
#ifndef GRACE_URCU_TLS_COMPAT_H
#define GRACE_URCU_TLS_COMPAT_H

#include <urcu/config.h>

#ifdef __cplusplus
#define URCU_TLS_STORAGE thread_local
#else
#define URCU_TLS_STORAGE __thread
#endif

#define DECLARE_URCU_TLS(type, name) URCU_TLS_STORAGE type name
#define DEFINE_URCU_TLS(type, name) URCU_TLS_STORAGE type name
#define DEFINE_URCU_TLS_INIT(type, name, init) URCU_TLS_STORAGE type name = (init)
#define URCU_TLS(name) (name)

#endif
