# SPDX-License-Identifier: MIT
# The Promela models, checked with spin by check.sh: the default flavor (memb.pml, its idle fast
# path, parking and stepped grace periods included) and the callback engine's barrier markers
# and in-flight batch across fork() (barrier.pml), the blocking driver's sleep for the answers
# (answers.pml, liveness). The protocols must hold and every
# deliberately broken variant must be caught. The model does not depend on the build, so it
# runs in the release configuration only (the debug and sanitizer builds would repeat the same
# check); --quick takes about 300 s of CPU on 2 CPUs and 3.6 GB at most; check.sh --full is the deeper run (about 5.2
# minutes, 1.9 GB, and about 3 minutes more for the stepped grace periods).
find_program(GRACE_SPIN spin)
if(GRACE_SPIN AND NOT GRACE_DEBUG AND NOT GRACE_SANITIZE AND NOT GRACE_TSAN)
  # The quick check in three shards (check.sh --shard: step-ask, the heaviest, alone in the
  # third, the others alternately in the first two; about 100 s of CPU each), so that
  # ctest -j runs them side by side: in one piece it was the release configuration's longest
  # test by far (100-300 s of one CPU) and the end of its ctest. COST: ctest -j starts them
  # first, also on a clean clone (no Testing/Temporary/CTestCostData.txt yet).
  foreach(i 1 2 3)
    add_test(NAME model_memb_${i} COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check.sh --quick
                                          --shard ${i}/3)
    set_tests_properties(model_memb_${i} PROPERTIES TIMEOUT 600 LABELS quick COST 1000)
  endforeach()
  # The deeper run in two pieces side by side: the stepped grace periods (STEP, about 11 min,
  # 8 GB at most: asking's nested-answer mutant) apart from the rest.
  add_test(NAME model_memb_full COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check.sh --full --no-step)
  set_tests_properties(model_memb_full PROPERTIES TIMEOUT 3600 LABELS long)
  add_test(NAME model_memb_step_full COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check.sh --full --step)
  set_tests_properties(model_memb_step_full PROPERTIES TIMEOUT 3600 LABELS long)
endif()
