#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The packages installed as a lab installs them (issue 33 item 2), into the
# Debian 12 root file system the systemd guest boots (tests/vm/build_rootfs.sh,
# cached per machine), in a chroot, with Debian's 6.1 and 6.12 amd64 headers:
#
#   apt-get install ./cpuhp-stress_V_amd64.deb ./cpuhp-probe-dkms_V_all.deb \
#       linux-headers-ABI61-amd64 linux-headers-ABI612-amd64
#
#   tests/pkg/deb_install.sh SRC_DIR BUILD_DIR   (the .debs in BUILD_DIR/debs,
#                                                 from deb_test.sh)
#
# Checks: DKMS built and installed cpuhp_probe for both kernels (dkms status,
# each module's vermagic is its kernel's); both units in /lib/systemd/system,
# neither enabled; /usr/bin/cpuhp-stress --version in the root says the
# package's version; the time of each kernel's DKMS build is printed (from
# its make.log). Then the root the guest boots is written to
# BUILD_DIR/pkg-root/installed.tar for tests/vm/vm_test.sh (systemd_vm): the
# base root plus what the install put there that a run uses (the packages'
# files, kmod, DKMS's modules and module indexes, dpkg's database), not the
# compilers, headers and kernel image only the build needed. Last, `apt-get purge` of both packages:
# no unit left installed or enabled, no module left built or installed.
# The root's apt lists and downloaded packages are kept per machine in
# CPUHP_VM_CACHE/pkg-root-apt (lists refreshed once a day).
# Exit 0 pass, 1 fail (a failed download too), 77 skip (not root, not amd64).
# CPUHP_VM_FETCH_ONLY=1: only download what the install needs (tests/vm/fetch).
set -euo pipefail
src=$(realpath "${1:?usage: deb_install.sh SRC_DIR BUILD_DIR}")
build=$(realpath "${2:?usage: deb_install.sh SRC_DIR BUILD_DIR}")
log() { echo "deb_install: $*"; }
[ "$(id -u)" = 0 ] || { log "SKIP: needs root (chroot)"; exit 77; }
[ "$(dpkg --print-architecture)" = amd64 ] ||
	{ log "SKIP: the host is $(dpkg --print-architecture): the systemd guest's root is amd64"; exit 77; }
cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
fetch_only=${CPUHP_VM_FETCH_ONLY:-}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
fails=0
check() {  # check DESCRIPTION COMMAND...
	if "${@:2}"; then log "ok   $1"; else log "FAIL $1"; fails=$((fails + 1)); fi
}
# shellcheck source=tests/vm/host_lib.sh
. "$src/tests/vm/host_lib.sh"
guest_arch_setup amd64 multi || { log "no amd64 guest recipe"; exit 1; }

if [ -z "$fetch_only" ]; then
	debs=("$build"/debs/cpuhp-stress_*_amd64.deb "$build"/debs/cpuhp-probe-dkms_*_all.deb)
	for d in "${debs[@]}"; do
		[ -f "$d" ] || { log "FAIL: no $d: tests/pkg/deb_test.sh SRC $build/debs builds them (ctest: deb_packages)"; exit 1; }
	done
	ver=$(dpkg-deb -f "${debs[0]}" Version)
fi

# The kernels: Debian's 6.1 (the one systemd_vm boots, fetched as the guests
# fetch it) and 6.12, their ABIs as apt resolves them today.
abis=()
for series in 6.1 6.12; do
	rc=0
	debian_kernel amd64 "$series" "$cache" || rc=$?
	[ $rc = 0 ] || { log "FAIL: Debian's $series amd64 kernel: $dk_why"; exit 1; }
	abis+=("$abi-$flavour")
done
log "kernels: ${abis[*]}"

# The base root file system, cached for the machine (host_lib.sh).
base_rootfs "$src" "$cache" || { log "FAIL: $br_why"; exit 1; }

