#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package check (a long run: ctest -L long runs it as deb_package; not part of the
# quick test command). On a copy of the working tree:
#   1. dpkg-buildpackage -us -uc -b builds libgrace2, libgrace-dev, libgrace-urcu1 and
#      libgrace-urcu-dev;
#   2. the packages are checked: contents, dependencies, the symbols file, the SONAME;
#   3. both are unpacked with dpkg -x into a scratch root (why not dpkg -i: installing into the
#      system needs root, changes the machine other work shares, and could shadow a grace the
#      machine already has; dpkg -x puts exactly the packages' files under a directory that is
#      deleted afterwards, and the consumer is pointed at it the way a distribution's paths
#      would be: headers, pkg-config, the CMake package and the library under <root>/usr);
#   4. consumers are built against the unpacked packages and run: tests/consumer/project through
#      find_package and through pkg-config, the installed examples with their own
#      CMakeLists.txt, a ThreadSanitizer program linked against the packaged (regular) library,
#      and `man 3 rcu_read_lock` from the packaged man pages.
# Usage: scripts/deb-check.sh [--keep]   (--keep: leave the work directory for inspection)
# Needs: debhelper, dpkg-dev, fakeroot, cmake, ninja, python3, man-db (scripts/setup-debian.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
keep=0
[ "${1:-}" = --keep ] && keep=1
work=$(mktemp -d /tmp/grace-deb.XXXXXX)
cleanup() { if [ $keep = 0 ]; then rm -rf "$work"; else echo "deb-check: kept $work"; fi; }
trap cleanup EXIT
step() { echo "=== deb-check: $*"; }
fail() {
	echo "deb-check: FAIL: $*"
	exit 1
}

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
step "copy the working tree (version $version)"
tree=$work/grace-$version
mkdir -p "$tree"
# Tracked and new files, not build outputs (what git would ship).
git ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$tree")

step "dpkg-buildpackage -us -uc -b"
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -40 "$work/build.log"
	fail "dpkg-buildpackage failed (log: $work/build.log; rerun with --keep)"
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib_deb=$work/libgrace2_${version}_$arch.deb
dev_deb=$work/libgrace-dev_${version}_$arch.deb
ulib_deb=$work/libgrace-urcu1_${version}_$arch.deb
udev_deb=$work/libgrace-urcu-dev_${version}_$arch.deb
for d in "$lib_deb" "$dev_deb" "$ulib_deb" "$udev_deb"; do
	[ -f "$d" ] || fail "package $(basename "$d") not found: $(ls "$work")"
done
grep -E "dpkg-gensymbols: warning" "$work/build.log" || true

step "package contents and metadata"
dpkg-deb -c "$lib_deb" >"$work/lib.list"
dpkg-deb -c "$dev_deb" >"$work/dev.list"
grep -q "usr/lib/$multiarch/libgrace.so.2 " "$work/lib.list" || grep -q "usr/lib/$multiarch/libgrace.so.2 ->" "$work/lib.list" ||
	fail "libgrace2 lacks usr/lib/$multiarch/libgrace.so.2"
if grep -qE "usr/include|\.a$|pkgconfig" "$work/lib.list"; then fail "libgrace2 ships development files"; fi
for f in usr/include/grace/rcu.h usr/include/grace/grace.hpp usr/include/grace/version.h \
	"usr/lib/$multiarch/libgrace.a" "usr/lib/$multiarch/pkgconfig/grace.pc" \
	"usr/lib/$multiarch/cmake/grace/graceConfig.cmake" usr/share/man/man3/rcu_read_lock.3 \
	usr/share/man/man3/grace.3 usr/share/doc/libgrace-dev/examples/CMakeLists.txt \
	usr/share/doc/libgrace-dev/docs/api.md; do
	grep -qE " \./$f(\.gz)?( |$)" "$work/dev.list" || fail "libgrace-dev lacks $f"
done
dpkg-deb -f "$dev_deb" Depends | grep -q "libgrace2 (= $version)" || fail "libgrace-dev does not depend on libgrace2 (= $version)"
dpkg-deb -f "$lib_deb" Depends | grep -q "libc6" || fail "libgrace2 has no shlibs dependency on libc6"
mkdir -p "$work/ctl"
dpkg-deb -e "$lib_deb" "$work/ctl"
[ -f "$work/ctl/symbols" ] || fail "libgrace2 has no symbols file"
grep -q "grace_rcu_synchronize@GRACE_0 0.3.0" "$work/ctl/symbols" || fail "symbols file without grace_rcu_synchronize@GRACE_0 0.3.0"
[ -f "$work/ctl/shlibs" ] || [ -f "$work/ctl/symbols" ] || fail "no shlibs information"
dpkg-deb -c "$ulib_deb" >"$work/ulib.list"
dpkg-deb -c "$udev_deb" >"$work/udev.list"
grep -qE "usr/lib/$multiarch/libgrace-urcu.so.1( |$)" "$work/ulib.list" ||
	fail "libgrace-urcu1 lacks usr/lib/$multiarch/libgrace-urcu.so.1"
