#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the cpuhp_probe overhead bench guest (tests/vm/bench_kmod_overhead.sh).
# Interleaved rounds, the order alternating (without,with / with,without)
# so a drift of TCG speed over the boot does not favour one side:
#   - a daemon run (same config each time) with the module not loaded and
#     with it loaded and read by the kmod source;
#   - a loop of 1 ns relative nanosleeps on cpu1 (each arms a non-pinned
#     hrtimer: one get_nohz_timer_target call) without and with the module,
#     the hits counted by the module.
# Results: daemon reports base64 between markers, loop lines as text.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
rounds=${cpuhp_rounds:-4}
ops=${cpuhp_ops:-16}
loops=${cpuhp_loops:-20000}
mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease) cmdline $(cat /proc/cmdline)"
printf '{"kmod": {"enabled": true, "device": "/dev/cpuhp_probe"}}\n' > /tmp/kmod.json

side() {  # side without|with ROUND
	if [ "$1" = with ]; then
		insmod /bin/cpuhp_probe.ko || mark "STATUS insmod $?"
	fi
	cpuhp-stress run --config /tmp/kmod.json --pattern roundrobin --cpus all -n "$ops" \
		--progress never --state-dir "/tmp/state-$1-$2" --report "/tmp/$1-$2.json" \
		> "/tmp/$1-$2.out" 2>&1
	mark "STATUS daemon_$1_$2 $?"
	emit "$1-$2.json" "/tmp/$1-$2.json"
	if [ "$1" = with ]; then
		cpuhp_probe_dump reset
		mark "SLEEP $1 $2 $(busybox taskset -c 1 cpuhp_probe_dump sleeploopcpu "$loops") $(cpuhp_probe_dump nohz)"
		rmmod cpuhp_probe || mark "STATUS rmmod $?"
	else
		mark "SLEEP $1 $2 $(busybox taskset -c 1 cpuhp_probe_dump sleeploopcpu "$loops")"
	fi
}

i=1
while [ "$i" -le "$rounds" ]; do
	if [ $((i % 2)) = 1 ]; then
		side without "$i"
		side with "$i"
	else
		side with "$i"
		side without "$i"
	fi
	i=$((i + 1))
done
mark "online at end $(cat /sys/devices/system/cpu/online)"
mark "DONE"
guest_exit
