# SPDX-License-Identifier: MIT
# compat_consumer_install: install grace with grace-urcu into a temporary prefix, then build and
# run a liburcu program against it through pkg-config (liburcu*.pc) and find_package(grace-urcu).
set(_cu_flags "")
if(GRACE_SANITIZE)
  list(APPEND _cu_flags -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()
if(GRACE_TSAN)
  list(APPEND _cu_flags -fsanitize=thread)
endif()
if(GRACE_DEBUG)
  list(APPEND _cu_flags -DGRACE_DEBUG=1)
endif()
set(_cu_type ${CMAKE_BUILD_TYPE})
if(NOT _cu_type)
  set(_cu_type RelWithDebInfo)
endif()
add_test(NAME compat_consumer_install
         COMMAND ${CMAKE_COMMAND}
                 -DGRACE_BUILD_DIR=${PROJECT_BINARY_DIR}
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer-work
                 -DPROJECT_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer/project
                 -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
                 -DGENERATOR=${CMAKE_GENERATOR}
                 -DC_COMPILER=${CMAKE_C_COMPILER}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -DBUILD_TYPE=${_cu_type}
                 "-DEXTRA_FLAGS=${_cu_flags}"
                 -P ${CMAKE_CURRENT_LIST_DIR}/consumer/run_consumer.cmake)
set_tests_properties(compat_consumer_install PROPERTIES TIMEOUT 300 LABELS quick)
