# SPDX-License-Identifier: MIT
# Parking (core/registry.c): idle default-flavor threads are no longer scanned, and come back at
# their next section (also from a signal handler), exit, or fork. Run with adaptive parking
# (the default), with every idle thread parked after one pass, and with parking off.
grace_test(NAME unit_park SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park.c TIMEOUT 120)
grace_test(NAME unit_park_eager SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park.c TIMEOUT 120
           ENV GRACE_PARK_AFTER=1)
grace_test(NAME unit_park_off SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park.c TIMEOUT 120
           ENV GRACE_NO_PARK=1)
# The reader preempted inside rcu_read_lock() while it is parked, and a signal handler's section
# inside a hand-back (debug builds: the pause sites "rcu_lock" before the lock's store and
# "unpark" inside the hand-back; skipped in release builds).
grace_test(NAME unit_park_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park_window.c TIMEOUT 60
           ENV GRACE_TEST_PAUSE=rcu_lock:500000,unpark:300000 GRACE_PARK_AFTER=1)
# A section begun between the scan that found its thread idle and the mark of the park (debug
# builds: pause site "park_mark"): the next confirmation must undo the park.
grace_test(NAME unit_park_mark SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park_window.c TIMEOUT 60
           ARGS section_begun_while_the_park_is_marked
           ENV GRACE_TEST_PAUSE=park_mark:300000 GRACE_PARK_AFTER=1)
# A drain in the middle of a wait (another thread's exit) keeps what the first scan recorded
# of a thread that handed itself back from a nested lock (pause sites "park_mark" and
# "park_confirm"; the Promela model's DRAIN_RESETS_SEEN, in the library).
grace_test(NAME unit_park_drain SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_park_window.c TIMEOUT 60
           ARGS drain_in_the_middle_of_a_wait_keeps_the_record
           ENV GRACE_TEST_PAUSE=park_mark:300000,park_confirm:300000 GRACE_PARK_AFTER=1
               GRACE_STALL_TIMEOUT_MS=400)
