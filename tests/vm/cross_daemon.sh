#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Cross-builds the cpuhp-stress daemon for an arm64 or ppc64el guest and
# stages it, its shared libraries and the dynamic loader into an initramfs
# tree (run_vm_test.sh calls this).
#
#   tests/vm/cross_daemon.sh ARCH SRC_DIR WORK_DIR INITRAMFS_DIR
#
# Compiler, libc, libstdc++, libgcc_s: Debian's cross toolchain
# (g++-<triplet>, /usr/<triplet>/lib). spdlog, fmt, libsystemd and its
# runtime dependencies, nlohmann-json and CLI11: the target's own Debian
# packages (multiarch, dpkg --add-architecture ARCH), fetched with
# apt-get download and unpacked with dpkg-deb -x into a sysroot. Debian
# ships no static spdlog/fmt/libsystemd, so the daemon is the same dynamic
# build as on amd64, with the same features.
#
# The sysroot is cached per machine in CPUHP_VM_CACHE (default
# /var/cache/cpuhp-stress), keyed by the package versions, like
# vm_test.sh's rootfs. The build tree (WORK_DIR/daemon-build) is kept, so
# a second run rebuilds only what changed; only the cpuhp-stress target
# is built (no tests, no benches, no debug info).
# Exit 0 staged, 77 cannot run here (no cross g++, no multiarch index),
# anything else: the build or the download failed. CPUHP_VM_FETCH_ONLY=1:
# only fetch the sysroot (tests/vm/fetch); =print: and print its path.
# CPUHP_CROSS_UNIT=1 (cross_unit_tests.sh): the unit tests too, in the same
# tree (gtest_discover_tests runs them under QEMU's user mode); nothing is
# staged, the sysroot's path is printed.
set -euo pipefail
arch=$1 src=$2 work=$3 root=$4
log() { echo "cross_daemon[$arch]: $*" >&2; }
# shellcheck source=tools/fetchlib.sh
. "$src/tools/fetchlib.sh"  # apt_fast
# armhf (32-bit ARM, issue 36): its sysroot also holds GoogleTest, for the
# unit tests run under qemu-arm (tests/vm/cross_unit_tests.sh).
extra=()
case "$arch" in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 ;;
ppc64el) triplet=powerpc64le-linux-gnu qemu=qemu-ppc64le ;;
armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm extra=("libgtest-dev:$arch") ;;
*) log "SKIP: no cross-build recipe for $arch (arm64, ppc64el and armhf only)"; exit 77 ;;
esac
command -v "$triplet-g++" >/dev/null || { log "SKIP: $triplet-g++ not installed"; exit 77; }
readelf=$triplet-readelf
toolchain_lib=/usr/$triplet/lib

# --- sysroot ------------------------------------------------------------------
# Everything libspdlog-dev, libsystemd-dev, libtracefs-dev and
# libtraceevent-dev pull in for ARCH (and libbpf's, below), except what
# the cross toolchain provides (libc6, libgcc-s1, libstdc++6, gcc-12-base)
# and libspdlog-dev's test-only catch2; plus the two arch-independent
# header-only libraries.
mapfile -t pkgs < <(apt_fast apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances "libspdlog-dev:$arch" "libsystemd-dev:$arch" \
  "libtracefs-dev:$arch" "libtraceevent-dev:$arch" nlohmann-json3-dev libcli11-dev "${extra[@]}" 2>/dev/null |
  grep -v '^ ' | sort -u |
  grep -E "^[a-z0-9.+-]+(:$arch)?\$" |
  grep -vE '^(libc6|libgcc-s1|libstdc\+\+6|gcc-[0-9]+-base|catch2)(:|$)')
# libbpf (the bpf timing source) and what it links, listed rather than
# recursed: libbpf-dev's own dependencies pull libc6-dev and the host's
# libc-dev-bin, which the cross toolchain already provides.
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" "libbpf-dev:$arch" "libbpf1:$arch" "libelf-dev:$arch" \
  "libelf1:$arch" "zlib1g-dev:$arch" "zlib1g:$arch" | sort -u)
