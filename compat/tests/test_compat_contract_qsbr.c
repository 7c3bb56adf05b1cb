/* SPDX-License-Identifier: MIT */
/*
 * The QSBR half of compat_contract (test_compat_contract.c): a translation unit that maps the
 * unprefixed liburcu names to QSBR with <urcu-qsbr.h>, as a QSBR program does (the other unit
 * maps them to memb with <urcu.h>; two mapped flavors in one unit are an #error).
 */
#include <urcu-qsbr.h>

#include "test_compat_contract.h"

int contract_qsbr_read_ongoing(void)
{
	return rcu_read_ongoing();
}

void contract_qsbr_register_thread(void)
{
	rcu_register_thread();
}

void contract_qsbr_unregister_thread(void)
{
	rcu_unregister_thread();
}

void contract_qsbr_read_lock(void)
{
	rcu_read_lock();
}

void contract_qsbr_read_unlock(void)
{
	rcu_read_unlock();
}

void contract_qsbr_thread_offline(void)
{
	rcu_thread_offline();
}

void contract_qsbr_thread_online(void)
{
	rcu_thread_online();
}
