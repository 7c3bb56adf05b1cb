# SPDX-License-Identifier: MIT
# The System V IPC case study (examples/ipc). The component is built from its own cmake file
# (tests are configured before examples, so the first includer defines the target).
include(${PROJECT_SOURCE_DIR}/examples/ipc/grace_ipc.cmake)
grace_test(NAME ipc_sem SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ipc_sem.c CXX LIBS grace_ipc
           TIMEOUT 120)
grace_test(NAME ipc_race SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ipc_race.c LIBS grace_ipc
           TIMEOUT 120)
grace_test(NAME ipc_kernel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ipc_kernel.c LIBS grace_ipc
           TIMEOUT 120)
grace_test(NAME ipc_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ipc_window.c
           LIBS grace_ipc_hooked TIMEOUT 120)
# The same races for 30 s per implementation (not in the test command: label long).
grace_test(NAME ipc_race_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ipc_race.c LIBS grace_ipc
           ARGS 30 TIMEOUT 300 LABELS long)
