# SPDX-License-Identifier: MIT
# cmake -P run_consumer.cmake: install this build of grace (with grace-urcu) into a fresh prefix,
# check the installed shape of grace-urcu (headers in their own directory, pkg-config files under
# liburcu's names in their own directory), then build and run compat/tests/consumer/project
# against it through pkg-config and through find_package.
# Inputs (-D): GRACE_BUILD_DIR, WORK_DIR, PROJECT_DIR, LIBDIR, GENERATOR, C_COMPILER,
#              CXX_COMPILER, BUILD_TYPE, EXTRA_FLAGS (;-separated)
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "grace-urcu consumer: ${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "grace-urcu consumer: ${what}: ok ${out}")
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${GRACE_BUILD_DIR} --prefix ${prefix})

foreach(f include/grace-urcu/urcu.h include/grace-urcu/urcu-qsbr.h include/grace-urcu/urcu-bp.h
          include/grace-urcu/urcu/rculfhash.h include/grace-urcu/urcu/call-rcu.h
          include/grace-urcu/urcu/urcu-poll.h include/grace-urcu/urcu/flavor.h
          ${LIBDIR}/libgrace-urcu.so ${LIBDIR}/libgrace-urcu.a
          ${LIBDIR}/grace-urcu/pkgconfig/liburcu.pc ${LIBDIR}/grace-urcu/pkgconfig/liburcu-memb.pc
          ${LIBDIR}/grace-urcu/pkgconfig/liburcu-qsbr.pc
          ${LIBDIR}/grace-urcu/pkgconfig/liburcu-bp.pc ${LIBDIR}/grace-urcu/pkgconfig/liburcu-mb.pc
          ${LIBDIR}/grace-urcu/pkgconfig/liburcu-signal.pc
          ${LIBDIR}/grace-urcu/pkgconfig/liburcu-cds.pc
          ${LIBDIR}/grace-urcu/liburcu.so ${LIBDIR}/grace-urcu/liburcu-memb.so
          ${LIBDIR}/grace-urcu/liburcu-mb.so ${LIBDIR}/grace-urcu/liburcu-signal.so
          ${LIBDIR}/grace-urcu/liburcu-bp.so ${LIBDIR}/grace-urcu/liburcu-qsbr.so
          ${LIBDIR}/grace-urcu/liburcu-cds.so ${LIBDIR}/grace-urcu/liburcu-common.so
          ${LIBDIR}/cmake/grace-urcu/grace-urcuConfig.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "grace-urcu consumer: ${f} was not installed")
  endif()
endforeach()
# Nobody gets liburcu's names by accident: nothing under include/ but in grace-urcu/, no
# liburcu*.pc in the ordinary pkg-config directory.
if(EXISTS ${prefix}/include/urcu.h OR EXISTS ${prefix}/include/urcu
   OR EXISTS ${prefix}/${LIBDIR}/pkgconfig/liburcu.pc)
  message(FATAL_ERROR "grace-urcu consumer: liburcu's names installed outside grace-urcu/")
endif()

# Builds that write liburcu's library names (-lurcu-qsbr, as gdnsd's Makefile does) link with
# the one LDFLAGS line of docs/compat.md, no pkg-config: every name, with and without
# _LGPL_SOURCE, and the program runs on the installed libgrace-urcu.
# The prefix is not in the loader's path: the program's -rpath (a RUNPATH) finds libgrace-urcu,
# and libgrace-urcu's own RUNPATH ($ORIGIN) finds libgrace, which a non-LGPL program does not
# name itself. No LD_LIBRARY_PATH here, so that a libgrace-urcu that cannot find libgrace fails.
unset(ENV{LD_LIBRARY_PATH})
set(lflags -L${prefix}/${LIBDIR}/grace-urcu -Wl,-rpath,${prefix}/${LIBDIR})
foreach(n urcu urcu-memb urcu-mb urcu-signal urcu-bp urcu-qsbr urcu-cds urcu-common)
  foreach(lgpl "" "-D_LGPL_SOURCE")
    set(exe ${WORK_DIR}/byname-${n}${lgpl})
    run("link -l${n} ${lgpl}" ${C_COMPILER} ${EXTRA_FLAGS} ${lgpl} -I${prefix}/include/grace-urcu
        -I${prefix}/include ${PROJECT_DIR}/../byname.c -o ${exe} ${lflags} -l${n} -pthread)
    run("run -l${n} ${lgpl}" ${exe})
  endforeach()
endforeach()

string(REPLACE ";" " " flags "${EXTRA_FLAGS}")
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/grace-urcu/pkgconfig)
set(ENV{PKG_CONFIG_LIBDIR} ${prefix}/${LIBDIR}/grace-urcu/pkgconfig) # nothing from the system
set(ENV{LD_LIBRARY_PATH} ${prefix}/${LIBDIR})
foreach(mode pkg-config find_package)
  set(b ${WORK_DIR}/build-${mode})
  run("configure (${mode})" ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${b} -G ${GENERATOR}
      -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      -DCMAKE_BUILD_TYPE=${BUILD_TYPE} "-DCMAKE_C_FLAGS=${flags}" "-DCMAKE_CXX_FLAGS=${flags}"
      "-DCMAKE_EXE_LINKER_FLAGS=${flags}" -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
      -DGRACE_URCU_CONSUMER_MODE=${mode} -DGRACE_EXPECT_PREFIX=${prefix})
  run("build (${mode})" ${CMAKE_COMMAND} --build ${b})
  file(READ ${b}/programs.txt programs)
  foreach(p ${programs})
    run("run ${p} (${mode})" ${b}/${p})
  endforeach()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "grace-urcu consumer: all modes passed")
