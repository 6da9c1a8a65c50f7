#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Kernel trees for the module's compile matrix (issue 13 part 1), fetched and
# prepared once per machine in /var/cache/cpuhp-stress/kmatrix:
#
#   kernel_tree.sh cells               the cells, one per line
#   kernel_tree.sh fetch [CELL...]     downloads only (all cells by default)
#   kernel_tree.sh kdir CELL           fetch + prepare; prints "KDIR ARCH=.. [CROSS_COMPILE=..]"
#   kernel_tree.sh build CELL [SRC]    builds kmod/ with W=1 against CELL; fails on any warning
#   kernel_tree.sh debian SERIES ARCH  Debian's headers (+kbuild) root for SERIES 6.1|6.12
#   kernel_tree.sh image SERIES ARCH   Debian's kernel image + busybox-static root (guests)
#   kernel_tree.sh sid-guest amd64     Debian's own 7.2 image and a tree for it (sid_guest);
#                                      prints "TREE IMAGE MAKE_ARG..."
#   kernel_tree.sh guest SERIES amd64|ppc64el|armhf [PATCH...]  linux-source-SERIES (+ patches) built for that
#                                      guest; prints "TREE IMAGE MAKE_ARG..." (guest_kernel)
#   kernel_tree.sh guest-config SERIES ARCH [PATCH...]   only that guest's configuration: prints the .config
#
# Cells: deb6.1-ARCH and deb6.12-ARCH (Debian's own headers from bookworm's
# index, ARCH amd64 arm64 ppc64el armhf), src7.2-ARCH (linux-source-7.2 from sid,
# reached through a private apt list and lists directory, never the system's
# sources, prepared with bookworm's gcc-12 / cross gcc-12) and
# src6.12-riscv64 (bookworm's linux-source-6.12 for riscv, an architecture the
# module has no case for). Versions are resolved by apt at run time; every
# cache entry is keyed by the exact version (trees also by a hash of the
# src_tree function, the options and the compiler) and is built in a temporary
# directory renamed into place, so an interrupted run leaves nothing half-made.
# A failed download is retried 3 times, then fails (exit 1), never skips.
set -euo pipefail
self=$(realpath "$0")
here=$(dirname "$self")
# CPUHP_KMATRIX_CACHE, else CPUHP_VM_CACHE/kmatrix (tools/setup.sh, the guests)
cache=${CPUHP_KMATRIX_CACHE:-${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}/kmatrix}
sid_mirror=${CPUHP_SID_MIRROR:-http://deb.debian.org/debian}
log() { echo "kernel_tree: $*" >&2; }
die() { log "$*"; exit 1; }
mkdir -p "$cache/debs" "$cache/tmp"

all_cells="deb6.1-amd64 deb6.1-arm64 deb6.1-ppc64el deb6.1-armhf deb6.12-amd64 deb6.12-arm64 deb6.12-ppc64el
deb6.12-armhf src7.2-amd64 src7.2-arm64 src7.2-ppc64el src6.12-riscv64"

# arch_vars ARCH: Debian flavour, kernel ARCH, cross prefix
arch_vars() {
	case "$1" in
	amd64) flavour=amd64 karch=x86 cross= ;;
	arm64) flavour=arm64 karch=arm64 cross=aarch64-linux-gnu- ;;
	ppc64el) flavour=powerpc64le karch=powerpc cross=powerpc64le-linux-gnu- ;;
	riscv64) flavour=riscv64 karch=riscv cross=riscv64-linux-gnu- ;;
	# 32-bit ARM boards: Debian's LPAE flavour (Cortex-A7/A15 and later,
	# QEMU's virt with a Cortex-A15)
	armhf) flavour=armmp-lpae karch=arm cross=arm-linux-gnueabihf- ;;
	*) die "unknown architecture '$1' (amd64 arm64 ppc64el armhf riscv64)" ;;
	esac
	dpkg_arch=$1
}

# retry CMD...: 3 attempts, 5 s apart
retry() {
	local i
	for i in 1 2 3; do
		"$@" && return 0
		[ "$i" = 3 ] || { log "attempt $i of: $* failed; retrying in 5 s"; sleep 5; }
	done
	return 1
}