root=$(mktemp -d /var/tmp/cpuhp-pkgroot.XXXXXX)
apt_dir=$cache/pkg-root-apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
mounts=()
# mount_root: apt's lists and archives (kept per machine), /proc, /dev
mount_root() {
	local m
	for m in "$apt_dir/lists:/var/lib/apt/lists" "$apt_dir/archives:/var/cache/apt/archives" "/dev:/dev"; do
		mkdir -p "$root${m#*:}"
		mount --bind "${m%%:*}" "$root${m#*:}"
		mounts+=("$root${m#*:}")
	done
	mount -t proc proc "$root/proc"
	mounts+=("$root/proc")
}
umount_root() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" 2>/dev/null || true
	done
	mounts=()
}
cleanup() {
	umount_root
	# never rm -rf through a mount still there
	grep -q " $root/" /proc/mounts || rm -rf "$root" "$root.guest" "$root.guest.list"
}
trap cleanup EXIT
tar -C "$root" -xf "$rootfs_tar"
mount_root
cp -L --remove-destination /etc/resolv.conf "$root/etc/resolv.conf"
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
# nothing the packages' scripts could start runs in the chroot
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
# INITRD=No: the 6.12 headers depend on their kernel image, whose hook would
# make an initramfs (a minute here) that nothing here boots.
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive INITRD=No "$@"; }
if [ -z "$(find "$apt_dir/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
	log "apt-get update in the root (lists kept in $apt_dir)"
	in_root apt-get update -q >"$root/tmp/update.log" 2>&1 ||
		{ cat "$root/tmp/update.log"; log "FAIL: apt-get update in the root"; exit 1; }
fi
hdr_pkgs=("${abis[@]/#/linux-headers-}")
if [ -n "$fetch_only" ]; then
	in_root apt-get install -y -q --no-install-recommends --download-only dkms "${hdr_pkgs[@]}" \
		>"$root/tmp/fetch.log" 2>&1 || { cat "$root/tmp/fetch.log"; log "FAIL: downloading dkms and ${hdr_pkgs[*]}"; exit 1; }
	log "downloaded dkms and ${hdr_pkgs[*]} into $apt_dir/archives"
	exit 0
fi

mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
in_debs=()  # the same files, as the root sees them
for d in "${debs[@]}"; do in_debs+=("/tmp/debs/${d##*/}"); done
start=$(date +%s)
in_root apt-get install -y -q --no-install-recommends "${in_debs[@]}" "${hdr_pkgs[@]}" \
	>"$build/deb-install.log" 2>&1 ||
	{ tail -40 "$build/deb-install.log"; log "FAIL: apt-get install of the packages and ${hdr_pkgs[*]} (log: $build/deb-install.log)"; exit 1; }
log "apt-get install ./cpuhp-stress ./cpuhp-probe-dkms ${hdr_pkgs[*]}: $(($(date +%s) - start)) s (log: $build/deb-install.log)"
grep -E "^(Building for|Building initial module|Done\.|Module build)|dkms|DKMS" "$build/deb-install.log" |
	sed 's/^/deb_install: | /' | head -20

status=$(in_root dkms status cpuhp-probe 2>/dev/null || true)
printf '%s\n' "$status" | sed 's/^/deb_install: dkms status: /'
# What DKMS costs a board per kernel, from the install's own build: DKMS
# writes the date into make.log's second line when the build starts, and
# the log's last write is the build's end (second resolution; a second
# build only to time it cost 12 s of the suite here).
for k in "${abis[@]}"; do
	mlog=$(find "$root/var/lib/dkms/cpuhp-probe/$ver/$k" -path '*/log/make.log' 2>/dev/null | head -1)
	began=$( [ -n "$mlog" ] && date -d "$(sed -n 2p "$mlog")" +%s 2>/dev/null) || began=""
	if [ -n "$began" ]; then
		log "DKMS build of cpuhp-probe $ver for $k: $(($(stat -c %Y "$mlog") - began)) s (its make.log: ${mlog#"$root"})"
	else
		check "DKMS make.log for $k, dated (/var/lib/dkms/cpuhp-probe/$ver/$k/*/log/make.log)" false
	fi
done
for k in "${abis[@]}"; do
	check "DKMS: cpuhp-probe $ver installed for $k" \
		bash -c 'grep -F "cpuhp-probe/$2, $3, " <<<"$1" | grep -q ": installed$"' _ "$status" "$ver" "$k"
	ko=$(find "$root/lib/modules/$k/updates/dkms" -name 'cpuhp_probe.ko*' 2>/dev/null | head -1)
	check "$k: /lib/modules/$k/updates/dkms/cpuhp_probe.ko* (${ko##*/})" test -n "$ko"
	[ -n "$ko" ] || continue
	check "$k: the module's vermagic is the kernel's" \
		bash -c 'modinfo -F vermagic "$1" | grep -q "^$2 "' _ "$ko" "$k"
	check "$k: modules.dep names it (modprobe finds it)" grep -q "cpuhp_probe.ko" "$root/lib/modules/$k/modules.dep"
done
for u in cpuhp-stress.service cpuhp-stress@.service; do
	check "unit $u installed in /lib/systemd/system" test -f "$root/lib/systemd/system/$u"
done
enabled=$(find "$root/etc/systemd/system" -name 'cpuhp-stress*' 2>/dev/null | sed "s|^$root||")
check "no unit enabled (${enabled:-none})" test -z "$enabled"
got=$(in_root /usr/bin/cpuhp-stress --version 2>&1 || true)
check "cpuhp-stress --version in the root: $got" test "$got" = "$ver"
check "/usr/share/cpuhp-stress/configs/soak-24h.json (the soak unit's config)" \
	test -f "$root/usr/share/cpuhp-stress/configs/soak-24h.json"

# The root the guest boots: the base root plus what the install put there
# that a run uses: the packages' files, kmod's modprobe, DKMS's modules with
# their kernels' module indexes, dpkg's database (dpkg -s works in the guest).
# Not the compilers, headers and the 6.12 image the install also brought
# (~500 MB an initramfs need not carry: the guest runs, it does not build).
umount_root
guest=$root.guest
mkdir "$guest"
tar -C "$guest" -xf "$rootfs_tar"
( cd "$root" && {
	in_root dpkg -L cpuhp-stress cpuhp-probe-dkms kmod | sed 's|^/||'
	find var/lib/dpkg
	for k in "${abis[@]}"; do
		find "lib/modules/$k/updates"
		find "lib/modules/$k" -maxdepth 1 -name 'modules.*'
	done
} | sort -u >"$guest.list" )
tar -C "$root" --no-recursion -cf - -T "$guest.list" | tar -C "$guest" -xf -
mkdir -p "$build/pkg-root"
rm -f "$build/pkg-root/installed.tar" "$build/pkg-root/kernels" "$build/pkg-root/version"
tar -C "$guest" -cf "$build/pkg-root/installed.tar.tmp" .
rm -rf "$guest" "$guest.list"
mv "$build/pkg-root/installed.tar.tmp" "$build/pkg-root/installed.tar"
printf '%s\n' "${abis[@]}" >"$build/pkg-root/kernels"
echo "$ver" >"$build/pkg-root/version"
log "installed root for the guest: $build/pkg-root/installed.tar ($(du -m "$build/pkg-root/installed.tar" | cut -f1) MiB)"

# Removal
mount_root
in_root apt-get purge -y -q cpuhp-stress cpuhp-probe-dkms >"$build/deb-purge.log" 2>&1 ||
	{ tail -20 "$build/deb-purge.log"; log "FAIL: apt-get purge cpuhp-stress cpuhp-probe-dkms"; exit 1; }
status=$(in_root dkms status cpuhp-probe 2>/dev/null || true)
check "purged: dkms knows no cpuhp-probe (${status:-nothing})" test -z "$status"
left=$(find "$root/lib/modules" -name 'cpuhp_probe.ko*' | sed "s|^$root||")
check "purged: no cpuhp_probe module left (${left:-none})" test -z "$left"
left=$(find "$root/etc/systemd" "$root/lib/systemd/system" -name 'cpuhp-stress*' | sed "s|^$root||")
check "purged: no unit left, enabled or not (${left:-none})" test -z "$left"
check "purged: no /usr/bin/cpuhp-stress" test ! -e "$root/usr/bin/cpuhp-stress"
[ "$fails" = 0 ] || { log "$fails check(s) failed"; exit 1; }
log "packages $ver installed, DKMS-built for ${abis[*]}, purged clean"
