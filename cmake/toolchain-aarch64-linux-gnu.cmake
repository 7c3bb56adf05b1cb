# SPDX-License-Identifier: MIT
# Cross-build grace for aarch64 Linux with Debian's cross compilers, and run its tests under
# qemu-user (docs/build.md, "Other architectures"):
#   cmake -S . -B build/aarch64 -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake -DGRACE_BENCH=OFF
#   ninja -C build/aarch64 && ctest --test-dir build/aarch64 -L aarch64
# Packages: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static
# (scripts/setup-debian.sh aarch64 installs them). The benchmarks need the peer's aarch64
# library (liburcu), which the host does not have: build with -DGRACE_BENCH=OFF.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(GRACE_CROSS_TRIPLE aarch64-linux-gnu CACHE STRING "GNU triple of the cross compilers")
set(CMAKE_C_COMPILER ${GRACE_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${GRACE_CROSS_TRIPLE}-g++)

# Debian installs the target's C library and headers under /usr/<triple>.
set(GRACE_CROSS_SYSROOT /usr/${GRACE_CROSS_TRIPLE} CACHE PATH "target libraries and headers")
set(CMAKE_FIND_ROOT_PATH ${GRACE_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs every test executable through qemu-user, which loads the target's dynamic linker
# and libraries from the sysroot (-L). Without qemu the build still works; the tests do not run.
find_program(GRACE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(GRACE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${GRACE_QEMU_AARCH64} -L ${GRACE_CROSS_SYSROOT})
endif()
