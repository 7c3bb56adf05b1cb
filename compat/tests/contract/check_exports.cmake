# SPDX-License-Identifier: MIT
# cmake -P check_exports.cmake: libgrace-urcu exports grace_urcu_* names and liburcu's names,
# nothing else (docs/compat.md): every defined dynamic symbol of libgrace-urcu.so and every
# global symbol of libgrace-urcu.a starts with grace_urcu_ (grace_urcu__ for the internals the
# inline paths use) or is one of liburcu's functions or flavor tables (compat/src/names.c:
# urcu_<flavor>_*, the first generation's <name>_<flavor>, rcu_*_sym; names-cds.c: the cds_*
# functions of liburcu-common and liburcu-cds), so the library collides
# with no other name of a program. The liburcu names a program links by must be there. The version node
# itself (an absolute symbol, GRACE_URCU_*) and sanitizer instrumentation are not names of the
# library. (abi_exports checks libgrace's.)
# Inputs (-D): NM, SHARED, STATIC
cmake_policy(SET CMP0057 NEW)
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
    string(REGEX REPLACE "@.*$" "" bare "${name}")
    if(bare MATCHES "^grace_urcu_[A-Za-z0-9_]+$")
      continue()
    endif()
    # liburcu's names (compat/src/names.c, flavor.c)
    if(bare MATCHES "^urcu_(memb|mb|signal|bp|qsbr)_[a-z_]+$" OR
       bare MATCHES "^rcu_(dereference|set_pointer|xchg_pointer|cmpxchg_pointer)_sym$" OR
       bare MATCHES "^rcu_bp_(before_fork|after_fork_parent|after_fork_child)$" OR
       (bare MATCHES "^(rcu|call_rcu|synchronize_rcu|defer_rcu|get|set|create|free|urcu)(_[a-z_]+)?_(memb|mb|sig|bp|qsbr)$"
        AND NOT bare MATCHES "^grace") OR
       # liburcu-common's and liburcu-cds's (compat/src/names-cds.c, lfht.c)
       bare MATCHES "^cds_(wfcq|wfq|wfs|lfs|lfq|lfht)_[a-z_]+$")
      list(APPEND liburcu_${kind} ${bare})
      continue()
    endif()
    list(APPEND bad "${lib}: ${l}")
  endforeach()
  # The library's API (the flavor tables, call_rcu_data, defer, cds_lfht) is some 40 names.
  if(count LESS 20)
    list(APPEND bad "${lib}: only ${count} symbols: is the nm output parsed right?")
  endif()
  list(LENGTH liburcu_${kind} nl)
  message(STATUS "${lib}: ${count} symbols, ${nl} of them under liburcu's names")
  # What programs link by name, probe for (AC_CHECK_LIB) or define themselves.
  foreach(must rcu_set_pointer_sym rcu_dereference_sym rcu_xchg_pointer_sym
          rcu_cmpxchg_pointer_sym urcu_memb_register_thread rcu_register_thread_memb
          urcu_qsbr_read_lock urcu_qsbr_quiescent_state urcu_bp_dereference_sym
          urcu_memb_flavor urcu_signal_synchronize_rcu synchronize_rcu_sig call_rcu_qsbr
          urcu_mb_defer_rcu cds_wfcq_enqueue cds_wfs_push cds_lfs_push cds_lfq_enqueue_rcu
          cds_lfht_add cds_lfht_lookup cds_lfht_mm_order)
    if(NOT must IN_LIST liburcu_${kind})
      list(APPEND bad "${lib}: ${must} is not exported")
    endif()
  endforeach()
endforeach()

if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "libgrace-urcu exports names outside grace_urcu_* and liburcu's, or "
                      "lacks a liburcu name (make the function static, or name it "
                      "grace_urcu__*; compat/src/grace-urcu.map, compat/src/names.c):\n  ${bad}")
endif()
message(STATUS "libgrace-urcu: every exported symbol is grace_urcu_* or liburcu's")
