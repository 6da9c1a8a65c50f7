#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/abtest.sh: kernel A against kernel B, in QEMU guests, with the module.
#
#   tools/abtest.sh --arch amd64|arm64|ppc64el|armhf --a KERNEL --b KERNEL --out DIR
#                   [--config FILE] [--b-config FILE] [--boots N] [--smp N] [--threads N]
#                   [--append ARGS]
#                   [--a-append ARGS] [--b-append ARGS] [--ops N]
#                   [--pattern roundrobin|sweep|...] [--loops N]
#                   [--threshold T]... [--build DIR] [--timeout S] [--mem MB]
#
# KERNEL, one of:
#   deb:SERIES        Debian's own kernel of that series for --arch (6.1:
#                     bookworm's linux-image-FLAVOUR, 6.12: linux-image-6.12-
#                     FLAVOUR), with its headers; fetched once into the cache
#   IMAGE,KDIR        a kernel image QEMU boots (-kernel) and the prepared
#                     tree (or headers) its module is built against
#   src:linux-source-VERSION[+FILE.patch...]
#                     Debian's linux-source package (6.12 from bookworm, 7.2
#                     from sid) with the patches applied in order (patch -p1),
#                     built for the guest with tests/vm/src_guest.config
#                     (amd64: bzImage), tests/vm/src_guest_ppc64el.config
#                     (ppc64el, pseries: vmlinux, cross gcc-12) or
#                     tests/vm/src_guest_armhf.config (armhf, virt
#                     Cortex-A15: zImage, cross gcc-12)
#                     (tests/kmatrix/kernel_tree.sh guest; CPUHP_KMATRIX_JOBS
#                     sets its make -j) and cached by the hash of source,
#                     config, compiler and patches: a second run builds
#                     nothing. Not for arm64.
# --b-config FILE: side B's daemon config instead of --config's (a config
# A/B on one kernel: --a and --b the same, e.g. smt.method control against
# threads).
# --threads N: N threads per core (-smp SMP,cores=SMP/N,threads=N; amd64
# only, QEMU 7.2 has no pseries SMT under TCG), for --pattern smt.
# Both sides get the same vCPU count, memory, command line (--append; plus
# --a-append or --b-append on one side: a boot parameter A/B), config and
# daemon (--build DIR/cpuhp-stress, default build/; cross-built for arm64,
# ppc64el and armhf). Each side's module is built with W=1 against its own tree.
# Boots alternate A B A B ... (--boots each, default 3), one TCG thread per
# guest; armhf: one per vCPU (multi-threaded TCG: one thread hangs a 32-bit
# ARM guest, tests/vm/host_lib.sh), so --smp is at most the host's CPU count
# there (default 2), and the console is the PL011 at 115200 as on the
# seed's board (QEMU's UART does not pace to the baud rate). Each boot
# (tests/vm/guest_ab.sh) loads the module, runs the daemon
# once (--ops writes, default 200; the sweep ends by itself) with the config
# (default: the built-in one plus the kmod source), and must pass
# tests/vm/ab_check.py (module and daemon exit 0, a valid report, every
# timing source ok, every CPU online, no kernel splat).
#
# Writes DIR/a/bootN.json, DIR/b/bootN.json (one report per boot),
# DIR/a/pooled.json and DIR/b/pooled.json (cpuhp-stress merge),
# DIR/compare.md, DIR/compare.txt, DIR/compare.json and DIR/compare.html (the pooled B
# against the pooled A; beside each ratio the spread between boots, and a
# change the boots disagree on is no change), DIR/boots.tsv (side, boot,
# kernel, seconds, console) and each boot's console under DIR/console/.
#
# Exit: 0 no regression, 1 a regression (compare names the metrics), 2 bad
# input or a boot that failed (the message names which and why).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prog=tools/abtest.sh
created_out=""
# Bad input leaves nothing behind: an --out this run made is removed unless a
# boot has written its console there (a failed boot's evidence stays).
die() {
	echo "$prog: $*" >&2
	if [ -n "$created_out" ] && [ -z "$(ls -A "$out/console" 2>/dev/null)" ]; then rm -rf "$out"; fi
	exit 2
}
usage() { sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
arch="" ka="" kb="" out="" config="" b_config="" boots=3 smp=4 smp_given="" threads=1 append="" a_append="" b_append="" ops=200
pattern=roundrobin loops=0 build=$repo/build timeout=1200 mem="" thresholds=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--arch | --a | --b | --out | --config | --b-config | --boots | --smp | --threads | --append | --a-append | --b-append | \
		--ops | --pattern | --loops | --threshold | --build | --timeout | --mem)
		[ $# -ge 2 ] || die "$1 needs a value"
		case "$1" in
		--arch) arch=$2 ;; --a) ka=$2 ;; --b) kb=$2 ;; --out) out=$2 ;; --config) config=$2 ;;
		--b-config) b_config=$2 ;;
		--boots) boots=$2 ;; --smp) smp=$2 smp_given=1 ;; --threads) threads=$2 ;;
		--append) append=$2 ;; --a-append) a_append=$2 ;;
		--b-append) b_append=$2 ;; --ops) ops=$2 ;; --pattern) pattern=$2 ;; --loops) loops=$2 ;;
		--threshold) thresholds+=(--threshold "$2") ;; --build) build=$2 ;; --timeout) timeout=$2 ;;
		--mem) mem=$2 ;;
		esac
		shift 2 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done
