# SPDX-License-Identifier: MIT
# docs_api_coverage (label "docs", not part of the quick test command): docs/api.md names every
# public function and macro of include/grace/ and no function that no longer exists.
#   ctest --test-dir <build> -L docs
find_program(GRACE_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(GRACE_PYTHON3 NAMES python3)
if(GRACE_PYTHON3)
  add_test(NAME docs_api_coverage
           COMMAND ${GRACE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/scripts/check_api_docs.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(docs_api_coverage PROPERTIES TIMEOUT 60 LABELS docs)
endif()
