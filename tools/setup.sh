#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One entry point for a fresh Debian 12 machine, as root:
#   tools/setup.sh run    install what building and running need, build
#                         build/ (nothing else), run the built-in default job;
#                         any architecture Debian builds (amd64, arm64, ppc64el)
#   tools/setup.sh check  the quick tier, for development (< 10 min on 2 cores):
#                         one build (build-asan/: ASan/UBSan, warnings as
#                         errors) and every test registered there: unit,
#                         schema, lint, verdicts, the real-CPU tests, the fuzz
#                         input replays, the systemd units, this harness
#   tools/setup.sh test   the full tier (.ci/run; 40-49 min on a fresh, quiet
#                         2-core machine whose cpu1 hotplugs at ~50 writes/s,
#                         2026-12-07: 2714 s and 2931 s, packages 110/176 s,
#                         builds and fetch to 631/843 s, build-asan's tests
#                         401/418 s, build-o2's 1597/1583 s):
#                         the fetch step (beside the builds), then check's
#                         build and tests, build-o2/ (-O2: guests, 10 M-op soak),
#                         build-fuzz/ (clang + libFuzzer, 30 s per target) and
#                         build-tsan/ (ThreadSanitizer: the threaded unit tests)
#   tools/setup.sh fetch  the fetch step alone: every tests/*/fetch, retried
#   tools/setup.sh packages run|check|test   the packages a tier installs
#   tools/setup.sh cmake-args DIR            the options DIR is configured with
#
# check and test end with the summary of tests/ctest_summary.py: tests run,
# passed, failed, skipped with reasons, and the line "N passed, N failed,
# N skipped". A skip not listed in tests/expected-skips (or whose condition
# does not hold here) fails the run, as does a test that did not run.
# Fault injection on this machine's own cpu1 stays off (it once left a
# host's cpu1 unable to come back); vm_real_tests proves it in a guest on
# every run. CPUHP_REAL_FAULTS=ON tools/setup.sh check|test asks for it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
usage() { echo "usage: tools/setup.sh run|check|test|fetch | packages run|check|test | cmake-args DIR" >&2; exit 2; }

# --- packages, per tier -----------------------------------------------------------
# run: the compiler, CMake and the daemon's libraries (CMakeLists.txt's
# find_package/pkg_check_modules; libtracefs/libtraceevent read the cpuhp
# tracepoints; libbpf loads the bpf source's programs, which clang compiles
# and bpftool embeds at build time), all in Debian for every architecture.
pkgs_run=(build-essential cmake pkg-config libspdlog-dev nlohmann-json3-dev libcli11-dev
          libsystemd-dev libtracefs-dev libtraceevent-dev libbpf-dev clang bpftool)
# check: the unit tests, the schema validator, clang-format, the verdicts
# test's Chromium (HTML) and YAML (LAVA), systemd-analyze (units), stress-ng
# and bc (real-CPU health and bench checks), strace (the order of the
# daemon's first system calls: tests/hostile/pipes_and_signals_test.py).
pkgs_check=("${pkgs_run[@]}" libgtest-dev python3 python3-jsonschema python3-yaml
            clang-format chromium systemd stress-ng bc strace)
# test: the benches, clang + libFuzzer, the guests (QEMU, busybox, cpio,
# debootstrap, Debian's amd64 kernel for systemd_vm; flex/bison/libelf to
# prepare tests/kmatrix's kernel source trees; cross compilers for arm64/ppc64el
# and armhf (tests/kmatrix's 32-bit ARM cells; g++ and qemu-user: the unit
# tests built for armhf and run under qemu-arm, tests/vm/cross_unit_tests.sh);
# tests/kmatrix: gcc-12, riscv64 cross gcc and libc headers (the BPF object's
# <asm/ptrace.h>), libssl-dev, xz-utils; dwarves:
# pahole, which the module's build needs against headers with BTF, as
# Debian's 6.12; debhelper, dh-dkms, dkms, lintian and ninja-build: tests/pkg builds and
# checks the Debian packages; the python3 modules lava-dispatcher imports:
# tests/lava runs LAVA's lava-run, unpacked from Debian's packages, since
# installing lava-dispatcher pulls ~130 packages, libguestfs and libvirt among
# them, that these jobs never use); the arm64 and ppc64el -dev packages of
# debian/control's Build-Depends (multiarch, beside the host's): tests/pkg
# cross-builds the packages for those boards with dpkg-buildpackage -a).
pkgs_test=("${pkgs_check[@]}" libbenchmark-dev clang libclang-rt-14-dev
           qemu-system-x86 busybox-static cpio debootstrap linux-image-amd64
           flex bison libelf-dev
           gcc-12 gcc-riscv64-linux-gnu libc6-dev-riscv64-cross libssl-dev xz-utils dwarves
           gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
           gcc-powerpc64le-linux-gnu g++-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
           qemu-system-ppc gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf qemu-user
           debhelper dh-dkms dkms lintian ninja-build
           python3-jinja2 python3-pexpect python3-requests python3-configobj python3-magic
           python3-netifaces python3-pyudev python3-setproctitle python3-tz python3-voluptuous
           python3-aiohttp
           pkg-config:arm64 libspdlog-dev:arm64 libsystemd-dev:arm64 libtraceevent-dev:arm64
           libtracefs-dev:arm64 libbpf-dev:arm64
           pkg-config:ppc64el libspdlog-dev:ppc64el libsystemd-dev:ppc64el libtraceevent-dev:ppc64el
           libtracefs-dev:ppc64el libbpf-dev:ppc64el)
