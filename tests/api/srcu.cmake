# SPDX-License-Identifier: MIT
# srcu, in each mode the library can choose at start-up: rseq + membarrier (the fast path), the
# atomic fallback (no rseq), the fence fallback (no membarrier), and grace's own rseq
# registration (glibc's disabled). The C++ build runs the fast path.
set(_srcu_src ${CMAKE_CURRENT_LIST_DIR}/test_srcu.c)
if(GRACE_TSAN)
  set(_srcu_fast atomic+fence)   # TSan mode: no rseq asm, no membarrier
  set(_srcu_own atomic+fence)
elseif(CMAKE_CROSSCOMPILING_EMULATOR)
  set(_srcu_fast atomic+membarrier) # qemu-user refuses rseq(2); membarrier reaches the host
  set(_srcu_own atomic+membarrier)
else()
  set(_srcu_fast rseq+membarrier)
  set(_srcu_own rseq+membarrier)
endif()
grace_test(NAME api_srcu SOURCES ${_srcu_src} CXX TIMEOUT 120 ENV EXPECT_SRCU_MODE=${_srcu_fast})
grace_test(NAME api_srcu_norseq SOURCES ${_srcu_src} TIMEOUT 120
           ENV GRACE_NO_RSEQ=1 EXPECT_SRCU_MODE=$<IF:$<BOOL:${GRACE_TSAN}>,atomic+fence,atomic+membarrier>)
grace_test(NAME api_srcu_fence SOURCES ${_srcu_src} TIMEOUT 120
           ENV GRACE_NO_MEMBARRIER=1 EXPECT_SRCU_MODE=$<IF:$<BOOL:${GRACE_TSAN}>,atomic+fence,$<IF:$<BOOL:${CMAKE_CROSSCOMPILING_EMULATOR}>,atomic+fence,rseq+fence>>)
grace_test(NAME api_srcu_ownrseq SOURCES ${_srcu_src} TIMEOUT 120
           ENV GLIBC_TUNABLES=glibc.pthread.rseq=0 EXPECT_SRCU_MODE=${_srcu_own})
# Longer poison stress (not in the test command).
grace_test(NAME api_srcu_stress_long SOURCES ${_srcu_src} TIMEOUT 600 LABELS long
           ARGS poison_stress ENV SRCU_STRESS_MS=60000)
# The end of a domain and fork() (an independent review's faults): the fast path, and the two
# fallbacks, whose out-of-line unlock had the same window.
set(_srcu_td ${CMAKE_CURRENT_LIST_DIR}/test_srcu_teardown.c)
grace_test(NAME api_srcu_teardown SOURCES ${_srcu_td} TIMEOUT 60)
grace_test(NAME api_srcu_teardown_norseq SOURCES ${_srcu_td} TIMEOUT 60 ENV GRACE_NO_RSEQ=1)
grace_test(NAME api_srcu_teardown_fence SOURCES ${_srcu_td} TIMEOUT 60 ENV GRACE_NO_MEMBARRIER=1)
