# SPDX-License-Identifier: MIT
# Installation and packaging of libgrace (included by src/CMakeLists.txt).
#
#   cmake --install <build> [--prefix <dir>]
# places:
#   <includedir>/grace/**.h, grace.hpp       public headers, with the generated version.h
#   <libdir>/libgrace.so.X.Y.Z (+ SONAME link libgrace.so.X, dev link libgrace.so)
#   <libdir>/libgrace.a
#   <libdir>/pkgconfig/grace.pc              pkg-config: Libs -lgrace, Libs.private -pthread
#   <libdir>/cmake/grace/graceConfig*.cmake  find_package(grace): grace::grace, grace::grace_static
#   <docdir>/                                README, LICENSE, CHANGELOG, docs/, ipc/README.md,
#                                            examples/ (sources and a CMakeLists.txt for them)
#   <mandir>/man3/                           man pages made from docs/api.md (src/man.cmake)
include(CMakePackageConfigHelpers)

set(GRACE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/grace
    CACHE STRING "Where graceConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(GRACE_INSTALL_CMAKEDIR)

# Libraries. Components let packagers split the runtime (the .so.X) from the development files.
install(TARGETS grace grace_static EXPORT graceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# Headers: every public header (arch/ and internal/ too: the inline fast paths include them),
# the C++ guards, and the version header generated into the build tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/grace
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/grace/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grace COMPONENT development)

# CMake package: relocatable config, version file, exported targets.
install(EXPORT graceTargets NAMESPACE grace:: DESTINATION ${GRACE_INSTALL_CMAKEDIR}
        COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/graceConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/graceConfig.cmake
                              INSTALL_DESTINATION ${GRACE_INSTALL_CMAKEDIR})
# Compatibility follows the SONAME (docs/abi.md): any release since the first one with this
# SONAME satisfies find_package(grace X.Y) for X.Y up to this version.
configure_file(${PROJECT_SOURCE_DIR}/cmake/graceConfigVersion.cmake.in
               ${PROJECT_BINARY_DIR}/cmake/graceConfigVersion.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/graceConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/graceConfigVersion.cmake
        DESTINATION ${GRACE_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config. The prefix is the one given at install time (cmake --install --prefix), not the
# one known at configure time, so the file is written by the install script itself; paths stay
# absolute, as distributions expect.
set(GRACE_PC_CFLAGS "")
if(GRACE_DEBUG)
  # The debug library's users get the debug checks of the inline fast paths as well, exactly as
  # the CMake targets' INTERFACE_COMPILE_DEFINITIONS give them.
  set(GRACE_PC_CFLAGS " -DGRACE_DEBUG=1")
endif()
set(GRACE_PC_TEMPLATE ${PROJECT_SOURCE_DIR}/cmake/grace.pc.in)
# Written at install time for the install prefix, into a build-tree directory of that prefix's
# own (two installs of one build to different prefixes at once, as the consumer tests do, each
# copy their own file), then installed from there by file(INSTALL), which applies DESTDIR and
# records the file in install_manifest.txt as install(FILES) would.
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(GRACE_PC_CFLAGS \"${GRACE_PC_CFLAGS}\")
  set(GRACE_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  foreach(_d LIBDIR:${CMAKE_INSTALL_LIBDIR} INCLUDEDIR:${CMAKE_INSTALL_INCLUDEDIR})
    string(REPLACE \":\" \";\" _kv \"\${_d}\")
    list(GET _kv 0 _k)
    list(GET _kv 1 _v)
    if(IS_ABSOLUTE \"\${_v}\")
      set(GRACE_PC_\${_k} \"\${_v}\")
    else()
      set(GRACE_PC_\${_k} \"\\\${prefix}/\${_v}\")
    endif()
  endforeach()
  string(MD5 _h \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(_pc \"${PROJECT_BINARY_DIR}/pkgconfig/\${_h}/grace.pc\")
  configure_file(\"${GRACE_PC_TEMPLATE}\" \"\${_pc}\" @ONLY)
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
    set(_dest \"${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  else()
    set(_dest \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  endif()
  file(INSTALL DESTINATION \"\${_dest}\" TYPE FILE FILES \"\${_pc}\")
" COMPONENT development)

# Documentation: the repository's layout under <docdir>, so that every relative link of the
# pages resolves in the installed copy as it does in the source tree (the test
# consumer_install_docs checks it): README.md, LICENSE and CHANGELOG.md at the top, docs/ with
# the figure pages and their plots, ipc/README.md, and examples/ with a build file that uses
# the installed package.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT development)
if(EXISTS ${PROJECT_SOURCE_DIR}/CHANGELOG.md)
  install(FILES ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
          COMPONENT development)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        COMPONENT development FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${PROJECT_SOURCE_DIR}/ipc/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/ipc
        COMPONENT development)
file(GLOB GRACE_EXAMPLE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/*.c
     ${PROJECT_SOURCE_DIR}/examples/*.cpp)
install(FILES ${GRACE_EXAMPLE_SOURCES} ${PROJECT_SOURCE_DIR}/examples/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/examples/CMakeLists.installed.txt
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples RENAME CMakeLists.txt
        COMPONENT development)

# Man pages from docs/api.md.
include(${CMAKE_CURRENT_LIST_DIR}/man.cmake)
