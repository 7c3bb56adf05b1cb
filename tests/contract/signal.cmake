# SPDX-License-Identifier: MIT
# Signal handlers on a thread that unregisters or exits (docs/api.md, Process events): debug
# builds stop the thread inside its unregistration (pause site "unregister") and signal it
# there; every build runs the stress case. Parked and not parked, membarrier and fallback.
grace_test(NAME contract_signal_exit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c
           TIMEOUT 120 ENV GRACE_TEST_PAUSE=unregister:500000)
grace_test(NAME contract_signal_exit_park SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c
           TIMEOUT 120 ENV GRACE_TEST_PAUSE=unregister:500000 GRACE_PARK_AFTER=1)
grace_test(NAME contract_signal_exit_fallback
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c TIMEOUT 120
           ENV GRACE_TEST_PAUSE=unregister:500000 GRACE_NO_MEMBARRIER=1)
# The stress case alone (the pause off), 2 s here, 30 s in the long runs.
grace_test(NAME contract_signal_exit_stress SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c
           TIMEOUT 120 ARGS stress_signals_while_threads_leave ENV GRACE_PARK_AFTER=1)
grace_test(NAME contract_signal_exit_stress_fallback
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c TIMEOUT 120
           ARGS stress_signals_while_threads_leave ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME contract_signal_exit_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_signal_exit.c
           TIMEOUT 200 LABELS long ARGS stress_signals_while_threads_leave
           ENV GT_STRESS_MS=30000 GRACE_PARK_AFTER=1)
