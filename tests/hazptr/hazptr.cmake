# SPDX-License-Identifier: MIT
# hazptr_api: the API and every hostile path of issue 34 (tests/hazptr/test_hazptr.c), also as
# C++; hazptr_api_fallback: the same without membarrier (fences on both sides).
grace_test(NAME hazptr_api SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr.c CXX TIMEOUT 120)
grace_test(NAME hazptr_api_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr.c TIMEOUT 120
           ENV GRACE_NO_MEMBARRIER=1)
# The no-memory case alone, in a process that never needed the orphan list: the object is lost
# and reported (in hazptr_api, after other cases, it finds room in the orphan list and is freed).
grace_test(NAME hazptr_retire_oom SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr.c TIMEOUT 60
           ARGS retire_without_memory_returns_and_frees_or_says_so)
# A signal handler that retires while its thread is inside fork(), whose handlers hold every
# retire cache: a debug library, stopped there (GRACE_TEST_PAUSE), reports it.
grace_test(NAME hazptr_fork_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr.c TIMEOUT 120
           ARGS a_handler_retiring_inside_fork_is_reported ENV GRACE_TEST_PAUSE=fork:1000000)
# The same inside hazptr_barrier(), which holds the retire caches (pause site hazptr_barrier).
grace_test(NAME hazptr_barrier_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr.c TIMEOUT 120
           ARGS a_handler_retiring_inside_a_barrier_is_reported
           ENV GRACE_TEST_PAUSE=hazptr_barrier:1000000)
# hazptr_bound: the bound H*T + BATCH*T with a reader stuck for the whole test (2 s of flood);
# hazptr_srcu_stall_*: an srcu reader converted to a hazard pointer under a retire flood (issue
# 34, item 3), 3 s in the quick suite and 60 s under the label long.
set(_hp_bound ${CMAKE_CURRENT_LIST_DIR}/test_bound.c)
grace_test(NAME hazptr_bound SOURCES ${_hp_bound} CXX TIMEOUT 120 ARGS stuck_reader_flood)
grace_test(NAME hazptr_bound_fallback SOURCES ${_hp_bound} TIMEOUT 120 ARGS stuck_reader_flood
           ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME hazptr_srcu_stall_quick SOURCES ${_hp_bound} TIMEOUT 120 ARGS srcu_stall
           ENV HP_BOUND_MS=3000)
grace_test(NAME hazptr_srcu_stall_60s SOURCES ${_hp_bound} TIMEOUT 300 ARGS srcu_stall
           ENV HP_BOUND_MS=60000 LABELS long)
# hazptr_instructions: protect + reset <= 10 x86-64 instructions, no fence, no atomic
# read-modify-write (callgrind; tests/hazptr/check_instructions.sh). Optimised builds of the
# program only (debug and TSan builds go out of line on purpose), on x86-64, with valgrind.
add_executable(hazptr_protect_cost ${CMAKE_CURRENT_LIST_DIR}/protect_cost.c)
target_compile_options(hazptr_protect_cost PRIVATE ${GRACE_WARN})
target_link_libraries(hazptr_protect_cost PRIVATE grace Threads::Threads)
find_program(GRACE_VALGRIND valgrind)
if(GRACE_VALGRIND AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT GRACE_DEBUG
   AND NOT GRACE_TSAN AND NOT GRACE_SANITIZE AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  add_test(NAME hazptr_instructions
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_instructions.sh
                   $<TARGET_FILE:hazptr_protect_cost> 10)
  set_tests_properties(hazptr_instructions PROPERTIES TIMEOUT 120 LABELS quick SKIP_RETURN_CODE 77)
  # The other fast paths api.md gives a cost for: hazptr_alloc() + hazptr_free() from and to
  # the thread's cache (17 on x86-64 with GCC 12), and hazptr_retire()'s inline append (19, that
  # of rcu_retire()); the fast path from the disassembly, no fence, no atomic read-modify-write.
  add_test(NAME hazptr_alloc_instructions
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_instructions.sh
                   $<TARGET_FILE:hazptr_protect_cost> 20 alloc)
  set_tests_properties(hazptr_alloc_instructions PROPERTIES TIMEOUT 120 LABELS quick
                       SKIP_RETURN_CODE 77)
  add_test(NAME hazptr_retire_instructions
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_instructions.sh
                   $<TARGET_FILE:hazptr_protect_cost> 22 retire)
  set_tests_properties(hazptr_retire_instructions PROPERTIES TIMEOUT 120 LABELS quick
                       SKIP_RETURN_CODE 77)
  # rcu_retire()'s inline fast path itself (api.md, rcu_retire, "Cost"; issue 31: at most 20
  # instructions, no call, no fence, no atomic read-modify-write).
  add_test(NAME rcu_retire_instructions
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_instructions.sh
                   $<TARGET_FILE:hazptr_protect_cost> 20 rcu_retire)
  set_tests_properties(rcu_retire_instructions PROPERTIES TIMEOUT 120 LABELS quick
                       SKIP_RETURN_CODE 77)
endif()
# Hazard pointers against a reference model: random protections, retires and barriers, each
# free checked against what the model says is retired and unprotected; the protections also
# held by another thread.
grace_test(NAME hazptr_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hazptr_model.c TIMEOUT 120
           ${GRACE_MODEL_QUICK_ENV})
