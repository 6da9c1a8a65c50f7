#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Re-captures the guest trace fixtures of tests/fixtures/trace (not run in
# CI): boots Debian's kernel for ARCH under QEMU TCG with
# tests/vm/guest_trace.sh as /init, one offline+online of cpu1 with the
# cpuhp events on (trace_clock mono; arm64 also with options/record-tgid),
# and copies the trace, hotplug/states, the operations' CLOCK_MONOTONIC
# times and /proc/version into the fixture directory.
#
#   tests/vm/capture_trace_fixture.sh ARCH BUILD_DIR     ARCH: amd64 arm64
set -euo pipefail
arch=${1:?usage: capture_trace_fixture.sh ARCH BUILD_DIR}
build=$(realpath "${2:?usage: capture_trace_fixture.sh ARCH BUILD_DIR}")
src=$(realpath "$(dirname "$0")/../..")
case "$arch" in
amd64) name=x86_64; append= ;;
arm64) name=arm64; append=cpuhp_trace_tgid=1 ;;
*) echo "capture_trace_fixture: unsupported arch $arch" >&2; exit 2 ;;
esac
CPUHP_VM_MODE=trace CPUHP_VM_TAG=trace CPUHP_VM_APPEND="$append" \
  bash "$src/tests/vm/run_vm_test.sh" "$arch" "$build" "$src"
out=$build/vm-$arch-trace/out
ver=$(sed -n 's/^Linux version \([0-9]*\.[0-9]*\).*/\1/p' "$out/version")
dst=$src/tests/fixtures/trace
cp "$out/trace" "$dst/$name-$ver-cpu1-offline-online.trace"
cp "$out/states" "$dst/$name-$ver.states"
cp "$out/ops" "$dst/$name-$ver-cpu1-offline-online.ops"
cp "$out/version" "$dst/$name-$ver.version"
echo "captured into $dst/$name-$ver-*"
