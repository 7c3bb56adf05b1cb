# SPDX-License-Identifier: MIT
grace_test(NAME api_rcu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rcu.c CXX TIMEOUT 120)
grace_test(NAME api_rcu_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rcu.c TIMEOUT 120
           ENV GRACE_NO_MEMBARRIER=1)
# api_flavor_ops: the flavor tables behave as the named functions (docs/api.md, "Flavor
# operations").
grace_test(NAME api_flavor_ops SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_flavor_ops.c TIMEOUT 120)
