# SPDX-License-Identifier: MIT
# Regressions of issue 12: one test per fault, each failing on the code the issue was filed
# against. The fault-injection suite is in suite.cmake.
grace_test(NAME fault_regress_fork SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_fork.c TIMEOUT 300)
grace_test(NAME fault_regress_exit SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_exit.c TIMEOUT 300)
grace_test(NAME fault_regress_bounds SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_bounds.c TIMEOUT 300)
grace_test(NAME fault_regress_idr SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_idr.c CXX TIMEOUT 60)
grace_test(NAME fault_regress_nesting SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_nesting.c TIMEOUT 120)
grace_test(NAME fault_regress_nesting_fallback SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_nesting.c
           TIMEOUT 120 ENV GRACE_NO_MEMBARRIER=1)
grace_test(NAME fault_regress_debug0 SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_debug0.c TIMEOUT 60)

# Fault 4: dlclose() of a plugin that pulled grace in. The plugin links libgrace.so (or has
# libgrace.a inside it); the loader does not link grace at all.
add_library(fault_plugin MODULE ${CMAKE_CURRENT_LIST_DIR}/plugin.c)
target_link_libraries(fault_plugin PRIVATE grace)
target_compile_options(fault_plugin PRIVATE ${GRACE_WARN})
add_library(fault_plugin_static MODULE ${CMAKE_CURRENT_LIST_DIR}/plugin.c)
target_link_libraries(fault_plugin_static PRIVATE grace_static)
target_compile_options(fault_plugin_static PRIVATE ${GRACE_WARN})
add_executable(fault_regress_dlclose ${CMAKE_CURRENT_LIST_DIR}/regress_dlclose.c)
target_compile_options(fault_regress_dlclose PRIVATE ${GRACE_WARN})
target_link_libraries(fault_regress_dlclose PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_test(NAME fault_regress_dlclose COMMAND fault_regress_dlclose $<TARGET_FILE:fault_plugin>)
add_test(NAME fault_regress_dlclose_static
         COMMAND fault_regress_dlclose $<TARGET_FILE:fault_plugin_static>)
set_tests_properties(fault_regress_dlclose fault_regress_dlclose_static PROPERTIES
                     TIMEOUT 120 LABELS quick)

# The callback engine's faults found by an independent review (wave 2): limits that overflow,
# barriers and the exit drain under BATCH, exit racing fork or creating a domain, a hurry flag
# left set, start_poll in a fork child (regress_engine.c has one case each).
grace_test(NAME fault_regress_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_engine.c TIMEOUT 300)

# The lazy policy (GRACE_POLICY_LAZY): what ends a lazy wait (hurry, start_poll, barriers, the
# exit drain, pending callbacks, memory stall), fork, and a flood behind a stuck reader.
grace_test(NAME fault_regress_lazy SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_lazy.c TIMEOUT 300)

# The policies' bounds on the engine's grace periods under a call_rcu() flood (POLL's least
# gap, ADAPTIVE's least pace, BATCH's period) and a lone callback's wait under BATCH.
grace_test(NAME fault_regress_policy SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_policy.c TIMEOUT 120)
# The policy and its period chosen by the environment alone (docs/build.md).
grace_test(NAME fault_regress_policy_env_batch SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_policy.c
           TIMEOUT 120 ARGS env_lone_callback_waits
           ENV GRACE_POLICY=batch GRACE_BATCH_PERIOD_US=100000 EXPECT_WAIT_MS=100)
grace_test(NAME fault_regress_policy_env_batch_old SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_policy.c
           TIMEOUT 120 ARGS env_lone_callback_waits
           ENV GRACE_POLICY_BATCH=1 GRACE_BATCH_PERIOD_US=100000 EXPECT_WAIT_MS=100)
grace_test(NAME fault_regress_policy_env_lazy SOURCES ${CMAKE_CURRENT_LIST_DIR}/regress_policy.c
           TIMEOUT 120 ARGS env_lone_callback_waits
           ENV GRACE_POLICY=lazy GRACE_LAZY_PERIOD_US=200000 EXPECT_WAIT_MS=200)