# download PKG=VERSION...: into $cache/debs (kept by file name, which holds the
# version); prints nothing. Fails after 3 attempts with apt's output.
download() {
	local missing=() spec name ver f
	for spec in "$@"; do
		name=${spec%%=*} ver=${spec#*=}
		f=$(ls "$cache/debs/${name%%:*}_${ver//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
		[ -n "$f" ] || missing+=("$spec")
	done
	[ ${#missing[@]} = 0 ] && return 0
	log "downloading ${missing[*]}"
	retry bash -c 'cd "$1" && shift && apt-get "$@"' _ "$cache/debs" "${apt_opts[@]}" download -q \
		"${missing[@]}" >"$cache/tmp/download.log" 2>&1 ||
		{ cat "$cache/tmp/download.log" >&2; die "apt-get download ${missing[*]} failed 3 times"; }
}

deb_file() { ls "$cache/debs/${1%%:*}_${2//:/%3a}_"*.deb | head -1; }

# This machine's apt keeps no binary package cache (Dir::Cache::pkgcache ""):
# every apt-cache call would parse all lists again (8 s). A private cache,
# rebuilt by apt when the lists change.
mkdir -p "$cache/apt-bookworm"
bookworm_opts=(-o Dir::Cache::pkgcache="$cache/apt-bookworm/pkgcache.bin"
	-o Dir::Cache::srcpkgcache="$cache/apt-bookworm/srcpkgcache.bin")
apt_opts=("${bookworm_opts[@]}")
# sid through its own list, lists and cache directories (the system's
# package cache stays bookworm's). Refreshed once a day at most.
use_sid() {
	local d=$cache/sid-apt
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $sid_mirror sid main" >"$d/sources.list"
	apt_opts=(-o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache"
		-o Dir::Cache::pkgcache="$d/cache/pkgcache.bin" -o Dir::Cache::srcpkgcache="$d/cache/srcpkgcache.bin"
		-o APT::Architecture=amd64 -o APT::Architectures=amd64)
	if [ -z "$(find "$d/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
		log "apt-get update (sid, private lists in $d)"
		retry apt-get "${apt_opts[@]}" update -q >"$cache/tmp/sid-update.log" 2>&1 ||
			{ cat "$cache/tmp/sid-update.log" >&2; die "apt-get update of sid failed 3 times"; }
	fi
}

candidate() { apt-cache "${apt_opts[@]}" policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }

# debian_pkgs SERIES: sets abi, kver, hdr_pkg, common_pkg, kbuild_pkg, image_pkg
debian_pkgs() {
	local series=$1
	case "$series" in
	6.1)
		# the linux-image-FLAVOUR metapackage names the current ABI
		image_pkg=$(apt-cache "${apt_opts[@]}" depends "linux-image-$flavour:$dpkg_arch" 2>/dev/null |
			sed -n "s/^ *Depends: \(linux-image-[0-9][^ :]*-$flavour\)\(:[a-z0-9]*\)\{0,1\}$/\1/p" | awk 'NR == 1')
		;;
	6.12)
		image_pkg=$(apt-cache "${apt_opts[@]}" pkgnames linux-image-6.12. |
			grep -E "^linux-image-6\.12\.[0-9]+\+deb12-$flavour\$" | sort -V | tail -1 || true)
		;;
	*) die "unknown Debian series '$series' (6.1 6.12)" ;;
	esac
	[ -n "$image_pkg" ] || die "apt knows no Debian $series kernel for $flavour (apt-get update?)"
	abi=${image_pkg#linux-image-}
	abi=${abi%-"$flavour"}
	hdr_pkg=linux-headers-$abi-$flavour
	common_pkg=linux-headers-$abi-common
	kver=$(candidate "$hdr_pkg:$dpkg_arch")
	[ -n "$kver" ] && [ "$kver" != "(none)" ] || die "no candidate for $hdr_pkg:$dpkg_arch"
	kbuild_pkg=$(apt-cache "${apt_opts[@]}" depends "$hdr_pkg:$dpkg_arch" |
		sed -n 's/^ *Depends: \(linux-kbuild-[^ :<>]*\)\(:[a-z0-9]*\)\{0,1\}$/\1/p' | awk 'NR == 1')
	[ -n "$kbuild_pkg" ] || die "cannot resolve the kbuild package of $hdr_pkg"
}

debian_fetch() {
	arch_vars "$2"
	debian_pkgs "$1"
	# kbuild is the host's (amd64) build of the same version: its fixdep
	# and modpost run here and handle every target.
	download "$hdr_pkg:$dpkg_arch=$kver" "$common_pkg=$kver" "$kbuild_pkg:$(dpkg --print-architecture)=$kver"
}

# debian_root SERIES ARCH: prints the headers tree (usable as KDIR)
debian_root() {
	debian_fetch "$1" "$2"
	local out=$cache/deb-$abi-$flavour-$kver tmp d
	local hdrs=$out/usr/src/linux-headers-$abi-$flavour
	if [ ! -d "$out" ]; then
		tmp=$(mktemp -d "$cache/tmp/deb.XXXXXX")
		for d in "$hdr_pkg" "$common_pkg" "$kbuild_pkg"; do
			dpkg-deb -x "$(deb_file "$d" "$kver")" "$tmp"
		done
		# The arch headers name the common tree and kbuild by absolute
		# paths: point them at the final location of this tree.
		sed -i "s|[^ ]*/usr/src/linux-headers-$abi-common/|$out/usr/src/linux-headers-$abi-common/|g" \
			"$tmp/usr/src/linux-headers-$abi-$flavour/Makefile"
		for d in scripts tools; do
			[ -L "$tmp/usr/src/linux-headers-$abi-$flavour/$d" ] &&
				ln -sfn "$out/usr/lib/$kbuild_pkg/$d" "$tmp/usr/src/linux-headers-$abi-$flavour/$d"
		done
		mv -T "$tmp" "$out" 2>/dev/null || rm -rf "$tmp"  # a concurrent run won: use its tree
	fi
	echo "$hdrs"
}

# image_root SERIES ARCH: prints a root with boot/{vmlinuz,vmlinux,config}-ABI-FLAVOUR and bin/busybox
image_root() {
	arch_vars "$2"
	debian_pkgs "$1"
	local bb_ver out tmp
	bb_ver=$(candidate "busybox-static:$dpkg_arch")
	download "$image_pkg:$dpkg_arch=$kver" "busybox-static:$dpkg_arch=$bb_ver"
	out=$cache/img-$abi-$flavour-$kver
	if [ ! -d "$out" ]; then
		tmp=$(mktemp -d "$cache/tmp/img.XXXXXX")
		# only /boot of the image package: its modules are not needed
		dpkg-deb --fsys-tarfile "$(deb_file "$image_pkg" "$kver")" | tar -x -C "$tmp" ./boot
		dpkg-deb -x "$(deb_file busybox-static "$bb_ver")" "$tmp"
		mv -T "$tmp" "$out" 2>/dev/null || rm -rf "$tmp"
	fi
	echo "$out"
}

# --- prepared source trees ----------------------------------------------------
# The trees have no BTF, so nothing runs pahole; Kconfig still records the
# host's pahole version (CONFIG_PAHOLE_VERSION) and a 7.x module build warns
# when the version at build time differs. Preparing and building with a
# pahole that does not exist keeps the tree the same whether or not the host
# has dwarves (a tree prepared before dwarves was installed warned after).
no_pahole=/nonexistent/pahole

# Options every tree must end up with (checked in the final .config).
tree_options="KPROBES KRETPROBES MODULES MODULE_UNLOAD SMP HOTPLUG_CPU"

src_vars() {  # src_vars SERIES: src_pkg and its version (sid for 7.2)
	case "$1" in
	7.2) use_sid; src_pkg=linux-source-7.2 ;;
	6.12) apt_opts=("${bookworm_opts[@]}"); src_pkg=linux-source-6.12 ;;
	*) die "no source series '$1'" ;;
	esac
	src_ver=$(candidate "$src_pkg")
	[ -n "$src_ver" ] && [ "$src_ver" != "(none)" ] || die "apt knows no $src_pkg"
}

