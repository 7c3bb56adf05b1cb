#!/bin/sh
# SPDX-License-Identifier: MIT
# Regression of the core review: a QSBR thread coming online increments the online count with
# a seq_cst read-modify-write and must then execute a full barrier before it reads protected
# data (flavor/qsbr.c, qsbr_online()). On arm64 without LSE the read-modify-write is an
# ldaxr/stlxr loop (GCC's outline helper __aarch64_ldadd8_acq_rel), which does not order later
# plain loads before its store: the code must have a dmb after it. Checked in the disassembly
# of the exported functions that inline qsbr_online().
# Usage: check_qsbr_fence.sh OBJDUMP LIBRARY
set -eu
objdump=$1
lib=$2
fail=0
for fn in grace_qsbr_thread_online grace_qsbr_register_thread; do
	dis=$("$objdump" -d --no-show-raw-insn "$lib" | awk -v f="<$fn>:" '$2 == f {p = 1; next} p && /^$/ {exit} p')
	if [ -z "$dis" ]; then
		echo "$fn: not found in $lib"
		fail=1
		continue
	fi
	# The instruction after the increment (a call of the outline helper or an LSE ldadd*).
	next=$(printf '%s\n' "$dis" | awk '/ldadd/ {getline; print; exit}')
	case "$next" in
	*dmb*) echo "$fn: full barrier after the online increment: $next" ;;
	*)
		echo "$fn: no dmb right after the online increment (next: '$next')"
		printf '%s\n' "$dis"
		fail=1
		;;
	esac
done
exit $fail
