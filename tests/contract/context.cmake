# SPDX-License-Identifier: MIT
# The allowed cells of docs/api.md's context summary (each legal call made where the table
# says it is legal); also as C++, and without rseq and membarrier.
grace_test(NAME contract_context SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_context.c CXX
           TIMEOUT 120)
grace_test(NAME contract_context_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_context.c
           TIMEOUT 120 ENV GRACE_NO_RSEQ=1 GRACE_NO_MEMBARRIER=1)