src_fetch() { src_vars "$1"; download "$src_pkg=$src_ver"; }

# cache_wait OUT MARK LOCKNAME: 0 when OUT/MARK is in the cache, made
# before or by a concurrent run this one waited for (flock on
# cache/tmp/LOCKNAME.lock, held on fd 8 until exit); else 1, the lock held.
cache_wait() {
	[ -f "$1/$2" ] && return 0
	exec 8>"$cache/tmp/$3.lock"
	flock 8
	[ -f "$1/$2" ]
}

# cache_tmp NAME: sets tmp, a new directory under cache/tmp removed on exit
# (what is kept is renamed out of it first)
cache_tmp() {
	tmp=$(mktemp -d "$cache/tmp/$1.XXXXXX")
	tree_tmp=$tmp  # global: the EXIT trap reads it
	trap 'rm -rf "$tree_tmp"' EXIT
}

# src_unpack DIR: $src_pkg's source in DIR/$src_pkg, only what Kconfig and
# modules_prepare read: no documentation, no other architecture's code, no
# driver/sound/net/fs sources (their Kconfig and Makefiles stay), no
# perf/selftests. Other architectures keep their Kconfig files (crypto/Kconfig
# sources every arch/*/crypto/Kconfig).
src_unpack() {
	local top=$src_pkg a
	local ex=(--exclude="$top/Documentation/*.rst" --exclude="$top/Documentation/devicetree"
		--exclude="$top/Documentation/translations" --exclude="$top/samples/*.c"
		--exclude="$top/tools/testing" --exclude="$top/tools/perf" --exclude="$top/tools/power"
		--exclude="$top/drivers/*.c" --exclude="$top/sound/*.c" --exclude="$top/net/*.c"
		--exclude="$top/fs/*.c" --exclude="$top/drivers/gpu/drm/*.h" --exclude="$top/drivers/net/*.h")
	for a in alpha arc arm csky hexagon loongarch m68k microblaze mips nios2 openrisc parisc s390 sh sparc um xtensa \
		x86 arm64 powerpc riscv; do
		[ "$a" = "$karch" ] || ex+=(--exclude="$top/arch/$a/*.[chS]" --exclude="$top/arch/$a/boot"
			--exclude="$top/arch/$a/configs" --exclude="$top/arch/$a/*.dts*")
	done
	dpkg-deb --fsys-tarfile "$(deb_file "$src_pkg" "$src_ver")" |
		tar -xO --wildcards "*/$src_pkg.tar.xz" | tar -xJ -C "$1" --wildcards "${ex[@]}"
}

