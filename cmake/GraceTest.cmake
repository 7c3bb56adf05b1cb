# SPDX-License-Identifier: MIT
# grace_test(NAME n SOURCES s... [INTERNAL] [CXX] [TIMEOUT sec] [ENV K=V...] [LABELS l...]
#            [ARGS a...] [LIBS l...] [CXX_STANDARD std] [DEFINES d...] [DEPENDS t...])
#   INTERNAL: link the static library and see src/ private headers (unit tests).
#   CXX:      also build the same sources as C++ (test n_cxx), as librseq does: public headers
#             and the API tests must compile as C++.
#   CXX_STANDARD, DEFINES, DEPENDS: the C++ standard (required, no extensions), compile
#             definitions, and targets to build first.
#   Default labels: "quick". Tests labelled "long" are excluded from the test command.
#   Tests whose program is the same (the same sources, INTERNAL, LIBS, CXX_STANDARD, DEFINES;
#   they differ in ENV, ARGS, TIMEOUT or LABELS: contract_step, contract_step_fallback,
#   contract_step_off) share one executable, the first one's. So a test's target may not
#   exist: set its build properties through the arguments above, never on the target after.
# The reference-model tests' quick runs (tests/common/model.h): 24 seeds, 8 in the sanitizer and
# emulator builds (GRACE_QUICK_SHORT), where a call costs 10-30 times more. Pass it to
# grace_test() after the other arguments; the _long variants set their own seeds (2000).
if(GRACE_QUICK_SHORT)
  set(GRACE_MODEL_QUICK_ENV ENV GRACE_MODEL_SEEDS=8)
else()
  set(GRACE_MODEL_QUICK_ENV)
endif()

function(grace_test)
  cmake_parse_arguments(T "INTERNAL;CXX" "NAME;TIMEOUT;CXX_STANDARD"
                        "SOURCES;ENV;LABELS;ARGS;LIBS;DEFINES;DEPENDS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS quick)
  endif()
  set(variants ${T_NAME})
  if(T_CXX)
    list(APPEND variants ${T_NAME}_cxx)
  endif()
  foreach(v ${variants})
    # The program this variant runs: its sources, how it is compiled and linked, C or C++.
    set(key "")
    foreach(s ${T_SOURCES})
      get_filename_component(abs ${s} ABSOLUTE)
      list(APPEND key ${abs})
    endforeach()
    list(APPEND key "INTERNAL=${T_INTERNAL}" "LIBS=${T_LIBS}" "STD=${T_CXX_STANDARD}"
         "DEFINES=${T_DEFINES}")
    if(v STREQUAL "${T_NAME}_cxx")
      list(APPEND key CXX)
    endif()
    string(MD5 key_id "${key}")
    get_property(exe GLOBAL PROPERTY GRACE_TEST_EXE_${key_id})
    if(exe)
      grace_test_register(${v} ${exe})
      continue()
    endif()
    set_property(GLOBAL PROPERTY GRACE_TEST_EXE_${key_id} ${v})
    set(srcs "")
    if(v STREQUAL "${T_NAME}_cxx")
      foreach(s ${T_SOURCES})
        get_filename_component(abs ${s} ABSOLUTE)
        get_filename_component(base ${s} NAME_WE)
        set(gen ${CMAKE_CURRENT_BINARY_DIR}/cxx/${base}_cxx.cpp)
        file(WRITE ${gen}.tmp "// SPDX-License-Identifier: MIT\n// generated: ${s} compiled as C++\n#include \"${abs}\"\n")
        configure_file(${gen}.tmp ${gen} COPYONLY)
        list(APPEND srcs ${gen})
      endforeach()
    else()
      set(srcs ${T_SOURCES})
    endif()
    add_executable(${v} ${srcs})
    target_compile_options(${v} PRIVATE ${GRACE_WARN})
    target_include_directories(${v} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    if(T_INTERNAL)
      target_link_libraries(${v} PRIVATE grace_internal Threads::Threads ${T_LIBS})
    else()
      target_link_libraries(${v} PRIVATE grace Threads::Threads ${T_LIBS})
    endif()
    if(T_CXX_STANDARD)
      set_target_properties(${v} PROPERTIES CXX_STANDARD ${T_CXX_STANDARD}
                            CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    endif()
    if(T_DEFINES)
      target_compile_definitions(${v} PRIVATE ${T_DEFINES})
    endif()
    if(T_DEPENDS)
      add_dependencies(${v} ${T_DEPENDS})
    endif()
    grace_test_register(${v} ${v})
  endforeach()
endfunction()

# The test ${name}, running the executable target ${exe} with grace_test()'s T_* arguments (a
# macro: it sees the caller's variables).
macro(grace_test_register name exe)
  add_test(NAME ${name} COMMAND ${exe} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
  # A process still running 10 s before its timeout prints every thread's backtrace
  # (tests/common/gtest_lite.h, gt_hang_watch()).
  math(EXPR dump_s "${T_TIMEOUT} - 10")
  if(dump_s LESS 5)
    set(dump_s 5)
  endif()
  set(env ${T_ENV})
  list(APPEND env "GT_HANG_DUMP_S=${dump_s}")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endmacro()

# Include every *.cmake fragment of the calling directory: each part of the project registers
# its own tests in its own fragment, so parallel work never edits a shared list.
macro(grace_include_fragments)
  file(GLOB _frags CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cmake)
  list(SORT _frags)
  foreach(_f ${_frags})
    include(${_f})
  endforeach()
endmacro()
