# SPDX-License-Identifier: MIT
# Shared by scripts/abi-check.sh and scripts/abi-update.sh (sourced): how an ABI description of
# libgrace.so is made. The same abidw options on both sides, so that only the library differs:
# types outside include/grace/ are dropped (they are not part of the ABI), and no path or source
# location is recorded (the description does not depend on where the tree lives).
abi_baseline=abi/libgrace.abi # the reference of the check; abi/libgrace-<version>.abi: releases
abi_describe() { # abi_describe <libgrace.so> <out.abi>
	abidw --no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash \
		--headers-dir include/grace --drop-private-types "$1" >"$2"
}
abi_need_tools() {
	command -v abidw >/dev/null && command -v abidiff >/dev/null && return 0
	echo "abidw/abidiff not found: install abigail-tools (scripts/setup-debian.sh does)" >&2
	return 1
}