# src_tree SERIES ARCH: prints the prepared tree
src_tree() {
	local series=$1 key out tmp top start o
	arch_vars "$2"
	src_fetch "$series"
	# keyed by what makes the tree: this function's code (declare -f drops
	# comments), the options, the compiler
	key=$( (declare -f src_tree src_unpack; echo "$tree_options"; "${cross}gcc-12" --version | head -1) |
		sha256sum | cut -c1-12)
	out=$cache/tree-$src_ver-$dpkg_arch-$key
	cache_wait "$out" .config "tree-$src_ver-$dpkg_arch" && { echo "$out"; return; }
	command -v "${cross}gcc" >/dev/null || die "${cross}gcc not installed (tools/setup.sh installs it)"
	start=$(date +%s.%N)
	cache_tmp tree
	top=${src_pkg}
	src_unpack "$tmp"
	local mk=(-C "$tmp/$top" ARCH="$karch" CROSS_COMPILE="$cross" HOSTCC=gcc-12 CC="${cross}gcc-12"
		PAHOLE="$no_pahole" -j"$(nproc)")
	make -s "${mk[@]}" defconfig >"$tmp/prepare.log" 2>&1 || { cat "$tmp/prepare.log" >&2; die "defconfig failed"; }
	for o in $tree_options; do "$tmp/$top/scripts/config" --file "$tmp/$top/.config" -e "$o"; done
	# no debug info, BTF or signing: nothing a module build reads
	"$tmp/$top/scripts/config" --file "$tmp/$top/.config" -d DEBUG_INFO -d DEBUG_INFO_BTF -d MODULE_SIG \
		-d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE
	make -s "${mk[@]}" olddefconfig >>"$tmp/prepare.log" 2>&1 || { cat "$tmp/prepare.log" >&2; die "olddefconfig failed"; }
	for o in $tree_options; do
		grep -qx "CONFIG_$o=y" "$tmp/$top/.config" || die "Kconfig dropped CONFIG_$o for $dpkg_arch $src_ver"
	done
	grep -qx "CONFIG_PAHOLE_VERSION=0" "$tmp/$top/.config" ||
		die "Kconfig saw a pahole for $dpkg_arch $src_ver (PAHOLE=$no_pahole was meant to hide it)"
	make "${mk[@]}" modules_prepare >>"$tmp/prepare.log" 2>&1 ||
		{ tail -40 "$tmp/prepare.log" >&2; die "modules_prepare failed ($src_pkg $src_ver, $dpkg_arch)"; }
	mv "$tmp/prepare.log" "$tmp/$top/.prepare.log"
	mv -T "$tmp/$top" "$out"
	rm -rf "$tmp"
	log "prepared $out in $(echo "$(date +%s.%N) - $start" | bc | cut -d. -f1) s"
	echo "$out"
}

# --- Debian's own 7.2 kernel for a guest ---------------------------------------
# sid-guest amd64: Debian sid's own kernel image (linux-binary-ABI-amd64, what
# a lab installs) and a tree to build the module against. sid's headers need
# gcc 16 to build anything (bookworm has gcc-12), so the tree is sid's
# linux-source-7.2 of the same version, configured with that kernel's own
# .config (from linux-headers-ABI-amd64) and prepared with gcc-12; the
# kernel's release string and Module.symvers come from its headers, so the
# module's vermagic is the kernel's and modpost checks every symbol it uses.
# Kconfig under gcc-12 may change only what the toolchain decides
# (sid_toolchain_options: CC_HAS_*, versions, Rust and what needs Rust); any
# other option it changes fails the tree, named, since a structure the module
# shares with the kernel could then differ (struct module follows
# DEBUG_INFO_BTF, which needs pahole: package dwarves). Debian's config has no
# MODVERSIONS: the loader checks vermagic and struct module's size.
# Prints "TREE IMAGE MAKE_ARG..." like guest.
sid_toolchain_options='^CONFIG_(CC_|GCC_|AS_|LD_|PAHOLE_|RUST|BINDGEN_|TOOLS_SUPPORT_|OPENSSL_SUPPORTS_|AX88796B_RUST_PHY$|AMCC_QT2025_PHY$|DRM_PANIC_SCREEN_QR_)'