packages() {  # packages TIER: one per line
  case "$1" in
  run) printf '%s\n' "${pkgs_run[@]}" ;;
  check) printf '%s\n' "${pkgs_check[@]}" ;;
  test) printf '%s\n' "${pkgs_test[@]}" ;;
  *) usage ;;
  esac
}

# --- build directories: every option explicit ----------------------------------------
# A tree configured by someone else (or by an older setup.sh) must not decide
# what runs: each configure names every CPUHP_* option and cache variable
# (tests/setup_test.py checks that against the CMakeLists.txt files).
launcher=""
if [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null; then launcher=ccache; fi
cmake_args() {  # cmake_args DIR
  local common=(-DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"
                -DCPUHP_PYTHON=/usr/bin/python3 -DCPUHP_FUZZ_SECONDS=30
                -DCPUHP_VM_ROBUST_AMD64=OFF -DCPUHP_VM_ROBUST_CYCLES=100 -DCPUHP_UNITY=ON
                -DCPUHP_BPF=ON)
  # -g1 (line tables: enough for sanitizer and crash stacks) compiles ~10 %
  # faster than -g; test trees are thrown away after the run.
  case "$1" in
  build) printf '%s\n' "${common[@]}" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" \
    -DCPUHP_WERROR=OFF -DCPUHP_SANITIZE=OFF -DCPUHP_FUZZ=OFF -DCPUHP_TESTS=OFF \
    -DCPUHP_UNIT_TESTS=OFF -DCPUHP_REAL_TESTS=OFF -DCPUHP_REAL_FAULTS=OFF -DCPUHP_BENCH=OFF -DCPUHP_TSAN=OFF ;;
  build-asan) printf '%s\n' "${common[@]}" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DCPUHP_WERROR=ON -DCPUHP_SANITIZE=ON -DCPUHP_FUZZ=OFF -DCPUHP_TESTS=ON \
    -DCPUHP_UNIT_TESTS=ON -DCPUHP_REAL_TESTS=ON -DCPUHP_REAL_FAULTS="${CPUHP_REAL_FAULTS:-OFF}" \
    -DCPUHP_BENCH=OFF -DCPUHP_TSAN=OFF ;;
  build-o2) printf '%s\n' "${common[@]}" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCPUHP_WERROR=ON -DCPUHP_SANITIZE=OFF -DCPUHP_FUZZ=OFF -DCPUHP_TESTS=ON \
    -DCPUHP_UNIT_TESTS=OFF -DCPUHP_REAL_TESTS=OFF -DCPUHP_REAL_FAULTS=OFF -DCPUHP_BENCH=ON -DCPUHP_TSAN=OFF ;;
  build-fuzz) printf '%s\n' "${common[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCPUHP_WERROR=ON -DCPUHP_SANITIZE=OFF -DCPUHP_FUZZ=ON -DCPUHP_TESTS=OFF \
    -DCPUHP_UNIT_TESTS=OFF -DCPUHP_REAL_TESTS=OFF -DCPUHP_REAL_FAULTS=OFF -DCPUHP_BENCH=OFF -DCPUHP_TSAN=OFF ;;
  # ThreadSanitizer: the threaded unit tests only (tests/CMakeLists.txt,
  # label tsan); -O1 keeps TSan's slowdown small at little compile cost.
  build-tsan) printf '%s\n' "${common[@]}" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCPUHP_WERROR=ON -DCPUHP_SANITIZE=OFF -DCPUHP_FUZZ=OFF -DCPUHP_TESTS=ON \
    -DCPUHP_UNIT_TESTS=OFF -DCPUHP_REAL_TESTS=OFF -DCPUHP_REAL_FAULTS=OFF -DCPUHP_BENCH=OFF \
    -DCPUHP_TSAN=ON ;;
  *) echo "tools/setup.sh: no build directory $1 (build build-asan build-o2 build-fuzz build-tsan)" >&2; exit 2 ;;
  esac
}
# What each test tree runs (ctest -L/-LE regexes on labels): the real-CPU
# tests once, in build-asan (build-o2 registers none: CPUHP_REAL_TESTS=OFF;
# its binary hotplugs real CPUs in vm_real_tests' guest); build-o2 runs only
# what the sanitizer tree cannot (guests, the 10 M-op soak, the module's
# kernel matrix, tools/abtest.sh end to end, the Debian packages, LAVA's jobs). Tests that need the fetch
# step's downloads are registered only outside the sanitizer tree (if(NOT
# CPUHP_SANITIZE)): check runs everything build-asan has, and fetches
# nothing.
ctest_select() {
  case "$1" in
  build-asan) echo "" ;;
  build-o2) echo "-L ^(vm|scale|kmatrix|ab|pkg|lava)$" ;;
  build-fuzz) echo "" ;;
  build-tsan) echo "-L ^tsan$" ;;
  esac
}

