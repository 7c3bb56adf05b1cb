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
