# SPDX-License-Identifier: MIT
# The segmented callback list (src/engine/segcb.h) alone, with no thread: order, nothing taken
# before its cookie, full segments, more chains than slots, random sequences.
grace_test(NAME unit_segcb SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_segcb.c INTERNAL TIMEOUT 60)
