/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/tls-compat.h>: thread-local variables under liburcu's macro names. */
#ifndef GRACE_URCU_TLS_COMPAT_H
#define GRACE_URCU_TLS_COMPAT_H

#include <stdint.h>
#include <stdlib.h>
#include <urcu/config.h>
/* As liburcu's: caa_likely(), caa_container_of(), the barriers come with it. */
#include <urcu/compiler.h>
#include <urcu/arch.h>

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