for f in usr/include/grace-urcu/urcu.h usr/include/grace-urcu/urcu/rculfhash.h \
	"usr/lib/$multiarch/grace-urcu/pkgconfig/liburcu.pc" \
	"usr/lib/$multiarch/cmake/grace-urcu/grace-urcuConfig.cmake"; do
	grep -qE " \./$f( |$)" "$work/udev.list" || fail "libgrace-urcu-dev lacks $f"
done
dpkg-deb -f "$ulib_deb" Depends | grep -q "libgrace2 (= $version)" || fail "libgrace-urcu1 does not depend on libgrace2 (= $version)"

step "unpack both packages into a scratch root (dpkg -x)"
root=$work/root
dpkg -x "$lib_deb" "$root"
dpkg -x "$dev_deb" "$root"
dpkg -x "$ulib_deb" "$root"
dpkg -x "$udev_deb" "$root"
libdir=$root/usr/lib/$multiarch
objdump -p "$libdir/libgrace.so.2" | grep -q "SONAME *libgrace.so.2" || fail "SONAME is not libgrace.so.2"
export LD_LIBRARY_PATH=$libdir
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig

step "consumer project: find_package and pkg-config"
for mode in find_package pkg-config; do
	b=$work/consumer-$mode
	log=$work/consumer-$mode.log
	cmake -S tests/consumer/project -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DGRACE_CONSUMER_MODE=$mode -DCMAKE_PREFIX_PATH="$root/usr" \
		-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
		-DGRACE_EXPECT_PREFIX="$root/usr" >"$log" 2>&1 || { cat "$log"; fail "consumer ($mode): configure"; }
	cmake --build "$b" >>"$log" 2>&1 || { cat "$log"; fail "consumer ($mode): build"; }
	# The programs check the versions and that libgrace.so.2 came from the packages.
	for p in $(tr ';' ' ' <"$b/programs.txt"); do
		"$b/$p" >>"$log" 2>&1 || { cat "$log"; fail "consumer ($mode): $p"; }
	done
	echo "consumer ($mode): ok ($(tr ';' ' ' <"$b/programs.txt"))"
done

step "a program written for liburcu, built against the grace-urcu packages (pkg-config liburcu)"
cat >"$work/urcu_prog.c" <<'EOS'
#include <urcu.h>
#include <urcu/rculist.h>
static CDS_LIST_HEAD(list);
int main(void)
{
	rcu_register_thread();
	rcu_read_lock();
	struct cds_list_head *p = rcu_dereference(list.next);
	rcu_read_unlock();
	synchronize_rcu();
	rcu_unregister_thread();
	return p == &list ? 0 : 1;
}
EOS
PKG_CONFIG_LIBDIR=$libdir/grace-urcu/pkgconfig:$libdir/pkgconfig cc -O2 \
	$(PKG_CONFIG_LIBDIR=$libdir/grace-urcu/pkgconfig:$libdir/pkgconfig pkg-config --cflags liburcu) \
	"$work/urcu_prog.c" -o "$work/urcu_prog" \
	$(PKG_CONFIG_LIBDIR=$libdir/grace-urcu/pkgconfig:$libdir/pkgconfig pkg-config --libs liburcu) \
	-pthread || fail "liburcu program against grace-urcu: build"
"$work/urcu_prog" || fail "liburcu program against grace-urcu: run"
ldd "$work/urcu_prog" | grep -q "$libdir/libgrace.so.2" || fail "liburcu program not linked to the packaged libgrace.so.2"
echo "grace-urcu: ok"

step "the installed examples, built with their own CMakeLists.txt"
ex=$root/usr/share/doc/libgrace-dev/examples
cmake -S "$ex" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$root/usr" >"$work/examples.log" 2>&1 &&
	cmake --build "$work/examples" >>"$work/examples.log" 2>&1 &&
	ctest --test-dir "$work/examples" --output-on-failure >>"$work/examples.log" 2>&1 ||
	{ tail -30 "$work/examples.log"; fail "installed examples"; }
echo "examples: $(grep -oE '[0-9]+ tests passed|tests passed, [0-9]+ tests failed out of [0-9]+' "$work/examples.log" | tail -1)"

step "ThreadSanitizer program against the packaged (regular) library"
cc -O1 -g -fsanitize=thread $(pkg-config --cflags grace) tests/sanitize/race_prog.c \
	-o "$work/race_tsan" $(pkg-config --libs grace) -pthread
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$work/race_tsan" all 50 >"$work/tsan.log" 2>&1 ||
	{ cat "$work/tsan.log"; fail "TSan reported a race for correct use"; }
echo "tsan: no race for correct use"

step "documentation links in the package"
python3 tests/consumer/scripts/check_doc_links.py "$root/usr/share/doc/libgrace-dev" ||
	fail "a relative link of the packaged documentation dangles"

step "man pages"
MANPATH=$root/usr/share/man man -w 3 rcu_read_lock | grep -q "$root/usr/share/man/man3/rcu_read_lock.3" ||
	fail "man -w 3 rcu_read_lock"
MANPATH=$root/usr/share/man MANWIDTH=80 man 3 grace_rcu_call 2>/dev/null | grep -q "Queue func(head)" ||
	fail "man 3 grace_rcu_call (a .so link) does not show call_rcu's page"
echo "man: ok"

echo "deb-check: ok ($(basename "$lib_deb"), $(basename "$dev_deb"), $(basename "$ulib_deb"), $(basename "$udev_deb"))"
