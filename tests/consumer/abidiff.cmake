# SPDX-License-Identifier: MIT
# abi_baseline (label "abi"; scripts/test.sh runs the same script once, on the release build):
# this build's libgrace.so against the committed ABI baseline abi/libgrace.abi, by
# scripts/abi-check.sh (additions pass; removals and changes fail unless the SONAME changed).
# Needs debug information and no sanitizer (instrumented builds describe other types).
find_program(GRACE_ABIDIFF abidiff)
find_program(GRACE_ABIDW abidw)
if(GRACE_ABIDIFF AND GRACE_ABIDW AND NOT GRACE_SANITIZE AND NOT GRACE_TSAN
   AND CMAKE_BUILD_TYPE MATCHES "RelWithDebInfo|Debug")
  add_test(NAME abi_baseline COMMAND ${PROJECT_SOURCE_DIR}/scripts/abi-check.sh
                                     ${PROJECT_BINARY_DIR})
  set_tests_properties(abi_baseline PROPERTIES TIMEOUT 120 LABELS abi)
endif()
