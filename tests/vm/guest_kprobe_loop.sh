#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the module-free reproducer of the amd64 Oops (kmod/README.md,
# "The amd64 Oops"; CPUHP_VM_MODE=kprobe_loop in tests/vm/run_vm_test.sh).
# No cpuhp_probe: the kernel's own kretprobe trace event on kpl_fn
# (default get_nohz_timer_target) is added, enabled, disabled and removed
# kpl_n times (each enable/disable re-patches the function's ftrace call
# site) while cpuhp_probe_torture toggles CPUs. kpl_mode=function uses the
# function tracer on kpl_fn instead of a kretprobe. kprobe_loop_check.py
# reads the console.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
mount -t tracefs nodev /sys/kernel/tracing
mount -t debugfs nodev /sys/kernel/debug
n=${kpl_n:-2000}
fn=${kpl_fn:-get_nohz_timer_target}
mode=${kpl_mode:-kretprobe}
T=/sys/kernel/tracing
echo "==CPUHP== guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease) n=$n fn=$fn mode=$mode"
rm -f /tmp/stop
/bin/cpuhp_probe_torture toggle /tmp/stop "${cpuhp_toggle_pause_ms:-100}" > /tmp/toggle.json &
tpid=$!
start=$(uptime_s)
i=0
while [ $i -lt "$n" ]; do
	if [ "$mode" = function ]; then
		echo "$fn" > $T/set_ftrace_filter
		echo function > $T/current_tracer
		echo nop > $T/current_tracer
	else
		echo "r:kpl $fn" > $T/kprobe_events || echo "==CPUHP== add failed at $i"
		[ $i = 0 ] && cat /sys/kernel/debug/kprobes/list
		echo 1 > $T/events/kprobes/kpl/enable
		echo 0 > $T/events/kprobes/kpl/enable
		echo "-:kpl" >> $T/kprobe_events
	fi
	i=$((i + 1))
	[ $((i % 25)) = 0 ] && echo "==CPUHP== loop $i $(uptime_s)"
done
touch /tmp/stop
wait $tpid
echo "==CPUHP== loop done $i from $start to $(uptime_s)"
echo "==CPUHP== online at end $(cat /sys/devices/system/cpu/online)"
echo "==CPUHP== DONE"
guest_exit
