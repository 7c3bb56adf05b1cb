#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install everything grace's build, tests and benchmark report need on Debian (bookworm).
# Idempotent: skips apt entirely when every package is already there.
#   scripts/setup-debian.sh [aarch64]   aarch64: also the cross compilers and qemu-user that
#                                       scripts/test.sh aarch64 uses
set -euo pipefail
# abigail-tools: the ABI check of the test command; man-db: man pages (tests read them back);
# debhelper, dpkg-dev, fakeroot: the Debian package check of the long runs (scripts/deb-check.sh).
# gdb: a test still running 10 s before its timeout prints every thread's backtrace with it.
# libjemalloc2, libmimalloc2.0: the allocators of bench/smr's allocator comparison (LD_PRELOAD;
# without them the report measures glibc's malloc alone and says so).
pkgs=(build-essential cmake ninja-build pkg-config liburcu-dev valgrind spin python3 python3-matplotlib
      clang-format clang-tidy cppcheck abigail-tools man-db debhelper dpkg-dev fakeroot gdb
      libjemalloc2 libmimalloc2.0)
for extra in "$@"; do
  case "$extra" in
    aarch64) pkgs+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static) ;;
    *) echo "setup-debian.sh: unknown extra '$extra'" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