# sid_pkgs: sets abi, kver, bin_pkg, hdr_pkg of sid's current kernel for $flavour
sid_pkgs() {
	local meta
	meta=$(apt-cache "${apt_opts[@]}" depends "linux-image-$flavour" 2>/dev/null |
		sed -n "s/^ *Depends: \(linux-image-[0-9][^ :]*-$flavour\)\$/\1/p" | awk 'NR == 1')
	[ -n "$meta" ] || die "sid's index names no kernel for linux-image-$flavour"
	abi=${meta#linux-image-}
	abi=${abi%-"$flavour"}
	bin_pkg=linux-binary-$abi-$flavour hdr_pkg=linux-headers-$abi-$flavour
	kver=$(candidate "$hdr_pkg")
	[ -n "$kver" ] && [ "$kver" != "(none)" ] || die "sid has no candidate for $hdr_pkg"
}

sid_fetch() {
	arch_vars "$1"
	[ "$dpkg_arch" = amd64 ] || die "sid-guest: Debian's 7.2 image is booted for amd64 guests only (got $dpkg_arch)"
	src_fetch 7.2
	sid_pkgs
	download "$bin_pkg=$kver" "$hdr_pkg=$kver"
	[ "$kver" = "$src_ver" ] ||
		die "sid's $src_pkg is $src_ver but its kernel $bin_pkg is $kver: no source for that kernel yet"
}

sid_guest() {
	local key out tmp start t h changed
	sid_fetch "$1"
	mk_args=(ARCH="$karch" CC=gcc-12 HOSTCC=gcc-12)
	command -v pahole >/dev/null ||
		die "pahole not installed (package dwarves; tools/setup.sh installs it): without it Kconfig drops DEBUG_INFO_BTF and the module's struct module is not the kernel's"
	key=$( (declare -f sid_guest src_unpack; echo "$sid_toolchain_options"; gcc-12 --version | head -1
		pahole --version) | sha256sum | cut -c1-12)
	out=$cache/sidguest-$kver-$dpkg_arch-$key
	cache_wait "$out" vmlinuz "sidguest-$kver-$dpkg_arch" && { echo "$out $out/vmlinuz ${mk_args[*]}"; return; }
	start=$(date +%s.%N)
	cache_tmp sidguest
	src_unpack "$tmp"
	t=$tmp/$src_pkg h=$tmp/hdr/usr/src/linux-headers-$abi-$flavour
	dpkg-deb -x "$(deb_file "$hdr_pkg" "$kver")" "$tmp/hdr"
	cp "$h/.config" "$t/.config"
	make -s -C "$t" "${mk_args[@]}" olddefconfig >"$tmp/prepare.log" 2>&1 ||
		{ cat "$tmp/prepare.log" >&2; die "olddefconfig of $hdr_pkg's config failed"; }
	changed=$(diff <(grep '^CONFIG_' "$h/.config" | sort) <(grep '^CONFIG_' "$t/.config" | sort) |
		sed -n 's/^[<>] \(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u | grep -Ev "$sid_toolchain_options" || true)
	[ -z "$changed" ] ||
		die "Kconfig under gcc-12 changed options of $hdr_pkg's config that are not the toolchain's: $(echo $changed)"
	make -C "$t" "${mk_args[@]}" -j"${CPUHP_KMATRIX_JOBS:-$(nproc)}" modules_prepare >>"$tmp/prepare.log" 2>&1 ||
		{ tail -40 "$tmp/prepare.log" >&2; die "modules_prepare failed ($src_pkg $src_ver, $hdr_pkg's config)"; }
	cp "$h/include/config/kernel.release" "$t/include/config/kernel.release"
	cp "$h/include/generated/utsrelease.h" "$t/include/generated/utsrelease.h"
	cp "$h/Module.symvers" "$t/Module.symvers"
	dpkg-deb --fsys-tarfile "$(deb_file "$bin_pkg" "$kver")" |
		tar -xO "./usr/lib/modules/$abi-$flavour/vmlinuz" >"$t/vmlinuz"
	[ -s "$t/vmlinuz" ] || die "$bin_pkg has no usr/lib/modules/$abi-$flavour/vmlinuz"
	mv "$tmp/prepare.log" "$t/.prepare.log"
	mv -T "$t" "$out"
	rm -rf "$tmp"
	log "prepared $out ($abi-$flavour's config, gcc-12) in $(echo "$(date +%s.%N) - $start" | bc | cut -d. -f1) s"
	echo "$out $out/vmlinuz ${mk_args[*]}"
}

# --- guest kernels built from source -----------------------------------------
# guest SERIES ARCH [PATCH...]: linux-source-SERIES with the patches applied
# in order (patch -p1; tools/abtest.sh's src:...+P.patch), configured from
# tinyconfig plus the architecture's fragment (guest_arch) and built whole
# with gcc-12 (the image and the tree the module builds against, with its
# Module.symvers), once per machine and patch set. Prints one line: "TREE
# IMAGE MAKE_ARG...", the make arguments a module build against TREE needs.
# Every option of the fragment is checked in the final .config. The objects
# are deleted after the build: what stays is what an external module build
# reads. arm64 guests boot Debian's own images; armhf's from source serve
# seed 002's A/B (docs/ab-seeds.md).
# CPUHP_KMATRIX_JOBS sets make -j (default: every CPU). Through ccache when
# it is installed (objects in the cache's ccache/): an A/B's two kernels
# differ in one patch, so the second build compiles only what the patch
# touches (paths made relative to the tree, no debug info: the objects do
# not depend on the temporary directory's name).
# guest-config SERIES ARCH [PATCH...]: the same up to the configuration;
# prints the .config and keeps nothing.
#
# The cache key: guest_recipe, the text of the helpers that make the tree
# (declare -f drops comments) and the inputs: the architecture's row, its
# fragment, the compiler, the patches. Bump guest_recipe by hand when
# guest_kernel itself changes what it builds.
guest_recipe=1

# Only what the guest's build reads, below the source's top directory: no
# documentation, perf or selftests, no sources of drivers tinyconfig leaves
# out; guest_unpack adds the other architectures' code.
guest_excludes=('Documentation/*.rst' Documentation/devicetree Documentation/translations tools/testing
	tools/perf 'drivers/gpu/*.[ch]' 'drivers/net/*.[ch]' 'drivers/staging/*.[ch]' 'drivers/media/*.[ch]'
	'sound/*.[ch]')

# guest_arch ARCH: the architecture's row (arch_vars plus g_fragment, the
# make target g_target, the image g_image in the tree, the compiler g_cc,
# g_needs: a header the build needs). Returns 1 for an architecture no guest
# is built for.
guest_arch() {
	arch_vars "$1"
	case "$dpkg_arch" in
	# objtool needs libelf
	amd64) g_fragment=src_guest.config g_target=bzImage g_image=arch/x86/boot/bzImage
		g_needs=/usr/include/libelf.h ;;
	# QEMU's VOF firmware boots vmlinux like Debian's /boot/vmlinux
	ppc64el) g_fragment=src_guest_ppc64el.config g_target=vmlinux g_image=vmlinux g_needs= ;;
	# QEMU's virt board passes its device tree to a zImage
	armhf) g_fragment=src_guest_armhf.config g_target=zImage g_image=arch/arm/boot/zImage g_needs= ;;
	*) return 1 ;;
	esac
	g_fragment=$here/../vm/$g_fragment
	g_cc=${cross}gcc-12
}

