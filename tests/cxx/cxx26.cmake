# SPDX-License-Identifier: MIT
# The C++26 <rcu> interface of grace.hpp:
#   cxx_rcu26_cxx11/17/20   the API test (test_rcu26.cpp) in three language standards: the
#                           header promises C++11
#   cxx_p2545_examples      the examples of P2545R4 and of the wording, written for std::rcu
#                           and switched to grace by using-declarations (C++20: std::jthread)
#   cxx_p2545_examples_17   the same in C++17 (std::thread)
#   cxx_rcu_domain_instructions  callgrind: rcu_domain::lock()+unlock() through every standard
#                           lock helper costs exactly what rcu_read_lock()+rcu_read_unlock()
#                           costs (tests/cxx/check_instructions.sh)
foreach(_std 11 17 20)
  grace_test(NAME cxx_rcu26_cxx${_std} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rcu26.cpp
             TIMEOUT 180 CXX_STANDARD ${_std})
endforeach()

grace_test(NAME cxx_p2545_examples SOURCES ${CMAKE_CURRENT_LIST_DIR}/p2545_examples.cpp
           CXX_STANDARD 20)
grace_test(NAME cxx_p2545_examples_17 SOURCES ${CMAKE_CURRENT_LIST_DIR}/p2545_examples.cpp
           CXX_STANDARD 17)

# Instruction counts need an uninstrumented, optimised build and valgrind.
find_program(GRACE_VALGRIND valgrind)
if(GRACE_VALGRIND AND NOT GRACE_SANITIZE AND NOT GRACE_TSAN AND NOT GRACE_DEBUG
   AND CMAKE_BUILD_TYPE MATCHES "Rel")
  add_executable(cxx_rcu_domain_count ${CMAKE_CURRENT_LIST_DIR}/rcu_domain_count.cpp)
  target_link_libraries(cxx_rcu_domain_count PRIVATE grace Threads::Threads)
  set_target_properties(cxx_rcu_domain_count PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
  # Same layout for every loop, as bench/readside does.
  target_compile_options(cxx_rcu_domain_count PRIVATE -falign-loops=64)
  add_test(NAME cxx_rcu_domain_instructions
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_instructions.sh ${GRACE_VALGRIND}
                   $<TARGET_FILE:cxx_rcu_domain_count>)
  set_tests_properties(cxx_rcu_domain_instructions PROPERTIES TIMEOUT 120 LABELS quick)
endif()

# cxx_p2530_hazptr: C++26 <hazard_pointer> (P2530) as a user writes it from the draft's text
# (tests/cxx/p2530_hazptr.cpp), in C++17 and C++20.
foreach(_std 17 20)
  grace_test(NAME cxx_p2530_hazptr_cxx${_std} SOURCES ${CMAKE_CURRENT_LIST_DIR}/p2530_hazptr.cpp
             CXX_STANDARD ${_std})
endforeach()

# cxx_nomem: make_hazard_pointer(), make_hazard_pointer(n) and srcu_domain() throw
# std::bad_alloc when no memory is left (tests/cxx/nomem.cpp; skipped under the sanitizers).
grace_test(NAME cxx_nomem SOURCES ${CMAKE_CURRENT_LIST_DIR}/nomem.cpp CXX_STANDARD 17)
