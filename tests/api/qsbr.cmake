# SPDX-License-Identifier: MIT
grace_test(NAME api_qsbr SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_qsbr.c CXX TIMEOUT 120)
grace_test(NAME api_qsbr_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_qsbr.c TIMEOUT 120
           ENV GRACE_NO_MEMBARRIER=1)
