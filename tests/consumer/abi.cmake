# SPDX-License-Identifier: MIT
# abi_exports: libgrace.so and libgrace.a export nothing but grace_ names; the SONAME is right.
find_program(GRACE_READELF NAMES readelf ${CMAKE_READELF})
add_test(NAME abi_exports
         COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DREADELF=${GRACE_READELF}
                 -DSHARED=$<TARGET_FILE:grace> -DSTATIC=$<TARGET_FILE:grace_static>
                 -DSOVERSION=${GRACE_SOVERSION}
                 -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_symbols.cmake)
set_tests_properties(abi_exports PROPERTIES TIMEOUT 60 LABELS quick)

# cmake_package_version: find_package(grace X.Y) follows the SONAME policy of docs/abi.md.
add_test(NAME cmake_package_version
         COMMAND ${CMAKE_COMMAND} -DVERSION_FILE=${PROJECT_BINARY_DIR}/cmake/graceConfigVersion.cmake
                 -DVERSION=${PROJECT_VERSION} -DSINCE=${GRACE_SOVERSION_SINCE}
                 -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_package_version.cmake)
set_tests_properties(cmake_package_version PROPERTIES TIMEOUT 60 LABELS quick)