# src_make_args [WRAPPER]: sets mk_args, what make needs to build in or
# against a tree made here from source (src_tree, guest_kernel): the
# architecture, gcc-12 (run through WRAPPER, e.g. ccache), no pahole
src_make_args() {
	mk_args=(ARCH="$karch")
	[ -z "$cross" ] || mk_args+=(CROSS_COMPILE="$cross")
	mk_args+=(CC="${1:+$1 }${cross}gcc-12" HOSTCC=gcc-12 PAHOLE="$no_pahole")
}

# guest_unpack DIR PATCH...: $src_pkg's source in DIR/$src_pkg, less
# guest_excludes and the other architectures' code (their Kconfig files
# stay: crypto/Kconfig sources every arch/*/crypto/Kconfig), the patches
# applied in order
guest_unpack() {
	local dir=$1 top=$src_pkg a p
	shift
	local ex=("${guest_excludes[@]/#/--exclude=$top/}")
	for a in alpha arc arm csky hexagon loongarch m68k microblaze mips nios2 openrisc parisc s390 sh sparc um xtensa \
		x86 arm64 powerpc riscv; do
		[ "$a" = "$karch" ] || ex+=(--exclude="$top/arch/$a/*.[chS]" --exclude="$top/arch/$a/boot"
			--exclude="$top/arch/$a/configs" --exclude="$top/arch/$a/*.dts*")
	done
	dpkg-deb --fsys-tarfile "$(deb_file "$src_pkg" "$src_ver")" |
		tar -xO --wildcards "*/$src_pkg.tar.xz" | tar -xJ -C "$dir" --wildcards "${ex[@]}"
	for p in "$@"; do
		patch -p1 -d "$dir/$top" <"$p" >>"$dir/patch.log" 2>&1 ||
			{ cat "$dir/patch.log" >&2; die "$p does not apply to $src_pkg $src_ver (above)"; }
		log "applied $p"
	done
}

# guest_configure TREE LOG MAKE_ARG...: tinyconfig plus g_fragment; fails
# naming each option of the fragment Kconfig dropped
guest_configure() {
	local tree=$1 blog=$2 line lost=0
	shift 2
	make -s -C "$tree" "$@" tinyconfig >"$blog" 2>&1 || { cat "$blog" >&2; die "tinyconfig failed"; }
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "$g_fragment" >>"$blog" 2>&1 ||
		{ cat "$blog" >&2; die "merge_config failed"; }
	make -s -C "$tree" "$@" olddefconfig >>"$blog" 2>&1 || { cat "$blog" >&2; die "olddefconfig failed"; }
	while IFS= read -r line; do
		case "$line" in CONFIG_*) ;; *) continue ;; esac
		grep -qx "$line" "$tree/.config" || { log "Kconfig dropped $line"; lost=1; }
	done <"$g_fragment"
	[ "$lost" = 0 ] || die "the $src_pkg $src_ver $dpkg_arch guest config lost options of $g_fragment (above)"
}

