# SPDX-License-Identifier: MIT
# Reliability tests (issue 7): misuse diagnostics (each misuse in a child process, checked per
# build: abort + message in debug builds, message or silence in release) and thread churn.
grace_test(NAME unit_misuse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_misuse.c TIMEOUT 180)
