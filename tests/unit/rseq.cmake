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

# cppcheck analyses every file that includes internal/rseq.h, rseq paths included (the stand-ins
# of internal/arch/rseq-cppcheck.h replace the asm it cannot parse).
find_program(GRACE_CPPCHECK cppcheck)
if(GRACE_CPPCHECK AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME unit_rseq_cppcheck
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/rseq_cppcheck.sh ${GRACE_CPPCHECK} ${PROJECT_SOURCE_DIR})
  set_tests_properties(unit_rseq_cppcheck PROPERTIES TIMEOUT 120 LABELS quick)
endif()
