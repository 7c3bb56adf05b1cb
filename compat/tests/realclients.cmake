# SPDX-License-Identifier: MIT
# realclients (label "long", not in the test command): compat/tests/realclients.sh builds Knot
# DNS, gdnsd and multipath-tools from Debian's source packages against Debian's liburcu and
# against grace-urcu (liburcu-dev hidden), runs their test suites and fails unless every build
# succeeds and every test result matches the control's. Needs root and deb.debian.org; 6 minutes
# on an idle two-core machine. Its page goes into the build directory here; docs/figures/realclients.md is
# written by running the script itself.
find_program(GRACE_APT_GET apt-get)
find_program(GRACE_UNSHARE unshare)
if(GRACE_APT_GET AND GRACE_UNSHARE)
  add_test(NAME realclients
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/realclients.sh
                   --work ${PROJECT_BINARY_DIR}/realclients
                   --page ${PROJECT_BINARY_DIR}/realclients.md)
  set_tests_properties(realclients PROPERTIES TIMEOUT 10800 LABELS long)
endif()
