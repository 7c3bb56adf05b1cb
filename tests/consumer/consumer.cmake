# SPDX-License-Identifier: MIT
# consumer_install: install this build into a temporary prefix, then configure, build and run
# tests/consumer/project against it through find_package and through pkg-config.
set(_consumer_flags "")
if(GRACE_SANITIZE)
  list(APPEND _consumer_flags -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()
if(GRACE_TSAN)
  list(APPEND _consumer_flags -fsanitize=thread)
endif()
set(_consumer_type ${CMAKE_BUILD_TYPE})
if(NOT _consumer_type)
  set(_consumer_type RelWithDebInfo)
endif()
add_test(NAME consumer_install
         COMMAND ${CMAKE_COMMAND}
                 -DGRACE_BUILD_DIR=${PROJECT_BINARY_DIR}
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer-work
                 -DPROJECT_DIR=${CMAKE_CURRENT_LIST_DIR}/project
                 -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
                 -DGENERATOR=${CMAKE_GENERATOR}
                 -DC_COMPILER=${CMAKE_C_COMPILER}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -DBUILD_TYPE=${_consumer_type}
                 "-DEXTRA_FLAGS=${_consumer_flags}"
                 -DEXPECT_DEBUG=${GRACE_DEBUG}
                 -DSOVERSION=${GRACE_SOVERSION} -DVERSION_MINOR=${PROJECT_VERSION_MINOR}
                 -DVERSION_PATCH=${PROJECT_VERSION_PATCH}
                 -P ${CMAKE_CURRENT_LIST_DIR}/scripts/run_consumer.cmake)
set_tests_properties(consumer_install PROPERTIES TIMEOUT 300 LABELS quick)
