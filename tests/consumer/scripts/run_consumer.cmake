# SPDX-License-Identifier: MIT
# cmake -P run_consumer.cmake: install the current build of grace into a fresh temporary prefix,
# then configure, build and run the consumer project against it twice, through find_package
# and through pkg-config. Any failing step fails the test with its output.
# Inputs (-D): GRACE_BUILD_DIR, WORK_DIR, PROJECT_DIR, LIBDIR, GENERATOR, C_COMPILER,
#              CXX_COMPILER, BUILD_TYPE, EXTRA_FLAGS (sanitizer flags, ;-separated),
#              EXPECT_DEBUG (ON if the library was built with GRACE_DEBUG)
if(NOT EXPECT_DEBUG)
  set(EXPECT_DEBUG OFF)
endif()
foreach(v GRACE_BUILD_DIR WORK_DIR PROJECT_DIR LIBDIR GENERATOR C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: -D${v}=... missing")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "consumer: ${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${GRACE_BUILD_DIR} --prefix ${prefix})

# The installed shape.
foreach(f include/grace/grace.h include/grace/grace.hpp include/grace/version.h
          include/grace/rcu.h include/grace/qsbr.h include/grace/internal/reader.h
          include/grace/arch/atomic.h
          ${LIBDIR}/libgrace.so ${LIBDIR}/libgrace.a ${LIBDIR}/pkgconfig/grace.pc
          ${LIBDIR}/cmake/grace/graceConfig.cmake ${LIBDIR}/cmake/grace/graceConfigVersion.cmake
          ${LIBDIR}/cmake/grace/graceTargets.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "consumer: ${f} was not installed")
  endif()
endforeach()
file(GLOB sonames ${prefix}/${LIBDIR}/libgrace.so.[0-9]*)
if(NOT sonames)
  message(FATAL_ERROR "consumer: no versioned libgrace.so.N installed")
endif()
# The real file's name starts with the SONAME (docs/abi.md): libgrace.so.<N>.<minor>.<patch>,
# with libgrace.so.<N> a link to it.
if(DEFINED SOVERSION AND DEFINED VERSION_MINOR AND DEFINED VERSION_PATCH)
  set(real ${prefix}/${LIBDIR}/libgrace.so.${SOVERSION}.${VERSION_MINOR}.${VERSION_PATCH})
  if(NOT EXISTS ${real} OR IS_SYMLINK ${real})
    message(FATAL_ERROR "consumer: ${real} is not the installed library file (file names: ${sonames})")
  endif()
  if(NOT IS_SYMLINK ${prefix}/${LIBDIR}/libgrace.so.${SOVERSION})
    message(FATAL_ERROR "consumer: libgrace.so.${SOVERSION} is not a link to the library file")
  endif()
endif()
# Sources (version.h.in) and build files must not leak into the prefix.
file(GLOB_RECURSE stray ${prefix}/include/*.in ${prefix}/include/*.c)
if(stray)
  message(FATAL_ERROR "consumer: stray files installed: ${stray}")
endif()

string(REPLACE ";" " " flags "${EXTRA_FLAGS}")
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
set(ENV{PKG_CONFIG_LIBDIR} ${prefix}/${LIBDIR}/pkgconfig) # nothing from the system
foreach(mode find_package pkg-config)
  set(b ${WORK_DIR}/build-${mode})
  run("configure (${mode})" ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${b} -G ${GENERATOR}
      -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      -DCMAKE_BUILD_TYPE=${BUILD_TYPE} "-DCMAKE_C_FLAGS=${flags}" "-DCMAKE_CXX_FLAGS=${flags}"
      "-DCMAKE_EXE_LINKER_FLAGS=${flags}" -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
      -DGRACE_CONSUMER_MODE=${mode} -DGRACE_EXPECT_PREFIX=${prefix}
      -DGRACE_EXPECT_DEBUG=${EXPECT_DEBUG})
  run("build (${mode})" ${CMAKE_COMMAND} --build ${b})
  file(READ ${b}/programs.txt programs)
  foreach(p ${programs})
    run("run ${p} (${mode})" ${b}/${p})
    message(STATUS "${last_output}")
  endforeach()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "consumer: all modes passed")
