# SPDX-License-Identifier: MIT
# Regressions of the core review (wave 2): cancellation of a grace-period driver, cookies the
# flavor never returned, stall handlers that wait for their own flavor (regress_core.c).
grace_test(NAME fault_regress_core SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_core.c CXX TIMEOUT 120)
# The QSBR online barrier on arm64 (the aarch64 configuration of scripts/test.sh): the
# disassembly must show a dmb after the online count's increment (check_qsbr_fence.sh).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$" AND CMAKE_OBJDUMP)
  add_test(NAME fault_qsbr_online_fence
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_qsbr_fence.sh ${CMAKE_OBJDUMP}
                   $<TARGET_FILE:grace>)
  set_tests_properties(fault_qsbr_online_fence PROPERTIES TIMEOUT 60 LABELS quick)
endif()
