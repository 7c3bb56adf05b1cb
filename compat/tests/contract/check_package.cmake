# SPDX-License-Identifier: MIT
# cmake -P check_package.cmake: grace-urcu as docs/compat.md says it is installed.
#  - each of the seven pkg-config modules (liburcu, -memb, -mb, -signal, -bp, -qsbr, -cds)
#    reports Version 0.15.0 ("Version 0.15.0: the API level provided");
#  - "A build of grace with GRACE_DEBUG=ON puts -DGRACE_DEBUG=1 in the modules' Cflags": each
#    module's --cflags has it in a debug build (DEBUG=ON), and not otherwise;
#  - find_package(grace-urcu) gives every target the table lists: a program links and runs
#    against each (targets/), and each carries GRACE_DEBUG exactly in a debug build.
# Installs GRACE_BUILD_DIR into WORK_DIR/prefix first, unless PREFIX names an installed prefix.
# Inputs (-D): GRACE_BUILD_DIR or PREFIX, WORK_DIR, PROJECT_DIR, LIBDIR, GENERATOR, C_COMPILER,
#              BUILD_TYPE, DEBUG (ON/OFF), EXTRA_FLAGS (;-separated: sanitizers)
cmake_minimum_required(VERSION 3.18)
foreach(v WORK_DIR PROJECT_DIR LIBDIR GENERATOR C_COMPILER BUILD_TYPE DEBUG)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_package.cmake: -D${v}=... missing")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "grace-urcu package: ${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(NOT PREFIX)
  set(PREFIX ${WORK_DIR}/prefix)
  run("cmake --install" ${CMAKE_COMMAND} --install ${GRACE_BUILD_DIR} --prefix ${PREFIX})
endif()

find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "grace-urcu package: pkg-config not found")
endif()
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/grace-urcu/pkgconfig)
set(ENV{PKG_CONFIG_LIBDIR} ${PREFIX}/${LIBDIR}/grace-urcu/pkgconfig) # nothing from the system
set(bad "")
foreach(m liburcu liburcu-memb liburcu-mb liburcu-signal liburcu-bp liburcu-qsbr liburcu-cds)
  run("pkg-config --modversion ${m}" ${PKG_CONFIG} --modversion ${m})
  string(STRIP "${run_out}" v)
  if(NOT v STREQUAL "0.15.0")
    string(APPEND bad "${m}.pc: Version ${v}, want 0.15.0\n")
  endif()
  run("pkg-config --cflags ${m}" ${PKG_CONFIG} --cflags ${m})
  string(STRIP "${run_out}" cflags)
  if(DEBUG AND NOT " ${cflags} " MATCHES " -DGRACE_DEBUG=1 ")
    string(APPEND bad "${m}.pc: Cflags '${cflags}' lack -DGRACE_DEBUG=1 (a GRACE_DEBUG build)\n")
  elseif(NOT DEBUG AND cflags MATCHES "GRACE_DEBUG")
    string(APPEND bad "${m}.pc: Cflags '${cflags}' have GRACE_DEBUG (not a debug build)\n")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "grace-urcu package, pkg-config:\n${bad}")
endif()
message(STATUS "grace-urcu package: seven modules, Version 0.15.0, GRACE_DEBUG in Cflags: ${DEBUG}")

string(REPLACE ";" " " flags "${EXTRA_FLAGS}")
set(ENV{LD_LIBRARY_PATH} ${PREFIX}/${LIBDIR})
set(b ${WORK_DIR}/targets-build)
run("configure the targets' consumer" ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${b} -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} "-DCMAKE_C_FLAGS=${flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${flags}" -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    -DGRACE_URCU_EXPECT_DEBUG=${DEBUG} -DGRACE_EXPECT_PREFIX=${PREFIX})
run("build the targets' consumer" ${CMAKE_COMMAND} --build ${b})
file(READ ${b}/programs.txt programs)
list(LENGTH programs np)
if(NOT np EQUAL 9)
  message(FATAL_ERROR "grace-urcu package: ${np} programs built, want 9 (one per target)")
endif()
foreach(p ${programs})
  run("run ${p}" ${b}/${p})
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "grace-urcu package: a program built and ran against each of the 9 targets")
