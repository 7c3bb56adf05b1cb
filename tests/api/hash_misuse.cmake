# SPDX-License-Identifier: MIT
# Hash-table misuse diagnostics (issue 14): messages name the grace_hash_* call; debug-only checks
# abort with GRACE_DEBUG and stay silent without it (each misuse runs in a child process).
grace_test(NAME api_hash_misuse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash_misuse.c TIMEOUT 180)