case "$mode" in
run|check|test|fetch) ;;
packages) packages "${2:-}"; exit 0 ;;
cmake-args) cmake_args "${2:-}"; exit 0 ;;
*) usage ;;
esac
[ "$(id -u)" = 0 ] || { echo "tools/setup.sh: run as root (apt-get, CPU hotplug)" >&2; exit 2; }
# shellcheck source=tools/fetchlib.sh
. tools/fetchlib.sh
jobs=$(nproc)
t0=$(date +%s)
phase() { echo "== $* ($(($(date +%s) - t0)) s)"; }

# apt-get update, up to 3 attempts: a mirror caught in its sync ("File has
# unexpected size ... Mirror sync in progress?") fails one update and serves
# the next; still failing, the run fails in one line.
apt_update() {
  local try
  for try in 1 2 3; do
    apt-get -o DPkg::Lock::Timeout=600 update -qq && return 0
    [ $try = 3 ] && break
    echo "tools/setup.sh: apt-get update failed (attempt $try of 3), again in $((try * ${CPUHP_FETCH_RETRY_S:-20})) s" >&2
    sleep $((try * ${CPUHP_FETCH_RETRY_S:-20}))
  done
  echo "tools/setup.sh: FAILED: apt-get update (Debian's package index) after 3 attempts" >&2
  return 1
}

install_packages() {  # install_packages TIER
  local missing=() p
  for p in $(packages "$1"); do
    [ "$p" = linux-image-amd64 ] && [ "$(dpkg --print-architecture)" != amd64 ] && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "$1" = test ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
    # The arm64/ppc64el guests: their Debian kernels, busybox and the cross
    # daemon's libraries come from those architectures' package indexes
    # (apt-get download into the cache, never installed), as do armhf's
    # kernel headers (tests/kmatrix). Only the full tier.
    local a added=""
    for a in arm64 ppc64el armhf; do
      # (not a pipe into grep -q: with pipefail, dpkg's SIGPIPE read as "absent")
      grep -qx "$a" <<< "$(dpkg --print-foreign-architectures)" && continue
      dpkg --add-architecture "$a" && added=1
    done
    [ -z "$added" ] || apt_update
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  phase "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_update
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
}

