# SPDX-License-Identifier: MIT
# Reliability tests (issue 7): misuse diagnostics (each misuse in a child process, checked per
# build: abort + message in debug builds, message or silence in release) and thread churn.
grace_test(NAME unit_misuse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_misuse.c TIMEOUT 180)
# Thread churn: 100000 cycles (20000 under ASan/TSan in the quick run; the full count under every
# sanitizer is unit_churn_long). LSan checks the leaks in the ASan build, the test the RSS.
grace_test(NAME unit_churn SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_churn.c TIMEOUT 300)
grace_test(NAME unit_churn_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_churn.c TIMEOUT 1800
           ENV GRACE_CHURN_CYCLES=100000 LABELS long)
