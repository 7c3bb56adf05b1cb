# SPDX-License-Identifier: MIT
# The grace_ipc component as a static library. Included by examples/ipc, tests/ipc and
# bench/semop (tests are configured before examples): whichever comes first defines the target.
if(NOT TARGET grace_ipc)
  add_library(grace_ipc STATIC ${CMAKE_CURRENT_LIST_DIR}/grace_ipc.c
                               ${CMAKE_CURRENT_LIST_DIR}/ipc_ids.c)
  target_include_directories(grace_ipc PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(grace_ipc PUBLIC grace Threads::Threads)
  target_compile_options(grace_ipc PRIVATE ${GRACE_WARN})
  target_compile_definitions(grace_ipc PRIVATE _GNU_SOURCE)
endif()

# The same component with test hooks compiled in (tests/ipc/test_ipc_window.c), for tests only.
if(GRACE_TESTS AND NOT TARGET grace_ipc_hooked)
  add_library(grace_ipc_hooked STATIC ${CMAKE_CURRENT_LIST_DIR}/grace_ipc.c
                                      ${CMAKE_CURRENT_LIST_DIR}/ipc_ids.c)
  target_include_directories(grace_ipc_hooked PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(grace_ipc_hooked PUBLIC grace Threads::Threads)
  target_compile_options(grace_ipc_hooked PRIVATE ${GRACE_WARN})
  target_compile_definitions(grace_ipc_hooked PRIVATE _GNU_SOURCE GRACE_IPC_TEST_HOOKS=1)
endif()
