#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Proof under real systemd: boots a debootstrap'd Debian 12 (systemd as PID 1)
# with this tree's Debian packages installed by apt and DKMS
# (tests/pkg/deb_install.sh writes BUILD_DIR/pkg-root/installed.tar; ctest's
# fixture) in QEMU TCG with 4 vCPUs, from an initramfs made of that root file
# system, and checks from the host what
# tests/vm/guest_check.sh reports on the serial console: the unit reaches
# READY, StatusText shows progress, kill -9 of the main PID restarts it and it
# resumes from the checkpoint, `systemctl stop` leaves every CPU online, the
# journal holds the structured fields, the final report records the restart,
# and a run that finishes with failures (exit 3) is not restarted; the
# packaged binary says the package's version and the module DKMS built for
# the booted kernel loads with modprobe.
# The root file system is deb_install's; its base (debootstrap) is cached in
# /var/cache/cpuhp-stress (first run: a few minutes; then about a minute per run).
# The guest is the host's architecture (amd64, arm64 virt, ppc64el pseries):
# its kernel is the newest /boot/vmlinuz-*-FLAVOUR (vmlinux on ppc64el), else
# Debian's 6.1 image fetched with apt-get download (tests/vm/host_lib.sh);
# KVM when /dev/kvm runs it, else TCG (boot_guest_accel says which and why).
# usage: vm_test.sh SOURCE_DIR BUILD_DIR     exit 77: cannot run here
# CPUHP_VM_FETCH_ONLY=1: only fetch the kernel into the cache and exit 0.
set -euo pipefail
src=$1 build=$2
[ "$(uname -m)" = x86_64 ] || { echo "vm test: SKIP: the host is $(uname -m), not x86_64 (the guest boots the host's amd64 kernel)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "vm test: needs root (debootstrap)"; exit 77; }
# shellcheck source=tests/vm/host_lib.sh
. "$src/tests/vm/host_lib.sh"
arch=$(dpkg --print-architecture)
guest_arch_setup "$arch" multi || { echo "vm test: no guest recipe for a $arch host"; exit 77; }
for t in "$qemu" cpio; do
  command -v "$t" >/dev/null || { echo "vm test: $t missing"; exit 77; }
done
work=$build/vm
mkdir -p "$work"
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
kernel=$(ls /boot/"$kimage"-*-"$flavour" 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$kernel" ]; then
  dk=0
  debian_kernel "$arch" 6.1 "$cache" || dk=$?
  [ $dk = 1 ] && { echo "vm test: SKIP: no /boot/$kimage-*-$flavour and $dk_why"; exit 77; }
  [ $dk = 0 ] || { echo "vm test: no /boot/$kimage-*-$flavour and $dk_why"; exit 1; }
fi
[ -z "${CPUHP_VM_FETCH_ONLY:-}" ] || exit 0
installed=$build/pkg-root/installed.tar
[ -s "$installed" ] ||
  { echo "vm test: no $installed: tests/pkg/deb_install.sh SRC $build installs the packages first (ctest: deb_install)"; exit 1; }
root=$(mktemp -d /var/tmp/cpuhp-vmroot.XXXXXX)
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xf "$installed"
# What the test adds: its configs and its checker; the binary, the units and
# the module are the packages'.
pkg_ver=$(cat "$build/pkg-root/version")
kernel_ver=$(basename "$kernel")
kernel_ver=${kernel_ver#"$kimage"-}
dkms_kernel=no
grep -qx "$kernel_ver" "$build/pkg-root/kernels" && dkms_kernel=yes
printf 'pkg_ver=%s\ndkms_kernel=%s\n' "$pkg_ver" "$dkms_kernel" > "$root/etc/cpuhp-vm-test.env"
install -D -m644 "$src/tests/vm/vm.json" "$root/etc/cpuhp-stress/vm.json"
install -D -m644 "$src/tests/vm/vm-fails.json" "$root/etc/cpuhp-stress/fails.json"
echo '{"iterations": 10, "no_such_key": 1}' > "$root/etc/cpuhp-stress/bad.json"
install -D -m755 "$src/tests/vm/guest_check.sh" "$root/usr/local/bin/guest_check.sh"
install -D -m644 "$src/tests/vm/vm-check.service" "$root/etc/systemd/system/vm-check.service"
ln -sf /etc/systemd/system/vm-check.service "$root/etc/systemd/system/multi-user.target.wants/vm-check.service"
ln -sf /lib/systemd/systemd "$root/init"
(cd "$root" && find . -xdev | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"
echo "vm test: booting $(basename "$kernel") with 4 vCPUs"
start=$(date +%s)
# The unit's first VMTEST line comes once systemd has started it.
guest_up_mark="^VMTEST" CPUHP_VM_KVM_PROBE_S=${CPUHP_VM_KVM_PROBE_S:-60} \
  boot_guest_accel "$work" 480 "$qemu" "$arch" "${qemu_args[@]}" -smp 4 -m 1536 \
  -kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
  -append "console=$console $kappend panic=-1 rdinit=/init systemd.show_status=0 loglevel=4" \
  -nographic -no-reboot -nic none
echo "vm test: guest ($guest_accel) ran $(( $(date +%s) - start )) s; console in $work/console.log"
grep '^VMTEST' "$work/console.log" | tee "$work/vmtest.txt"
v() { sed -n "s/^VMTEST: .*\b$1=\([^ ]*\).*/\1/p" "$work/vmtest.txt" | awk 'NR == 1'; }
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
check "guest finished" "grep -q '^VMTEST: done' $work/vmtest.txt"
check "the packaged /usr/bin/cpuhp-stress says the package's version ($pkg_ver)" "[ '$(v version)' = '$pkg_ver' ]"
check "the unit that ran is the package's (/lib/systemd/system)" "[ '$(v unit_path)' = /lib/systemd/system/cpuhp-stress@.service ]"
if [ "$dkms_kernel" = yes ]; then
  check "modprobe loads the module DKMS built for $kernel_ver, rmmod unloads it" "[ '$(v modprobe)' = 0 ] && [ '$(v lsmod)' = yes ] && [ '$(v rmmod)' = 0 ]"
else
  echo "vm test: $kernel_ver (a /boot kernel) is not one deb_install installed headers for: no DKMS module to load"
fi
check "unit reached READY (start returned 0, active/running)" "[ '$(v start_rc)' = 0 ] && [ '$(v active)' = active ]"
check "StatusText shows progress" "grep -q '^VMTEST: status=ops [1-9]' $work/vmtest.txt"
check "checkpoint written" "[ '$(v checkpoint)' = yes ]"
check "kill -9 restarted the service" "[ '$(v nrestarts)' = 1 ] && [ '$(v after_kill_pid)' != '$(v killed)' ] && [ '$(v after_kill_pid)' != 0 ]"
check "resumed from the checkpoint" "[ '$(v resumed)' = yes ]"
check "systemctl stop leaves every CPU online" "[ -n '$(v online)' ] && [ '$(v online)' = '$(v present)' ]"
check "tracepoints work inside the unit's sandbox (kernel states in the summary, never unavailable)" "[ '$(v tp_states)' -gt 0 ] 2>/dev/null && [ '$(v tp_unavailable)' = 0 ]"
check "journal holds CPU/OP/ITERATION fields" "[ '$(v journal_fields)' -gt 0 ] 2>/dev/null"
check "final report records the crash restart" "grep -q 'report_kinds=kind:crash' $work/vmtest.txt"
check "a run that finished with failures (exit 3) is not restarted" "[ '$(v fails_status)' = 3 ] && [ '$(v fails_restarts)' = 0 ] && [ '$(v fails_report)' = yes ]"
check "a run refused for bad input (exit 2) is not restarted, and says which file" "[ '$(v bad_status)' = 2 ] && [ '$(v bad_restarts)' = 0 ] && grep -q '^VMTEST: bad_log=.*/etc/cpuhp-stress/bad.json: /no_such_key: unknown key' $work/vmtest.txt"
exit $fail
