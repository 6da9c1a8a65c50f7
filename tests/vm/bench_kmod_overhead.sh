#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench (not a test): what the kernel-phase sources cost (the cpuhp_probe
# module, the bpf source with fentry/fexit and with kprobes), in one guest.
#
#   tests/vm/bench_kmod_overhead.sh ARCH BUILD_DIR [SRC_DIR]
#     env: CPUHP_BENCH_ROUNDS (4), CPUHP_BENCH_OPS (16 operations per daemon
#          run), CPUHP_BENCH_LOOPS (20000 nanosleeps), CPUHP_VM_SMP (4),
#          CPUHP_VM_APPEND (extra kernel command line, e.g. nohz_full=1-3),
#          CPUHP_VM_SERIES (6.1; 6.12: Debian's 6.12 kernel, as run_vm_test.sh),
#          CPUHP_BENCH_SIDES (without,with,bpf,bpfk),
#          CPUHP_VM_TCG_THREAD (single: all vCPUs on one host thread, the
#          default, steadier on a loaded host; multi: MTTCG)
#
# Reuses the initramfs of a tests/vm/run_vm_test.sh run (module, daemon,
# libraries; made first if missing) with tests/vm/bench_guest.sh as /init,
# boots the same Debian kernel and prints, from the daemon's own reports,
# per side (module, bpf fentry, bpf kprobe) against none, per interleaved
# round: the hotplug write latency ratio (of medians), their median and
# spread, and the nanosleep loop's thread CPU ns (and wall ns) per
# iteration minus none's, divided by the get_nohz_timer_target hits the
# side's source counted (ns per probe hit). TCG timings follow the host's
# load: read the spread before the median.
set -euo pipefail
arch=${1:?usage: bench_kmod_overhead.sh ARCH BUILD_DIR [SRC_DIR]}
build=$(realpath "${2:?usage: bench_kmod_overhead.sh ARCH BUILD_DIR [SRC_DIR]}")
src=$(realpath "${3:-$(dirname "$0")/../..}")
smp=${CPUHP_VM_SMP:-4}
tcg_thread=${CPUHP_VM_TCG_THREAD:-single}
series=${CPUHP_VM_SERIES:-6.1}
slot=-$series
[ "$series" != 6.1 ] || slot=""
work=$build/vm-$arch$slot
bench=$build/vm-bench-$arch$slot
case "$arch" in
amd64)
  qemu=qemu-system-x86_64; flavour=amd64; cc=gcc; console=ttyS0; kimage=vmlinuz
  qemu_args=(-accel tcg,thread=$tcg_thread -cpu max -device isa-debug-exit,iobase=0xf4,iosize=0x04) ;;
arm64)
  qemu=qemu-system-aarch64; flavour=arm64; cc=aarch64-linux-gnu-gcc; console=ttyAMA0; kimage=vmlinuz
  qemu_args=(-accel tcg,thread=$tcg_thread -M virt -cpu cortex-a57) ;;
ppc64el)
  qemu=qemu-system-ppc64; flavour=powerpc64le; cc=powerpc64le-linux-gnu-gcc; console=hvc0; kimage=vmlinux
  qemu_args=(-accel tcg,thread=$tcg_thread
    -M pseries,x-vof=on,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off) ;;
*) echo "bench: unsupported arch $arch" >&2; exit 2 ;;
esac
if [ ! -s "$work/initramfs.cpio.gz" ]; then
  echo "bench: no $work/initramfs.cpio.gz: running run_vm_test.sh $arch first" >&2
  CPUHP_VM_SMP=$smp bash "$src/tests/vm/run_vm_test.sh" "$arch" "$build" "$src" >/dev/null
fi
abi=$(sed -n 's/.*==CPUHP== guest up: .* kernel \([^ ]*\).*/\1/p' "$work/console.log" | head -1)
# The kernel run_vm_test.sh booted, from the shared download cache.
kernel=$(ls -d "${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}"/vm-kernel-"$abi"-*/root/boot/"$kimage-$abi" 2> /dev/null | sort -V | tail -1)
[ -f "$kernel" ] || { echo "bench: kernel $kernel not found" >&2; exit 1; }
rm -rf "$bench" && mkdir -p "$bench/rd"
(cd "$bench/rd" && gzip -dc "$work/initramfs.cpio.gz" | cpio -id --quiet)
cp "$src/tests/vm/guest_lib.sh" "$bench/rd/bin/guest_lib.sh"
cp "$src/tests/vm/bench_guest.sh" "$bench/rd/init" && chmod +x "$bench/rd/init"
# This tree's reader (sleeploopcpu), whatever the test run packed.
"$cc" -static -O2 -Wall -Wextra -Werror -o "$bench/rd/bin/cpuhp_probe_dump" "$src/tests/vm/cpuhp_probe_dump.c"
(cd "$bench/rd" && find . | cpio -o -H newc --quiet | gzip -1) >"$bench/initramfs.cpio.gz"
echo "bench: $qemu $abi, $smp vCPUs, ${CPUHP_BENCH_ROUNDS:-4} rounds" >&2
start=$(date +%s)
set +e
timeout --foreground -k 5 1800 "$qemu" "${qemu_args[@]}" -smp "$smp" -m 1024 \
  -kernel "$kernel" -initrd "$bench/initramfs.cpio.gz" \
  -append "console=$console quiet panic=-1 cpuhp_rounds=${CPUHP_BENCH_ROUNDS:-4} cpuhp_ops=${CPUHP_BENCH_OPS:-16} cpuhp_loops=${CPUHP_BENCH_LOOPS:-20000} cpuhp_sides=${CPUHP_BENCH_SIDES:-without,with,bpf,bpfk} ${CPUHP_VM_APPEND:-}" \
  -nographic -no-reboot -nic none </dev/null >"$bench/console.raw" 2>&1
set -e
tr -d '\r' <"$bench/console.raw" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >"$bench/console.log"
echo "bench: guest ran $(($(date +%s) - start)) s; console: $bench/console.log" >&2
python3 "$src/tests/vm/bench_kmod_overhead.py" "$bench/console.log" "$arch"
