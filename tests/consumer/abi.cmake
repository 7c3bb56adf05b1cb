# SPDX-License-Identifier: MIT
# abi_exports: libgrace.so and libgrace.a export nothing but grace_ names; the SONAME is right.
find_program(GRACE_READELF NAMES readelf ${CMAKE_READELF})
add_test(NAME abi_exports
         COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DREADELF=${GRACE_READELF}
                 -DSHARED=$<TARGET_FILE:grace> -DSTATIC=$<TARGET_FILE:grace_static>
                 -DSOVERSION=${PROJECT_VERSION_MAJOR}
                 -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_symbols.cmake)
set_tests_properties(abi_exports PROPERTIES TIMEOUT 60 LABELS quick)
