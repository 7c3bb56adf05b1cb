# SPDX-License-Identifier: MIT
# The poison stress test: both flavors, 2 and 8 threads (8 is oversubscribed on 2 cores),
# about 20 s in all per build configuration (9 s with GRACE_QUICK_SHORT). COMMAND names the
# target (not its file name) so that ctest runs it through CMAKE_CROSSCOMPILING_EMULATOR in a
# cross build.
grace_test(NAME api_stress_build SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stress.c ARGS rcu 2 1)
set_target_properties(api_stress_build PROPERTIES OUTPUT_NAME api_stress)
# GRACE_QUICK_SHORT (scripts/test.sh: asan, tsan, aarch64): 2 s each, 1 s for the fallback.
if(GRACE_QUICK_SHORT)
  set(_stress_s 2)
  set(_stress_fb_s 1)
else()
  set(_stress_s 5)
  set(_stress_fb_s 3)
endif()
foreach(fl rcu qsbr)
  foreach(n 2 8)
    add_test(NAME stress_${fl}_${n} COMMAND api_stress_build ${fl} ${n} ${_stress_s})
    set_tests_properties(stress_${fl}_${n} PROPERTIES TIMEOUT 120 LABELS quick)
  endforeach()
endforeach()
add_test(NAME stress_rcu_fallback_8 COMMAND api_stress_build rcu 8 ${_stress_fb_s})
set_tests_properties(stress_rcu_fallback_8 PROPERTIES TIMEOUT 120 LABELS quick
                     ENVIRONMENT GRACE_NO_MEMBARRIER=1)