build() {  # build DIR
  local dir=$1 args
  mkdir -p "$dir"
  mapfile -t args < <(cmake_args "$dir")
  phase "configure and build $dir"
  cmake -S . -B "$dir" "${args[@]}" >"$dir.cmake.log" 2>&1 || { cat "$dir.cmake.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
}

# fetch: every tests/*/fetch (and tests/*/*/fetch) with the shared cache,
# up to 3 attempts each (the index refreshed between them); a fetch that
# still fails fails the run: the tests would otherwise skip or fail later
# for want of a download.
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
fetch_all() {
  local f try rc
  mkdir -p "$cache"
  for f in tests/*/fetch tests/*/*/fetch; do
    [ -x "$f" ] || continue
    for try in 1 2 3; do
      phase "fetch: $f (attempt $try)"
      rc=0
      CPUHP_VM_CACHE=$cache "$f" "$cache" || rc=$?
      [ $rc = 0 ] && break
      echo "tools/setup.sh: $f failed (exit $rc)" >&2
      [ $try = 3 ] && { echo "tools/setup.sh: FAILED: fetch $f after 3 attempts" >&2; return 1; }
      sleep $((try * ${CPUHP_FETCH_RETRY_S:-20}))
      CPUHP_APT_MAX_AGE_H=0 apt_index_fresh || true
    done
  done
}

if [ "$mode" = run ]; then
  install_packages run
  build build
  # The run refuses to overwrite its default report; a second `setup.sh
  # run` keeps the previous one beside it instead of failing.
  if [ -e cpuhp-stress-report.json ]; then
    mv -f cpuhp-stress-report.json cpuhp-stress-report.previous.json
    echo "tools/setup.sh: the previous report is now cpuhp-stress-report.previous.json"
  fi
  exec build/cpuhp-stress run
fi
if [ "$mode" = fetch ]; then
  install_packages test
  fetch_all
  exit 0
fi

install_packages "$mode"
# The fetch step runs beside the four builds: downloads wait on the network,
# builds on the CPU (a fresh machine's fetch took ~430 s, the builds ~870 s).
# Its output goes to build-fetch.log and is shown once it ends, before any
# test runs; a fetch that failed fails the run there.
fetch_pid=""
if [ "$mode" = test ]; then
  rm -f build-fetch.log
  fetch_all >build-fetch.log 2>&1 &
  fetch_pid=$!
fi
fetch_wait() {
  [ -n "$fetch_pid" ] || return 0
  local rc=0
  wait "$fetch_pid" || rc=$?
  fetch_pid=""
  cat build-fetch.log
  phase "fetch done (exit $rc)"
  [ $rc = 0 ] && return 0
  grep -h "FAILED: fetch" build-fetch.log >&2 ||
    echo "tools/setup.sh: FAILED: the fetch step (exit $rc, build-fetch.log above)" >&2
  exit 1
}
trap '[ -z "$fetch_pid" ] || kill "$fetch_pid" 2>/dev/null || true' EXIT

# The tests must leave every CPU as they found it; a CPU that was already
# offline (say, one the kernel can no longer bring up) is reported, and the
# real-CPU tests skip with the reason (tests/integration/real_cpu_gate.py;
# tests/expected-skips: cpu1-unusable).
online_at_start=$(cat /sys/devices/system/cpu/online)
present=$(cat /sys/devices/system/cpu/present)
if [ "$online_at_start" != "$present" ]; then
  echo "tools/setup.sh: WARNING: CPUs offline before the tests: online $online_at_start, present $present" >&2
fi
dirs=(build-asan)
[ "$mode" = test ] && dirs+=(build-o2 build-fuzz build-tsan)
for dir in "${dirs[@]}"; do build "$dir"; done
fetch_wait
junits=()
for dir in "${dirs[@]}"; do
  phase "ctest in $dir"
  rm -f "$dir/ctest-junit.xml"
  # shellcheck disable=SC2046  # the label selection is two words or none
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "$dir" --no-tests=error --output-on-failure -j "$jobs" \
      --output-junit ctest-junit.xml --test-output-size-passed 4194304 \
      --test-output-size-failed 4194304 $(ctest_select "$dir") || true
  junits+=("$dir=$dir/ctest-junit.xml")
  [ -f "$dir/ctest-junit.xml" ] || echo "tools/setup.sh: ctest in $dir wrote no results" >&2
done
status=0
online=$(cat /sys/devices/system/cpu/online)
cpus() {  # expands a kernel CPU list (0-3,5) into one number per line
  tr ',' '\n' <<< "$1" | while IFS=- read -r a b; do [ -n "$a" ] && seq "$a" "${b:-$a}"; done
}
left=$(comm -23 <(cpus "$online_at_start" | sort) <(cpus "$online" | sort) | tr '\n' ' ')
if [ -n "$left" ]; then
  echo "tools/setup.sh: CPUs left offline by the tests: $left(online $online_at_start before, $online after)" >&2
  status=1
fi
echo "tools/setup.sh $mode: $(($(date +%s) - t0)) s"
python3 tests/ctest_summary.py tests/expected-skips "${junits[@]}" || status=1
exit $status