# guest_kernel SERIES ARCH [PATCH...] (guest_config_only=1: guest-config)
guest_kernel() {
	local series=$1 key out tmp start p t wrap="" jobs=${CPUHP_KMATRIX_JOBS:-$(nproc)}
	guest_arch "$2" ||
		{ log "guest $series $2: kernels from source are built for amd64, ppc64el and armhf guests only"; exit 2; }
	shift 2
	for p in "$@"; do [ -r "$p" ] || die "guest $series: patch $p: cannot read it"; done
	src_fetch "$series"
	src_make_args
	for t in flex bison bc make gcc-12 "$g_cc"; do
		command -v "$t" >/dev/null || die "$t not installed (tools/setup.sh installs it)"
	done
	[ -z "$g_needs" ] || [ -f "$g_needs" ] || die "no $g_needs (tools/setup.sh installs it)"
	key=$( (echo "guest_recipe=$guest_recipe"; declare -f src_make_args guest_unpack guest_configure
		printf '%s\n' "$dpkg_arch" "$g_target" "$g_image" "$no_pahole" "${guest_excludes[@]}"
		cat "$g_fragment"; "$g_cc" --version | head -1; cat "$@") | sha256sum | cut -c1-12)
	out=$cache/guest-$src_ver-$dpkg_arch$([ $# = 0 ] || echo "-$#p")-$key
	if [ "${guest_config_only:-0}" = 0 ] && cache_wait "$out" "$g_image" "guest-$src_ver-$dpkg_arch"; then
		echo "$out $out/$g_image ${mk_args[*]}"
		return
	fi
	start=$(date +%s.%N)
	cache_tmp guest
	guest_unpack "$tmp" "$@"
	if command -v ccache >/dev/null; then
		wrap=ccache
		export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tmp/$src_pkg CCACHE_MAXSIZE=4G
	fi
	src_make_args "$wrap"
	local mk=("${mk_args[@]}" -j"$jobs")
	guest_configure "$tmp/$src_pkg" "$tmp/build.log" "${mk[@]}"
	if [ "${guest_config_only:-0}" = 1 ]; then
		cat "$tmp/$src_pkg/.config"
		return
	fi
	log "building $src_pkg $src_ver for the $dpkg_arch guest (once per machine and patch set, make -j$jobs)"
	make -C "$tmp/$src_pkg" "${mk[@]}" "$g_target" modules >>"$tmp/build.log" 2>&1 ||
		{ tail -40 "$tmp/build.log" >&2; die "guest kernel build failed ($src_pkg $src_ver, $dpkg_arch)"; }
	[ -f "$tmp/$src_pkg/Module.symvers" ] || die "the guest kernel build left no Module.symvers"
	find "$tmp/$src_pkg" -name '*.o' -delete
	mv "$tmp/build.log" "$tmp/$src_pkg/.build.log"
	mv -T "$tmp/$src_pkg" "$out"
	rm -rf "$tmp"
	log "built $out in $(echo "$(date +%s.%N) - $start" | bc | cut -d. -f1) s"
	src_make_args
	echo "$out $out/$g_image ${mk_args[*]}"
}

# cell_kdir CELL: sets kdir and mk_args
cell_kdir() {
	local cell=$1 series=${1%%-*} arch=${1#*-} line
	case " $(echo $all_cells) " in *" $cell "*) ;; *) die "unknown cell '$cell' (kernel_tree.sh cells)" ;; esac
	case "$cell" in
	deb*) kdir=$(debian_root "${series#deb}" "$arch") ;;
	# the tree of Debian's own 7.2 kernel the amd64 guest boots (sid-guest):
	# with its Module.symvers, so modpost checks the symbols the module uses
	src7.2-amd64)
		line=$(sid_guest amd64) || die "$cell: no tree for Debian's 7.2 amd64 kernel (above)"
		kdir=${line%% *} ;;
	src*) kdir=$(src_tree "${series#src}" "$arch") ;;
	esac
	arch_vars "$arch"
	mk_args=(ARCH="$karch")
	[ -z "$cross" ] || mk_args+=(CROSS_COMPILE="$cross")
	case "$cell" in
	# no module BTF: pahole would want the kernel's vmlinux
	src7.2-amd64) read -r -a mk_args <<<"${line#* * }"; mk_args+=(CONFIG_DEBUG_INFO_BTF_MODULES=) ;;
	# no vmlinux, so no Module.symvers: modpost cannot check the kernel
	# symbols the module uses; it lists them as warnings (filtered below)
	src*) src_make_args; mk_args+=(KBUILD_MODPOST_WARN=1) ;;
	# Debian's 6.12 config has DEBUG_INFO_BTF_MODULES: BTF needs pahole
	# (dwarves) and a vmlinux; the compile matrix does not need BTF.
	deb6.12-*) mk_args+=(CONFIG_DEBUG_INFO_BTF_MODULES=) ;;
	esac
}

cell_fetch() {
	local series=${1%%-*} arch=${1#*-}
	case "$series" in
	deb*) debian_fetch "${series#deb}" "$arch" ;;
	src*) src_fetch "${series#src}"
		[ "$1" != src7.2-amd64 ] || sid_fetch amd64 ;;
	esac
}