case "$arch" in amd64 | arm64 | ppc64el | armhf) ;; "") die "--arch is required (amd64, arm64, ppc64el, armhf)" ;;
*) die "--arch $arch: not amd64, arm64, ppc64el or armhf" ;; esac
[ -n "$ka" ] || die "--a KERNEL is required (deb:6.1, IMAGE,KDIR or src:linux-source-6.12[+P.patch])"
[ -n "$kb" ] || die "--b KERNEL is required (deb:6.1, IMAGE,KDIR or src:linux-source-6.12[+P.patch])"
[ -n "$out" ] || die "--out DIR is required"
isnum() { [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] || die "$1 $2: not a whole number >= $3"; }
isnum --boots "$boots" 1
isnum --smp "$smp" 2
isnum --threads "$threads" 1
isnum --ops "$ops" 2
isnum --loops "$loops" 0
isnum --timeout "$timeout" 30
[ -z "$mem" ] || isnum --mem "$mem" 256
mem_given=$mem
[ -n "$mem" ] || mem=$((1024 + 16 * smp))
# pseries refuses memory that is not a multiple of 256 MiB
if [ "$arch" = ppc64el ] && [ $((mem % 256)) != 0 ]; then
	[ -z "$mem_given" ] || die "--mem $mem: pseries needs a multiple of 256 (MB)"
	mem=$(((mem + 255) / 256 * 256))  # the default, rounded up
fi
[ $((ops % 2)) = 0 ] || die "--ops $ops: must be even (every CPU ends online)"
[ "$(id -u)" = 0 ] || die "run as root (apt-get download into the cache, QEMU)"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	die "--out $out: exists and is not empty (a second A/B would mix its reports with these)"
fi
[ -d "$build" ] || die "--build $build: not a directory"
build=$(realpath "$build")
daemon=$build/cpuhp-stress
[ -x "$daemon" ] || die "--build $build: no cpuhp-stress there (build it: cmake -S . -B build && cmake --build build)"
cfg=$(mktemp)
cfg_b=$(mktemp)
trap 'rm -f "$cfg" "$cfg_b"' EXIT
if [ -n "$config" ]; then
	[ -r "$config" ] || die "--config $config: cannot read it"
	cp "$config" "$cfg"
else
	echo '{"kmod": {"enabled": true}}' >"$cfg"
fi
if [ -n "$b_config" ]; then
	[ -r "$b_config" ] || die "--b-config $b_config: cannot read it"
	cp "$b_config" "$cfg_b"
else
	cp "$cfg" "$cfg_b"
