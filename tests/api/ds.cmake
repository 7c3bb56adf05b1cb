# SPDX-License-Identifier: MIT
# Data structures: RCU lists, hash table, ID registry. Quick runs here; the *_long variants
# repeat the concurrent phases for longer (label long, outside the test command).
grace_test(NAME api_idr SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_idr.c CXX TIMEOUT 120)
grace_test(NAME api_idr_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_idr.c TIMEOUT 600
           ENV GRACE_DS_TEST_MS=20000 LABELS long)
grace_test(NAME api_list SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_list.c CXX TIMEOUT 120)
grace_test(NAME api_list_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_list.c TIMEOUT 600
           ENV GRACE_DS_TEST_MS=20000 LABELS long)
grace_test(NAME api_hlist SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hlist.c CXX TIMEOUT 120)
grace_test(NAME api_hlist_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hlist.c TIMEOUT 600
           ENV GRACE_DS_TEST_MS=20000 LABELS long)
grace_test(NAME api_hash SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash.c CXX TIMEOUT 180)
grace_test(NAME api_hash_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash.c TIMEOUT 900
           ENV GRACE_DS_TEST_MS=30000 LABELS long)
# grace_hash and fork(): children forked during resizes and updates (review of src/ds/hash.c).
grace_test(NAME api_hash_fork SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash_fork.c CXX TIMEOUT 180)
# No memory left: the documented ENOMEM errors of the hash table, the ID registry and
# init_srcu_struct(), and the structures still work after them.
grace_test(NAME api_nomem SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_nomem.c CXX TIMEOUT 60)
# grace_hash against a reference model: random sequences of every update call and resize,
# checked call by call (GRACE_MODEL_SEEDS, GRACE_MODEL_OPS: the long variant runs more).
grace_test(NAME api_hash_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash_model.c TIMEOUT 180
           ${GRACE_MODEL_QUICK_ENV})
grace_test(NAME api_hash_model_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hash_model.c
           TIMEOUT 1800 ENV GRACE_MODEL_SEEDS=2000 GRACE_MODEL_OPS=20000 LABELS long)
# grace_idr against a reference model: random allocations, reservations, replacements,
# removals and lookups of live and stale IDs, checked call by call.
grace_test(NAME api_idr_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_idr_model.c TIMEOUT 180
           ${GRACE_MODEL_QUICK_ENV})
grace_test(NAME api_idr_model_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_idr_model.c
           TIMEOUT 1800 ENV GRACE_MODEL_SEEDS=2000 GRACE_MODEL_OPS=30000 LABELS long)
# <grace/list.h> and <grace/hlist.h> against a reference model: every update call, plain and
# RCU, checked call by call.
grace_test(NAME api_list_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_list_model.c TIMEOUT 120
           ${GRACE_MODEL_QUICK_ENV})
