#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The documented module build and clean commands, and DKMS's, leave the
# CMake build trees alone (issue 13 part 3). kbuild's clean of an external
# module runs `find $M -name '*.[aios]' ... -delete`: pointed at the
# repository root it deletes every object and archive of build*/.
#
#   tests/kmatrix/clean_test.sh [SRC]
#
# Runs, in a scratch copy of the repository (Kbuild, kmod/) that holds a
# fake build/ tree of objects and archives, against Debian 6.1's amd64
# headers (tests/kmatrix/kernel_tree.sh):
#  1. every `make -C /lib/modules/$(uname -r)/build M=... modules|clean`
#     line of kmod/README.md and README.md, in order;
#  2. kmod/dkms.conf's MAKE[0] and CLEAN, as DKMS runs them (from a copy
#     under $dkms_tree/NAME/VERSION/build, with ${kernel_source_dir}).
# Fails when a build makes no module, a clean leaves it, or build/ changed.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
src=$(realpath "${1:-$here/../..}")
log() { echo "clean_test: $*"; }
fail() { log "FAIL: $*"; exit 1; }
read -r kdir mk <<<"$("$here/kernel_tree.sh" kdir deb6.1-amd64)"
work=$(mktemp -d /var/tmp/cpuhp-clean-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

# repo_copy DIR: the module sources plus a build tree that must survive
repo_copy() {
	mkdir -p "$1/build/daemon" "$1/build-asan"
	cp "$src/Kbuild" "$1/"
	cp -r "$src/kmod" "$1/"
	rm -f "$1/kmod"/*.o "$1/kmod"/*.ko "$1/kmod"/*.mod* "$1/kmod"/.*.cmd
	echo obj >"$1/build/daemon/main.cc.o"
	echo ar >"$1/build/libcpuhp.a"
	echo obj >"$1/build-asan/x.o"
	(cd "$1" && find build build-asan -type f | sort | xargs sha256sum) >"$work/build.sum"
}
build_intact() {
	(cd "$1" && sha256sum --quiet -c "$work/build.sum") >/dev/null 2>&1 || fail "$2 changed build/: $(cd "$1" && find build build-asan -type f | tr '\n' ' ')"
}

# 1. the READMEs' commands
repo=$work/repo
repo_copy "$repo"
n=0
while IFS= read -r line; do
	cmd=$(echo "$line" | sed -e 's/^ *//' -e 's/ *#.*$//' \
		-e "s|/lib/modules/\$(uname -r)/build|$kdir|" -e "s|\\\$PWD|$repo|g")
	log "README: $cmd"
	(cd "$repo" && eval "$cmd $mk") >"$work/make.log" 2>&1 || { cat "$work/make.log"; fail "README command failed: $line"; }
	case "$cmd" in
	*" modules"*) [ -n "$(find "$repo" -name cpuhp_probe.ko)" ] || fail "no cpuhp_probe.ko after: $line" ;;
	*" clean"*) [ -z "$(find "$repo" -name cpuhp_probe.ko)" ] || fail "cpuhp_probe.ko left after: $line" ;;
	esac
	build_intact "$repo" "$line"
	n=$((n + 1))
done < <(cat "$src/kmod/README.md" "$src/README.md" | grep -E '^ +make -C /lib/modules/\$\(uname -r\)/build M=[^ ]+ (modules|clean)( |$)')
[ "$n" -ge 2 ] || fail "expected a documented build and clean command in the READMEs, found $n"
grep -q "clean" <(cat "$src/kmod/README.md" "$src/README.md" | grep -E '^ +make -C .* clean') || fail "no documented clean command"

# 2. DKMS
# shellcheck disable=SC2034  # read by the eval of dkms.conf's lines
kernel_source_dir=$kdir dkms_tree=$work/dkms
# shellcheck source=kmod/dkms.conf
. "$src/kmod/dkms.conf"
dk=$dkms_tree/$PACKAGE_NAME/$PACKAGE_VERSION/build
mkdir -p "$dk"
repo_copy "$dk"
cp "$src/kmod/dkms.conf" "$dk/dkms.conf"
(cd "$dk" && eval "${MAKE[0]} $mk") >"$work/dkms.log" 2>&1 || { cat "$work/dkms.log"; fail "dkms MAKE failed"; }
[ -f "$dk/${BUILT_MODULE_LOCATION[0]}/${BUILT_MODULE_NAME[0]}.ko" ] || fail "dkms MAKE made no ${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]}.ko"
build_intact "$dk" "dkms MAKE"
(cd "$dk" && eval "$CLEAN $mk") >"$work/dkms.log" 2>&1 || { cat "$work/dkms.log"; fail "dkms CLEAN failed"; }
[ ! -f "$dk/${BUILT_MODULE_LOCATION[0]}/${BUILT_MODULE_NAME[0]}.ko" ] || fail "dkms CLEAN left the module"
build_intact "$dk" "dkms CLEAN"
log "ok: $n README commands and DKMS MAKE/CLEAN leave build/ intact"
