# SPDX-License-Identifier: MIT
# install_docs: the man pages, documentation and examples that cmake --install places
# (tests/consumer/scripts/check_install_docs.sh).
if(GRACE_MAN AND GRACE_MAN_PYTHON)
  add_test(NAME install_docs
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/scripts/check_install_docs.sh ${CMAKE_COMMAND}
                   ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install-docs-work
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(install_docs PROPERTIES TIMEOUT 120 LABELS quick)
endif()
