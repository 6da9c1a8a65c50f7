# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # sets variables its callers read
# Sourced by the host-side guest runners (run_vm_test.sh, run_real_guest.sh,
# vm_test.sh) and tools/abtest.sh.
# shellcheck source=tools/fetchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/fetchlib.sh"  # apt_fast

# copy_libs ROOT ELF...: copies into the initramfs tree ROOT the shared
# libraries (and loader) the host's ELF files need, at the same paths.
copy_libs() {
	local root=$1 lib
	shift
	ldd "$@" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u |
		while read -r lib; do
			[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"; }
		done
}
#
# debs_unpacked CACHE NAME PKG...: downloads the packages (apt-get download
# PKG...) into a new temporary directory CACHE/.NAME.XXXXXX and unpacks them
# into its root/; sets du_tmp to that directory. A failed download: its
# output on stderr, nothing left, return 1.
debs_unpacked() {
	local cache=$1 name=$2 d
	shift 2
	mkdir -p "$cache"
	du_tmp=$(mktemp -d "$cache/.$name.XXXXXX")
	mkdir -p "$du_tmp/debs"
	if ! (cd "$du_tmp/debs" && apt_fast apt-get download -q "$@") >"$du_tmp/download.log" 2>&1; then
		cat "$du_tmp/download.log" >&2
		rm -rf "$du_tmp"
		return 1
	fi
	for d in "$du_tmp"/debs/*.deb; do dpkg-deb -x "$d" "$du_tmp/root"; done
	rm -rf "$du_tmp/debs"
}
#
# debs_cached CACHE NAME LAYOUT PKG...: the candidate versions of the packages
# (ARCH-qualified where foreign) downloaded and unpacked once per machine into
# CACHE/NAME-KEY, KEY from LAYOUT (a version of the directory's layout) and
# the versions: a new version is a new directory, made in a temporary one and
# renamed (jobs on other trees share the cache). Sets dc_dir; returns 1 with
# dc_why set when apt has no candidate for one of them or the download fails.
debs_cached() {
	local cache=$1 name=$2 layout=$3 key
	shift 3
	local -a versions
	mapfile -t versions < <(apt_fast apt-cache policy "$@" 2>/dev/null |
		awk '/^[^ ].*:$/ {p = substr($0, 1, length($0) - 1)} /^ *Candidate:/ {print p "=" $2}')
	if [ ${#versions[@]} != $# ] || grep -q '=(none)$' <<<"$(printf '%s\n' "${versions[@]}")"; then
		dc_why="no candidate for each of $* in the package index (apt-get update)"
		return 1
	fi
	key=$(printf '%s\n' "$layout" "${versions[@]}" | sha256sum | cut -c1-16)
	dc_dir=$cache/$name-$key
	[ ! -f "$dc_dir/.done" ] || return 0
	debs_unpacked "$cache" "$name" "${versions[@]}" || { dc_why="apt-get download of $* failed"; return 1; }
	printf '%s\n' "${versions[@]}" >"$du_tmp/root/.packages"
	touch "$du_tmp/root/.done"
	rm -rf "$dc_dir"  # (only ever a complete one, or an old layout's leftover)
	mv -T "$du_tmp/root" "$dc_dir" 2>/dev/null || [ -f "$dc_dir/.done" ]  # another job won the race
	rm -rf "$du_tmp"
}
#
# _trap_cmd WORD...: the command of `trap -p SIGNAL`'s output (trap -- CMD SIGNAL)
_trap_cmd() { printf '%s' "${3:-}"; }
#
# boot_guest WORK TIMEOUT_S QEMU ARGS...: runs QEMU (its stdin /dev/null)
# with the serial console in WORK/console.raw and sets qrc to its exit
# status. Everything is on the console once the guest prints
# "==CPUHP== DONE"; should QEMU still run 60 s later (a 16-vCPU TCG guest
# once never exited, and a kernel without power-off halts), it is stopped:
# the results are out. WORK/console.log gets the console without CRs and
# terminal escapes.
#
# With guest_up_within=N set, a guest that has not printed guest_up_mark
# (default "==CPUHP== guest up", the first line of every /init here) N s
# after the start (or that ended before) is stopped and guest_up is 0
# (else 1): boot_guest_accel's KVM try.
# The caller's EXIT trap (a temporary root to remove, ...) still runs: while
# QEMU runs after stopping it, and again the caller's own once it is done.
boot_guest() {
	local work=$1 limit=$2 start_s=$SECONDS prev_trap prev_cmd
	shift 2
	guest_up=1
	prev_trap=$(trap -p EXIT)
	prev_cmd=$(eval "_trap_cmd $prev_trap")
	timeout --foreground -k 5 "$limit" "$@" </dev/null >"$work/console.raw" 2>&1 &
	guest_qpid=$!
	trap 'kill "$guest_qpid" 2>/dev/null; '"$prev_cmd" EXIT
	while kill -0 "$guest_qpid" 2>/dev/null; do
		if [ -n "${guest_up_within:-}" ] && ! grep -q "${guest_up_mark:-==CPUHP== guest up}" "$work/console.raw" 2>/dev/null &&
			[ $((SECONDS - start_s)) -ge "$guest_up_within" ]; then
			guest_up=0
			kill "$guest_qpid" 2>/dev/null || true
			break
		fi
		if grep -q "==CPUHP== DONE" "$work/console.raw" 2>/dev/null; then
			for _ in $(seq 60); do kill -0 "$guest_qpid" 2>/dev/null || break; sleep 1; done
			if kill -0 "$guest_qpid" 2>/dev/null; then
				echo "boot_guest: guest printed DONE, QEMU still up 60 s later: stopping it" >&2
				kill "$guest_qpid" 2>/dev/null || true
			fi
			break
		fi
		sleep 1
	done
	qrc=0
	wait "$guest_qpid" || qrc=$?
	if [ -n "$prev_trap" ]; then eval "$prev_trap"; else trap - EXIT; fi
	[ -z "${guest_up_within:-}" ] || grep -q "${guest_up_mark:-==CPUHP== guest up}" "$work/console.raw" || guest_up=0
	tr -d '\r' <"$work/console.raw" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >"$work/console.log"
}
#
# boot_guest_accel WORK TIMEOUT_S QEMU ARCH ARGS...: boot_guest with KVM when
# it can run this guest, else TCG, and says which and why (guest_accel is
# kvm or tcg afterwards). The caller sets the arrays kvm_args (e.g. -accel
# kvm -cpu host) and tcg_args (-accel tcg,... -cpu ...). KVM is tried only
# for a guest of the host's own architecture with a usable /dev/kvm, and
# tried for real: a paravirtual /dev/kvm (this lab's PVM) opens fine but
# runs only kernels built for it (Debian's abort with "failed to set MSR
# 0x10a" or stop on "KVM internal error"). A guest that has not reached its
# /init within CPUHP_VM_KVM_PROBE_S (default 30) s is stopped and booted
# again under TCG; the verdict is kept for this host boot in /run, keyed by
# kernel image and QEMU, so the next guest does not try again.
# CPUHP_VM_ACCEL=kvm|tcg forces one (kvm: no fallback).
boot_guest_accel() {
	local work=$1 limit=$2 qemu=$3 garch=$4 want=${CPUHP_VM_ACCEL:-auto} why="" key verdict kernel=""
	shift 4
	local a prev=""
	for a in "$@"; do [ "$prev" = -kernel ] && kernel=$a; prev=$a; done
	guest_accel=tcg
	if [ "$want" = tcg ]; then
		why="CPUHP_VM_ACCEL=tcg"
	elif [ "$garch" != "$(dpkg --print-architecture)" ]; then
		why="guest $garch on a $(dpkg --print-architecture) host"
	elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		why="no usable /dev/kvm"
	else
		key=$( { stat -Lc '%n %s %Y' "$kernel"; "$qemu" --version | head -1; printf '%s\n' "${kvm_args[@]}"; } |
			sha256sum | cut -c1-16)
		verdict=/run/cpuhp-stress-kvm-$key
		if [ "$want" = auto ] && [ -f "$verdict" ]; then
			why="$(cat "$verdict") (verdict of an earlier guest this boot, $verdict)"
		else
			echo "boot_guest_accel: trying KVM ($qemu ${kvm_args[*]})" >&2
			guest_up_within=${CPUHP_VM_KVM_PROBE_S:-30}
			[ "$want" = kvm ] && guest_up_within=""
			boot_guest "$work" "$limit" "$qemu" "${kvm_args[@]}" "$@"
			guest_up_within=""
			if [ "$guest_up" = 1 ]; then
				guest_accel=kvm
				echo "boot_guest_accel: guest ran under KVM" >&2
				return 0
			fi
			why="KVM could not run $(basename "$kernel"): $(grep -v '^\s*$' "$work/console.log" | tail -2 | tr '\n' ' ' | cut -c1-200)"
			why=${why% }
			[ "$(grep -c . "$work/console.log")" = 0 ] &&
				why="KVM could not run $(basename "$kernel"): nothing on the console within ${CPUHP_VM_KVM_PROBE_S:-30} s"
			echo "$why" >"$verdict"
			cp "$work/console.log" "$work/console-kvm-try.log"
		fi
	fi
	echo "boot_guest_accel: TCG: $why" >&2
	boot_guest "$work" "$limit" "$qemu" "${tcg_args[@]}" "$@"
}
#
# guest_arch_setup ARCH TCG_THREAD: the QEMU of a Debian ARCH guest (amd64,
# arm64 virt, armhf virt Cortex-A15, ppc64el pseries under VOF) and how to run it: sets qemu,
# flavour (Debian's kernel flavour), console, cc (a C compiler for the
# guest), cross (kbuild's ARCH/CROSS_COMPILE; empty on the host's arch),
# qemu_args (both accelerators), kvm_args, tcg_args, kimage (vmlinuz or
# vmlinux in Debian's /boot), kappend (kernel command-line words the arch
# needs in a slow guest: x86's no_timer_check, as a TCG vCPU on a loaded
# host can miss the IO-APIC timer check, and 6.12 then panics "IO-APIC +
# timer doesn't work!", seen here at load 23 on 2 cores; POWER's
# nmi_watchdog=0: its hard-lockup detector counts the host's starving of a
# TCG vCPU, "CPU 0 self-detected hard LOCKUP" 15 s into a 6.12 boot there,
# before any test ran; soft lockups are still reported), smp_max (the most
# vCPUs the guest may have here, empty for no limit: armhf's multi-threaded
# TCG runs a host thread per vCPU and stalls when they outnumber the CPUs).
# guest_smt_topology ARCH SMP THREADS: sets smp_topology, the -smp value of a
# guest with THREADS threads per core (1: plain SMP), and gives an amd64
# TCG CPU topoext, without which "This family of AMD CPU doesn't support
# hyperthreading" and Linux sees one thread per core. After
# guest_arch_setup (it edits tcg_args). Non-zero with smt_why set: not amd64
# (QEMU 7.2: "TCG cannot support more than 1 thread/core on a pseries
# machine"), or THREADS does not divide SMP.
guest_smt_topology() {
	local arch=$1 smp=$2 threads=$3 i
	smp_topology=$smp smt_why=""
	[ "$threads" != 1 ] || return 0
	if [ "$arch" != amd64 ]; then
		smt_why="SMT guests are amd64 only here (QEMU 7.2: no pseries SMT under TCG)"
		return 1
	fi
	if [ $((smp % threads)) != 0 ]; then
		smt_why="$threads threads per core do not divide $smp vCPUs"
		return 1
	fi
	smp_topology="$smp,sockets=1,cores=$((smp / threads)),threads=$threads"
	for i in "${!tcg_args[@]}"; do [ "${tcg_args[$i]}" != max ] || tcg_args[i]=max,+topoext; done
}

guest_arch_setup() {
	local tcg="tcg,thread=$2" host
	host=$(dpkg --print-architecture)
	cross=()
	kappend=""
	smp_max="" smp_arch=$1
	case "$1" in
	amd64)
		qemu=qemu-system-x86_64 flavour=amd64 console=ttyS0 cc=x86_64-linux-gnu-gcc kimage=vmlinuz
		[ "$host" = amd64 ] || cross=(ARCH=x86_64 CROSS_COMPILE=x86_64-linux-gnu-)
		qemu_args=(-device "isa-debug-exit,iobase=0xf4,iosize=0x04")
		tcg_args=(-accel "$tcg" -cpu max) kvm_args=(-accel kvm -cpu host) kappend=no_timer_check ;;
	arm64)
		qemu=qemu-system-aarch64 flavour=arm64 console=ttyAMA0 cc=aarch64-linux-gnu-gcc kimage=vmlinuz
		[ "$host" = arm64 ] || cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		qemu_args=(-M virt)
		tcg_args=(-accel "$tcg" -cpu cortex-a57) kvm_args=(-accel kvm -cpu host) ;;
	armhf)
		# 32-bit ARM (issue 36): Debian's LPAE kernel on a Cortex-A15
		# virt board (PSCI CPU hotplug, PL011 UART), highmem off so
		# that nothing sits above 4 GiB for the 32-bit guest. Always
		# multi-threaded TCG: under one TCG thread (QEMU 7.2, bookworm)
		# a guest of 2 vCPUs or more hangs in its first stop_machine
		# (fix_kernmem_perms, before "Freeing unused kernel image"),
		# 6.1 and 6.12 alike, any -cpu or GIC. And 2 vCPUs, one per
		# host core (PROCESSORS 2 in ctest): with 4 on 2 cores, the
		# stop_machine of every 32-bit ARM kprobe's text patching met
		# soft lockups of 26-45 s and an RCU stall.
		[ "$2" = multi ] || tcg="tcg,thread=multi"
		# The machine's CPUs, not those online now: a real-CPU test
		# holding cpu1 offline beside it made plain nproc say 1, and a
		# 1-vCPU guest has no CPU to hotplug (vm_kmod_armhf failed so).
		smp_max=$(nproc --all)
		# the PL011 at 115200, as on Debian's armhf boards and seed 002's (QEMU's
		# UART does not pace to it)
		qemu=qemu-system-arm flavour=armmp-lpae console=ttyAMA0,115200 cc=arm-linux-gnueabihf-gcc kimage=vmlinuz
		[ "$host" = armhf ] || cross=(ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-)
		qemu_args=(-M "virt,highmem=off")
		tcg_args=(-accel "$tcg" -cpu cortex-a15) kvm_args=(-accel kvm -cpu host) ;;
	ppc64el)
		qemu=qemu-system-ppc64 flavour=powerpc64le console=hvc0 cc=powerpc64le-linux-gnu-gcc kimage=vmlinux
		[ "$host" = ppc64el ] || cross=(ARCH=powerpc CROSS_COMPILE=powerpc64le-linux-gnu-)
		qemu_args=(-M "pseries,x-vof=on,cap-cfpc=broken,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off")
		tcg_args=(-accel "$tcg") kvm_args=(-accel kvm) kappend=nmi_watchdog=0 ;;
	*) return 2 ;;
	esac
	command -v "$cc" >/dev/null || [ "$host" != "$1" ] || cc=gcc
}

# guest_smp_cap GIVEN: after guest_arch_setup, brings $smp down to smp_max
# when it is above it; returns 1 with smp_why instead when the user asked
# for that count (GIVEN non-empty).
guest_smp_cap() {
	[ -n "$smp_max" ] && [ "$smp" -gt "$smp_max" ] || return 0
	smp_why="an $smp_arch guest runs one host thread per vCPU: at most $smp_max here, not $smp"
	[ -z "$1" ] || return 1
	smp=$smp_max
}
#
# debian_kernel ARCH SERIES CACHE: Debian's own kernel of SERIES (6.1:
# bookworm's linux-image-FLAVOUR; else linux-image-SERIES-FLAVOUR, e.g.
# bookworm's 6.12) for ARCH, with its headers made usable for an
# out-of-tree build here (a KDIR for `make -C KDIR M=... modules` as it is,
# lava_module_step too), and busybox-static for ARCH. The ABI is resolved
# from the metapackage now; the packages are fetched once into
# CACHE/vm-kernel-ABI-FLAVOUR-VERSION (built in a temporary directory, then
# renamed: other trees and machines' jobs share the cache; tests/vm/fetch
# fills it before the tests). Needs guest_arch_setup's flavour and kimage.
# Sets meta, abi, kver, kroot (the unpacked packages), hdrs, kernel,
# kconfig, busybox. Returns 1 (skip) when apt does not know the packages, 2
# (fail) when their download fails; dk_why says why.
debian_kernel() {
	local arch=$1 series=$2 cache=$3 abi_pkg kbuild_pkg common l tmp dir
	meta=linux-image-$flavour
	[ "$series" = 6.1 ] || meta=linux-image-$series-$flavour
	abi_pkg=$(apt_fast apt-cache depends "$meta:$arch" 2>/dev/null |
		sed -n "s/^ *Depends: \(linux-image-[0-9][^ :]*-$flavour\)\(:[a-z0-9]*\)\{0,1\}$/\1/p" | awk 'NR == 1')
	[ -n "$abi_pkg" ] || { dk_why="cannot resolve $meta:$arch (apt-get update?)"; return 1; }
	abi=${abi_pkg#linux-image-}
	abi=${abi%-"$flavour"}
	kver=$(apt_fast apt-cache policy "$abi_pkg:$arch" | sed -n 's/^ *Candidate: //p')
	kbuild_pkg=$(apt_fast apt-cache depends "linux-headers-$abi-$flavour:$arch" |
		sed -n 's/^ *Depends: \(linux-kbuild-[0-9][^ :]*\)\(:[a-z0-9]*\)\{0,1\}$/\1/p' | awk 'NR == 1')
	[ -n "$kbuild_pkg" ] || { dk_why="cannot resolve the kbuild package of linux-headers-$abi-$flavour:$arch"; return 1; }
	dir=$cache/vm-kernel-$abi-$flavour-$kver
	kroot=$dir/root
	if [ ! -f "$dir/.done" ]; then
		# kbuild is the host's build of the same version: its modpost
		# and fixdep run here and handle every target.
		debs_unpacked "$cache" "vm-kernel-$flavour" "$abi_pkg:$arch=$kver" \
			"linux-headers-$abi-$flavour:$arch=$kver" "linux-headers-$abi-common=$kver" \
			"$kbuild_pkg:$(dpkg --print-architecture)=$kver" "busybox-static:$arch" ||
			{ dk_why="apt-get download of $abi_pkg:$arch and its headers failed"; return 2; }
		tmp=$du_tmp
		# The arch headers name the common tree and kbuild by absolute
		# paths: point them into the cache, where the tree is renamed to.
		common=$kroot/usr/src/linux-headers-$abi-common
		sed -i "s|[^ ]*/usr/src/linux-headers-$abi-common/|$common/|g" \
			"$tmp/root/usr/src/linux-headers-$abi-$flavour/Makefile"
		for l in scripts tools; do
			[ -L "$tmp/root/usr/src/linux-headers-$abi-$flavour/$l" ] &&
				ln -sfn "$kroot/usr/lib/$kbuild_pkg/$l" "$tmp/root/usr/src/linux-headers-$abi-$flavour/$l"
		done
		touch "$tmp/.done"
		mv -T "$tmp" "$dir" 2>/dev/null || { rm -rf "$tmp"; [ -f "$dir/.done" ]; }  # another job won the race
	fi
	hdrs=$kroot/usr/src/linux-headers-$abi-$flavour
	kernel=$kroot/boot/$kimage-$abi-$flavour
	kconfig=$kroot/boot/config-$abi-$flavour
	busybox=$kroot/bin/busybox
	[ -f "$kernel" ] || { dk_why="no $kernel in $abi_pkg:$arch"; return 2; }
}
#
# target_python ARCH PYVER ROOT TAR_EXCLUDES...: stages Debian's PYVER
# (e.g. python3.11) for ARCH into the initramfs tree ROOT as
# /usr/bin/python3 with its stdlib (minus TAR_EXCLUDES), lib-dynload, the
# libraries they need and the dynamic loader, plus the host's pure-python
# jsonschema and what it imports. The packages (the interpreter's
# dependency closure for ARCH) are fetched once into
# CPUHP_VM_CACHE (default /var/cache/cpuhp-stress)/python-ARCH-KEY, KEY from
# their versions. Returns 1 with tp_why set when it cannot.
target_python() {
	local arch=$1 pyver=$2 root=$3 triplet pkgs sysroot d f need found interp
	shift 3
	case "$arch" in
	arm64) triplet=aarch64-linux-gnu ;;
	armhf) triplet=arm-linux-gnueabihf ;;
	ppc64el) triplet=powerpc64le-linux-gnu ;;
	*) tp_why="no target python for $arch"; return 1 ;;
	esac
	mapfile -t pkgs < <(apt_fast apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$pyver-minimal:$arch" "lib$pyver-stdlib:$arch" 2>/dev/null |
		grep -v '^ ' | sort -u | grep -E "^(lib[a-z0-9.+-]*|zlib1g|$pyver-minimal):$arch\$")
	if [ ${#pkgs[@]} -le 2 ] ||
		! debs_cached "${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}" "python-$arch" python-layout-1 "${pkgs[@]}"; then
		tp_why="$pyver-minimal:$arch or its dependencies: ${dc_why:-not in the package index} (dpkg --add-architecture $arch && apt-get update)"
		return 1
	fi
	sysroot=$dc_dir
	install -D -m755 "$sysroot/usr/bin/$pyver" "$root/usr/bin/python3"
	mkdir -p "$root/usr/lib/$pyver"
	tar -C "$sysroot/usr/lib/$pyver" "$@" -cf - . | tar -C "$root/usr/lib/$pyver" -xf -
	# The loader and the DT_NEEDED closure of the interpreter and its modules.
	interp=$("$triplet-readelf" -l "$sysroot/usr/bin/$pyver" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
	[ -n "$interp" ] || { tp_why="$pyver for $arch has no program interpreter"; return 1; }
	found=$(find "$sysroot" -name "$(basename "$interp")" | head -1)
	[ -n "$found" ] || { tp_why="no $(basename "$interp") in $sysroot"; return 1; }
	install -D -m755 "$(readlink -f "$found")" "$root$interp"
	mkdir -p "$root/lib/$triplet"
	local -a queue=("$sysroot/usr/bin/$pyver" "$sysroot/usr/lib/$pyver"/lib-dynload/*.so)
	local -A seen=()
	while [ ${#queue[@]} -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		for need in $("$triplet-readelf" -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -n "${seen[$need]:-}" ] && continue
			seen[$need]=1
			found=""
			for d in "$sysroot/lib/$triplet" "$sysroot/usr/lib/$triplet"; do
				[ -e "$d/$need" ] && { found=$d/$need; break; }
			done
			[ -n "$found" ] || { tp_why="$need (needed by $(basename "$f")) not in $sysroot"; return 1; }
			cp -L "$found" "$root/lib/$triplet/$need"
			queue+=("$found")
		done
	done
	# jsonschema and what it imports: pure python, the host's copy (a
	# compiled accelerator such as pyrsistent's pvectorc is the host's
	# architecture and optional: left out).
	local dist=/usr/lib/python3/dist-packages top
	mkdir -p "$root$dist"
	for top in $(/usr/bin/python3 -S -c "
import sys; sys.path.append('$dist'); import jsonschema
for m in sys.modules.values():
    f = getattr(m, '__file__', None) or ''
    if f.startswith('$dist/'):
        print(f[len('$dist/'):].split('/')[0])" | sort -u); do
		case "$top" in *.so) continue ;; esac
		cp -a "$dist/$top" "$root$dist/"
	done
	find "$root$dist" -name '*.so' -delete
}
#
# --- guest preparation, shared by run_vm_test.sh and tools/abtest.sh --------
# src_guest SRC CACHE SERIES ARCH [PATCH...]: linux-source-SERIES (plus the
# patches) built for an ARCH guest by SRC's tests/kmatrix/kernel_tree.sh
# guest, cached in CACHE/kmatrix. Sets sg_kdir (the tree), sg_image (what
# QEMU boots) and the array sg_kmake (the make arguments a module build
# against the tree needs: kernel_tree.sh names them). Returns
# kernel_tree.sh's status (2: no such guest).
src_guest() {
	local src=$1 cache=$2
	shift 2
	tree_guest "$src" "$cache" guest "$@"
}
# tree_guest SRC CACHE KERNEL_TREE_ARG...: the same for any kernel_tree.sh
# command that prints "TREE IMAGE MAKE_ARG..." (guest, sid-guest)
tree_guest() {
	local src=$1 cache=$2 line rc=0
	shift 2
	line=$(CPUHP_KMATRIX_CACHE=$cache/kmatrix bash "$src/tests/kmatrix/kernel_tree.sh" "$@") || rc=$?
	[ $rc = 0 ] || return $rc
	read -r sg_kdir sg_image line <<< "$line"
	read -r -a sg_kmake <<< "$line"
}
#
# guest_module SRC KDIR MOD LOG [MAKE_ARG...]: builds the module of the tree
# SRC (Kbuild, kmod/) against KDIR with W=1 in MOD, a fresh copy (SRC stays
# clean), make's output in LOG; returns make's status. No module BTF:
# Debian's 6.12 headers ship vmlinux, so kbuild would run pahole (package
# dwarves) on the .ko; nothing here reads a module's BTF.
guest_module() {
	local src=$1 kdir=$2 mod=$3 mlog=$4
	shift 4
	rm -rf "$mod" && mkdir -p "$mod/kmod/uapi" && cp "$src/Kbuild" "$mod/" &&
		cp "$src"/kmod/Kbuild "$src"/kmod/*.c "$mod/kmod/" && cp "$src"/kmod/uapi/*.h "$mod/kmod/uapi/" || return 1
	make -C "$kdir" M="$mod" "$@" W=1 CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$mlog" 2>&1
}
#
# guest_busybox ARCH CACHE: sets busybox, a static busybox for an ARCH
# guest: the host's (busybox-static) on the host's architecture, else
# ARCH's busybox-static, fetched once into CACHE/busybox-ARCH. Returns 1
# with gb_why set when it cannot.
guest_busybox() {
	local arch=$1 cache=$2
	if [ "$arch" = "$(dpkg --print-architecture)" ]; then
		busybox=/bin/busybox
		[ -x "$busybox" ] || { gb_why="busybox-static is not installed"; return 1; }
		return 0
	fi
	busybox=$cache/busybox-$arch/bin/busybox
	[ ! -x "$busybox" ] || return 0
	debs_unpacked "$cache" "busybox-$arch" "busybox-static:$arch" ||
		{ gb_why="apt-get download busybox-static:$arch failed"; return 1; }
	mv -T "$du_tmp/root" "$cache/busybox-$arch" 2>/dev/null || true  # another job may have won the race
	rm -rf "$du_tmp"
	[ -x "$busybox" ] || { gb_why="busybox-static:$arch has no /bin/busybox"; return 1; }
}
#
# initramfs_base ROOT SRC BUSYBOX: a fresh initramfs tree ROOT with the
# directories, the busybox applets and /dev/console the guests' /init
# scripts use, and SRC's tests/vm/guest_lib.sh in bin/
initramfs_base() {
	local rd=$1 t
	rm -rf "$rd" && mkdir -p "$rd"/{bin,sbin,proc,sys,dev,tmp,etc,lib64,usr/lib,run,var/lib}
	cp "$3" "$rd/bin/busybox"
	mknod -m 600 "$rd/dev/console" c 5 1
	for t in sh mount insmod rmmod lsmod cat echo sleep base64 dd printf grep poweroff sync ls sed \
		sort tr; do
		ln -s busybox "$rd/bin/$t"
	done
	cp "$2/tests/vm/guest_lib.sh" "$rd/bin/guest_lib.sh"
}
#
# base_rootfs SRC CACHE: sets rootfs_tar, the Debian 12 root file system of
# SRC's tests/vm/build_rootfs.sh (systemd, the daemon's run-time libraries),
# made once per machine with debootstrap: a pure function of that script
# and Debian's archive, cached in CACHE keyed by the script's hash, so clean
# clones do not debootstrap again. Returns 1 with br_why set when it cannot.
base_rootfs() {
	local src=$1 cache=$2 key
	key=$(sha256sum "$src/tests/vm/build_rootfs.sh" | cut -c1-16)
	rootfs_tar=$cache/rootfs-bookworm-$key.tar
	[ ! -s "$rootfs_tar" ] || return 0
	command -v debootstrap >/dev/null || { br_why="debootstrap not installed (tools/setup.sh installs it)"; return 1; }
	echo "debootstrap (cached in $rootfs_tar)" >&2
	"$src/tests/vm/build_rootfs.sh" "$rootfs_tar" || { br_why="debootstrap failed (above)"; return 1; }
}
#
# initramfs_pack ROOT FILE: the tree ROOT as a gzipped newc cpio archive
initramfs_pack() { (cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"; }
