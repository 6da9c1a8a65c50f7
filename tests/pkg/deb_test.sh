#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages (issue 33 item 1), built as the README says, from a
# copy of the source tree (the tree under test stays clean):
#
#   tests/pkg/deb_test.sh SRC_DIR [OUT_DIR]
#
# CPUHP_DEB_ARCH=arm64|ppc64el: cross-built for that architecture
# (dpkg-buildpackage -a ARCH: Debian's cross toolchain and the target's -dev
# packages, multiarch, installed beside the host's); the packaged binary's
# --version runs under QEMU's user mode.
#
# OUT_DIR: where both .debs are copied once every check passed (ctest:
# BUILD/debs, the fixture tests/pkg/deb_install.sh installs from).
#
# `dpkg-buildpackage -us -uc -b` must make cpuhp-stress_V_ARCH.deb and
# cpuhp-probe-dkms_V_all.deb, V being debian/changelog's, kmod/dkms.conf's
# PACKAGE_VERSION and the packaged binary's --version; lintian reports no
# error and no warning (overrides, each with its reason, live in debian/).
# cpuhp-stress: the binary, every config, both units naming /usr/bin (not
# /usr/local) and neither enabled nor started by its maintainer scripts,
# /etc/cpuhp-stress for the template unit. cpuhp-probe-dkms: the module's
# source and dkms.conf under /usr/src/cpuhp-probe-V, registered with DKMS by
# its postinst. Exit 0 pass, 1 fail.
set -euo pipefail
src=$(realpath "${1:?usage: deb_test.sh SRC_DIR [OUT_DIR]}")
out=${2:+$(realpath -m "$2")}
log() { echo "deb_test: $*"; }
fails=0
check() {  # check DESCRIPTION COMMAND...
	if "${@:2}"; then log "ok   $1"; else log "FAIL $1"; fails=$((fails + 1)); fi
}
for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$t" >/dev/null || { log "FAIL: $t not installed (tools/setup.sh test installs it)"; exit 1; }
done
work=$(mktemp -d /var/tmp/cpuhp-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' --exclude='./fuzz-artifacts-*' -cf - . |
	tar -C "$work/src" -xf -
cd "$work/src"
arch=${CPUHP_DEB_ARCH:-$(dpkg --print-architecture)}
cross=() run=()
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
	cross=(-a "$arch")
	case "$arch" in
	arm64) run=(qemu-aarch64) ;;
	ppc64el) run=(qemu-ppc64le) ;;
	*) log "FAIL: CPUHP_DEB_ARCH=$arch: arm64 or ppc64el"; exit 1 ;;
	esac
fi
dpkg-checkbuilddeps "${cross[@]}" || { log "FAIL: build dependencies missing (above)"; exit 1; }
start=$(date +%s)
DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage "${cross[@]}" -us -uc -b >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log"; log "FAIL: dpkg-buildpackage ${cross[*]} -us -uc -b (above)"; exit 1; }
log "dpkg-buildpackage ${cross[*]} -us -uc -b: $(($(date +%s) - start)) s"