fi
# The daemon checks each config here first: one line naming the fault, not a
# guest that boots to fail.
for c in "$cfg:${config:-(default)}:--config" "$cfg_b:${b_config:-${config:-(default)}}:--b-config"; do
	f=${c%%:*} rest=${c#*:}
	name=${rest%:*} opt=${rest##*:}
	"$daemon" run --config "$f" --pattern "$pattern" --print-config >/dev/null 2>"$f.err" ||
		{ msg=$(head -1 "$f.err" | sed "s|$f|$name|g; s|^cpuhp-stress: error: ||"); rm -f "$f.err"
		  die "$opt: $msg"; }
	rm -f "$f.err"
done

cache=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}
[ -e "$out" ] || created_out=1
mkdir -p "$out"/{a,b,console} "$cache"
out=$(realpath "$out")
work=$out/work
mkdir -p "$work"
log() { echo "abtest: $*" >&2; }
# shellcheck source=tests/vm/host_lib.sh
. "$repo/tests/vm/host_lib.sh"
guest_arch_setup "$arch" single
guest_smp_cap "$smp_given" || die "--smp: $smp_why"
guest_smt_topology "$arch" "$smp" "$threads" || die "--threads $threads: $smt_why"
command -v "$qemu" >/dev/null || die "$qemu is not installed (tools/setup.sh packages test)"
command -v "$cc" >/dev/null || die "$cc is not installed (tools/setup.sh packages test)"
host_arch=$(dpkg --print-architecture)
[ "$arch" = "$host_arch" ] || grep -qx "$arch" <<< "$(dpkg --print-foreign-architectures)" ||
	die "--arch $arch: dpkg architecture $arch not added (dpkg --add-architecture $arch && apt-get update)"

# --- the kernels --------------------------------------------------------------
# side_kernel SIDE SPEC: sets image_SIDE, kdir_SIDE, kmake_SIDE (make words
# the module build needs for that tree), label_SIDE.
side_kernel() {
	local side=$1 spec=$2 img kd ver patches=() p
	local -a km=()
	case "$spec" in
	deb:*)
		local dk=0
		debian_kernel "$arch" "${spec#deb:}" "$cache" || dk=$?
		[ $dk = 0 ] || die "--$side $spec: $dk_why"
		img=$kernel kd=$hdrs ;;
	src:*)
		[ "$arch" != arm64 ] || die "--$side $spec: src: builds amd64, ppc64el and armhf guests only (arm64: deb: or IMAGE,KDIR)"
		ver=${spec#src:}
		ver=${ver%%+*}
		[[ $spec == *+* ]] && IFS=+ read -r -a patches <<< "${spec#*+}"
		case "$ver" in linux-source-[0-9]*.[0-9]*) ver=${ver#linux-source-} ;;
		*) die "--$side $spec: src: names linux-source-VERSION, e.g. src:linux-source-6.12+fix.patch" ;; esac
		local abs=()
		for p in "${patches[@]}"; do
			[ -r "$p" ] || die "--$side $spec: patch $p: cannot read it"
			abs+=("$(realpath "$p")")
		done
		src_guest "$repo" "$cache" "$ver" "$arch" "${abs[@]}" ||
			die "--$side $spec: building the guest kernel failed (above)"
		img=$sg_image kd=$sg_kdir km=("${sg_kmake[@]}") ;;
	*,*)
		img=${spec%%,*} kd=${spec#*,}
		[ -f "$img" ] || die "--$side $spec: $img is not a kernel image file"
		[ -f "$kd/Makefile" ] || die "--$side $spec: $kd is not a prepared kernel tree (no Makefile)"
		img=$(realpath "$img") kd=$(realpath "$kd") ;;
	*) die "--$side $spec: not deb:SERIES, IMAGE,KDIR or src:linux-source-VERSION[+P.patch]" ;;
	esac
	printf -v "image_$side" '%s' "$img"
	printf -v "kdir_$side" '%s' "$kd"
	eval "kmake_$side=(\"\${km[@]}\")"
	printf -v "label_$side" '%s' "$spec"
}
side_kernel a "$ka"
side_kernel b "$kb"
guest_busybox "$arch" "$cache" || die "$gb_why"

# --- one initramfs per side -----------------------------------------------------
"$cc" -static -O2 -Wall -Wextra -Werror -o "$work/cpuhp_probe_dump" "$repo/tests/vm/cpuhp_probe_dump.c"
droot=$work/daemon-root
rm -rf "$droot" && mkdir -p "$droot/bin"
if [ "$arch" = "$host_arch" ]; then
	cp "$daemon" "$droot/bin/"
	copy_libs "$droot" "$daemon"
else
	mkdir -p "$build/vm-cross-$arch"
	rc=0
	bash "$repo/tests/vm/cross_daemon.sh" "$arch" "$repo" "$build/vm-cross-$arch" "$droot" || rc=$?
	[ $rc = 0 ] || die "cross-building the daemon for $arch failed (above)"
