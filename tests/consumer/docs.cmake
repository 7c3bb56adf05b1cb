# SPDX-License-Identifier: MIT
# Documentation checks (label "docs"; scripts/test.sh runs both once per invocation, ahead of
# the configurations' ctest runs):
#   docs_api_coverage  docs/api.md names every public function, macro and C++ name of
#                      include/grace/ and every symbol libgrace.so exports, and no function that
#                      no longer exists
#   docs_links         every relative link and image of the repository's markdown resolves
#   docs_options       docs/build.md's environment-variable table is what src/core/options.def
#                      says (scripts/gen-options-doc.py --check)
#   ctest --test-dir <build> -L docs
find_program(GRACE_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(GRACE_PYTHON3 NAMES python3)
if(GRACE_PYTHON3)
  add_test(NAME docs_api_coverage
           COMMAND ${GRACE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/scripts/check_api_docs.py
                   ${PROJECT_SOURCE_DIR} --lib $<TARGET_FILE:grace> --nm ${CMAKE_NM})
  add_test(NAME docs_links
           COMMAND ${GRACE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/scripts/check_doc_links.py
                   ${PROJECT_SOURCE_DIR})
  add_test(NAME docs_options
           COMMAND ${GRACE_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/gen-options-doc.py --check)
  set_tests_properties(docs_api_coverage docs_links docs_options PROPERTIES TIMEOUT 60
                       LABELS docs)
endif()
