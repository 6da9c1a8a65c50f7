#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The real-CPU tests in a disposable guest whose kernel has cpuN/hotplug/fail:
#
#   tests/vm/run_real_guest.sh BUILD_DIR SRC_DIR TEST[,TEST...]
#
# Fault injection is the one part of the suite that can break the machine it
# runs on: on this lab's 6.18-fc host an injected online once left cpu1 unable
# to come back until reboot. Here the same test files as on the host
# (faults_test.py, kill_anywhere_test.py, ...) run unchanged inside a QEMU
# guest (TCG, one thread) booted from Debian's own 6.12 kernel image,
# against the guest's cpu1. The initramfs holds busybox, the host's
# python3 with the stdlib and jsonschema (for validate_report.py), the daemon
# (BUILD_DIR/cpuhp-stress) with its shared libraries, and the tests, configs
# and report schema of SRC_DIR. tests/vm/real_check.py asserts on the console.
# Environment: CPUHP_VM_SMP (default 2), CPUHP_VM_THREADS (threads per core,
# default 1: with 2 the guest's cores have two SMT threads each, QEMU's
# -smp N,cores=N/2,threads=2, and an amd64 guest's TCG CPU has topoext so
# that Linux sees them; QEMU 7.2 refuses threads on pseries under TCG, 8.1
# allows them), CPUHP_VM_TIMEOUT (s, default 1500),
# CPUHP_VM_KILLS (kill_anywhere's kill count, default 40: each costs the
# daemon's ~2 s start-up under TCG; 50 kills left cpu1 offline 10 times and
# met fail armed 19 times, issue 27), CPUHP_VM_ARCH
# (amd64, arm64, armhf or ppc64el; default the host's), CPUHP_VM_KERNEL (a kernel
# image to boot instead, e.g. a patched kernel under test: it needs SMP,
# HOTPLUG_CPU, a serial console, initramfs).
# Kernel: Debian's own 6.12 image for amd64, arm64 (virt), armhf (virt, armmp-lpae) and ppc64el
# (pseries) (host_lib.sh, debian_kernel; the same image vm_kmod_*_6.12
# boot, fetched once). Its cpuN/hotplug/fail is there (fail_store does not need
# CPU_HOTPLUG_STATE_CONTROL, which Debian leaves off; the arm64 guest
# injects faults): a kernel without it makes fault injection skip with that
# reason, and tests/vm/real_check.py accepts exactly that skip. An x86 6.12
# kernel also has the split startup (cpu:kick_ap) that faults.allow_unsafe
# is about. A guest of another
# architecture than the host's runs a cross-built daemon
# (tests/vm/cross_daemon.sh) and the target's own python3.11 (Debian's
# packages, fetched once into /var/cache/cpuhp-stress). KVM when /dev/kvm
# runs the guest, else TCG (host_lib.sh, boot_guest_accel).
# Exit 0 pass, 1 fail (a failed download too), 77 skip (not root, no
# qemu/busybox, no package index for the kernel).
# CPUHP_VM_FETCH_ONLY=1 (arm64, ppc64el, armhf): only download Debian's kernel and
# the target's python3 into CPUHP_VM_CACHE and exit 0 (tests/vm/fetch).
set -euo pipefail
build=$(realpath "${1:?usage: run_real_guest.sh BUILD_DIR SRC_DIR TESTS}")
src=$(realpath "${2:?usage: run_real_guest.sh BUILD_DIR SRC_DIR TESTS}")
tests=${3:?usage: run_real_guest.sh BUILD_DIR SRC_DIR TESTS}
smp=${CPUHP_VM_SMP:-2}
host_arch=$(dpkg --print-architecture)
arch=${CPUHP_VM_ARCH:-$host_arch}
work=$build/vm-real
[ "$arch" = amd64 ] || work=$build/vm-real-$arch
[ "${CPUHP_VM_THREADS:-1}" = 1 ] || work=$work-smt
log() { echo "run_real_guest[$arch]: $*" >&2; }
# shellcheck source=tests/vm/host_lib.sh
. "$src/tests/vm/host_lib.sh"
skip() { log "SKIP: $*"; exit 77; }
guest_arch_setup "$arch" single || { log "CPUHP_VM_ARCH=$arch: not amd64, arm64, armhf or ppc64el"; exit 2; }
threads=${CPUHP_VM_THREADS:-1}
guest_smt_topology "$arch" "$smp" "$threads" || { log "CPUHP_VM_THREADS=$threads: $smt_why"; exit 2; }
[ "$(id -u)" = 0 ] || skip "needs root (CPU hotplug in the guest is run as root in CI)"
command -v "$qemu" >/dev/null || skip "$qemu not installed (tools/setup.sh installs it)"
[ "$arch" != "$host_arch" ] || [ -x /bin/busybox ] || skip "busybox-static not installed"
py=$(readlink -f /usr/bin/python3)
pyver=$(basename "$py")
[ -d "/usr/lib/$pyver" ] || skip "no /usr/lib/$pyver for $py"
fetch_only=${CPUHP_VM_FETCH_ONLY:-}
[ "$arch" != "$host_arch" ] || [ -n "$fetch_only" ] || [ -x "$build/cpuhp-stress" ] ||
  { log "no daemon at $build/cpuhp-stress"; exit 2; }
