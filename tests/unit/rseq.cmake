# SPDX-License-Identifier: MIT
# The rseq module, three ways: glibc's registration, grace's own (glibc told not to register),
# and no rseq at all (every primitive takes its atomic fallback). Under an emulator (qemu-user
# runs the aarch64 cross build, see cmake/toolchain-aarch64-linux-gnu.cmake) rseq(2) is refused
# with ENOSYS, so every run must find no rseq there: the fallbacks are what it tests.
if(CMAKE_CROSSCOMPILING_EMULATOR)
  set(_rseq_glibc none)
  set(_rseq_own none)
else()
  set(_rseq_glibc glibc)
  set(_rseq_own grace)
endif()
grace_test(NAME unit_rseq SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL CXX TIMEOUT 120
           ENV EXPECT_RSEQ=${_rseq_glibc})
grace_test(NAME unit_rseq_own SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL TIMEOUT 120
           ENV GLIBC_TUNABLES=glibc.pthread.rseq=0 EXPECT_RSEQ=${_rseq_own})
grace_test(NAME unit_rseq_none SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq.c INTERNAL TIMEOUT 120
           ENV GRACE_NO_RSEQ=1 EXPECT_RSEQ=none)

# A program that registers its own rseq area when glibc registered none (tcmalloc and librseq do):
# loading libgrace must not have registered the thread first; that thread then falls back and
# the others use grace's own area. Linked with libgrace.so, whose constructors run at load.
grace_test(NAME unit_rseq_foreign SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq_foreign.c
           TIMEOUT 120 ENV GLIBC_TUNABLES=glibc.pthread.rseq=0)

# cppcheck analyses every file that includes internal/rseq.h, rseq paths included (the stand-ins
# of internal/arch/rseq-cppcheck.h replace the asm it cannot parse).
find_program(GRACE_CPPCHECK cppcheck)
if(GRACE_CPPCHECK AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME unit_rseq_cppcheck
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/rseq_cppcheck.sh ${GRACE_CPPCHECK} ${PROJECT_SOURCE_DIR})
  set_tests_properties(unit_rseq_cppcheck PROPERTIES TIMEOUT 120 LABELS quick)
endif()

# Fault 3 of issue 12: threads keep running after dlclose() of code that ran the inline srcu
# read side (contract rule 6 of internal/rseq.h). The plugin is a module linked with libgrace.so,
# like the test itself; the test runs in the fast mode and in grace's own rseq registration, and
# once without rseq (the fallbacks: nothing to leave behind, the test must still pass).
add_library(rseq_dlclose_plugin MODULE ${CMAKE_CURRENT_LIST_DIR}/rseq_dlclose_plugin.c)
target_link_libraries(rseq_dlclose_plugin PRIVATE grace)
target_compile_options(rseq_dlclose_plugin PRIVATE ${GRACE_WARN})
if(GRACE_TSAN)
  set(_dl_fast atomic+fence)
  set(_dl_none atomic+fence)
elseif(CMAKE_CROSSCOMPILING_EMULATOR)
  set(_dl_fast atomic+membarrier)
  set(_dl_none atomic+membarrier)
else()
  set(_dl_fast rseq+membarrier)
  set(_dl_none atomic+membarrier)
endif()
foreach(v fast own none)
  set(_env EXPECT_SRCU_MODE=${_dl_fast})
  if(v STREQUAL own)
    list(APPEND _env GLIBC_TUNABLES=glibc.pthread.rseq=0)
  elseif(v STREQUAL none)
    set(_env GRACE_NO_RSEQ=1 EXPECT_SRCU_MODE=${_dl_none})
  endif()
  grace_test(NAME unit_rseq_dlclose_${v} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rseq_dlclose.c
             TIMEOUT 120 LIBS ${CMAKE_DL_LIBS} ENV ${_env}
             DEFINES PLUGIN_PATH="$<TARGET_FILE:rseq_dlclose_plugin>" _GNU_SOURCE
             DEPENDS rseq_dlclose_plugin)
endforeach()
