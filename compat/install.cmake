# SPDX-License-Identifier: MIT
# Installation of grace-urcu (included by compat/CMakeLists.txt):
#   <includedir>/grace-urcu/urcu.h, urcu/*.h      the headers, apart from grace's own
#   <libdir>/libgrace-urcu.so.X.Y.Z, libgrace-urcu.a
#   <libdir>/grace-urcu/liburcu*.so                liburcu's library names: linker scripts
#                                                  onto libgrace-urcu (compat/CMakeLists.txt)
#   <libdir>/grace-urcu/pkgconfig/liburcu*.pc      liburcu's module names, in a directory of their
#                                                  own: PKG_CONFIG_PATH=<libdir>/grace-urcu/pkgconfig
#                                                  switches a liburcu build to grace
#   <libdir>/cmake/grace-urcu/                     find_package(grace-urcu): grace-urcu::liburcu...
include(CMakePackageConfigHelpers)
# The liburcu API level the headers provide (0.13 with the 0.14 polling API and 0.15's
# explicit-order atomics): what pkg-config --modversion reports, for version checks of liburcu
# users.
set(GRACE_URCU_API_VERSION 0.15.0)
set(GRACE_URCU_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/grace-urcu)
set(GRACE_URCU_INSTALL_LINKDIR ${CMAKE_INSTALL_LIBDIR}/grace-urcu)

# The libraries under liburcu's names and, next to them, links to the two libraries their
# scripts name (relative: the prefix may move, DESTDIR may stage it).
foreach(n ${GRACE_URCU_LINK_NAMES})
  install(FILES ${GRACE_URCU_LINK_DIR}/lib${n}.so DESTINATION ${GRACE_URCU_INSTALL_LINKDIR}
          COMPONENT development)
endforeach()
install(CODE "
  if(IS_ABSOLUTE \"${GRACE_URCU_INSTALL_LINKDIR}\")
    set(_d \"\$ENV{DESTDIR}${GRACE_URCU_INSTALL_LINKDIR}\")
  else()
    set(_d \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${GRACE_URCU_INSTALL_LINKDIR}\")
  endif()
  file(MAKE_DIRECTORY \"\${_d}\")
  foreach(_l $<TARGET_SONAME_FILE_NAME:grace_urcu> $<TARGET_SONAME_FILE_NAME:grace>)
    file(CREATE_LINK \"../\${_l}\" \"\${_d}/\${_l}\" SYMBOLIC)
  endforeach()
" COMPONENT development)

install(TARGETS grace_urcu grace_urcu_static EXPORT grace-urcuTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
foreach(m ${GRACE_URCU_MODULES})
  install(TARGETS grace_urcu_${m} EXPORT grace-urcuTargets)
endforeach()
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grace-urcu COMPONENT development
        FILES_MATCHING PATTERN "*.h")
install(EXPORT grace-urcuTargets NAMESPACE grace-urcu:: DESTINATION ${GRACE_URCU_INSTALL_CMAKEDIR}
        COMPONENT development)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/grace-urcuConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/grace-urcuConfig.cmake
                              INSTALL_DESTINATION ${GRACE_URCU_INSTALL_CMAKEDIR}
                              PATH_VARS GRACE_URCU_INSTALL_LINKDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/grace-urcuConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/grace-urcuConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/grace-urcuConfigVersion.cmake
        DESTINATION ${GRACE_URCU_INSTALL_CMAKEDIR} COMPONENT development)

# pkg-config files, written at install time for the install prefix into a directory of that
# prefix's own, then installed by file(INSTALL) (as grace.pc is: src/install.cmake).
set(GRACE_URCU_PC_CFLAGS "")
if(GRACE_DEBUG)
  set(GRACE_URCU_PC_CFLAGS " -DGRACE_DEBUG=1")
endif()
set(GRACE_URCU_PC_DIR ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig)
install(CODE "
  set(GRACE_PC_CFLAGS \"${GRACE_URCU_PC_CFLAGS}\")
  set(GRACE_URCU_API_VERSION \"${GRACE_URCU_API_VERSION}\")
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
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
    set(_dest \"${CMAKE_INSTALL_LIBDIR}/grace-urcu/pkgconfig\")
  else()
    set(_dest \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/grace-urcu/pkgconfig\")
  endif()
  foreach(GRACE_URCU_MODULE ${GRACE_URCU_MODULES})
    string(REGEX REPLACE \"^lib\" \"\" GRACE_URCU_LINK_NAME \"\${GRACE_URCU_MODULE}\")
    set(_pc \"${GRACE_URCU_PC_DIR}/\${_h}/\${GRACE_URCU_MODULE}.pc\")
    configure_file(\"${CMAKE_CURRENT_SOURCE_DIR}/liburcu.pc.in\" \"\${_pc}\" @ONLY)
    file(INSTALL DESTINATION \"\${_dest}\" TYPE FILE FILES \"\${_pc}\")
  endforeach()
" COMPONENT development)
