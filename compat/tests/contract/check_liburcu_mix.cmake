# SPDX-License-Identifier: MIT
# cmake -P check_liburcu_mix.cmake: a build that mixes grace-urcu with liburcu itself gets a
# clear error, not a silent mix (issue 32, "Bad input"), and a build that writes -lurcu-qsbr
# with grace-urcu's library directory gets grace-urcu even where liburcu-dev is installed:
#  1. grace-urcu's headers with _LGPL_SOURCE, linked against liburcu's own libraries
#     (-lurcu-qsbr, no grace-urcu directory): the link fails naming grace's own symbols;
#  2. the same without _LGPL_SOURCE (the program calls liburcu's function names, which
#     liburcu's libraries define too): the link fails naming `<name>@GRACE_URCU_0', the
#     symbol version the headers bind those names to; the program links with grace-urcu;
#  3. an LD_PRELOAD library still replaces a function of the program linked with grace-urcu;
#     one built with the headers that defines such a function needs
#     GRACE_URCU_NO_SYMBOL_VERSIONS;
#  4. a shared library whose sources include grace-urcu's headers and call nothing links with
#     -z defs and no urcu library, as with liburcu (multipath-tools' libmpathutil does this);
#  5. 1. with -L<grace-urcu's library directory>: links, records no liburcu library, runs;
#  6. a header of liburcu itself, then grace-urcu's: #error naming the mix.
# Needs liburcu's own development files (Debian's liburcu-dev); without them, it says skipped.
# Inputs (-D): C_COMPILER, COMPAT_INCLUDE, SRC_INCLUDE, BIN_INCLUDE, LINK_DIR, LIB_DIR (where
#              libgrace-urcu.so.N and libgrace.so.N are, for running), PROGRAM, WORK_DIR,
#              EXTRA_FLAGS (;-separated)
foreach(v C_COMPILER COMPAT_INCLUDE SRC_INCLUDE BIN_INCLUDE LINK_DIR LIB_DIR PROGRAM WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_liburcu_mix.cmake: -D${v}=... missing")
  endif()
endforeach()

execute_process(COMMAND ${C_COMPILER} -print-file-name=liburcu-qsbr.so
                OUTPUT_VARIABLE peer OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${peer}")
  message(STATUS "grace-urcu mix: skipped: liburcu's own liburcu-qsbr.so is not installed "
                 "(Debian's liburcu-dev; scripts/setup-debian.sh installs it)")
  return()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(inc -I${COMPAT_INCLUDE} -I${SRC_INCLUDE} -I${BIN_INCLUDE})

# Run a build step that must fail, and whose output must match every regex of `patterns` (a
# list): the mix is refused, and refused by name. `what` names the case in the messages.
function(expect_refused what patterns)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "grace-urcu mix: ${what}: the link should have failed")
  endif()
  foreach(p ${patterns})
    if(NOT "${out}${err}" MATCHES "${p}")
      message(FATAL_ERROR "grace-urcu mix: ${what}: failed, but without naming ${p}:\n"
                          "${out}${err}")
    endif()
  endforeach()
endfunction()

# 1. grace-urcu's headers, liburcu's library.
expect_refused("grace-urcu's headers against ${peer}" "undefined reference to `grace_"
               ${C_COMPILER} ${EXTRA_FLAGS} ${inc} -D_LGPL_SOURCE ${PROGRAM}
               -o ${WORK_DIR}/mixed -lurcu-qsbr -pthread)
message(STATUS "grace-urcu mix: against liburcu's library: fails by name: ok")

# 2. Without _LGPL_SOURCE the program calls liburcu's own function names, which liburcu's
# libraries define too: the headers bind them to grace-urcu's symbol version, so the link fails
# naming it (urcu_qsbr_register_thread@GRACE_URCU_0, ...). The QSBR program above, and one of the
# default flavor written as multipath-tools and older programs write it (the first generation's
# names), against -lurcu.
expect_refused("without _LGPL_SOURCE, against ${peer}"
               "undefined reference to `urcu_qsbr_[a-z_]+@GRACE_URCU_0'"
               ${C_COMPILER} ${EXTRA_FLAGS} ${inc} ${PROGRAM} -o ${WORK_DIR}/mixed_fn
               -lurcu-qsbr -pthread)
file(WRITE ${WORK_DIR}/oldnames.c [=[
#include <urcu.h>
struct item {
	struct rcu_head head;
	int value;
};
static struct item *shared_item;
static void item_free(struct rcu_head *head)
{
	(void)head;
}
int main(void)
{
	static struct item a = { { 0, 0 }, 1 };
	rcu_register_thread_memb();
	rcu_set_pointer(&shared_item, &a);
	rcu_read_lock_memb();
	int v = rcu_dereference(shared_item)->value;
	rcu_read_unlock_memb();
	synchronize_rcu_memb();
	call_rcu_memb(&a.head, item_free);
	rcu_unregister_thread_memb();
	return v == 1 ? 0 : 1;
}
]=])
execute_process(COMMAND ${C_COMPILER} -print-file-name=liburcu.so
                OUTPUT_VARIABLE peer_memb OUTPUT_STRIP_TRAILING_WHITESPACE)
set(names)
foreach(fn urcu_memb_read_lock urcu_memb_synchronize_rcu urcu_memb_call_rcu rcu_set_pointer_sym)
  list(APPEND names "undefined reference to `${fn}@GRACE_URCU_0'")
endforeach()
expect_refused("rcu_read_lock_memb(), ... against ${peer_memb}" "${names}"
               ${C_COMPILER} ${EXTRA_FLAGS} ${inc} ${WORK_DIR}/oldnames.c
               -o ${WORK_DIR}/oldnames -lurcu -pthread)
# The same program against grace-urcu by liburcu's name links and runs.
execute_process(COMMAND ${C_COMPILER} ${EXTRA_FLAGS} ${inc} ${WORK_DIR}/oldnames.c
                        -o ${WORK_DIR}/oldnames -L${LINK_DIR} -lurcu -pthread
                        -Wl,-rpath,${LIB_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: the program calling rcu_read_lock_memb(), ... does not "
                      "link with -L${LINK_DIR} -lurcu:\n${out}${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/oldnames RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: the program calling rcu_read_lock_memb(), ... failed "
                      "(${rc}):\n${out}${err}")
endif()
message(STATUS "grace-urcu mix: without _LGPL_SOURCE, against liburcu's library: fails "
               "naming GRACE_URCU_0: ok")

# 3. The binding leaves interposition as it is with liburcu: an LD_PRELOAD library written
# without grace-urcu's headers replaces urcu_memb_synchronize_rcu() in the program above; one
# that includes them and defines the function links with GRACE_URCU_NO_SYMBOL_VERSIONS, and
# without it stops naming the version (docs/compat.md). Not run under a sanitizer, whose
# runtime must come first.
file(WRITE ${WORK_DIR}/pre.c "#include <stdio.h>\nvoid urcu_memb_synchronize_rcu(void);\nvoid urcu_memb_synchronize_rcu(void)\n{\n\tputs(\"interposed\");\n}\n")
file(WRITE ${WORK_DIR}/preh.c "#include <urcu.h>\nvoid urcu_memb_synchronize_rcu(void)\n{\n}\n")
expect_refused("a shared library defining urcu_memb_synchronize_rcu() with the headers"
               "urcu_memb_synchronize_rcu@@GRACE_URCU_0"
               ${C_COMPILER} ${inc} -shared -fPIC ${WORK_DIR}/preh.c -o ${WORK_DIR}/libpreh.so)
execute_process(COMMAND ${C_COMPILER} ${inc} -DGRACE_URCU_NO_SYMBOL_VERSIONS -shared -fPIC
                        ${WORK_DIR}/preh.c -o ${WORK_DIR}/libpreh.so
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: GRACE_URCU_NO_SYMBOL_VERSIONS: the library does not "
                      "link:\n${out}${err}")
endif()
if(NOT "${EXTRA_FLAGS}" MATCHES "sanitize")
  execute_process(COMMAND ${C_COMPILER} -shared -fPIC ${WORK_DIR}/pre.c -o ${WORK_DIR}/libpre.so
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "grace-urcu mix: the interposer does not build:\n${out}${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${WORK_DIR}/libpre.so
                          ${WORK_DIR}/oldnames
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "interposed")
    message(FATAL_ERROR "grace-urcu mix: LD_PRELOAD did not replace urcu_memb_synchronize_rcu() "
                        "(${rc}):\n${out}${err}")
  endif()
endif()
message(STATUS "grace-urcu mix: interposition as with liburcu: ok")

# 4. Including is not using: no library needed.
file(WRITE ${WORK_DIR}/incl.c "#include <urcu.h>\nint incl(void);\nint incl(void)\n{\n\treturn 1;\n}\n")
execute_process(COMMAND ${C_COMPILER} ${EXTRA_FLAGS} ${inc} -fPIC -shared -Wl,-z,defs
                        ${WORK_DIR}/incl.c -o ${WORK_DIR}/libincl.so
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: a library that only includes <urcu.h> needs a library:\n"
                      "${out}${err}")
endif()
message(STATUS "grace-urcu mix: including without calling needs no library: ok")

# 5. With grace-urcu's directory first: grace-urcu, not the installed liburcu.
execute_process(COMMAND ${C_COMPILER} ${EXTRA_FLAGS} ${inc} ${PROGRAM} -o ${WORK_DIR}/byname
                        -L${LINK_DIR} -lurcu-qsbr -pthread -Wl,-rpath,${LIB_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: -L${LINK_DIR} -lurcu-qsbr failed:\n${out}${err}")
endif()
file(STRINGS ${WORK_DIR}/byname needed REGEX "liburcu[-a-z]*\\.so")
if(needed)
  message(FATAL_ERROR "grace-urcu mix: -L${LINK_DIR} -lurcu-qsbr recorded liburcu: ${needed}")
endif()
execute_process(COMMAND ${WORK_DIR}/byname RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grace-urcu mix: the program linked by name failed (${rc}):\n${out}${err}")
endif()
message(STATUS "grace-urcu mix: -L<grace-urcu> -lurcu-qsbr: grace-urcu: ok")

# 6. liburcu's own header first, then grace-urcu's.
file(WRITE ${WORK_DIR}/probe.c "#include <urcu/list.h>\n")
execute_process(COMMAND ${C_COMPILER} -H -fsyntax-only ${WORK_DIR}/probe.c
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT err MATCHES "\\. ([^\n]*/urcu/list\\.h)")
  message(FATAL_ERROR "grace-urcu mix: liburcu's <urcu/list.h> not found:\n${err}")
endif()
set(peer_list ${CMAKE_MATCH_1})
file(WRITE ${WORK_DIR}/mixed.c "#include \"${peer_list}\"\n#include <urcu.h>\nint main(void)\n{\n\treturn 0;\n}\n")
execute_process(COMMAND ${C_COMPILER} ${EXTRA_FLAGS} ${inc} -fsyntax-only ${WORK_DIR}/mixed.c
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "a header of liburcu itself came first")
  message(FATAL_ERROR "grace-urcu mix: ${peer_list} then <urcu.h> should stop with an #error "
                      "(${rc}):\n${out}${err}")
endif()
message(STATUS "grace-urcu mix: liburcu's header, then grace-urcu's: #error: ok")
file(REMOVE_RECURSE ${WORK_DIR})
