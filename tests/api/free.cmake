# SPDX-License-Identifier: MIT
# free_rcu() and its twins as a user sees them (issue 13), also compiled as C++.
grace_test(NAME api_free SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free.c CXX TIMEOUT 120)
