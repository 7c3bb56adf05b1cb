# SPDX-License-Identifier: MIT
# cmake -P check_symbols.cmake: the ABI exports only grace_ names.
#  - libgrace.so: every defined dynamic symbol starts with grace_ (the exported API) or grace__
#    (the reader state the inline fast paths touch), carries a GRACE_* version node (GRACE_0,
#    GRACE_0.2, ...: src/libgrace.map), and the SONAME is libgrace.so.<GRACE_SOVERSION>.
#  - libgrace.a: every global symbol starts with grace_, so static linking cannot collide with
#    a user's names either.
# Inputs (-D): NM, READELF, SHARED, STATIC, SOVERSION
foreach(v NM SHARED STATIC SOVERSION)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_symbols.cmake: -D${v}=... missing")
  endif()
endforeach()

function(list_symbols out)
  execute_process(COMMAND ${NM} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${ARGN} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

set(bad "")
set(count 0)
list_symbols(lines -D --defined-only --with-symbol-versions ${SHARED})
foreach(l ${lines})
  # "<address> <type> <name>[@@version]"
  if(NOT l MATCHES "^[0-9a-fA-F]* *([A-Za-z]) (.+)$")
    continue()
  endif()
  set(type ${CMAKE_MATCH_1})
  set(name ${CMAKE_MATCH_2})
  if(name MATCHES "^__(odr_asan|asan|tsan|ubsan|sancov|sanitizer)")
    continue() # instrumentation added by -fsanitize builds, not part of the ABI
  endif()
  if(type STREQUAL "A" AND name MATCHES "^GRACE_[0-9_.]+$")
    continue() # the version node itself
  endif()
  math(EXPR count "${count} + 1")
  if(NOT name MATCHES "^grace_[A-Za-z0-9_]+(@@?GRACE_[0-9_.]+)?$")
    list(APPEND bad "${SHARED}: ${l}")
  elseif(NOT name MATCHES "@@?GRACE_")
    list(APPEND bad "${SHARED}: ${l} (no GRACE_ symbol version)")
  endif()
endforeach()
if(count LESS 10)
  list(APPEND bad "${SHARED}: only ${count} exported symbols: is the nm output parsed right?")
endif()

list_symbols(lines -g --defined-only ${STATIC})
foreach(l ${lines})
  if(NOT l MATCHES "^[0-9a-fA-F]* *([A-Za-z]) (.+)$")
    continue()
  endif()
  set(name ${CMAKE_MATCH_2})
  if(name MATCHES "^__(odr_asan|asan|tsan|ubsan|sancov|sanitizer)")
    continue() # instrumentation added by -fsanitize builds, not part of the ABI
  endif()
  if(NOT name MATCHES "^grace_")
    list(APPEND bad "${STATIC}: ${l}")
  endif()
endforeach()

if(READELF)
  execute_process(COMMAND ${READELF} -d ${SHARED} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
  if(NOT dyn MATCHES "Library soname: \\[libgrace\\.so\\.${SOVERSION}\\]")
    list(APPEND bad "${SHARED}: SONAME is not libgrace.so.${SOVERSION}")
  endif()
endif()

if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "symbols outside the grace_ namespace (fix src/libgrace.map, make the "
                      "function static, or rename it grace__*):\n  ${bad}")
endif()
message(STATUS "abi: ${count} exported symbols, all grace_*, versioned GRACE_*; SONAME ok")
