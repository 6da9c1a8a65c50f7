#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of one tools/abtest.sh boot (busybox): the module loaded, one daemon
# run with every default source and the kmod source, its report out on the
# console, the module unloaded. What a kernel A/B needs and nothing else:
# the module's own checks are tests/vm/guest_init.sh's. Kernel command line:
# cpuhp_ops=N (0 with the sweep and smt: they end by themselves), cpuhp_pattern=P,
# cpuhp_loops=N (nanosleep loops beside the run, on the first nohz_full CPU
# when there is one: get_nohz_timer_target's calls), cpuhp_boot=ID (echoed).
. /bin/guest_lib.sh
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
ops=${cpuhp_ops:-200}
pattern=${cpuhp_pattern:-roundrobin}
loops=${cpuhp_loops:-0}
mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease) boot ${cpuhp_boot:-?}"
insmod /bin/cpuhp_probe.ko
status insmod $?
nohz_cpu=$(sed -n 's/^\([0-9][0-9]*\).*/\1/p' /sys/devices/system/cpu/nohz_full 2>/dev/null)
loop_pid=""
if [ "$loops" -gt 0 ]; then
	if [ -n "$nohz_cpu" ]; then
		busybox taskset -c "$nohz_cpu" cpuhp_probe_dump sleeploop "$loops" > /tmp/loop.out 2>&1 &
	else
		cpuhp_probe_dump sleeploop "$loops" > /tmp/loop.out 2>&1 &
	fi
	loop_pid=$!
fi
# The sweep and the smt pattern end by themselves.
case "$pattern" in sweep | smt) ops=0 ;; esac
cpuhp-stress run --config /etc/ab.json --pattern "$pattern" --cpus all -n "$ops" --progress never \
	--state-dir /tmp/state --report /tmp/report.json > /tmp/run.out 2>&1
status daemon $?
[ -n "$loop_pid" ] && wait "$loop_pid"
emit run.out /tmp/run.out
[ -f /tmp/report.json ] && emit report.json /tmp/report.json
rmmod cpuhp_probe
status rmmod $?
mark "online at end $(cat /sys/devices/system/cpu/online)"
dmesg > /tmp/dmesg.txt
emit dmesg /tmp/dmesg.txt
mark "DONE"
guest_exit
