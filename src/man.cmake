# SPDX-License-Identifier: MIT
# Man pages (section 3) generated from the API reference docs/api.md by scripts/gen-man.py at
# build time (target grace_man, part of "all"), installed to <mandir>/man3: `man 3 rcu_read_lock`,
# `man 3 grace_rcu_call`, `man 3 grace` (the overview) after cmake --install. Needs python3;
# without it the pages are skipped with a message. GRACE_MAN=OFF skips them too.
option(GRACE_MAN "Generate and install the man pages (needs python3)" ON)
if(NOT GRACE_MAN)
  return()
endif()
find_program(GRACE_MAN_PYTHON NAMES python3)
if(NOT GRACE_MAN_PYTHON)
  message(STATUS "grace: python3 not found, man pages not generated")
  return()
endif()
set(GRACE_MAN_DIR ${PROJECT_BINARY_DIR}/man/man3)
file(GLOB_RECURSE _grace_man_inputs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/grace/*.h
     ${PROJECT_SOURCE_DIR}/include/grace/*.hpp)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/man/grace-man.stamp
  COMMAND ${GRACE_MAN_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/gen-man.py ${PROJECT_SOURCE_DIR}
          ${GRACE_MAN_DIR} ${PROJECT_VERSION}
  COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/man/grace-man.stamp
  DEPENDS ${PROJECT_SOURCE_DIR}/docs/api.md ${PROJECT_SOURCE_DIR}/scripts/gen-man.py
          ${PROJECT_SOURCE_DIR}/scripts/api_names.py ${_grace_man_inputs}
  COMMENT "Generating man pages from docs/api.md"
  VERBATIM)
add_custom_target(grace_man ALL DEPENDS ${PROJECT_BINARY_DIR}/man/grace-man.stamp)
install(DIRECTORY ${GRACE_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man3
        COMPONENT development FILES_MATCHING PATTERN "*.3")
