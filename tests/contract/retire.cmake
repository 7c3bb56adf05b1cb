# SPDX-License-Identifier: MIT
# rcu_retire(), rcu_retire_fn() and the free hooks (docs/api.md): in a section, where the frees
# run, nesting deleters, exit hand-over, no memory, QSBR and srcu; also as C++, and without
# membarrier (every call out of line).
grace_test(NAME contract_retire SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c CXX TIMEOUT 120)
grace_test(NAME contract_retire_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
# With steps of 16 slots (the least; a thread alone paces there): a block is still
# sealed full while a reader holds the grace period.
grace_test(NAME contract_retire_short_steps SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ENV GRACE_STEP_GARBAGE=16)
# The inline run (GRACE_RETIRE_RUN, docs/build.md): 6 and 0 objects between two out-of-line
# calls; a bad value warns, names the variable and keeps 2.
grace_test(NAME contract_retire_run6 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c TIMEOUT 120
           ARGS the_inline_run_is_GRACE_RETIRE_RUN_objects ENV GRACE_RETIRE_RUN=6)
grace_test(NAME contract_retire_run0 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c TIMEOUT 120
           ARGS the_inline_run_is_GRACE_RETIRE_RUN_objects ENV GRACE_RETIRE_RUN=0)
# A signal handler that retires while its thread's first call creates the thread's cache: a
# debug library, stopped inside the creation (GRACE_TEST_PAUSE), reports it.
grace_test(NAME contract_retire_first_call SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_interrupting_the_first_call_is_reported
           ENV GRACE_TEST_PAUSE=cache_new:1000000)
# A signal handler that retires while its thread's free_rcu_barrier() holds the caches: a debug
# library, stopped there (GRACE_TEST_PAUSE), reports it.
grace_test(NAME contract_retire_barrier_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_retiring_inside_the_threads_barrier_is_reported
           ENV GRACE_TEST_PAUSE=flush:1000000)
# A signal handler that retires while its thread is inside fork(), whose handlers hold every
# cache and lock of the library: a debug library, stopped there (GRACE_TEST_PAUSE), reports it.
grace_test(NAME contract_retire_fork_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_retiring_inside_the_threads_fork_is_reported
           ENV GRACE_TEST_PAUSE=fork:1000000)
# A signal handler that retires while its thread's call past the per-thread bound holds the
# cache locked: a debug library, stopped there (GRACE_TEST_PAUSE), reports it.
grace_test(NAME contract_retire_bound_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_retiring_inside_a_call_at_the_bound_is_reported
           ENV GRACE_TEST_PAUSE=over_limit:1000000)
# A signal handler that retires while its thread's call frees what is ready (outside the
# entries' functions): a debug library, stopped there (GRACE_TEST_PAUSE), reports it.
grace_test(NAME contract_retire_ready_signal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_retiring_inside_the_threads_frees_is_reported
           ENV GRACE_TEST_PAUSE=release_ready:1000000)
# The same in every build, under a rain of signals: a handler's retire anywhere in a call's frees
# but inside an entry's function is reported. Alone: the binary's first case sets a free hook.
grace_test(NAME contract_retire_frees_rain SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c
           TIMEOUT 120 ARGS a_handler_retiring_inside_the_threads_frees_is_reported_in_every_build)
grace_test(NAME env_retire_run_bad SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_retire.c TIMEOUT 120
           ARGS the_inline_run_is_GRACE_RETIRE_RUN_objects ENV GRACE_RETIRE_RUN=33)
set_tests_properties(env_retire_run_bad PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: GRACE_RETIRE_RUN=33: expected a whole number from 0 to 32 entries; using 2.*1 passed, 0 failed")
# Grace periods stepped by the retiring threads (core/gp.c): a stuck reader, adoption by
# synchronize and the worker, fork; with the most stepping, without membarrier, and with
# stepping off.
grace_test(NAME contract_step SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ENV GRACE_STEP_GARBAGE=1)
grace_test(NAME contract_step_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ENV GRACE_STEP_GARBAGE=1 GRACE_NO_MEMBARRIER=1)
grace_test(NAME contract_step_off SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ENV GRACE_NO_STEP=1)
# The case that counts the membarriers of synchronize_rcu() with a reader preempted on the
# caller's CPU, both pinned to one CPU: alone (RUN_SERIAL), since a test ctest runs beside it
# (a stress test's threads on that CPU for seconds) can make every try fall back.
grace_test(NAME contract_step_cpu_sleep SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ARGS synchronize_with_a_reader_preempted_on_its_cpu_makes_no_membarrier
           ENV GRACE_STEP_GARBAGE=1 GRACE_TEST_SERIAL=1)
set_tests_properties(contract_step_cpu_sleep PROPERTIES RUN_SERIAL TRUE)
# A push ends the monitors' patient wait: a debug library stretches that wait to a minute
# (GRACE_TEST_PAUSE=patience:US), and a callback queued meanwhile must run within 20 s.
grace_test(NAME contract_step_patience SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ARGS a_push_ends_the_monitors_patient_wait ENV GRACE_TEST_PAUSE=patience:60000000)
# Bad values of the stepping variables: a warning naming the variable, the default used, and
# the program runs on (every case of contract_step passes).
grace_test(NAME env_step_bad SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.c TIMEOUT 120
           ENV GRACE_STEP_GARBAGE=0 GRACE_NO_STEP=yes)
set_tests_properties(env_step_bad PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: GRACE_NO_STEP=yes: expected 0 or 1; using 0.*warning: GRACE_STEP_GARBAGE=0: expected a whole number from 1 to 16777216 pointers; using 1024.*[0-9]+ passed, 0 failed")
# The pace of stepped grace periods: at most one membarrier per 16 pointers of a thread.
grace_test(NAME contract_step_pace SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step_pace.c TIMEOUT 120)
# A call that would wait for a lock its own thread holds (docs/api.md, "Signal handlers and fork
# handlers"): a program's pthread_atfork() handlers registered after grace's may call it; those
# registered before (from .preinit_array) run inside grace's handlers, which hold every lock of
# the library, and are reported in every build. A signal handler whose thread is stopped in a
# registry scan (debug builds, pause site park_mark) registers its thread: reported.
# (contract_atfork runs every case; the signal case needs the pause and skips itself there.)
grace_test(NAME contract_atfork SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_self_deadlock.c TIMEOUT 180)
grace_test(NAME contract_signal_lock SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_self_deadlock.c
           TIMEOUT 120 ARGS a_handler_waiting_for_a_lock_its_thread_holds_is_reported
           ENV GRACE_TEST_PAUSE=park_mark:1000000 GRACE_PARK_AFTER=1)