rc=0
kernel=${CPUHP_VM_KERNEL:-}
busybox=/bin/busybox
need_debian=0
[ "$arch" = "$host_arch" ] || need_debian=1  # its busybox
[ -n "$kernel" ] || need_debian=1            # its kernel
if [ "$need_debian" = 1 ]; then
  # Debian's kernel for the busybox (and, without CPUHP_VM_KERNEL, to boot).
  grep -qx "$arch" <<< "$(dpkg --print-foreign-architectures)" || [ "$arch" = "$host_arch" ] ||
    skip "dpkg architecture $arch not added (dpkg --add-architecture $arch && apt-get update)"
  dk=0
  debian_kernel "$arch" 6.12 "${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}" || dk=$?
  [ $dk = 1 ] && skip "$dk_why"
  [ $dk = 0 ] || { log "$dk_why"; exit 1; }
  # (debian_kernel sets kernel and busybox: the host's busybox and
  # CPUHP_VM_KERNEL win where they apply)
  [ "$arch" = "$host_arch" ] && busybox=/bin/busybox
  kernel=${CPUHP_VM_KERNEL:-$kroot/boot/$kimage-$abi-$flavour}
  log "Debian kernel $abi-$flavour ($kver)"
fi
if [ -n "$fetch_only" ]; then
  [ "$arch" = "$host_arch" ] && exit 0  # the host's own python3
  tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/cpuhp-pyfetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  target_python "$arch" "$pyver" "$tmp" || { log "$tp_why"; exit 1; }
  exit 0
fi
[ -f "$kernel" ] || { log "CPUHP_VM_KERNEL=$kernel: no such file"; exit 2; }

rm -rf "$work" && mkdir -p "$work"
rd=$work/initramfs
mkdir -p "$rd"/{bin,sbin,proc,sys,dev,tmp,run,usr/bin,opt/cpuhp/build,opt/cpuhp/src}
cp "$busybox" "$rd/bin/busybox"
ln -s busybox "$rd/bin/sh"  # /init's shell; guest_lib.sh installs the other applets
mknod -m 600 "$rd/dev/console" c 5 1
# python3 and its stdlib, without what no test imports (tests, GUI, 2to3).
pyexclude=(--exclude=./test --exclude=./idlelib --exclude=./tkinter --exclude=./lib2to3
  --exclude=./ensurepip --exclude=./pydoc_data --exclude=./config-\* --exclude=./site-packages)
if [ "$arch" = "$host_arch" ]; then
  cp "$py" "$rd/usr/bin/python3"
  mkdir -p "$rd/usr/lib/$pyver"
  tar -C "/usr/lib/$pyver" "${pyexclude[@]}" -cf - . | tar -C "$rd/usr/lib/$pyver" -xf -
  copy_libs "$rd" "$py" "/usr/lib/$pyver"/lib-dynload/*.so
else
  # The target's own build of the host's python version (the same .py
  # stdlib, its own lib-dynload and libraries).
  target_python "$arch" "$pyver" "$rd" "${pyexclude[@]}" || skip "$tp_why"
fi
if [ "$arch" = "$host_arch" ]; then
  # jsonschema and what it imports: the packages it loads here, found by asking.
  dist=/usr/lib/python3/dist-packages
  mkdir -p "$rd$dist"
  /usr/bin/python3 -S -c "
import sys; sys.path.append('$dist'); import jsonschema
for m in sys.modules.values():
    f = getattr(m, '__file__', None) or ''
    if f.startswith('$dist/'):
        print(f[len('$dist/'):].split('/')[0])" | sort -u | while read -r top; do
    cp -a "$dist/$top" "$rd$dist/"
    case "$top" in *.so) copy_libs "$rd" "$dist/$top" ;; esac
  done
fi  # (target_python staged the foreign-arch copy)
# The daemon and the repository parts the tests read.
if [ "$arch" = "$host_arch" ]; then
  cp "$build/cpuhp-stress" "$rd/opt/cpuhp/build/"
  copy_libs "$rd" "$build/cpuhp-stress"
else
  mkdir -p "$build/vm-cross-$arch"
  bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$build/vm-cross-$arch" "$rd" || rc=$?
  [ $rc = 77 ] && skip "cannot cross-build the daemon (see above)"
  [ $rc = 0 ] || { log "cross-building the daemon failed"; exit 1; }
  mv "$rd/bin/cpuhp-stress" "$rd/opt/cpuhp/build/"
fi
mkdir -p "$rd/opt/cpuhp/src/daemon"
cp -r "$src/tests" "$src/configs" "$rd/opt/cpuhp/src/"
mkdir -p "$rd/opt/cpuhp/src/daemon/report" && cp -r "$src/daemon/report/schema" "$rd/opt/cpuhp/src/daemon/report/"
rm -rf "$rd/opt/cpuhp/src/tests/fixtures" "$rd/opt/cpuhp/src/tests/vm"
find "$rd/opt/cpuhp/src" -name __pycache__ -prune -exec rm -rf {} +
cp "$src/tests/vm/guest_lib.sh" "$rd/bin/guest_lib.sh"
cp "$src/tests/vm/guest_real.sh" "$rd/init" && chmod +x "$rd/init"
(cd "$rd" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.cpio.gz"
log "initramfs $(du -m "$work/initramfs.cpio.gz" | cut -f1) MiB (packed); kernel $kernel"

log "booting $qemu, $smp vCPUs ($threads per core): $tests"
start=$(date +%s)
boot_guest_accel "$work" "${CPUHP_VM_TIMEOUT:-1500}" "$qemu" "$arch" "${qemu_args[@]}" \
  -smp "$smp_topology" -m 1536 -kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
  -append "console=$console $kappend panic=-1 log_buf_len=4M cpuhp_tests=$tests cpuhp_kills=${CPUHP_VM_KILLS:-40} cpuhp_threads=$threads" \
  -nographic -no-reboot -nic none
log "guest ($guest_accel) exited $qrc after $(($(date +%s) - start)) s; console: $work/console.log"
exec python3 "$src/tests/vm/real_check.py" "$work/console.log" "$work" "$tests" "$qrc"
