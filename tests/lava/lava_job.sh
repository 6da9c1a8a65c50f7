#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# LAVA runs the definition (issue 33 item 4): Debian's own lava-run
# (lava-dispatcher, offline, no server) runs configs/lava/jobs/qemu-ARCH.yaml
# on a QEMU device rendered from lava-server's qemu.jinja2 with
# configs/lava/devices/qemu-ARCH.jinja2 and the job's context, as a LAVA
# server renders it. The job boots Debian's 6.1 kernel for ARCH with a
# ramdisk made here and runs configs/lava/cpuhp-stress.yaml three times:
# sim, the guest's real CPUs with the module loaded, and a run that must
# fail; tests/lava/lava_check.py reads LAVA's recorded results and asserts
# every case.
#
#   tests/lava/lava_job.sh ARCH BUILD_DIR SRC_DIR     (ARCH: amd64, arm64, ppc64el)
#
# The ramdisk:
#   amd64    the systemd guest's Debian 12 root (tests/vm/build_rootfs.sh:
#            the daemon's run-time libraries, dpkg, apt) with CI's package
#            BUILD_DIR/debs/cpuhp-stress_*_amd64.deb in /opt/cpuhp/debs: the
#            definition installs it with apt-get (PACKAGES), offline.
#   arm64,   busybox and the daemon with its libraries (tests/vm/
#   ppc64el  cross_daemon.sh; ctest: the one of deb_packages_ARCH's package,
#            CPUHP_CROSS_DEB) in /opt/cpuhp/bin (BINARY): a busybox ramdisk
#            has neither Debian's dpkg nor apt, and a Debian root of the board's
#            architecture would need debootstrap's second stage under QEMU.
# and in every case the module built against that kernel's headers (W=1,
# tests/vm/host_lib.sh guest_module) in /opt/cpuhp/cpuhp_probe.ko (MODULE):
# DKMS's build of it is proven by tests/pkg/deb_install.sh and loaded by
# systemd_vm; a ramdisk with a compiler and headers would be ~500 MB more.
# /init (tests/lava/lava_init.sh) mounts what a run needs and gives LAVA a
# root shell on the console.
#
# lava-run: /usr/bin/lava-run when lava-dispatcher is installed, else
# Debian's packages unpacked once into CPUHP_VM_CACHE (default
# /var/cache/cpuhp-stress)/lava-VERSION (lava-dispatcher, lava-common, the
# device-type templates of lava-server, and python3-guestfs with the
# libraries its import loads: lava-dispatcher imports it, these jobs never
# use it); its pure-python dependencies are Debian packages tools/setup.sh
# installs.
# Exit 0 pass, 1 fail (a failed download too), 2 usage, 77 skip (not root,
# not an x86-64 host). CPUHP_VM_FETCH_ONLY=1: only download (tests/vm/fetch).
set -euo pipefail
arch=${1:?usage: lava_job.sh ARCH BUILD_DIR SRC_DIR}
build=$(realpath "${2:?usage: lava_job.sh ARCH BUILD_DIR SRC_DIR}")
src=$(realpath "${3:?usage: lava_job.sh ARCH BUILD_DIR SRC_DIR}")
log() { echo "lava_job[$arch]: $*" >&2; }
skip() { log "SKIP: $*"; exit 77; }
# shellcheck source=tests/vm/host_lib.sh
. "$src/tests/vm/host_lib.sh"
case "$arch" in amd64 | arm64 | ppc64el) ;; *) log "ARCH $arch: not amd64, arm64 or ppc64el"; exit 2 ;; esac
[ "$(uname -m)" = x86_64 ] || skip "the host is $(uname -m): the guests need an x86-64 host"
[ "$(id -u)" = 0 ] || skip "needs root (the guest's CPU hotplug is run as root in CI)"
guest_arch_setup "$arch" single
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
fetch_only=${CPUHP_VM_FETCH_ONLY:-}

