/* SPDX-License-Identifier: MIT */
/* compat_contract: the functions of its QSBR unit (test_compat_contract_qsbr.c), which maps the
 * unprefixed liburcu names to QSBR. */
#ifndef GRACE_TEST_COMPAT_CONTRACT_H
#define GRACE_TEST_COMPAT_CONTRACT_H

#ifdef __cplusplus
extern "C" {
#endif

int contract_qsbr_read_ongoing(void);
void contract_qsbr_register_thread(void);
void contract_qsbr_unregister_thread(void);
void contract_qsbr_read_lock(void);
void contract_qsbr_read_unlock(void);
void contract_qsbr_thread_offline(void);
void contract_qsbr_thread_online(void);

#ifdef __cplusplus
}
#endif

#endif
