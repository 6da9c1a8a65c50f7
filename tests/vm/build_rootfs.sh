#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A minimal Debian 12 root file system with systemd as init and the run-time
# libraries of cpuhp-stress, as a tarball (cached by the caller).
# usage: build_rootfs.sh OUT.tar   (root; needs debootstrap and Debian's archive)
set -euo pipefail
out=$1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
dir=$(mktemp -d /var/tmp/cpuhp-rootfs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
debootstrap --variant=minbase \
  --include=systemd,systemd-sysv,libspdlog1.10,libfmt9,libsystemd0,libtracefs1,libtraceevent1,libbpf1 \
  bookworm "$dir" "$mirror" > "$out.log" 2>&1 || { tail -20 "$out.log"; exit 1; }
# Boot straight to the test: no getty, no network waits, no udev settle.
echo cpuhp-vm > "$dir/etc/hostname"
ln -sf /dev/null "$dir/etc/systemd/system/getty@tty1.service"
ln -sf /dev/null "$dir/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$dir/etc/systemd/system/systemd-timesyncd.service"
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
tar -C "$dir" -cf "$out.tmp" . && mv "$out.tmp" "$out"
