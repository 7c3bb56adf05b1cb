# SPDX-License-Identifier: MIT
# The rseq module, three ways: glibc's registration, grace's own (glibc told not to register),
# and no rseq at all (every primitive takes its atomic fallback).
grace_test(NAME unit_rseq SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL CXX TIMEOUT 120
           ENV EXPECT_RSEQ=glibc)
grace_test(NAME unit_rseq_own SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL TIMEOUT 120
           ENV GLIBC_TUNABLES=glibc.pthread.rseq=0 EXPECT_RSEQ=grace)
grace_test(NAME unit_rseq_none SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL TIMEOUT 120
           ENV GRACE_NO_RSEQ=1 EXPECT_RSEQ=none)
