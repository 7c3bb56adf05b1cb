# SPDX-License-Identifier: MIT
# cmake -P check_transitive.cmake: grace-urcu's headers bring what liburcu's namesakes bring
# (issue 32). Programs use assert(), caa_unlikely(), struct cds_list_head, SYS_gettid, poll(),
# ... after including only a liburcu header that happens to include them; gcc 14 refuses the
# implicit declarations. For each header below, with and without _LGPL_SOURCE, a program that
# includes that header alone and uses each listed thing compiles with
# -Werror=implicit-function-declaration. The table is what gcc -H shows liburcu 0.13's headers
# include; where liburcu's own headers are installed (Debian's liburcu-dev), each program is also
# compiled against them, so the table cannot ask for more than liburcu gives.
# Inputs (-D): C_COMPILER, COMPAT_INCLUDE, SRC_INCLUDE, BIN_INCLUDE, WORK_DIR,
#              EXTRA_FLAGS (;-separated)
foreach(v C_COMPILER COMPAT_INCLUDE SRC_INCLUDE BIN_INCLUDE WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_transitive.cmake: -D${v}=... missing")
  endif()
endforeach()

# What each probe uses, in a function body where argc is an int ("@" stands for ";", which
# CMake would take as a list separator).
set(use_assert "assert(argc > 0)@")
set(use_compiler "if (caa_unlikely(argc > 1000))\n\t\treturn caa_likely(argc) ? 1 : 2@")
set(use_list "struct cds_list_head h@\n\tCDS_INIT_LIST_HEAD(&h)@\n\tif (!cds_list_empty(&h))\n\t\treturn 2@")
set(use_syscall "if (argc > 1000)\n\t\treturn (int)SYS_gettid@")
set(use_unistd "if (argc > 1000)\n\t\treturn (int)sysconf(_SC_NPROCESSORS_CONF)@")
set(use_poll "if (argc > 1000)\n\t\treturn poll(NULL, 0, 0)@")
set(use_futex "if (argc > 1000)\n\t\treturn futex_async(NULL, FUTEX_WAKE, 1, NULL, NULL, 0)@")

# header|probes without _LGPL_SOURCE|probes with it (- for none)
set(table
    "urcu.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu-qsbr.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu-bp.h|assert compiler syscall|assert compiler list syscall unistd poll"
    "urcu/urcu-memb.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu/urcu-mb.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu/urcu-signal.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu/urcu-qsbr.h|assert compiler syscall|assert compiler list syscall unistd poll futex"
    "urcu/urcu-bp.h|assert compiler syscall|assert compiler list syscall unistd poll"
    "urcu-call-rcu.h|assert compiler syscall|assert compiler syscall poll"
    "urcu/call-rcu.h|assert compiler syscall|assert compiler syscall poll"
    "urcu/wfcqueue.h|assert compiler syscall|assert compiler syscall poll"
    "urcu/wfstack.h|assert compiler|assert compiler syscall poll"
    "urcu/wfqueue.h|assert compiler|assert compiler syscall poll"
    "urcu/lfstack.h|-|assert compiler syscall"
    "urcu/rculfqueue.h|assert|assert compiler syscall poll"
    "urcu/ref.h|assert compiler syscall|assert compiler syscall"
    "urcu/urcu_ref.h|assert compiler syscall|assert compiler syscall"
    "urcu/debug.h|assert|assert"
    "urcu/cds.h|assert compiler list syscall|assert compiler list syscall poll"
    "urcu/tls-compat.h|compiler syscall|compiler syscall"
    "urcu/syscall-compat.h|syscall|syscall"
    "urcu/arch.h|compiler syscall|compiler syscall"
    "urcu/system.h|compiler syscall|compiler syscall"
    "urcu/uatomic.h|compiler syscall|compiler syscall"
    "urcu/pointer.h|compiler syscall|compiler syscall"
    "urcu/rculist.h|compiler list syscall|compiler list syscall"
    "urcu/futex.h|compiler syscall unistd futex|compiler syscall unistd futex"
    "urcu/urcu-futex.h|compiler syscall unistd futex|compiler syscall unistd futex")

# liburcu's own headers, where installed: the directory holding urcu/list.h.
set(peer_inc "")
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/probe.c "#include <urcu/list.h>\n")
execute_process(COMMAND ${C_COMPILER} -H -fsyntax-only ${WORK_DIR}/probe.c
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc EQUAL 0 AND err MATCHES "\\. ([^\n]*)/urcu/list\\.h")
  set(peer_inc ${CMAKE_MATCH_1})
endif()

set(bad "")
set(n 0)
foreach(row ${table})
  string(REPLACE "|" ";" f "${row}")
  list(GET f 0 header)
  foreach(mode 1 2)
    list(GET f ${mode} probes)
    if(probes STREQUAL "-")
      set(probes "")
    endif()
    string(REPLACE " " ";" probes "${probes}")
    set(src "")
    if(mode EQUAL 2)
      set(src "#define _LGPL_SOURCE\n")
    endif()
    string(APPEND src "#include <${header}>\n\nint main(int argc, char **argv)\n{\n\t(void)argv;\n")
    foreach(p ${probes})
      string(APPEND src "\t${use_${p}}\n")
    endforeach()
    string(APPEND src "\treturn 0;\n}\n")
    string(REPLACE "@" ";" src "${src}")
    string(MAKE_C_IDENTIFIER "${header}_${mode}" id)
    set(file ${WORK_DIR}/${id}.c)
    file(WRITE ${file} "${src}")
    set(impls grace)
    if(peer_inc)
      list(APPEND impls liburcu)
    endif()
    foreach(impl ${impls})
      if(impl STREQUAL "grace")
        set(inc -I${COMPAT_INCLUDE} -I${SRC_INCLUDE} -I${BIN_INCLUDE} ${EXTRA_FLAGS})
      else()
        set(inc "")
      endif()
      execute_process(COMMAND ${C_COMPILER} ${inc} -fsyntax-only -Wall
                              -Werror=implicit-function-declaration -Werror=implicit-int
                              ${file}
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
      math(EXPR n "${n} + 1")
      if(NOT rc EQUAL 0)
        list(APPEND bad "${impl}: <${header}> (${mode}: uses ${probes}):\n${out}${err}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "grace-urcu transitive includes: programs that rely on what a header "
                      "brings do not compile:\n${bad}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
if(peer_inc)
  message(STATUS "grace-urcu transitive includes: ${n} programs, against grace-urcu and "
                 "liburcu (${peer_inc}): ok")
else()
  message(STATUS "grace-urcu transitive includes: ${n} programs against grace-urcu: ok "
                 "(liburcu's headers are not installed: the table is not compared)")
endif()
