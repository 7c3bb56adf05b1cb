# SPDX-License-Identifier: MIT
# cmake -P check_exports.cmake: libgrace-urcu "exports grace_urcu_* names only"
# (docs/compat.md): every defined dynamic symbol of libgrace-urcu.so and every global symbol of
# libgrace-urcu.a starts with grace_urcu_ (grace_urcu__ for the internals the inline paths
# use), so neither library can collide with a program's or liburcu's names. The version node
# itself (an absolute symbol, GRACE_URCU_*) and sanitizer instrumentation are not names of the
# library. (abi_exports checks libgrace's.)
# Inputs (-D): NM, SHARED, STATIC
foreach(v NM SHARED STATIC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_exports.cmake: -D${v}=... missing")
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
foreach(kind shared static)
  if(kind STREQUAL "shared")
    set(lib ${SHARED})
    list_symbols(lines -D --defined-only ${SHARED})
  else()
    set(lib ${STATIC})
    list_symbols(lines -g --defined-only ${STATIC})
  endif()
  set(count 0)
  foreach(l ${lines})
    # "<address> <type> <name>"
    if(NOT l MATCHES "^[0-9a-fA-F]* *([A-Za-z]) (.+)$")
      continue()
    endif()
    set(type ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    if(name MATCHES "^__(odr_asan|asan|tsan|ubsan|sancov|sanitizer)")
      continue() # instrumentation added by -fsanitize builds
    endif()
    if(type STREQUAL "A" AND name MATCHES "^GRACE_URCU_[0-9_.]+$")
      continue() # the version node
    endif()
    math(EXPR count "${count} + 1")
    # nm may add the version: name@@GRACE_URCU_0
    if(NOT name MATCHES "^grace_urcu_[A-Za-z0-9_]+(@@?[A-Za-z0-9_.]+)?$")
      list(APPEND bad "${lib}: ${l}")
    endif()
  endforeach()
  # The library's API (the flavor tables, call_rcu_data, defer, cds_lfht) is some 40 names.
  if(count LESS 20)
    list(APPEND bad "${lib}: only ${count} symbols: is the nm output parsed right?")
  endif()
  message(STATUS "${lib}: ${count} symbols")
endforeach()

if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "libgrace-urcu exports names outside grace_urcu_* (make the function "
                      "static, or name it grace_urcu__*; compat/src/grace-urcu.map):\n  ${bad}")
endif()
message(STATUS "libgrace-urcu: every exported symbol is grace_urcu_*")
