#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_docs: what `cmake --install` puts under share/ is complete and usable.
#  - man pages: one per public name (scripts/gen-man.py fails the build otherwise); `man 3
#    rcu_read_lock` finds its page through the prefix's MANPATH; every page renders without a
#    groff warning; every .so link points to a page that exists;
#  - documentation: the installed tree keeps the repository's layout, so every relative link of
#    every installed page resolves (the figure PNGs, ipc/README.md, CHANGELOG.md included);
#  - examples: sources, README and a CMakeLists.txt for an installed grace.
# Usage: check_install_docs.sh <cmake> <build dir> <work dir> <source dir>
set -euo pipefail
cmake=$1 build=$2 work=$3 src=$4
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
man3=$prefix/share/man/man3
doc=$prefix/share/doc/grace
fail=0
err() { echo "install_docs: $*"; fail=1; }

for p in grace rcu_read_lock grace_rcu_read_lock synchronize_rcu call_rcu srcu_read_lock \
	qsbr_quiescent_state rcu_dereference rcu_domain grace_hash_lookup; do
	[ -f "$man3/$p.3" ] || err "no man page $p.3"
done
n=$(ls "$man3" | wc -l)
[ "$n" -ge 200 ] || err "only $n man pages installed"
if command -v man >/dev/null; then
	found=$(MANPATH=$prefix/share/man man -w 3 rcu_read_lock 2>&1) || err "man -w 3 rcu_read_lock: $found"
	[ "$found" = "$man3/rcu_read_lock.3" ] || err "man 3 rcu_read_lock found '$found'"
	MANPATH=$prefix/share/man MANWIDTH=80 man 3 rcu_read_lock 2>/dev/null | grep -q "Enter a read-side section" ||
		err "man 3 rcu_read_lock does not show the page"
fi
for f in "$man3"/*.3; do
	first=$(head -1 "$f")
	case "$first" in
	.so\ *)
		target=$prefix/share/man/${first#.so }
		[ -f "$target" ] || err "$(basename "$f"): link to missing ${first#.so }"
		;;
	*)
		if command -v groff >/dev/null; then
			out=$(groff -man -Tutf8 -ww -z "$f" 2>&1) || true
			[ -z "$out" ] || err "$(basename "$f"): groff: $out"
		fi
		;;
	esac
done

for f in README.md LICENSE CHANGELOG.md docs/api.md docs/abi.md docs/figures/hashtable.md \
	docs/figures/hashtable_fig1_locks.png ipc/README.md examples/README.md \
	examples/CMakeLists.txt examples/config_pointer.c examples/cxx_rcu26.cpp; do
	[ -f "$doc/$f" ] || err "$f not installed under share/doc/grace"
done
python3 "$src/tests/consumer/scripts/check_doc_links.py" "$doc" || fail=1
[ $fail = 0 ] && echo "install_docs: ok ($n man pages; documentation links resolve)"
exit $fail