fi
pack() {  # pack SIDE
	local side=$1 mod=$work/mod-$1 rd=$work/initramfs-$1 kd km
	kd=kdir_$side
	eval "km=(\"\${kmake_$side[@]}\")"
	if ! guest_module "$repo" "${!kd}" "$mod" "$work/kbuild-$side.log" "${cross[@]}" "${km[@]}"; then
		tail -n 30 "$work/kbuild-$side.log" >&2
		die "side $side: building the module against ${!kd} failed ($work/kbuild-$side.log)"
	fi
	initramfs_base "$rd" "$repo" "$busybox"
	cp "$mod/kmod/cpuhp_probe.ko" "$work/cpuhp_probe_dump" "$rd/bin/"
	cp -a "$droot/." "$rd/"
	if [ "$side" = b ]; then cp "$cfg_b" "$rd/etc/ab.json"; else cp "$cfg" "$rd/etc/ab.json"; fi
	install -m755 "$repo/tests/vm/guest_ab.sh" "$rd/init"
	initramfs_pack "$rd" "$work/initramfs-$side.cpio.gz"
	rm -rf "$rd"
}
pack a
pack b
log "A: $label_a ($image_a)"
log "B: $label_b ($image_b)"

# --- boots, A B A B ...-------------------------------------------------------------
printf 'side\tboot\tkernel\tseconds\tconsole\n' >"$out/boots.tsv"
for i in $(seq 1 "$boots"); do
	for side in a b; do
		img=image_$side
		extra=a_append
		[ "$side" = b ] && extra=b_append
		bw=$work/boot-$side$i
		rm -rf "$bw" && mkdir -p "$bw"
		log "boot $i of $boots, side ${side^^}: $smp vCPUs ($threads per core), $ops writes, pattern $pattern"
		start=$SECONDS
		CPUHP_VM_ACCEL=tcg boot_guest_accel "$bw" "$timeout" "$qemu" "$arch" "${qemu_args[@]}" -smp "$smp_topology" \
			-m "$mem" -kernel "${!img}" -initrd "$work/initramfs-$side.cpio.gz" \
			-append "console=$console $kappend quiet panic=-1 log_buf_len=16M cpuhp_ops=$ops cpuhp_pattern=$pattern cpuhp_loops=$loops cpuhp_boot=$side$i $append ${!extra}" \
			-nographic -no-reboot -nic none 2>"$bw/qemu.err"
		secs=$((SECONDS - start))
		cp "$bw/console.log" "$out/console/$side$i.log"
		rc=0
		python3 "$repo/tests/vm/ab_check.py" "$bw/console.log" "$bw" "$qrc" "$out/$side/boot$i.json" \
			>"$bw/check.log" 2>&1 || rc=$?
		kver=$(sed -n 's/.*==CPUHP== guest up: .* kernel \([^ ]*\).*/\1/p' "$bw/console.log" | head -1)
		printf '%s\t%s\t%s\t%s\t%s\n' "${side^^}" "$i" "${kver:-?}" "$secs" "console/$side$i.log" >>"$out/boots.tsv"
		if [ $rc != 0 ]; then
			grep '^FAIL' "$bw/check.log" >&2 || cat "$bw/check.log" >&2
			lab=label_$side
			die "boot $i of side ${side^^} (${!lab}) failed: $(tail -1 "$bw/check.log") (console: $out/console/$side$i.log)"
		fi
		log "boot $i side ${side^^}: ok, $secs s (kernel $kver)"
	done
done

# --- the verdict -------------------------------------------------------------------
"$daemon" merge -o "$out/a/pooled.json" "$out"/a/boot*.json
"$daemon" merge -o "$out/b/pooled.json" "$out"/b/boot*.json
rc=0
"$daemon" compare "${thresholds[@]}" -f markdown -o "$out/compare.md" "$out/a/pooled.json" "$out/b/pooled.json" || rc=$?
[ $rc -le 1 ] || die "compare failed (exit $rc)"
"$daemon" compare "${thresholds[@]}" -f text -o "$out/compare.txt" "$out/a/pooled.json" "$out/b/pooled.json" || true
"$daemon" compare "${thresholds[@]}" -f json -o "$out/compare.json" "$out/a/pooled.json" "$out/b/pooled.json" || true
# report exits 1 when one of its checks fails (a regression is one): only 2
# (bad input) is a failure to render.
hrc=0
"$daemon" report "${thresholds[@]}" -f html -o "$out/compare.html" --baseline "$out/a/pooled.json" \
	"$out/b/pooled.json" || hrc=$?
[ $hrc -le 1 ] && [ -s "$out/compare.html" ] || die "rendering compare.html failed (exit $hrc)"
rm -rf "$work"
cat "$out/compare.txt"
log "A: $label_a, B: $label_b, $boots boots each: $([ $rc = 0 ] && echo "no regression" || echo "REGRESSION (above)"); $out/compare.md"
exit $rc
