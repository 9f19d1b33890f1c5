# SPDX-License-Identifier: MIT
# Cross build for s390x (64-bit big-endian) with Debian's cross gcc; the
# tests run under qemu-user: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x.cmake
set(QLOCK_CROSS_TRIPLE s390x-linux-gnu)
set(QLOCK_CROSS_QEMU qemu-s390x-static)
set(CMAKE_SYSTEM_PROCESSOR s390x)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
