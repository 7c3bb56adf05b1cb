# SPDX-License-Identifier: MIT
grace_test(NAME compat_liburcu_program SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_liburcu_program.c
           CXX LIBS grace_urcu TIMEOUT 120)
grace_test(NAME compat_lfht SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht.c CXX
           LIBS grace_urcu TIMEOUT 120)
# fork() while another thread resizes: the child resizes and destroys its copy (lfht.c, "fork()").
grace_test(NAME compat_lfht_fork SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_fork.c
           LIBS grace_urcu TIMEOUT 120)
# Misuse diagnostics (issue 16, item 5): each misuse in a child process.
grace_test(NAME compat_misuse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_misuse.c
           LIBS grace_urcu TIMEOUT 180)
grace_test(NAME compat_api SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_api.c CXX
           LIBS grace_urcu TIMEOUT 120)
