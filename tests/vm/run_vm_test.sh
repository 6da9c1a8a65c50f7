#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Proves kmod/cpuhp_probe in a QEMU guest booted from Debian's own kernel.
#
#   tests/vm/run_vm_test.sh ARCH BUILD_DIR [SRC_DIR]     ARCH: amd64 arm64 ppc64el armhf
#
# Fetches Debian's kernel image and headers with apt-get download (the ABI
# is resolved at run time from the linux-image-ARCH metapackage), builds the
# module against those headers with W=1, builds the static reader
# tests/vm/cpuhp_probe_dump.c, copies the daemon (BUILD_DIR/cpuhp-stress)
# and its shared libraries, packs a busybox initramfs and boots QEMU (TCG).
# In the guest: a daemon run without the module, insmod, the reader's error
# checks, a daemon run with the kmod timing source, a reader dump, rmmod.
# arm64, ppc64el and armhf: the module and the daemon are cross-built
# (tests/vm/cross_daemon.sh: Debian's cross g++ plus the target's spdlog,
# fmt and libsystemd packages in a cached sysroot); the guest runs the same
# sequence and the host the same asserts as on amd64.
# The JSON comes back base64 between marker lines on the serial console;
# tests/vm/check_vm_results.py asserts on it.
# Kernel: CPUHP_VM_SERIES picks Debian's series, 6.1 (bookworm's default,
# linux-image-ARCH) or 6.12 (bookworm's linux-image-6.12-ARCH); the ABI is
# resolved from that metapackage at run time (host_lib.sh, debian_kernel).
# CPUHP_VM_SERIES=7.2 (amd64): Debian sid's own 7.2 image, the module built
# against sid's linux-source-7.2 prepared with that kernel's config
# (tests/kmatrix/kernel_tree.sh sid-guest). CPUHP_VM_SERIES=src7.2 (amd64):
# sid's linux-source-7.2 built for the guest once per machine
# (tests/kmatrix/kernel_tree.sh guest, tests/vm/src_guest.config).
# CPUHP_VM_KERNEL (an image QEMU boots with -kernel) and CPUHP_VM_KDIR (a
# prepared tree to build the module against, e.g. from `make
# modules_prepare`) boot a kernel of your own instead; both together.
# Acceleration: KVM when /dev/kvm runs the guest, else TCG (host_lib.sh,
# boot_guest_accel; CPUHP_VM_ACCEL=kvm|tcg forces one).
# Exit 0 pass, 1 fail (a failed download too), 77 skip (not root, no qemu,
# not an x86-64 host).
# CPUHP_VM_FETCH_ONLY=1: only download what the test needs (kernel, headers,
# busybox, the cross daemon's sysroot) into CPUHP_VM_CACHE and exit 0
# (tests/vm/fetch, the fetch step of tools/setup.sh test).
set -euo pipefail
arch=${1:?usage: run_vm_test.sh ARCH BUILD_DIR [SRC_DIR]}
build=$(realpath "${2:?usage: run_vm_test.sh ARCH BUILD_DIR [SRC_DIR]}")
src=$(realpath "${3:-$(dirname "$0")/../..}")
ops=${CPUHP_VM_OPS:-24}
smp=${CPUHP_VM_SMP:-4}  # at most guest_arch_setup's smp_max (armhf: the host's CPUs)
pattern=${CPUHP_VM_PATTERN:-roundrobin}   # sweep: one row per online level
extra=${CPUHP_VM_APPEND:-}                 # e.g. nohz_full=1-15
tcg_thread=${CPUHP_VM_TCG_THREAD:-multi}    # single: one host thread for all vCPUs (no MTTCG)
# kmod: guest_init.sh + check_vm_results.py; robust: guest_robust.sh +
# robust_check.py (issue 7 part 5); trace: guest_trace.sh + trace_check.py
# (fixture capture, tests/vm/capture_trace_fixture.sh)
mode=${CPUHP_VM_MODE:-kmod}
series=${CPUHP_VM_SERIES:-6.1}
own_kernel=${CPUHP_VM_KERNEL:-}
own_kdir=${CPUHP_VM_KDIR:-}
case "$series" in
6.1) slot="" ;;
[0-9]*.[0-9]*) slot=-$series
  [ "$series" != 7.2 ] || [ -z "$own_kernel$own_kdir" ] ||
    { echo "CPUHP_VM_SERIES=7.2 boots Debian's own 7.2 kernel: unset CPUHP_VM_KERNEL and CPUHP_VM_KDIR" >&2; exit 2; } ;;
