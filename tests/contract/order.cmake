# SPDX-License-Identifier: MIT
# Callback order (docs/api.md, call_rcu(): FIFO per CPU queue) for every call_* of every
# flavor; also without rseq (pushes by compare-and-swap) and in the fence fallback.
grace_test(NAME contract_order SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_order.c TIMEOUT 180)
grace_test(NAME contract_order_norseq SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_order.c TIMEOUT 180
           ENV GRACE_NO_RSEQ=1)
grace_test(NAME contract_order_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_order.c
           TIMEOUT 180 ENV GRACE_NO_MEMBARRIER=1)
# A pusher that finds its list drained by a remote take (an srcu domain's one worker), held
# up between its load of the list's mode and its push (debug builds: pause site rseq_drain):
# its push must not land behind the take (contract rule 7 of include/grace/internal/rseq.h).
grace_test(NAME contract_order_drain SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_order.c TIMEOUT 180
           ARGS fifo_per_thread_concurrent ENV GRACE_TEST_PAUSE=rseq_drain:2000)
