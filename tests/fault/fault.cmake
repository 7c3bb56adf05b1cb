# SPDX-License-Identifier: MIT
# Regressions of issue 12: one test per fault, each failing on the code the issue was filed
# against. The fault-injection suite is in suite.cmake.
grace_test(NAME fault_regress_debug0 SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_debug0.c TIMEOUT 60)
grace_test(NAME fault_regress_nesting SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_nesting.c TIMEOUT 120)
grace_test(NAME fault_regress_nesting_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_nesting.c
           TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME fault_regress_idr SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_idr.c CXX TIMEOUT 60)
