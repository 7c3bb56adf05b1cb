# SPDX-License-Identifier: MIT
# grace-urcu's contract tests: promises of docs/compat.md that no other test checked, each
# mapped in tests/contract/promises-guide-compat.tsv (the test, or test:case).
#  compat_contract        flavors, registration, pointers, DEFINE_RCU_FLAVOR, call_rcu_data
#                         handles, fork hooks, defer_rcu bounds and misuse, lists, the deprecated
#                         queue and stack, stall reports (two units: <urcu.h> and <urcu-qsbr.h>)
#  compat_contract_lfht   cds_lfht: del misuse, next after lookup, racing add_unique/add_replace,
#                         CDS_LFHT_ACCOUNTING's shrink, full barriers, a raw clone child
#  compat_contract_exports, compat_contract_headers, compat_contract_package: host-side checks
#                         of libgrace-urcu's symbols, the headers, the installed package
grace_test(NAME compat_contract
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_contract.c
                   ${CMAKE_CURRENT_LIST_DIR}/test_compat_contract_qsbr.c
           LIBS grace_urcu TIMEOUT 120)
grace_test(NAME compat_contract_lfht SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_contract_lfht.c
           LIBS grace_urcu TIMEOUT 120)

# Host-side checks: they run host tools on this build's files (nm, the compilers, pkg-config, a
# consumer build against an install), so not in a cross build.
if(NOT CMAKE_CROSSCOMPILING)
  # compat_contract_exports: libgrace-urcu.so and .a export grace_urcu_* names only.
  # Checked against: compat/src/callrcu.c handle_cmp() made non-static (a global of the .a),
  # and a GRACE_API urcu_compat_leak() listed in compat/src/grace-urcu.map (of the .so): fails.
  add_test(NAME compat_contract_exports
           COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DSHARED=$<TARGET_FILE:grace_urcu>
                   -DSTATIC=$<TARGET_FILE:grace_urcu_static>
                   -P ${CMAKE_CURRENT_LIST_DIR}/contract/check_exports.cmake)
  set_tests_properties(compat_contract_exports PROPERTIES TIMEOUT 60 LABELS quick)

  # compat_contract_liburcu_mix: grace-urcu's headers with _LGPL_SOURCE linked against
  # liburcu's own library fail naming grace's symbols; without _LGPL_SOURCE, naming
  # <name>@GRACE_URCU_0 (the headers' .symver); LD_PRELOAD still interposes; a -z defs library
  # that only includes <urcu.h> links with no urcu library; -L<grace-urcu dir> -lurcu-qsbr gets
  # grace-urcu with liburcu-dev installed; liburcu's header then grace-urcu's is an #error
  # (skipped without liburcu-dev). Checked against: <urcu/grace/guard.h> emptied, and
  # -DGRACE_URCU_NO_SYMBOL_VERSIONS in EXTRA_FLAGS: each fails.
  set(_cc_mix_flags "")
  if(GRACE_DEBUG)
    list(APPEND _cc_mix_flags -DGRACE_DEBUG=1)
  endif()
  # A sanitized libgrace needs its runtime first in the program it is linked into.
  if(GRACE_SANITIZE)
    list(APPEND _cc_mix_flags -fsanitize=address,undefined -fno-omit-frame-pointer)
  endif()
  if(GRACE_TSAN)
    list(APPEND _cc_mix_flags -fsanitize=thread)
  endif()
  add_test(NAME compat_contract_liburcu_mix
           COMMAND ${CMAKE_COMMAND} -DC_COMPILER=${CMAKE_C_COMPILER}
                   -DCOMPAT_INCLUDE=${PROJECT_SOURCE_DIR}/compat/include
                   -DSRC_INCLUDE=${PROJECT_SOURCE_DIR}/include
                   -DBIN_INCLUDE=${PROJECT_BINARY_DIR}/include
                   -DLINK_DIR=${GRACE_URCU_LINK_DIR}
                   -DLIB_DIR=$<TARGET_FILE_DIR:grace_urcu>:$<TARGET_FILE_DIR:grace>
                   -DPROGRAM=${CMAKE_CURRENT_LIST_DIR}/consumer/byname.c
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/contract-mix-work
                   "-DEXTRA_FLAGS=${_cc_mix_flags}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/contract/check_liburcu_mix.cmake)
  set_tests_properties(compat_contract_liburcu_mix PROPERTIES TIMEOUT 120 LABELS quick
                       SKIP_REGULAR_EXPRESSION "grace-urcu mix: skipped")

  # compat_contract_transitive: programs that rely on what a header brings (assert(),
  # caa_unlikely(), struct cds_list_head, SYS_gettid, poll(), futex_async()) compile with
  # -Werror=implicit-function-declaration after it alone, with and without _LGPL_SOURCE, and
  # against liburcu's own headers where installed. Checked against: <urcu/arch.h> without its
  # #include <urcu/syscall-compat.h> (SYS_gettid after <urcu.h>), and <urcu/wfcqueue.h>
  # without <assert.h>: each fails.
  add_test(NAME compat_contract_transitive
           COMMAND ${CMAKE_COMMAND} -DC_COMPILER=${CMAKE_C_COMPILER}
                   -DCOMPAT_INCLUDE=${PROJECT_SOURCE_DIR}/compat/include
                   -DSRC_INCLUDE=${PROJECT_SOURCE_DIR}/include
                   -DBIN_INCLUDE=${PROJECT_BINARY_DIR}/include
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/contract-transitive-work
                   "-DEXTRA_FLAGS=${_cc_mix_flags}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/contract/check_transitive.cmake)
  set_tests_properties(compat_contract_transitive PROPERTIES TIMEOUT 300 LABELS quick)

  # compat_contract_headers: every header docs/compat.md lists compiles alone as C and C++,
  # warning-free, in this build's configuration; two mapped flavors in one unit are an #error.
  # Checked against: <urcu/rculist.h> without its #include <urcu/list.h>, and
  # <urcu/map/urcu-qsbr.h> without its #error: fails.
  set(_cc_hdr_flags "")
  if(GRACE_DEBUG)
    list(APPEND _cc_hdr_flags -DGRACE_DEBUG=1)
  endif()
  if(GRACE_TSAN)
    list(APPEND _cc_hdr_flags -fsanitize=thread)
  endif()
  add_test(NAME compat_contract_headers
           COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/compat.md
                   -DCOMPAT_INCLUDE=${PROJECT_SOURCE_DIR}/compat/include
                   -DSRC_INCLUDE=${PROJECT_SOURCE_DIR}/include
                   -DBIN_INCLUDE=${PROJECT_BINARY_DIR}/include
                   -DC_COMPILER=${CMAKE_C_COMPILER} -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/contract-headers-work
                   "-DEXTRA_FLAGS=${_cc_hdr_flags}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/contract/check_headers.cmake)
  set_tests_properties(compat_contract_headers PROPERTIES TIMEOUT 300 LABELS quick)

  # compat_contract_package: install into a temporary prefix; the seven pkg-config modules'
  # Version and Cflags (GRACE_DEBUG), and a program built against every CMake target.
  # Checked against (the script run on an installed prefix, -DPREFIX=, edited): liburcu-bp.pc's
  # Version 0.13.0; liburcu-qsbr.pc's Cflags without -DGRACE_DEBUG=1; grace-urcuTargets.cmake
  # without grace-urcu::liburcu-signal; graceTargets.cmake without its GRACE_DEBUG=1 definition
  # (the targets' #error): each fails.
  set(_cc_pkg_flags "")
  if(GRACE_SANITIZE)
    list(APPEND _cc_pkg_flags -fsanitize=address,undefined -fno-omit-frame-pointer)
  endif()
  if(GRACE_TSAN)
    list(APPEND _cc_pkg_flags -fsanitize=thread)
  endif()
  set(_cc_pkg_type ${CMAKE_BUILD_TYPE})
  if(NOT _cc_pkg_type)
    set(_cc_pkg_type RelWithDebInfo)
  endif()
  if(GRACE_DEBUG)
    set(_cc_pkg_debug ON)
  else()
    set(_cc_pkg_debug OFF)
  endif()
  add_test(NAME compat_contract_package
           COMMAND ${CMAKE_COMMAND} -DGRACE_BUILD_DIR=${PROJECT_BINARY_DIR}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/contract-package-work
                   -DPROJECT_DIR=${CMAKE_CURRENT_LIST_DIR}/contract/targets
                   -DLIBDIR=${CMAKE_INSTALL_LIBDIR} -DGENERATOR=${CMAKE_GENERATOR}
                   -DC_COMPILER=${CMAKE_C_COMPILER} -DBUILD_TYPE=${_cc_pkg_type}
                   -DDEBUG=${_cc_pkg_debug} "-DEXTRA_FLAGS=${_cc_pkg_flags}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/contract/check_package.cmake)
  set_tests_properties(compat_contract_package PROPERTIES TIMEOUT 300 LABELS quick)
endif()