ver=$(dpkg-parsechangelog -S Version)
dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' kmod/dkms.conf)
bin=$work/cpuhp-stress_${ver}_$arch.deb
dkms=$work/cpuhp-probe-dkms_${ver}_all.deb
check "built $(basename "$bin") and $(basename "$dkms")" test -f "$bin" -a -f "$dkms"
[ -f "$bin" ] && [ -f "$dkms" ] || exit 1
stat -c 'deb_test: %s bytes %n' "$work"/*.deb
check "dkms.conf's PACKAGE_VERSION ($dkms_ver) is the package version ($ver)" test "$dkms_ver" = "$ver"

mkdir "$work/bin" "$work/dkms"
dpkg-deb -x "$bin" "$work/bin"
dpkg-deb -x "$dkms" "$work/dkms"
dpkg-deb -e "$bin" "$work/bin/DEBIAN"
dpkg-deb -e "$dkms" "$work/dkms/DEBIAN"
got_ver=$("${run[@]}" "$work/bin/usr/bin/cpuhp-stress" --version)
check "the packaged binary says --version $got_ver" test "$got_ver" = "$ver"
for c in configs/*.json; do
	check "config $(basename "$c") packaged as in the tree" \
		cmp -s "$c" "$work/bin/usr/share/cpuhp-stress/configs/$(basename "$c")"
done
check "/etc/cpuhp-stress for the template unit's configs" test -d "$work/bin/etc/cpuhp-stress"
check "README.md in /usr/share/doc/cpuhp-stress, uncompressed (the units' Documentation=)" \
	test -f "$work/bin/usr/share/doc/cpuhp-stress/README.md"
for u in cpuhp-stress.service cpuhp-stress@.service; do
	f=$(find "$work/bin" -path "*/systemd/system/$u" | head -1)
	check "unit $u packaged" test -n "$f"
	[ -n "$f" ] || continue
	check "$u runs /usr/bin/cpuhp-stress" grep -q '^ExecStart=/usr/bin/cpuhp-stress ' "$f"
	check "$u names nothing under /usr/local" bash -c '! grep -q /usr/local "$1"' _ "$f"
	check "$u otherwise the tree's unit" \
		bash -c 'diff <(sed "s|/usr/local/|/usr/|g" "$1") "$2"' _ "systemd/$u" "$f"
done
# The maintainer scripts never enable or start a soak (postinst enables a
# unit again only where the admin had it enabled: each enable inside a
# debian-installed guard, dh_installsystemd --no-enable's snippet), an
# upgrade only try-restarts a running one, removal stops it.
post=$work/bin/DEBIAN/postinst
enables=$(grep -c 'deb-systemd-helper enable' "$post" || true)
guards=$(grep -c 'deb-systemd-helper debian-installed' "$post" || true)
check "postinst enables no unit of its own ($enables enables, $guards guards)" test "$enables" = "$guards"
check "postinst starts no unit" bash -c '! grep -Eq "deb-systemd-invoke (start|restart) " "$1"' _ "$post"
check "prerm stops a running soak and the template's instances on removal" \
	grep -q "deb-systemd-invoke stop 'cpuhp-stress.service' 'cpuhp-stress@\*.service'" "$work/bin/DEBIAN/prerm"
d=$work/dkms/usr/src/cpuhp-probe-$ver
for f in dkms.conf kmod/Kbuild kmod/cpuhp_probe.c kmod/uapi/cpuhp_probe.h; do
	check "cpuhp-probe-dkms: /usr/src/cpuhp-probe-$ver/$f" test -f "$d/$f"
done
check "dkms.conf as in the tree" cmp -s kmod/dkms.conf "$d/dkms.conf"
check "the loader in /usr/sbin/cpuhp-probe-load, executable, as in the tree" \
	bash -c 'test -x "$1" && cmp -s kmod/cpuhp-probe-load "$1"' _ "$work/dkms/usr/sbin/cpuhp-probe-load"
check "the DKMS postinst adds and builds the module" grep -q 'dkms' "$work/dkms/DEBIAN/postinst"
check "cpuhp-probe-dkms depends on dkms" bash -c 'dpkg-deb -f "$1" Depends | grep -qw dkms' _ "$dkms"
check "cpuhp-stress neither depends on dkms nor ships module source" \
	bash -c '! dpkg-deb -f "$1" Depends | grep -qw dkms && [ ! -e "$2/usr/src" ]' _ "$bin" "$work/bin"
check "cpuhp-stress's maintainer scripts do nothing with DKMS" \
	bash -c '! cat "$1"/DEBIAN/p* 2>/dev/null | grep -q dkms' _ "$work/bin"

lint=$(lintian --fail-on none --tag-display-limit 0 "$work"/*.changes 2>&1 || true)
[ -z "$lint" ] || printf '%s\n' "$lint" | sed 's/^/deb_test: lintian: /'
check "lintian: no error, no warning" bash -c '! grep -Eq "^[EW]: " <<<"$1"' _ "$lint"

[ "$fails" = 0 ] || { log "$fails check(s) failed"; exit 1; }
if [ -n "$out" ]; then
	rm -rf "$out" && mkdir -p "$out" && cp "$bin" "$dkms" "$out/" || { log "FAIL: cannot copy the packages to $out"; exit 1; }
	log "packages in $out"
fi
log "packages $ver built and checked"
