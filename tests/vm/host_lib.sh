# SPDX-License-Identifier: GPL-2.0
# Sourced by the host-side guest runners (run_vm_test.sh, run_real_guest.sh).

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
# boot_guest WORK TIMEOUT_S QEMU ARGS...: runs QEMU (its stdin /dev/null)
# with the serial console in WORK/console.raw and sets qrc to its exit
# status. Everything is on the console once the guest prints
# "==CPUHP== DONE"; should QEMU still run 60 s later (a 16-vCPU TCG guest
# once never exited, and a kernel without power-off halts), it is stopped:
# the results are out. WORK/console.log gets the console without CRs and
# terminal escapes.
boot_guest() {
	local work=$1 limit=$2
	shift 2
	timeout --foreground -k 5 "$limit" "$@" </dev/null >"$work/console.raw" 2>&1 &
	guest_qpid=$!
	trap 'kill "$guest_qpid" 2>/dev/null' EXIT
	while kill -0 "$guest_qpid" 2>/dev/null; do
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
	trap - EXIT
	tr -d '\r' <"$work/console.raw" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >"$work/console.log"
}
