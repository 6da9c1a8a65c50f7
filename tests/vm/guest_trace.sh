#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the trace fixture guest (CPUHP_VM_MODE=trace in
# tests/vm/run_vm_test.sh, driven by tests/vm/capture_trace_fixture.sh):
# one offline+online of cpu$cpuhp_trace_cpu with the three cpuhp events
# enabled in a tracefs instance (trace_clock mono, as the daemon's source
# uses), then the trace, hotplug/states, the operations' CLOCK_MONOTONIC
# times and the kernel version go out base64 between "==CPUHP==" markers.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
mount -t tracefs tracefs /sys/kernel/tracing
cpu=${cpuhp_trace_cpu:-1}
mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease)"
i=/sys/kernel/tracing/instances/cpuhp-stress
mkdir "$i"
echo mono > "$i/trace_clock"
[ "${cpuhp_trace_tgid:-0}" = 1 ] && echo 1 > "$i/options/record-tgid"
for e in cpuhp_enter cpuhp_multi_enter cpuhp_exit; do
	echo 1 > "$i/events/cpuhp/$e/enable"
done
sleep 1
/bin/cpuhp_probe_torture hotplug "$cpu" 0 > /tmp/ops.jsonl
sleep 1
/bin/cpuhp_probe_torture hotplug "$cpu" 1 >> /tmp/ops.jsonl
sleep 1
echo 0 > "$i/tracing_on"
cat "$i/trace" > /tmp/trace.txt
cat /sys/devices/system/cpu/hotplug/states > /tmp/states.txt
cat /proc/version > /tmp/version.txt
echo "online $(cat /sys/devices/system/cpu/online)" >> /tmp/version.txt
emit trace /tmp/trace.txt
emit states /tmp/states.txt
emit ops /tmp/ops.jsonl
emit version /tmp/version.txt
rmdir "$i"
mark "DONE"
guest_exit
