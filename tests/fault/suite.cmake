# SPDX-License-Identifier: MIT
# The fault-injection suite of issue 12: each part runs briefly in the test command (label
# quick) and for long under the label long (GRACE_FAULT_MS and friends set the durations).
grace_test(NAME fault_locks SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_locks.c TIMEOUT 300)
grace_test(NAME fault_locks_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_locks.c TIMEOUT 3600
           ENV GRACE_FAULT_MS=300000 LABELS long)
# The same with the retiring threads stepping grace periods as often as they can (the free_*
# calls made under the lock step them; a step must never wait for the lock's reader).
grace_test(NAME fault_locks_step SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_locks.c TIMEOUT 300
           ENV GRACE_STEP_GARBAGE=1)
grace_test(NAME fault_exit SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_exit.c TIMEOUT 600)
grace_test(NAME fault_exit_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_exit.c TIMEOUT 7200
           ENV GRACE_FAULT_RUNS=3000 LABELS long)
grace_test(NAME fault_fork SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_fork.c TIMEOUT 600)
grace_test(NAME fault_fork_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/suite_fork.c TIMEOUT 7200
           ENV GRACE_FAULT_MS=600000 LABELS long)
# dlopen/dlclose cycles of tests/fault/plugin.c (built by fault.cmake), linked against
# libgrace.so or with libgrace.a inside; the loader does not link grace.
add_executable(fault_dlopen ${CMAKE_CURRENT_LIST_DIR}/suite_dlopen.c)
target_compile_options(fault_dlopen PRIVATE ${GRACE_WARN})
target_link_libraries(fault_dlopen PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
foreach(_v "" _static)
  add_test(NAME fault_dlopen${_v} COMMAND fault_dlopen $<TARGET_FILE:fault_plugin${_v}>)
  set_tests_properties(fault_dlopen${_v} PROPERTIES TIMEOUT 300 LABELS quick)
  # The same under the lazy policy: workers that sleep on a timer when the plugin goes.
  add_test(NAME fault_dlopen${_v}_lazy COMMAND fault_dlopen $<TARGET_FILE:fault_plugin${_v}>)
  set_tests_properties(fault_dlopen${_v}_lazy PROPERTIES TIMEOUT 300 LABELS quick
                       ENVIRONMENT GRACE_POLICY=lazy)
  # With the plugin's threads stepping the default flavor's grace periods (its rcu_retire()
  # calls, GRACE_STEP_GARBAGE=1) when it goes.
  add_test(NAME fault_dlopen${_v}_step COMMAND fault_dlopen $<TARGET_FILE:fault_plugin${_v}>)
  set_tests_properties(fault_dlopen${_v}_step PROPERTIES TIMEOUT 300 LABELS quick
                       ENVIRONMENT GRACE_STEP_GARBAGE=1)
  add_test(NAME fault_dlopen${_v}_long COMMAND fault_dlopen $<TARGET_FILE:fault_plugin${_v}>)
  set_tests_properties(fault_dlopen${_v}_long PROPERTIES TIMEOUT 3600 LABELS long
                       ENVIRONMENT GRACE_FAULT_RUNS=5000)
endforeach()
