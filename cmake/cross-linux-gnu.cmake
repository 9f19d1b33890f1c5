# SPDX-License-Identifier: MIT
# Shared part of the toolchain-<arch>.cmake files: Debian's cross gcc for
# QLOCK_CROSS_TRIPLE, its libc under /usr/<triple>, and qemu-user as the
# emulator CTest puts in front of every test binary (binfmt_misc is not
# assumed: qemu is called explicitly, with -L for the target's ld.so).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${QLOCK_CROSS_TRIPLE}-gcc)
# C++ only for the tests of qlock.hpp and the peer baselines: the cross g++
# when installed (install-deps --cross), else no C++ at all (never the
# host's, whose objects the target's linker cannot take).
find_program(QLOCK_CROSS_CXX ${QLOCK_CROSS_TRIPLE}-g++)
if(QLOCK_CROSS_CXX)
  set(CMAKE_CXX_COMPILER ${QLOCK_CROSS_CXX})
else()
  set(CMAKE_CXX_COMPILER ${QLOCK_CROSS_TRIPLE}-g++-not-installed)
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${QLOCK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(QLOCK_CROSS_QEMU_PATH ${QLOCK_CROSS_QEMU})
if(QLOCK_CROSS_QEMU_PATH)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      ${QLOCK_CROSS_QEMU_PATH} -L /usr/${QLOCK_CROSS_TRIPLE})
endif()
