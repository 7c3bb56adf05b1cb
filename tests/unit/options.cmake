# SPDX-License-Identifier: MIT
# The option table (src/core/options.def): every variable unset, valid and invalid (one
# warning naming it and its range; the default used).
grace_test(NAME unit_options SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_options.c INTERNAL TIMEOUT 60)
