# SPDX-License-Identifier: MIT
# The C++ guards of <grace/grace.hpp>.
grace_test(NAME api_cxx_guards SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cxx_guards.cpp TIMEOUT 120)
