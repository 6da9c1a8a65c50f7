#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The unit tests built for a 32-bit target and run there under QEMU's user
# mode (issue 36): armhf, the ABI of 32-bit ARM boards (32-bit long, size_t
# and, on bookworm, time_t; 8-byte-aligned 64-bit integers). The daemon and
# its tests with Debian's cross g++ and the target's own libraries
# (cross_daemon.sh's sysroot, GoogleTest included), -Werror; then every test
# under qemu-arm. What it found: the RNG's 128-bit product (no __int128 on
# 32-bit), readdir without 64-bit offsets (EOVERFLOW), the trace reader
# taking the daemon's long for the kernel's, UTC stamps through a 32-bit
# time_t.
#
#   tests/vm/cross_unit_tests.sh SRC_DIR WORK_DIR [ARCH]
#
# Exit 0 all passed, 77 cannot run here (no cross g++ or qemu-arm: the full
# tier installs both), anything else: a failure.
set -euo pipefail
src=$(realpath "$1") work=$2 arch=${3:-armhf}
log() { echo "cross_unit_tests[$arch]: $*" >&2; }
case "$arch" in
armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm ;;
*) log "SKIP: no recipe for $arch (armhf only)"; exit 77 ;;
esac
for tool in "$triplet-g++" "$qemu"; do
  command -v "$tool" >/dev/null || { log "SKIP: $tool not installed (tools/setup.sh packages test)"; exit 77; }
done
mkdir -p "$work"
start=$(date +%s)
# The guests' cross daemon tree, with the unit tests (cross_daemon.sh).
sysroot=$(CPUHP_CROSS_UNIT=1 bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$work" "$work/root")
[ -d "$sysroot" ] || { log "no sysroot from cross_daemon.sh"; exit 1; }
libs="$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet"
bld=$work/daemon-build
log "built in $(($(date +%s) - start)) s: $(file -b "$bld/cpuhp-stress" | cut -d, -f1-2)"
# Not run here, each for its reason; any other skip fails the test.
#  WriteFileAtomicTest.ReadOnlyDirectory: root writes a read-only directory
#    (as in every tree run as root: tests/expected-skips).
#  FormatUtcTest.SameAsGmtimeWithA64BitTimeT: gmtime() is the reference
#    only with a 64-bit time_t; the fixed dates after 2038 run here.
excluded=WriteFileAtomicTest.ReadOnlyDirectory:FormatUtcTest.SameAsGmtimeWithA64BitTimeT
[ "$(id -u)" = 0 ] || excluded=FormatUtcTest.SameAsGmtimeWithA64BitTimeT
out=$work/unit-tests.log
start=$(date +%s)
rc=0
(cd "$bld" && "$qemu" -L "/usr/$triplet" -E "LD_LIBRARY_PATH=$libs" tests/cpuhp_unit_tests \
  --gtest_brief=1 --gtest_filter="-$excluded") >"$out" 2>&1 || rc=$?
tail -4 "$out"
if [ $rc != 0 ]; then
  grep -E '^\[  FAILED  \]' "$out" | sort -u >&2 || true
  log "FAILED: the unit tests under $qemu (exit $rc; $out)"
  exit 1
fi
if grep -q '^\[  SKIPPED \]' "$out"; then
  grep -B3 '^\[  SKIPPED \]' "$out" >&2
  log "FAILED: a unit test skipped under $qemu that is not listed here"
  exit 1
fi
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$out")
[ -n "$passed" ] && [ "$passed" -gt 400 ] || { log "FAILED: $passed tests passed, expected more than 400"; exit 1; }
log "$passed unit tests passed under $qemu in $(($(date +%s) - start)) s"
