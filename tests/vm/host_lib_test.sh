#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# boot_guest (tests/vm/host_lib.sh) keeps its caller's EXIT trap: a script
# that removes a temporary root on exit (vm_test.sh, abtest.sh) still does
# after a guest ran, and also when it exits while the guest runs. (It once
# reset the trap: every systemd_vm run left its 166 MB root in /var/tmp.)
# A shell command stands in for QEMU. Exit 0 pass, 1 fail.
set -euo pipefail
lib=$(realpath "$(dirname "$0")/host_lib.sh")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

# 1: the guest ends; the caller's trap runs when the caller exits
mkdir "$t/w1" "$t/root1"
bash -c '. "$1"; trap "rm -rf \"$2\"" EXIT
	boot_guest "$3" 30 sh -c "echo \"==CPUHP== DONE\"; exit 3"
	echo "qrc=$qrc"' _ "$lib" "$t/root1" "$t/w1" >"$t/out1"
check "boot_guest sets qrc to the guest's status ($(cat "$t/out1"))" grep -qx "qrc=3" "$t/out1"
check "the console is in WORK/console.log" grep -q "==CPUHP== DONE" "$t/w1/console.log"
check "the caller's EXIT trap ran after the guest" test ! -e "$t/root1"

# 2: the caller exits (a signal) while the guest runs: the guest is stopped
# and the caller's trap runs too
mkdir "$t/w2" "$t/root2"
bash -c '. "$1"; trap "rm -rf \"$2\"" EXIT
	trap "exit 1" TERM
	boot_guest "$3" 60 sh -c "echo \$\$ > \"$3/guest.pid\"; exec sleep 30"' _ "$lib" "$t/root2" "$t/w2" &
caller=$!
for _ in $(seq 50); do [ -s "$t/w2/guest.pid" ] && break; sleep 0.1; done
sleep 0.3
kill -TERM "$caller"
wait "$caller" || true
gpid=$(cat "$t/w2/guest.pid" 2>/dev/null || echo 0)
for _ in $(seq 50); do kill -0 "$gpid" 2>/dev/null || break; sleep 0.1; done
check "the caller's EXIT trap ran when it was stopped during the guest" test ! -e "$t/root2"
check "the guest was stopped with it" bash -c '! kill -0 "$1" 2>/dev/null' _ "$gpid"
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "host_lib: boot_guest keeps the caller's EXIT trap"
