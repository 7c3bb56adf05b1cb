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
# Hostile paths of free_rcu() (review of src/engine/free.c): one program, each test in its own
# process (the argument names it); fork_counts_engine_frees with every free on the engine path.
grace_test(NAME unit_free_hostile SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free_hostile.c INTERNAL
           TIMEOUT 120 ARGS fork_while_waiting_at_bound)
foreach(t fork_during_barrier barrier_meets_owner_frees bound_gives_up_once
          fork_counts_engine_frees)
  add_test(NAME unit_free_hostile_${t} COMMAND unit_free_hostile ${t})
  set_tests_properties(unit_free_hostile_${t} PROPERTIES TIMEOUT 120 LABELS quick)
endforeach()
set_tests_properties(unit_free_hostile_fork_counts_engine_frees PROPERTIES
                     ENVIRONMENT GRACE_FREE_WORKER=1)
