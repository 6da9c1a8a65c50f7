#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds (once per machine) the x86-64 kernel of the real-hotplug guest and
# prints the path of its bzImage:
#
#   tests/vm/build_guest_kernel.sh [CACHE_DIR]      (default /var/cache/cpuhp-stress)
#   tests/vm/build_guest_kernel.sh --fetch [CACHE_DIR]   only download linux-source
#
# Debian's kernels have no CONFIG_CPU_HOTPLUG_STATE_CONTROL, so no
# cpuN/hotplug/fail: fault injection cannot be proven in a guest booted from
# them. This builds Debian's own linux-source-6.12 (version resolved now by
# apt) from tinyconfig plus tests/vm/real_guest.config: SMP, CPU hotplug with
# state control, serial console, initramfs, tracefs with the cpuhp events,
# ACPI (QEMU's MP table lists one CPU only); no modules, no PCI. 6.12 has x86
# split startup (cpu:kick_ap), the case faults.allow_unsafe is about. About
# 12 min on one core; the result is
# kept in CACHE_DIR/guest-kernel-VERSION-HASH (HASH: this script and the
# config fragment), so later runs reuse it. Every option of the fragment is
# checked in the final .config: an option Kconfig dropped fails the build.
# Exit 0 (path on stdout), 1 build or download failed, 77 cannot build here
# (no apt source, no flex/bison/libelf).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
fetch_only=
[ "${1:-}" = --fetch ] && { fetch_only=1; shift; }
cache=${1:-/var/cache/cpuhp-stress}
fragment=$here/real_guest.config
log() { echo "build_guest_kernel: $*" >&2; }
skip() { log "SKIP: $*"; exit 77; }
# An x86-64 kernel (arch/x86 bzImage, real_guest.config): built natively
# only; run_real_guest.sh boots Debian's 6.12 kernel for other guests.
host=$(dpkg --print-architecture)
[ "$host" = amd64 ] || skip "builds an x86-64 kernel natively; this host is $host"
for t in flex bison bc make gcc; do command -v "$t" >/dev/null || skip "$t not installed (tools/setup.sh installs it)"; done
[ -f /usr/include/libelf.h ] || skip "libelf-dev not installed (objtool needs it; tools/setup.sh installs it)"
version=$(apt-cache policy linux-source-6.12 2>/dev/null | sed -n 's/^ *Candidate: //p')
[ -n "$version" ] && [ "$version" != "(none)" ] || skip "apt knows no linux-source-6.12 (apt-get update?)"
key=$(cat "$0" "$fragment" | sha256sum | cut -c1-16)
out=$cache/guest-kernel-$version-$key
if [ -f "$out/bzImage" ]; then echo "$out/bzImage"; exit 0; fi
mkdir -p "$cache"
# The source package, kept in the cache (tools/setup.sh's fetch step
# downloads it before the tests; a failed download fails, never skips).
deb=$cache/linux-source-6.12_$version.deb
if [ ! -s "$deb" ]; then
  dl=$(mktemp -d "$cache/.linux-source.XXXXXX")
  (cd "$dl" && apt-get download -q "linux-source-6.12=$version") >"$dl/download.log" 2>&1 ||
    { cat "$dl/download.log" >&2; rm -rf "$dl"; log "apt-get download linux-source-6.12=$version failed"; exit 1; }
  mv "$dl"/linux-source-6.12_*.deb "$deb"
  rm -rf "$dl"
fi
[ -z "$fetch_only" ] || exit 0
exec 9>"$cache/guest-kernel.lock"
flock 9  # one build per machine; a second caller waits and reuses it
if [ -f "$out/bzImage" ]; then echo "$out/bzImage"; exit 0; fi
tmp=$(mktemp -d /var/tmp/cpuhp-guest-kernel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
log "building linux-source-6.12 $version into $out (once per machine)"
start=$(date +%s)
dpkg-deb --fsys-tarfile "$deb" |
  tar -x -C "$tmp" --wildcards '*/linux-source-6.12.tar.xz'
tar -xJf "$tmp"/usr/src/linux-source-6.12.tar.xz -C "$tmp"
srcdir=$tmp/linux-source-6.12
obj=$tmp/obj
make -s -C "$srcdir" O="$obj" tinyconfig >/dev/null
"$srcdir/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >/dev/null
make -s -C "$srcdir" O="$obj" olddefconfig >/dev/null
missing=0
while IFS= read -r line; do
  case "$line" in CONFIG_*) ;; *) continue ;; esac
  grep -qx "$line" "$obj/.config" || { log "Kconfig dropped $line"; missing=1; }
done <"$fragment"
[ "$missing" = 0 ] || exit 1
make -C "$srcdir" O="$obj" -j"$(nproc)" bzImage >"$tmp/build.log" 2>&1 ||
  { tail -40 "$tmp/build.log" >&2; log "kernel build failed"; exit 1; }
mkdir -p "$out.tmp"
cp "$obj/arch/x86/boot/bzImage" "$out.tmp/bzImage"
cp "$obj/.config" "$out.tmp/config"
rm -rf "$out" && mv "$out.tmp" "$out"
log "built in $(($(date +%s) - start)) s"
echo "$out/bzImage"
