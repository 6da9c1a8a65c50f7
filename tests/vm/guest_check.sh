#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest as vm-check.service: drives cpuhp-stress@vm under real
# systemd and prints "VMTEST: key=value" lines on the serial console for the
# host (tests/vm/vm_test.sh) to check.
u=cpuhp-stress@vm.service
say() { echo "VMTEST: $*" > /dev/console; }
show() { systemctl show -p "$1" --value "$u"; }
say "boot=ok cpus=$(cat /sys/devices/system/cpu/online)"
# The packages (tests/pkg/deb_install.sh): their binary and unit, and the
# module DKMS built for this kernel (vm_test.sh says whether it did).
dkms_kernel=no
# shellcheck source=/dev/null  # written by vm_test.sh: pkg_ver, dkms_kernel
. /etc/cpuhp-vm-test.env
say "version=$(/usr/bin/cpuhp-stress --version 2>&1) unit_path=$(systemctl show -p FragmentPath --value "$u")"
if [ "$dkms_kernel" = yes ]; then
	out=$(modprobe cpuhp_probe 2>&1)
	rc=$?
	[ -z "$out" ] || echo "VMTEST-LOG: modprobe: $out" > /dev/console
	grep -q '^cpuhp_probe ' /proc/modules && loaded=yes || loaded=no
	say "modprobe=$rc lsmod=$loaded rmmod=$(rmmod cpuhp_probe; echo $?)"
fi
systemctl start "$u"  # Type=notify: returns once READY=1 arrived
say "start_rc=$? active=$(show ActiveState) sub=$(show SubState)"
sleep 12
say "status=$(show StatusText)"
test -s /var/lib/cpuhp-stress/vm/checkpoint.json && say "checkpoint=yes"
pid=$(show MainPID)
kill -9 "$pid"
say "killed=$pid"
sleep 15  # RestartSec=5, then restore, discovery, resume
say "after_kill_pid=$(show MainPID) nrestarts=$(show NRestarts) active=$(show ActiveState)"
journalctl -b -u "$u" -o cat | grep -q "resuming the run" && say "resumed=yes"
sleep 6
say "status2=$(show StatusText)"
systemctl stop "$u"
say "stop_rc=$? online=$(cat /sys/devices/system/cpu/online) present=$(cat /sys/devices/system/cpu/present)"
say "journal_fields=$(journalctl -b -u "$u" -o export | grep -c -E '^(CPU|OP|ITERATION)=')"
# The unit's sandbox leaves tracefs writable: the final summary has the
# kernel states, and no run of the unit found the source unavailable.
say "tp_states=$(journalctl -b -u "$u" -o cat | grep -c 'kernel states (tracepoints), top') tp_unavailable=$(journalctl -b -u "$u" -o cat | grep -c 'tracepoints): unavailable')"
journalctl -b -u "$u" -o cat | grep -m1 'tracepoints): unavailable' | sed 's/^/VMTEST-LOG: /' > /dev/console
journalctl -b -u "$u" -o export | grep -m1 -E '^CPU=' | sed 's/^/VMTEST: journal_sample=/' > /dev/console
r=/var/log/cpuhp-stress/vm.json
say "report_kinds=$(grep -o '"kind": *"[a-z]*"' "$r" | tr -d ' "' | tr '\n' ,)"
say "report_stop=$(grep -o '"stop_reason": *"[a-z]*"' "$r" | tr -d ' "')"
say "report_ops=$(grep -m1 -o '"ops": *[0-9]*' "$r" | tr -d ' "')"
journalctl -b -u "$u" -o cat | tail -n 15 | sed 's/^/VMTEST-LOG: /' > /dev/console
# A run that finishes with failures in its report (sim, 20 % of writes fail)
# exits 3, which the unit must not restart: a restart would start the soak
# over and overwrite the report.
f=cpuhp-stress@fails.service
systemctl start "$f"
sleep 12  # RestartSec=5: long enough for two restarts
say "fails_status=$(systemctl show -p ExecMainStatus --value "$f") fails_restarts=$(systemctl show -p NRestarts --value "$f") fails_active=$(systemctl show -p ActiveState --value "$f")"
test -s /var/log/cpuhp-stress/fails.json && say "fails_report=yes"
# Bad input (a config with an unknown key) exits 2: a restart would fail
# the same way every RestartSec, so the unit must not restart either.
b=cpuhp-stress@bad.service
systemctl start "$b"
sleep 7  # RestartSec=5: long enough for one restart
say "bad_status=$(systemctl show -p ExecMainStatus --value "$b") bad_restarts=$(systemctl show -p NRestarts --value "$b") bad_active=$(systemctl show -p ActiveState --value "$b")"
journalctl -b -u "$b" -o cat | grep -m1 'unknown key' | sed 's/^/VMTEST: bad_log=/' > /dev/console
say "done"
systemctl poweroff -f
