# SPDX-License-Identifier: MIT
# The wait's "blocked" signal (core/wait.h): readers preempted on the driver's CPU make it sleep
# at once instead of spinning; checked for early frees, lost wake-ups, that the signal fires, and
# the fallback when the hint misleads (a QSBR reader blocked in the kernel).
# Also run with the fence fallback (no membarrier) and with grace's own rseq registration.
grace_test(NAME unit_wait_blocked SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_wait_blocked.c INTERNAL
           TIMEOUT 120)
grace_test(NAME unit_wait_blocked_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_wait_blocked.c
           INTERNAL TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME unit_wait_blocked_own SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_wait_blocked.c
           INTERNAL TIMEOUT 120 ENV GLIBC_TUNABLES=glibc.pthread.rseq=0)
