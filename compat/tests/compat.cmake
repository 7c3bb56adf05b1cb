# SPDX-License-Identifier: MIT
grace_test(NAME compat_liburcu_program SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_liburcu_program.c
           CXX LIBS grace_urcu TIMEOUT 120)
grace_test(NAME compat_lfht SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht.c CXX
           LIBS grace_urcu TIMEOUT 120)
