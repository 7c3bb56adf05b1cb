# SPDX-License-Identifier: MIT
# public_headers: each public header compiles on its own as C and as C++, warning-free, in this
# build's configuration (debug checks, TSan mode). The headers are globbed when the test runs.
set(_hdr_flags "")
if(GRACE_DEBUG)
  list(APPEND _hdr_flags -DGRACE_DEBUG=1)
endif()
if(GRACE_TSAN)
  list(APPEND _hdr_flags -fsanitize=thread)
endif()
add_test(NAME public_headers
         COMMAND ${CMAKE_COMMAND}
                 -DSRC_INCLUDE=${PROJECT_SOURCE_DIR}/include
                 -DBIN_INCLUDE=${PROJECT_BINARY_DIR}/include
                 -DC_COMPILER=${CMAKE_C_COMPILER} -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/headers-work
                 "-DEXTRA_FLAGS=${_hdr_flags}"
                 -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_headers.cmake)
set_tests_properties(public_headers PROPERTIES TIMEOUT 300 LABELS quick)
