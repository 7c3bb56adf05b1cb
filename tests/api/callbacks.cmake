# SPDX-License-Identifier: MIT
grace_test(NAME api_callbacks SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_callbacks.c CXX TIMEOUT 180)
grace_test(NAME api_callbacks_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_callbacks.c TIMEOUT 180
           ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME api_exit_drain SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_exit_drain.c CXX TIMEOUT 60)
grace_test(NAME api_callbacks_norseq SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_callbacks.c TIMEOUT 180
           ENV GRACE_NO_RSEQ=1)
