# SPDX-License-Identifier: MIT
# The allowed cells of docs/api.md's context summary (each legal call made where the table
# says it is legal); also as C++, and without rseq and membarrier.
grace_test(NAME contract_context SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_context.c CXX
           TIMEOUT 120)
grace_test(NAME contract_context_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_context.c
           TIMEOUT 120 ENV GRACE_NO_RSEQ=1 GRACE_NO_MEMBARRIER=1)
# Where free_rcu()'s frees run, at most how many per call, and what happens with no memory
# left (docs/guide.md); internal: the library's free function is a test hook.
grace_test(NAME contract_free_where SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free_where.c INTERNAL
           TIMEOUT 120)
# docs/guide.md's publication, exit, fork and srcu-unlock promises.
grace_test(NAME contract_guide SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_guide.c TIMEOUT 120)
