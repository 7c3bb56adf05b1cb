# SPDX-License-Identifier: MIT
# The torture program (tests/torture/torture.c): one executable, one ctest per flavor.
#   quick: a few seconds per flavor in every build configuration (release, debug, ASan, TSan;
#          1 s each with GRACE_QUICK_SHORT);
#   long:  one hour per flavor (ctest -L long, or tests/torture/long.sh), outside the test command;
#   torture_broken: the deliberately broken flavor must be reported as FAILURE within 10 s.
add_executable(torture ${CMAKE_CURRENT_LIST_DIR}/torture.c ${CMAKE_CURRENT_LIST_DIR}/flavors.c
               ${CMAKE_CURRENT_LIST_DIR}/broken.c ${CMAKE_CURRENT_LIST_DIR}/flavor_hazptr.c)
target_compile_options(torture PRIVATE ${GRACE_WARN})
target_link_libraries(torture PRIVATE grace Threads::Threads)
# grace-urcu's defer_rcu() as a retire path (flavors urcu-defer, urcu-qsbr-defer). compat/ is
# added after tests/, so the target is named here and resolved at generation.
if(GRACE_URCU)
  target_sources(torture PRIVATE ${CMAKE_CURRENT_LIST_DIR}/flavors_urcu.c)
  target_link_libraries(torture PRIVATE grace_urcu)
  target_compile_definitions(torture PRIVATE GRACE_TORTURE_URCU)
endif()

# GRACE_QUICK_SHORT (scripts/test.sh sets it in asan, tsan and aarch64, where a run does a
# fraction of release's work per second anyway): 1 s per run instead of 3.
if(GRACE_QUICK_SHORT)
  set(_torture_s 1)
else()
  set(_torture_s 3)
endif()
set(GRACE_TORTURE_QUICK --duration ${_torture_s} --readers 3 --writers 1 --fake-writers 2 --stall 60)
set(GRACE_TORTURE_LONG --duration 3600 --stall 300)
# The runs: tests/torture/runs.list (shared with long.sh), one line each, "#" comments.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/runs.list)
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/runs.list GRACE_TORTURE_RUNS REGEX "^[a-z]")
if(NOT GRACE_URCU)
  list(FILTER GRACE_TORTURE_RUNS EXCLUDE REGEX "^[^|]*[|]urcu-")
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
# torture_broken_sync / _call: one retire path and no cookie checks, so the readers' own checks
# must catch a synchronize that does not wait / callbacks that run at once: an element older
# than a grace period (age>=2) or recycled while a reader holds it (--fail-fast stops at the
# first, and which comes first varies with the load: both are reader-side, both count).
set(GRACE_TORTURE_BROKEN --flavor broken --duration 10 --fail-fast --readers 3)
set(GRACE_TORTURE_EXPECT sh ${CMAKE_CURRENT_LIST_DIR}/expect_failure.sh 10)
add_test(NAME torture_broken
         COMMAND ${GRACE_TORTURE_EXPECT} any $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN})
add_test(NAME torture_broken_sync
         COMMAND ${GRACE_TORTURE_EXPECT} age>=2,recycled-while-held $<TARGET_FILE:torture>
                 ${GRACE_TORTURE_BROKEN} --paths sync --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
add_test(NAME torture_broken_call
         COMMAND ${GRACE_TORTURE_EXPECT} age>=2,recycled-while-held $<TARGET_FILE:torture>
                 ${GRACE_TORTURE_BROKEN} --paths call --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
# free_rcu that frees at once (poisoned, quarantined): the readers must see it.
add_test(NAME torture_broken_free
         COMMAND ${GRACE_TORTURE_EXPECT} any $<TARGET_FILE:torture> ${GRACE_TORTURE_BROKEN}
                 --paths free,headless --cookie-checks 0 --fake-writers 0 --barrier-threads 0)
# Hazard pointers whose protect publishes without validating (flavor_hazptr.c): the readers must
# find an element aged twice or recycled while they held it. Pool paths only (a heap element
# would be a real use after free).
add_test(NAME torture_broken_hazptr
         COMMAND ${GRACE_TORTURE_EXPECT} age>=2,recycled-while-held,freed-while-held,mark-at-deref
                 $<TARGET_FILE:torture> --flavor hazptr-broken --duration 10 --fail-fast
                 --readers 3 --paths sync,exp --cookie-checks 0 --fake-writers 0
                 --barrier-threads 0 --flood 0)
set_tests_properties(torture_broken torture_broken_sync torture_broken_call torture_broken_free
                     torture_broken_hazptr PROPERTIES TIMEOUT 60 LABELS quick)