src[0-9]*.[0-9]*) slot=-$series
  [ -z "$own_kernel$own_kdir" ] || { echo "CPUHP_VM_SERIES=$series builds its own kernel: unset CPUHP_VM_KERNEL and CPUHP_VM_KDIR" >&2; exit 2; } ;;
*) echo "CPUHP_VM_SERIES=$series: not a kernel series like 6.1, 6.12, 7.2 or src7.2" >&2; exit 2 ;;
esac
if [ -n "$own_kernel$own_kdir" ]; then
  [ -f "$own_kernel" ] && [ -f "$own_kdir/Makefile" ] ||
    { echo "CPUHP_VM_KERNEL ($own_kernel) must be a kernel image and CPUHP_VM_KDIR ($own_kdir) a prepared kernel tree, both set" >&2; exit 2; }
  slot=-own
fi
work=$build/vm-$arch$slot${CPUHP_VM_TAG:+-$CPUHP_VM_TAG}
# Kernel packages: per machine, shared by every build tree (tests/vm/fetch
# fills it before the tests).
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
fetch_only=${CPUHP_VM_FETCH_ONLY:-}
mkdir -p "$work" "$cache"
log() { echo "run_vm_test[$arch]: $*" >&2; }
skip() { log "SKIP: $*"; exit 77; }
# shellcheck source=tests/vm/host_lib.sh
. "$src/tests/vm/host_lib.sh"

daemon=1
cross=()
# qemu, flavour, console, cc, cross, qemu_args, kvm_args, tcg_args, kimage
guest_arch_setup "$arch" "$tcg_thread" || { log "unsupported arch $arch"; exit 2; }
guest_smp_cap "${CPUHP_VM_SMP:-}" || { log "CPUHP_VM_SMP: $smp_why"; exit 2; }
[ "$mode" = kmod ] || daemon=0
[ "$(uname -m)" = x86_64 ] || skip "the host is $(uname -m), not x86_64: the guest's module and tools are built with the host's gcc for x86-64"
command -v "$cc" >/dev/null || skip "$cc not installed"
[ "$(id -u)" = 0 ] || skip "needs root (apt-get download into the cache is fine, but the guest test is run as root in CI)"
command -v "$qemu" >/dev/null || skip "$qemu not installed (tools/setup.sh installs qemu-system-x86)"
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  [ -x /bin/busybox ] || skip "busybox-static not installed"
  [ "$daemon" = 0 ] || [ -n "$fetch_only" ] || [ -x "$build/cpuhp-stress" ] ||
    { log "no daemon at $build/cpuhp-stress"; exit 2; }
fi
# (a here-string, not a pipe: under pipefail grep -q's early exit can SIGPIPE
# dpkg, which writes one line at a time; 2 of 50 checks skipped arm64 so)
grep -qx "$arch" <<< "$(dpkg --print-foreign-architectures)" || [ "$arch" = "$(dpkg --print-architecture)" ] ||
  skip "dpkg architecture $arch not added (dpkg --add-architecture $arch && apt-get update)"

# --- kernel image and headers, resolved now --------------------------------
busybox=""
kmake=()  # make arguments the module build needs for this tree
case "$series" in
src* | 7.2)
  # src*: linux-source-SERIES built for this guest, cached (kernel_tree.sh
  # guest; its linux-source deb is the compile matrix's download). 7.2:
  # Debian sid's own image, the module built against a tree of the same
  # source with that kernel's config (kernel_tree.sh sid-guest: its headers
  # need gcc 16).
  if [ "$series" = 7.2 ]; then
    [ "$arch" = amd64 ] || { log "CPUHP_VM_SERIES=7.2: Debian's 7.2 kernel is booted for amd64 guests only"; exit 2; }
    tree_args=(sid-guest "$arch") cell=src7.2-amd64 what="preparing Debian's 7.2 kernel and its tree"
  else
    tree_args=(guest "${series#src}" "$arch") cell=$series-$arch what="building the ${series#src} guest kernel"
  fi
  export CPUHP_KMATRIX_CACHE=$cache/kmatrix
  if [ -n "$fetch_only" ]; then
    bash "$src/tests/kmatrix/kernel_tree.sh" fetch "$cell"
    exit 0
  fi
  rc=0
  tree_guest "$src" "$cache" "${tree_args[@]}" || rc=$?
  [ $rc = 0 ] || { log "$what failed (above)"; exit $((rc == 2 ? 2 : 1)); }
  own_kdir=$sg_kdir own_kernel=$sg_image kmake=("${sg_kmake[@]}") ;;
