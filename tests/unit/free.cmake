# SPDX-License-Identifier: MIT
# free_rcu() and its twins (issue 13), with the library's free replaced by a checker (internal
# hook): nothing freed early, nothing lost (barriers, idle and exiting threads, process exit),
# the per-thread bound under a stalled reader, NULL, offsets, fork. Run three ways: the default
# (frees in the calling thread), every free on the engine's worker, and the fence fallback.
grace_test(NAME unit_free SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free.c INTERNAL TIMEOUT 120)
grace_test(NAME unit_free_worker SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free.c INTERNAL
           TIMEOUT 120 ENV GRACE_FREE_WORKER=1)
grace_test(NAME unit_free_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free.c INTERNAL
           TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
