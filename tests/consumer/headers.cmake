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
# public_headers_32bit: a 32-bit build of a program that includes grace stops at the first
# public header with the message naming the supported targets (include/grace/compiler.h);
# x86-64 hosts only (-ffreestanding: no 32-bit C library needed to reach the check).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME public_headers_32bit
           COMMAND sh -c "printf '#include <grace/rcu.h>\\n' | ${CMAKE_C_COMPILER} -m32 -ffreestanding -fsyntax-only -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include -x c - 2>&1 | grep -q 'grace supports 64-bit Linux targets only'")
  set_tests_properties(public_headers_32bit PROPERTIES TIMEOUT 60 LABELS quick)
endif()
# configure_recovers: the test command's build directories recover from a failed or stale
# configure (scripts/cmake-configure.sh). Host-side.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME configure_recovers
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/scripts/check_configure_recovers.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(configure_recovers PROPERTIES TIMEOUT 180 LABELS quick)
endif()