esac
if [ -n "$own_kernel" ]; then
  kernel=$(realpath "$own_kernel") hdrs=$(realpath "$own_kdir") kconfig=$hdrs/.config
  log "kernel $kernel, module built against $hdrs"
  guest_busybox "$arch" "$cache" || { log "$gb_why"; exit 1; }
else
  dk=0
  debian_kernel "$arch" "$series" "$cache" || dk=$?
  [ $dk = 1 ] && skip "$dk_why"
  [ $dk = 0 ] || { log "$dk_why"; exit 1; }
  log "kernel $abi-$flavour ($kver, from $meta)"
fi
if [ -n "$fetch_only" ]; then
  [ "$arch" = "$(dpkg --print-architecture)" ] ||
    CPUHP_VM_FETCH_ONLY=1 bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$work" "$work"
  exit 0
fi

# --- module, reader, daemon -------------------------------------------------
mod=$work/mod
# Robust mode loads a torture build: its return handlers linger 5 ms, so the
# insmod/rmmod cycles meet one running (kmod/cpuhp_probe.c, cp_ret_handler()).
[ "$mode" != robust ] || kmake+=("KCFLAGS=-DCPUHP_PROBE_TORTURE_RET_MS=${CPUHP_VM_TORTURE_RET_MS:-5}")
guest_module "$src" "$hdrs" "$mod" "$work/kbuild.log" "${cross[@]}" "${kmake[@]}" || { cat "$work/kbuild.log"; exit 1; }
if grep -E 'warning:|error:' "$work/kbuild.log"; then log "module build has warnings"; exit 1; fi
"$cc" -static -O2 -Wall -Wextra -Werror -o "$work/cpuhp_probe_dump" "$src/tests/vm/cpuhp_probe_dump.c"
"$cc" -static -O2 -Wall -Wextra -Werror -o "$work/cpuhp_probe_review" "$src/tests/vm/cpuhp_probe_review.c"

rd=$work/initramfs
[ -x "$busybox" ] || busybox=/bin/busybox  # an old cache
initramfs_base "$rd" "$src" "$busybox"
cp "$mod/kmod/cpuhp_probe.ko" "$src/kmod/cpuhp-probe-load" "$work/cpuhp_probe_dump" \
  "$work/cpuhp_probe_review" "$rd/bin/"
if [ "$daemon" = 1 ]; then
  if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    rc=0
    # One cross build tree per arch, shared by every series and mode.
    mkdir -p "$build/vm-cross-$arch"
    bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$build/vm-cross-$arch" "$rd" || rc=$?
    [ $rc = 77 ] && skip "cannot cross-build the daemon (see above)"
    [ $rc = 0 ] || { log "cross-building the daemon failed"; exit 1; }
  else
  cp "$build/cpuhp-stress" "$rd/bin/"
  # The daemon is dynamic (Debian ships no static spdlog/fmt): copy its libraries.
  copy_libs "$rd" "$build/cpuhp-stress"
  fi
fi
cp "$src/tests/vm/guest_init.sh" "$rd/init"
# Every mode: the kmod guest runs its resethist case too.
"$cc" -static -O2 -Wall -Wextra -Werror -pthread -o "$rd/bin/cpuhp_probe_torture" \
  "$src/tests/vm/cpuhp_probe_torture.c"
[ "$mode" = kmod ] || cp "$src/tests/vm/guest_$mode.sh" "$rd/init"
chmod +x "$rd/init"
initramfs_pack "$rd" "$work/initramfs.cpio.gz"

# --- boot -------------------------------------------------------------------
log "booting $qemu, $smp vCPUs, $ops operations per run"
start=$(date +%s)
boot_guest_accel "$work" "${CPUHP_VM_TIMEOUT:-600}" "$qemu" "$arch" "${qemu_args[@]}" -smp "$smp" -m 1024 \
  -kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
  -append "console=$console $kappend quiet panic=-1 log_buf_len=16M cpuhp_ops=$ops cpuhp_daemon=$daemon cpuhp_pattern=$pattern $extra" \
  -nographic -no-reboot -nic none
echo "$guest_accel $(($(date +%s) - start))" >"$work/guest_time"  # tests/vm/matrix_table.py
log "guest ($guest_accel) exited $qrc after $(($(date +%s) - start)) s; console: $work/console.log"
[ "$mode" = kmod ] || exec python3 "$src/tests/vm/${mode}_check.py" "$work/console.log" "$work" \
  "$arch" "$smp" "$kconfig" "$qrc"
CPUHP_SRC=$src python3 "$src/tests/vm/check_vm_results.py" "$work/console.log" "$work" "$arch" "$smp" "$daemon" "$pattern"
