# SPDX-License-Identifier: MIT
grace_test(NAME compat_liburcu_program SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_liburcu_program.c
           CXX LIBS grace_urcu TIMEOUT 120)
grace_test(NAME compat_lfht SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht.c CXX
           LIBS grace_urcu TIMEOUT 120)
# cds_lfht against a reference model of liburcu's contract: random sequences of every update
# call and resize, checked call by call (GRACE_MODEL_SEEDS, GRACE_MODEL_OPS).
grace_test(NAME compat_lfht_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_model.c
           LIBS grace_urcu TIMEOUT 180 ${GRACE_MODEL_QUICK_ENV})
# The queues and stacks (wfcqueue, wfstack, lfstack, rculfqueue) against reference models, and
# FIFO per producer with concurrent producers.
grace_test(NAME compat_queue_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_queue_model.c
           LIBS grace_urcu TIMEOUT 180 ${GRACE_MODEL_QUICK_ENV})
grace_test(NAME compat_lfht_model_long SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_model.c
           LIBS grace_urcu TIMEOUT 1800 ENV GRACE_MODEL_SEEDS=2000 GRACE_MODEL_OPS=20000
           LABELS long)
# fork() while another thread resizes: the child resizes and destroys its copy (lfht.c, "fork()").
grace_test(NAME compat_lfht_fork SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_fork.c
           LIBS grace_urcu TIMEOUT 120)
# dlopen() libgrace-urcu, create a table (its fork handlers), dlclose(), fork: nothing dangles.
# The loader does not link grace-urcu.
add_executable(compat_lfht_dlclose ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_dlclose.c)
target_compile_options(compat_lfht_dlclose PRIVATE ${GRACE_WARN})
target_link_libraries(compat_lfht_dlclose PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_test(NAME compat_lfht_dlclose COMMAND compat_lfht_dlclose $<TARGET_FILE:grace_urcu>)
set_tests_properties(compat_lfht_dlclose PROPERTIES TIMEOUT 120 LABELS quick)
# Misuse diagnostics (issue 16, item 5): each misuse in a child process.
grace_test(NAME compat_misuse SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_misuse.c
           LIBS grace_urcu TIMEOUT 180)
grace_test(NAME compat_api SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_api.c CXX
           LIBS grace_urcu TIMEOUT 120)
# No memory left: the -ENOMEM results docs/compat.md gives, and the flavor working after them.
grace_test(NAME compat_nomem SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_nomem.c CXX
           LIBS grace_urcu TIMEOUT 60)
# defer_rcu(): per-thread queues run by callbacks; barriers, exits, a stalled reader, fork.
grace_test(NAME compat_defer SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer.c
           LIBS grace_urcu TIMEOUT 180)
# The inline append racing takes of its queue (barriers in a loop), without membarrier, where
# the append's full barrier is what keeps the two apart (mutant defer-fenced-off).
grace_test(NAME compat_defer_steal SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_steal.c
           LIBS grace_urcu TIMEOUT 60 ENV GRACE_NO_MEMBARRIER=1)
# exit() with deferrals pending, on the main thread and left by a thread that returned: the exit
# handler's drain runs them (each case in a child that has not used grace before).
grace_test(NAME compat_defer_exit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_exit.c
           LIBS grace_urcu TIMEOUT 120)
# An entry appended while its queue's pass disarms (debug builds widen the window).
grace_test(NAME compat_defer_disarm SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_disarm.c
           LIBS grace_urcu TIMEOUT 60)
# fork() while a defer queue's pass is inside a deferred function: past libgrace's fork pause,
# and while it creates the worker's queue (defer.c, points 7 and 8).
grace_test(NAME compat_defer_fork_pass
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_fork_pass.c LIBS grace_urcu
           TIMEOUT 60)
# fork() while a deferred cache's pass posts itself again (engine/defer.c, point D6; debug
# builds widen the window).
grace_test(NAME compat_defer_fork_repost
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_fork_repost.c LIBS grace_urcu
           TIMEOUT 60)
# fork() while another thread arms its deferred cache (engine/defer.c, points D3 and D6; debug
# builds widen the window).
grace_test(NAME compat_defer_fork_arm
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_fork_arm.c LIBS grace_urcu
           TIMEOUT 60)
# Defer queues in a fork child: the parent's other threads' queues, and those a barrier in
# flight had pinned, are freed there (defer.c, points 5 and 8).
grace_test(NAME compat_defer_fork_free
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_defer_fork_free.c LIBS grace_urcu
           TIMEOUT 60)
# cds_lfht_new() from a call_rcu() callback while fork() is prepared (lfht.c, "fork()").
grace_test(NAME compat_lfht_fork_new
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_fork_new.c LIBS grace_urcu
           TIMEOUT 60)
# cds_lfht_add_replace() / cds_lfht_replace() of a node by itself: misuse, abort.
grace_test(NAME compat_lfht_replace_self
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_replace_self.c LIBS grace_urcu
           TIMEOUT 60)
# cds_lfht_resize() above 2^63 clamps to max_nr_buckets.
grace_test(NAME compat_lfht_resize_huge
           SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_lfht_resize_huge.c LIBS grace_urcu)
# Callback order on grace-urcu: call_rcu() of each liburcu flavor, and defer_rcu() across the
# hand-over of an exiting thread's queue (docs/compat.md, "Order").
grace_test(NAME compat_order SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_order.c
           LIBS grace_urcu TIMEOUT 120)
# liburcu's functions as symbols (issue 32): a program without _LGPL_SOURCE that defines
# rcu_register_thread_memb() itself, dlsym() of both API generations and rcu_*_sym.
grace_test(NAME compat_names SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_compat_names.c
           LIBS grace_urcu ${CMAKE_DL_LIBS} TIMEOUT 60)
