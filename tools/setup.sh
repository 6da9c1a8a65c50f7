#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One entry point for a fresh Debian 12 machine, as root:
#   tools/setup.sh run    install packages, build, run the built-in default job
#   tools/setup.sh test   install packages, build (warnings as errors; ASan/UBSan;
#                         clang + libFuzzer), run the whole test suite in each
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in run|test) ;; *) echo "usage: tools/setup.sh run|test" >&2; exit 2;; esac
[ "$(id -u)" = 0 ] || { echo "tools/setup.sh: run as root (apt-get, CPU hotplug)" >&2; exit 2; }

packages=(build-essential cmake pkg-config libspdlog-dev nlohmann-json3-dev libcli11-dev
          libgtest-dev libbenchmark-dev python3 python3-jsonschema clang-format stress-ng bc
          clang libclang-rt-14-dev)
packages+=(chromium python3-yaml)  # verdicts tests: HTML report in headless Chromium, LAVA YAML
packages+=(qemu-system-x86 busybox-static cpio)  # tests/vm: cpuhp_probe in a Debian-kernel guest
packages+=(libsystemd-dev systemd debootstrap qemu-system-x86 linux-image-amd64 cpio)  # soak: journald, sd_notify, systemd-analyze tests, tests/vm guest
packages+=(gcc-12 gcc-riscv64-linux-gnu libssl-dev bc xz-utils)  # tests/kmatrix: 7.2 and riscv64 trees prepared with gcc-12
packages+=(flex bison libelf-dev)  # tests/vm real-hotplug guest: its 6.12 kernel is built once per machine
packages+=(libtracefs-dev libtraceevent-dev)  # the tracepoints source: instance, raw per-CPU reader, event formats
packages+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross gcc-powerpc64le-linux-gnu g++-powerpc64le-linux-gnu libc6-dev-ppc64el-cross qemu-system-arm qemu-system-ppc)  # tests/vm arm64/ppc64el guests: cross-built module and daemon, QEMU virt/pseries
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# tests/vm arm64/ppc64el guests: their Debian kernels, busybox and the cross
# daemon's libraries come from those architectures' package indexes
# (apt-get download into a cache, never installed).
for a in arm64 ppc64el; do
  # (not a pipe into grep -q: with pipefail, dpkg's SIGPIPE read as "absent")
  grep -qx "$a" <<< "$(dpkg --print-foreign-architectures)" && continue
  dpkg --add-architecture "$a" && foreign_added=1
done
if [ -n "${foreign_added:-}" ]; then
  apt-get update -qq || echo "tools/setup.sh: apt-get update reported errors (the arm64/ppc64el vm tests skip without their indexes)" >&2
fi
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc)
build() {  # build DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -DCPUHP_WERROR=ON "$@" > "$dir.cmake.log" 2>&1 ||
    { cat "$dir.cmake.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
}

if [ "$mode" = run ]; then
  build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPUHP_TESTS=OFF -DCPUHP_BENCH=OFF
  exec build/cpuhp-stress run
fi

# The tests must leave every CPU as they found it; a CPU that was already
# offline (say, one the kernel can no longer bring up) is reported, and the
# real-CPU tests skip with the reason (tests/integration/real_cpu_gate.py).
online_at_start=$(cat /sys/devices/system/cpu/online)
present=$(cat /sys/devices/system/cpu/present)
if [ "$online_at_start" != "$present" ]; then
  echo "tools/setup.sh: WARNING: CPUs offline before the tests: online $online_at_start, present $present" >&2
fi
mkdir -p build build-asan build-fuzz
# -g1 (line tables: enough for sanitizer and crash stacks) compiles ~10 %
# faster than -g here; CI builds are thrown away after the run.
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCPUHP_UNIT_TESTS=OFF
build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCPUHP_SANITIZE=ON \
  -DCPUHP_BENCH=OFF
build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCPUHP_FUZZ=ON -DCPUHP_TESTS=OFF \
  -DCPUHP_BENCH=OFF
status=0
for dir in build build-asan build-fuzz; do
  echo "== ctest in $dir"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" || status=1
done
online=$(cat /sys/devices/system/cpu/online)
cpus() {  # expands a kernel CPU list (0-3,5) into one number per line
  tr ',' '\n' <<< "$1" | while IFS=- read -r a b; do [ -n "$a" ] && seq "$a" "${b:-$a}"; done
}
left=$(comm -23 <(cpus "$online_at_start" | sort) <(cpus "$online" | sort) | tr '\n' ' ')
if [ -n "$left" ]; then
  echo "tools/setup.sh: CPUs left offline by the tests: $left(online $online_at_start before, $online after)" >&2
  status=1
fi
exit $status
