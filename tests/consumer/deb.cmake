# SPDX-License-Identifier: MIT
# deb_package (label "long", not in the test command): scripts/deb-check.sh builds the Debian
# packages libgrace2 and libgrace-dev from a copy of the working tree with dpkg-buildpackage,
# checks them, unpacks them into a scratch root and builds consumers against them (find_package,
# pkg-config, the installed examples, a TSan program, man). About a minute on two cores.
find_program(GRACE_DPKG_BUILDPACKAGE dpkg-buildpackage)
if(GRACE_DPKG_BUILDPACKAGE)
  add_test(NAME deb_package COMMAND ${PROJECT_SOURCE_DIR}/scripts/deb-check.sh)
  set_tests_properties(deb_package PROPERTIES TIMEOUT 1800 LABELS long)
endif()
