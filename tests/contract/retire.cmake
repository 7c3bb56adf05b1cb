# SPDX-License-Identifier: MIT
# rcu_retire(), rcu_retire_fn() and the free hooks (docs/api.md): in a section, where the frees
# run, nesting deleters, exit hand-over, no memory, QSBR and srcu; also as C++, and without
# membarrier (every call out of line).
grace_test(NAME contract_retire SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c CXX TIMEOUT 120)
grace_test(NAME contract_retire_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
