# SPDX-License-Identifier: MIT
# Cross build for aarch64 (weakly ordered) with Debian's cross gcc; the
# tests run under qemu-user: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
set(QLOCK_CROSS_TRIPLE aarch64-linux-gnu)
set(QLOCK_CROSS_QEMU qemu-aarch64-static)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