# One apt-cache call: on a loaded machine each call costs seconds.
mapfile -t versions < <(apt_fast apt-cache policy "${pkgs[@]}" 2>/dev/null |
  awk '/^[^ ].*:$/ {p = substr($0, 1, length($0) - 1)} /^ *Candidate:/ {print p "=" $2}')
[ ${#versions[@]} = ${#pkgs[@]} ] && ! grep -q '=(none)$' <<< "$(printf '%s\n' "${versions[@]}")" ||
  { log "SKIP: no candidate for some of ${pkgs[*]} (apt-get update?)"; exit 77; }
grep -q "^libspdlog-dev:$arch=" <<< "$(printf '%s\n' "${versions[@]}")" ||
  { log "SKIP: libspdlog-dev:$arch not in the package index (dpkg --add-architecture $arch && apt-get update)"; exit 77; }
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
key=$(printf '%s\n' sysroot-layout-1 "${versions[@]}" | sha256sum | cut -c1-16)
sysroot=$cache/sysroot-$arch-$key
if [ ! -f "$sysroot/.done" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.sysroot-$arch.XXXXXX")
  log "fetching ${#versions[@]} packages into $sysroot"
  mkdir -p "$tmp/debs"
  (cd "$tmp/debs" && apt_fast apt-get download -q "${versions[@]}") >"$tmp/download.log" 2>&1 ||
    { cat "$tmp/download.log" >&2; rm -rf "$tmp"; log "apt-get download failed"; exit 1; }
  for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$tmp/root"; done
  printf '%s\n' "${versions[@]}" >"$tmp/root/.packages"
  touch "$tmp/root/.done"
  rm -rf "$sysroot"
  mv "$tmp/root" "$sysroot" 2>/dev/null || [ -f "$sysroot/.done" ]  # another run won the race
  rm -rf "$tmp"
fi
if [ -n "${CPUHP_VM_FETCH_ONLY:-}" ]; then
  [ "$CPUHP_VM_FETCH_ONLY" != print ] || echo "$sysroot"
  exit 0
fi

# --- the daemon ---------------------------------------------------------------
# CPUHP_CROSS_DEB=DIR (ctest's plain tree): the daemon is the one packaged
# for ARCH in DIR (cpuhp-stress_*_ARCH.deb, cross-built by deb_packages_ARCH
# with dpkg-buildpackage -a ARCH, tests/pkg/deb_test.sh): the guests run what
# a board installs, and nothing is compiled here (one cross build of the
# daemon per architecture instead of two, issue 27).
if [ -n "${CPUHP_CROSS_DEB:-}" ] && [ -z "${CPUHP_CROSS_UNIT:-}" ]; then
  deb=$(find "$CPUHP_CROSS_DEB" -maxdepth 1 -name "cpuhp-stress_*_$arch.deb" 2>/dev/null | sort | tail -1)
  [ -n "$deb" ] || { log "no cpuhp-stress_*_$arch.deb in $CPUHP_CROSS_DEB (ctest's deb_packages_$arch builds it)"; exit 1; }
  mkdir -p "$work"
  unpacked=$(mktemp -d "$work/deb.XXXXXX")
  trap 'rm -rf "$unpacked"' EXIT
  dpkg-deb -x "$deb" "$unpacked" || { log "dpkg-deb -x $deb failed"; exit 1; }
  bin=$unpacked/usr/bin/cpuhp-stress
  [ -x "$bin" ] || { log "$deb holds no /usr/bin/cpuhp-stress"; exit 1; }
  log "the daemon of $(basename "$deb")"
else
  bld=$work/daemon-build
  # The guests of one arch share WORK_DIR and run side by side under ctest -j2:
  # one build (and staging of its binary) at a time. WORK_DIR may not exist
  # yet (ctest's cross_build_armhf on a fresh tree).
  mkdir -p "$work"
  exec 9>"$work/.daemon-build.lock"
  flock 9
  start=$(date +%s)
  # ccache as tools/setup.sh uses it (when CCACHE_DIR is set): a CI machine
  # with a warm cache rebuilds the cross daemon of a fresh clone in seconds.
  launcher=""
  if [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null; then launcher=ccache; fi
  tests=OFF emu="" targets=(cpuhp-stress)
  # armhf's one tree serves its guests and unit_tests_armhf (tests/CMakeLists.txt:
  # both use BUILD/vm-cross-armhf): the first builds both targets, the other
  # finds them built.
  if [ -n "${CPUHP_CROSS_UNIT:-}" ] || [ "$arch" = armhf ]; then
    tests=ON targets+=(cpuhp_unit_tests)
    emu="$qemu;-L;/usr/$triplet;-E;LD_LIBRARY_PATH=$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet"
  fi
  if [ ! -f "$bld/CMakeCache.txt" ] || ! grep -q "^CPUHP_CROSS_SYSROOT:.*=$sysroot\$" "$bld/CMakeCache.txt" ||
    ! grep -q "^CMAKE_CXX_COMPILER_LAUNCHER:.*=$launcher\$" "$bld/CMakeCache.txt" ||
    ! grep -q "^CPUHP_UNITY:BOOL=ON\$" "$bld/CMakeCache.txt" ||
    ! grep -q "^CPUHP_TESTS:BOOL=$tests\$" "$bld/CMakeCache.txt"; then
    rm -rf "$bld"
    # -O1 without -g: measured ~4.1 CPU-minutes for arm64 against ~5.0 at -O2
    # (CI has 2 cores); the daemon's own CPU time is noise next to a TCG
    # hotplug operation. A unity build (one translation unit per daemon/
    # folder, as tools/setup.sh's trees): ~2.4 CPU-minutes for arm64 (one
    # build, 2026-12-04).
    cmake -S "$src" -B "$bld" -DCMAKE_TOOLCHAIN_FILE="$src/tests/vm/cross-toolchain.cmake" \
      -DCPUHP_CROSS_TRIPLET="$triplet" -DCPUHP_CROSS_SYSROOT="$sysroot" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
      -DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
      -DCMAKE_CROSSCOMPILING_EMULATOR="$emu" -DCPUHP_WERROR=ON -DCPUHP_BENCH=OFF -DCPUHP_UNITY=ON \
      -DCPUHP_TESTS=$tests -DCPUHP_UNIT_TESTS=$tests -DCPUHP_REAL_TESTS=OFF -DCPUHP_REAL_FAULTS=OFF \
      >"$work/daemon-cmake.log" 2>&1 || { cat "$work/daemon-cmake.log" >&2; exit 1; }
  fi
  cmake --build "$bld" --target "${targets[@]}" -j "${CPUHP_VM_JOBS:-$(nproc)}" >"$work/daemon-build.log" 2>&1 ||
    { tail -50 "$work/daemon-build.log" >&2; exit 1; }
  log "${targets[*]} built in $(($(date +%s) - start)) s"
  if [ -n "${CPUHP_CROSS_UNIT:-}" ]; then
    echo "$sysroot"
    exit 0
  fi
  bin=$bld/cpuhp-stress
fi

# --- stage: binary, loader, the DT_NEEDED closure -----------------------------
install -D -m755 "$bin" "$root/bin/cpuhp-stress"
interp=$($readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] || { log "$bin has no program interpreter"; exit 1; }
install -D -m755 "$toolchain_lib/$(basename "$interp")" "$root$interp"
search=("$sysroot/lib/$triplet" "$sysroot/usr/lib/$triplet" "$toolchain_lib")
mkdir -p "$root/lib/$triplet"  # in the loader's default path
queue=("$bin")
declare -A seen=()
while [ ${#queue[@]} -gt 0 ]; do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  for need in $($readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ -n "${seen[$need]:-}" ] && continue
    seen[$need]=1
    [ "$need" = "$(basename "$interp")" ] && continue
    found=""
    for d in "${search[@]}"; do
      [ -e "$d/$need" ] && { found=$d/$need; break; }
    done
    [ -n "$found" ] || { log "$need (needed by $(basename "$f")) not found in ${search[*]}"; exit 1; }
    cp -L "$found" "$root/lib/$triplet/$need"
    queue+=("$found")
  done
done
log "staged cpuhp-stress, $interp and ${#seen[@]} libraries"
