# SPDX-License-Identifier: GPL-2.0
# CMake toolchain for the arm64/ppc64el/armhf guest daemon (tests/vm/cross_daemon.sh).
# Compiler, libc and libstdc++: Debian's cross g++ (/usr/<triplet>). spdlog,
# fmt, libsystemd (+ its runtime deps), nlohmann-json and CLI11: the target's
# Debian packages unpacked with dpkg-deb -x into CPUHP_CROSS_SYSROOT.
#   -DCPUHP_CROSS_TRIPLET=aarch64-linux-gnu -DCPUHP_CROSS_SYSROOT=/path
set(CMAKE_SYSTEM_NAME Linux)
if(CPUHP_CROSS_TRIPLET MATCHES "^aarch64")
  set(CMAKE_SYSTEM_PROCESSOR aarch64)
elseif(CPUHP_CROSS_TRIPLET MATCHES "^arm")
  set(CMAKE_SYSTEM_PROCESSOR arm)
else()
  set(CMAKE_SYSTEM_PROCESSOR ppc64le)
endif()
# try_compile projects re-read this file: hand them the two settings.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CPUHP_CROSS_TRIPLET CPUHP_CROSS_SYSROOT)
set(CMAKE_C_COMPILER ${CPUHP_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${CPUHP_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${CPUHP_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH ${CPUHP_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR}
  "${CPUHP_CROSS_SYSROOT}/usr/lib/${CPUHP_CROSS_TRIPLET}/pkgconfig:${CPUHP_CROSS_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${CPUHP_CROSS_SYSROOT})
# libsystemd.so names libcap, libgcrypt, liblz4...: ld resolves them here.
set(_cpuhp_rpath_link
  "-Wl,-rpath-link,${CPUHP_CROSS_SYSROOT}/lib/${CPUHP_CROSS_TRIPLET}:${CPUHP_CROSS_SYSROOT}/usr/lib/${CPUHP_CROSS_TRIPLET}")
set(CMAKE_EXE_LINKER_FLAGS_INIT ${_cpuhp_rpath_link})
set(CMAKE_SHARED_LINKER_FLAGS_INIT ${_cpuhp_rpath_link})
