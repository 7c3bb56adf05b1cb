# SPDX-License-Identifier: MIT
# The torture program (tests/torture/torture.c): one executable, one ctest per flavor.
#   quick: a few seconds per flavor in every build configuration (release, debug, ASan, TSan);
#   long:  one hour per flavor (ctest -L long, or tests/torture/long.sh), outside the test command;
#   torture_broken: the deliberately broken flavor must be reported as FAILURE within 10 s.
add_executable(torture ${CMAKE_CURRENT_LIST_DIR}/torture.c ${CMAKE_CURRENT_LIST_DIR}/flavors.c
               ${CMAKE_CURRENT_LIST_DIR}/broken.c)
target_compile_options(torture PRIVATE ${GRACE_WARN})
target_link_libraries(torture PRIVATE grace Threads::Threads)
# grace-urcu's defer_rcu() as a retire path (flavors urcu-defer, urcu-qsbr-defer). compat/ is
# added after tests/, so the target is named here and resolved at generation.
if(GRACE_URCU)
  target_sources(torture PRIVATE ${CMAKE_CURRENT_LIST_DIR}/flavors_urcu.c)
  target_link_libraries(torture PRIVATE grace_urcu)
  target_compile_definitions(torture PRIVATE GRACE_TORTURE_URCU)
endif()

set(GRACE_TORTURE_QUICK --duration 3 --readers 3 --writers 1 --fake-writers 2 --stall 60)
set(GRACE_TORTURE_LONG --duration 3600 --stall 300)
# name | flavor | environment (chosen at start-up: fence fallback, srcu without rseq) | extra
# arguments. The *_free runs use only the free_rcu retire paths (free, headless: every element
# a heap element) and flood free_rcu, in each domain; rcu_free_worker frees on the engine's
# worker (GRACE_FREE_WORKER=1). rcu_pace_min runs the adaptive policy (the default) capped at
# its shortest pacing, 50 us: its naps and grace periods back to back at the highest rate it
# allows. The other runs choose among every path, free_rcu included.
set(GRACE_TORTURE_RUNS
    "rcu|rcu|"
    "rcu_poll|rcu-poll|"
    "rcu_batch|rcu-batch|"
    "rcu_limits|rcu-limits|"
    "rcu_pace_min|rcu-pace-min|"
    "rcu_fallback|rcu|GRACE_NO_MEMBARRIER=1"
    "qsbr|qsbr|"
    "qsbr_batch|qsbr-batch|"
    "qsbr_fallback|qsbr|GRACE_NO_MEMBARRIER=1"
    "srcu|srcu|"
    "srcu_atomic|srcu|GRACE_NO_RSEQ=1"
    "srcu_fallback|srcu|GRACE_NO_MEMBARRIER=1"
    "rcu_free|rcu||--paths free,headless"
    "rcu_free_worker|rcu|GRACE_FREE_WORKER=1|--paths free,headless"
    "qsbr_free|qsbr||--paths free,headless"
    "srcu_free|srcu||--paths free,headless")
# grace-urcu's defer_rcu(): every heap element through it (headless), and mixed with every path.
if(GRACE_URCU)
  list(APPEND GRACE_TORTURE_RUNS
       "urcu_defer|urcu-defer||--paths headless"
       "urcu_defer_mixed|urcu-defer|"
       "urcu_defer_fallback|urcu-defer|GRACE_NO_MEMBARRIER=1|--paths headless"
       "urcu_qsbr_defer|urcu-qsbr-defer||--paths headless")
endif()
foreach(run ${GRACE_TORTURE_RUNS})
  string(REPLACE "|" ";" run "${run}")
  list(GET run 0 name)
  list(GET run 1 flavor)
  list(LENGTH run n)
  set(env "")
  set(extra "")
  if(n GREATER 2)
    list(GET run 2 env)
  endif()
  if(n GREATER 3)
    list(GET run 3 extra)
    separate_arguments(extra)
  endif()
  add_test(NAME torture_${name} COMMAND torture --flavor ${flavor} ${GRACE_TORTURE_QUICK} ${extra})
  set_tests_properties(torture_${name} PROPERTIES TIMEOUT 180 LABELS quick)
  add_test(NAME torture_long_${name} COMMAND torture --flavor ${flavor} ${GRACE_TORTURE_LONG} ${extra})
  set_tests_properties(torture_long_${name} PROPERTIES TIMEOUT 4000 LABELS long)
  if(env)
    set_tests_properties(torture_${name} torture_long_${name} PROPERTIES ENVIRONMENT "${env}")
  endif()
endforeach()

# Proof that the checker can fail (tests/torture/broken.c): each passes only if the run exits 1
# with a FAILURE line and its first error within 10 s. torture_broken: every path and check;
# torture_broken_sync / _call: one retire path and no cookie checks, so the age check alone
# must catch a synchronize that does not wait / callbacks that run at once.
set(GRACE_TORTURE_BROKEN --flavor broken --duration 10 --fail-fast --readers 3)
set(GRACE_TORTURE_EXPECT sh ${CMAKE_CURRENT_LIST_DIR}/expect_failure.sh 10)
add_test(NAME torture_broken
         COMMAND ${GRACE_TORTURE_EXPECT} any $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN})
add_test(NAME torture_broken_sync
         COMMAND ${GRACE_TORTURE_EXPECT} age>=2 $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN}
                 --paths sync --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
add_test(NAME torture_broken_call
         COMMAND ${GRACE_TORTURE_EXPECT} age>=2 $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN}
                 --paths call --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
# free_rcu that frees at once (poisoned, quarantined): the readers must see it.
add_test(NAME torture_broken_free
         COMMAND ${GRACE_TORTURE_EXPECT} any $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN}
                 --paths free,headless --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
set_tests_properties(torture_broken torture_broken_sync torture_broken_call torture_broken_free
                     PROPERTIES TIMEOUT 60 LABELS quick)