# --- lava-run ----------------------------------------------------------------
# lava_root: sets lava_py (the unpacked dist-packages), lava_libs (the
# libraries python3-guestfs's import needs), lava_templates, lava_run.
lava_pkgs=(lava-dispatcher lava-dispatcher-host lava-common lava-server python3-guestfs libguestfs0 libvirt0 libfuse2 libssh-4 libyajl2)
lava_root() {
	local dir
	if [ -x /usr/bin/lava-run ] && [ -d /usr/share/lava-server/device-types ]; then
		lava_run=/usr/bin/lava-run lava_py="" lava_libs="" lava_templates=/usr/share/lava-server/device-types
		return 0
	fi
	debs_cached "$cache" lava lava-layout-1 "${lava_pkgs[@]}" || { log "lava-dispatcher: $dc_why"; return 1; }
	dir=$dc_dir
	lava_run=$dir/usr/bin/lava-run lava_py=$dir/usr/lib/python3/dist-packages
	lava_libs=$dir lava_templates=$dir/usr/share/lava-server/device-types
}
lava_root || exit 1

# --- Debian's 6.1 kernel, its headers, busybox; the daemon's packages ----------
dk=0
debian_kernel "$arch" 6.1 "$cache" || dk=$?
[ $dk = 0 ] || { log "$dk_why"; exit 1; }
log "kernel $abi-$flavour ($kver)"
rootfs_tar=""
if [ "$arch" = amd64 ]; then
	base_rootfs "$src" "$cache" || { log "$br_why"; exit 1; }
fi
if [ -n "$fetch_only" ]; then
	[ "$arch" = amd64 ] ||
		CPUHP_VM_FETCH_ONLY=1 bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$build" "$build"
	exit 0
fi

work=$build/lava-$arch
rm -rf "$work" && mkdir -p "$work"
# the module, against the kernel's own headers
guest_module "$src" "$hdrs" "$work/mod" "$work/kbuild.log" "${cross[@]}" ||
	{ cat "$work/kbuild.log"; log "the module's build against $hdrs failed"; exit 1; }
if grep -E 'warning:|error:' "$work/kbuild.log"; then log "module build has warnings"; exit 1; fi

rd=$work/ramdisk
if [ "$arch" = amd64 ]; then
	mkdir -p "$rd"
	deb=$(find "$build/debs" -maxdepth 1 -name 'cpuhp-stress_*_amd64.deb' 2>/dev/null | head -1)
	[ -n "$deb" ] || { log "no $build/debs/cpuhp-stress_*_amd64.deb (the deb_packages test builds it)"; exit 1; }
	tar -C "$rd" -xf "$rootfs_tar" --exclude=./usr/share/doc --exclude=./usr/share/man \
		--exclude=./usr/share/locale --exclude=./usr/share/info
	mkdir -p "$rd/opt/cpuhp/debs"
	cp "$deb" "$rd/opt/cpuhp/debs/"
	rm -f "$rd/init" "$rd/sbin/init"
else
	rc=0
	initramfs_base "$rd" "$src" "$busybox"
	mkdir -p "$build/vm-cross-$arch" "$rd/opt/cpuhp/bin"
	bash "$src/tests/vm/cross_daemon.sh" "$arch" "$src" "$build/vm-cross-$arch" "$rd" || rc=$?
	[ $rc = 0 ] || { log "cross-building the daemon failed (exit $rc)"; exit 1; }
	mv "$rd/bin/cpuhp-stress" "$rd/opt/cpuhp/bin/"
fi
cp "$busybox" "$rd/opt/cpuhp/busybox"
cp "$work/mod/kmod/cpuhp_probe.ko" "$rd/opt/cpuhp/"
install -m755 "$src/tests/lava/lava_init.sh" "$rd/init"
[ -e "$rd/dev/console" ] || mknod -m 600 "$rd/dev/console" c 5 1
initramfs_pack "$rd" "$work/ramdisk.cpio.gz"
rm -rf "$rd"
log "ramdisk $(du -m "$work/ramdisk.cpio.gz" | cut -f1) MiB (packed)"

# --- the definition's repository: this tree's configs, as a git repository ----
repo=$work/repo
mkdir -p "$repo"
cp -r "$src/configs" "$repo/"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=cpuhp-stress -c user.email=ci@cpuhp-stress.invalid commit -qm "configs of $src"

exec /usr/bin/python3 "$src/tests/lava/lava_check.py" --arch "$arch" --src "$src" --work "$work" \
	--kernel "$kernel" --ramdisk "$work/ramdisk.cpio.gz" --repo "$repo" \
	--lava-run "$lava_run" --lava-py "$lava_py" --lava-libs "$lava_libs" --templates "$lava_templates"
