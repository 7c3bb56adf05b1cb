# SPDX-License-Identifier: MIT
# Race detectors against the library (tests/sanitize/race_prog.c; the edges it relies on are
# described in include/grace/internal/annotate.h):
#   tsan_clean, tsan_detects_race    a program built with -fsanitize=thread: no report for
#                                    correct use of every flavor, callbacks and the polled API;
#                                    a report for a free without a grace period. In the release
#                                    and debug configurations the library is the regular one
#                                    (no TSan), reached through its weak hooks; in the tsan
#                                    configuration everything is instrumented.
#   tsan_clean_static                the same program linked with libgrace.a
#   helgrind_clean, drd_clean,       the program built with -DGRACE_VALGRIND=1 under helgrind and
#   helgrind_detects_race,           drd: 0 errors for correct use, the race reported for the
#   drd_detects_race                 broken scenario (release and debug configurations)
# None in the ASan configuration (ASan and TSan do not mix; Valgrind does not run ASan code).
if(GRACE_SANITIZE)
  return()
endif()
set(_rd ${CMAKE_CURRENT_LIST_DIR}/run_detector.sh)
set(_rp ${CMAKE_CURRENT_LIST_DIR}/race_prog.c)

function(grace_race_prog name lib)
  add_executable(${name} ${_rp})
  target_link_libraries(${name} PRIVATE ${lib} Threads::Threads)
  target_compile_options(${name} PRIVATE ${GRACE_WARN} ${ARGN})
  if(NOT GRACE_TSAN AND "${ARGN}" MATCHES "sanitize=thread")
    target_link_options(${name} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# TSan: in the tsan configuration the global flags instrument everything already.
grace_race_prog(race_prog_tsan grace -fsanitize=thread -fno-omit-frame-pointer)
grace_race_prog(race_prog_tsan_static grace_static -fsanitize=thread -fno-omit-frame-pointer)
add_test(NAME tsan_clean COMMAND ${_rd} tsan clean $<TARGET_FILE:race_prog_tsan> all 100)
add_test(NAME tsan_clean_static
         COMMAND ${_rd} tsan clean $<TARGET_FILE:race_prog_tsan_static> all 50)
add_test(NAME tsan_detects_race COMMAND ${_rd} tsan race $<TARGET_FILE:race_prog_tsan> broken)
set_tests_properties(tsan_clean tsan_clean_static tsan_detects_race
                     PROPERTIES TIMEOUT 300 LABELS "quick;sanitize")

find_program(GRACE_VALGRIND valgrind)
if(GRACE_VALGRIND AND NOT GRACE_TSAN)
  grace_race_prog(race_prog_vg grace -DGRACE_VALGRIND=1)
  foreach(_tool helgrind drd)
    add_test(NAME ${_tool}_clean
             COMMAND ${_rd} ${_tool} clean ${GRACE_VALGRIND} $<TARGET_FILE:race_prog_vg> all 50)
    add_test(NAME ${_tool}_detects_race
             COMMAND ${_rd} ${_tool} race ${GRACE_VALGRIND} $<TARGET_FILE:race_prog_vg> broken)
    set_tests_properties(${_tool}_clean ${_tool}_detects_race
                         PROPERTIES TIMEOUT 300 LABELS "quick;sanitize")
  endforeach()
endif()
