# SPDX-License-Identifier: MIT
# The Promela models, checked with spin by check.sh: the default flavor (memb.pml, its idle fast
# path and parking included) and the callback engine's barrier markers and in-flight batch
# across fork() (barrier.pml). The protocols must hold and every deliberately broken variant
# must be caught. The model does not depend on the build, so it runs in the release
# configuration only (the debug and sanitizer builds would repeat the same check); --quick
# takes about 100 s and 470 MB; check.sh --full is the deeper run (about 5.2 minutes, 1.8 GB).
find_program(GRACE_SPIN spin)
if(GRACE_SPIN AND NOT GRACE_DEBUG AND NOT GRACE_SANITIZE AND NOT GRACE_TSAN)
  add_test(NAME model_memb COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check.sh --quick)
  # COST: the longest quick test by far (100-200 s of one CPU): ctest -j starts it first, so
  # that on a clean clone (no Testing/Temporary/CTestCostData.txt yet) it does not start last
  # and run alone at the end.
  set_tests_properties(model_memb PROPERTIES TIMEOUT 600 LABELS quick COST 1000)
  add_test(NAME model_memb_full COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check.sh --full)
  set_tests_properties(model_memb_full PROPERTIES TIMEOUT 3600 LABELS long)
endif()