# build CELL SRC: copies Kbuild + kmod/ to a scratch directory (the tree
# under test stays clean), builds with W=1, fails on any compiler warning.
cell_build() {
	local cell=$1 src=$2 t0 t1 rc=0 dkms_ver mod_ver
	t0=$(date +%s.%N)
	cell_kdir "$cell"
	t1=$(date +%s.%N)
	work=$(mktemp -d /var/tmp/cpuhp-kmatrix.XXXXXX)  # global: the EXIT trap reads it
	trap 'rm -rf "$work"' EXIT
	cp -r "$src/kmod" "$work/"
	rm -f "$work/kmod"/*.o "$work/kmod"/*.ko "$work/kmod"/*.mod* "$work/kmod"/.*.cmd
	make -C "$kdir" M="$work/kmod" "${mk_args[@]}" W=1 modules >"$work/build.log" 2>&1 || rc=$?
	cat "$work/build.log"
	[ "$rc" = 0 ] || die "$cell: module build failed (exit $rc)"
	[ -f "$work/kmod/cpuhp_probe.ko" ] || die "$cell: no cpuhp_probe.ko"
	# A prepared-only tree has no vmlinux and so no Module.symvers: modpost
	# says so and lists the kernel symbols it cannot check. Nothing else
	# may warn.
	if grep -iE 'warning|error' "$work/build.log" |
		grep -vE 'Module\.symvers is missing|modpost: "[a-z_0-9]+" \[.*cpuhp_probe\.ko\] undefined!|unresolved symbol errors|KBUILD_MODPOST_WARN|suppressed [0-9]+ unresolved symbol warnings'; then
		die "$cell: the module build warns (above)"
	fi
	# MODULE_VERSION is the DKMS package version
	dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/kmod/dkms.conf")
	mod_ver=$(modinfo -F version "$work/kmod/cpuhp_probe.ko")
	[ -n "$dkms_ver" ] && [ "$mod_ver" = "$dkms_ver" ] ||
		die "$cell: MODULE_VERSION '$mod_ver' is not kmod/dkms.conf's PACKAGE_VERSION '$dkms_ver'"
	# The bpf source's programs for this architecture (PT_REGS_* from its
	# uapi <asm/ptrace.h>, where its libc's compiler finds it: the headers
	# the daemon's own build uses, daemon/sources/bpf/bpf.cmake), as
	# warning-free as the module (issue 34: every cell, riscv64 and armhf
	# among them, compiles the BPF object).
	local asm_dir
	command -v clang >/dev/null || die "$cell: clang not installed (the BPF object)"
	asm_dir=$(echo '#include <asm/ptrace.h>' | "${cross}gcc" -M -x c - 2>/dev/null |
		grep -o '[^ ]*/asm/ptrace\.h' | head -1)
	[ -n "$asm_dir" ] || die "$cell: ${cross}gcc finds no <asm/ptrace.h> (the target's linux-libc-dev: libc6-dev-$dpkg_arch-cross)"
	asm_dir=$(dirname "$(dirname "$asm_dir")")
	clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_"$karch" -Wall -Werror -I"$asm_dir" \
		-c "$src/daemon/sources/bpf/cpuhp_phases.bpf.c" -o "$work/cpuhp_phases.bpf.o" ||
		die "$cell: the BPF object does not compile for $karch (above)"
	log "$cell: ok, version $mod_ver, BPF object $(stat -c %s "$work/cpuhp_phases.bpf.o") bytes (tree $(echo "$t1 - $t0" | bc) s, build $(echo "$(date +%s.%N) - $t1" | bc) s, $kdir)"
}

main() {
cmd=${1:-}
shift || true
case "$cmd" in
cells) echo "$all_cells" | tr ' ' '\n' | grep . ;;
fetch)
	[ $# -gt 0 ] || set -- $all_cells
	for c in "$@"; do cell_fetch "$c"; done ;;
kdir) cell_kdir "${1:?kdir CELL}"; echo "$kdir ${mk_args[*]}" ;;
build) cell_build "${1:?build CELL [SRC]}" "$(realpath "${2:-$here/../..}")" ;;
debian) debian_root "${1:?debian SERIES ARCH}" "${2:?debian SERIES ARCH}" ;;
image) image_root "${1:?image SERIES ARCH}" "${2:?image SERIES ARCH}" ;;
sid-guest) sid_guest "${1:?sid-guest amd64}" ;;
guest | guest-config)
	[ "$cmd" = guest ] || guest_config_only=1
	guest_kernel "${1:?$cmd SERIES amd64|ppc64el|armhf [PATCH...]}" "${2:?$cmd SERIES amd64|ppc64el|armhf [PATCH...]}" "${@:3}" ;;
*) echo "usage: kernel_tree.sh cells|fetch [CELL..]|kdir CELL|build CELL [SRC]|debian SERIES ARCH|image SERIES ARCH|sid-guest amd64|guest SERIES amd64|ppc64el|armhf [PATCH...]|guest-config SERIES amd64|ppc64el|armhf [PATCH...]" >&2; exit 2 ;;
esac
}
# one line: bash has read the whole script before it runs (safe to edit meanwhile)
main "$@"; exit $?
