#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the kernel-phase sources' overhead bench guest
# (tests/vm/bench_kmod_overhead.sh). Interleaved rounds, the sides' order
# rotating from round to round so a drift of TCG speed over the boot does
# not favour one side. Sides:
#   without  no kernel-phase source (kernel_phases.source kmod, no module)
#   with     the module loaded and read by the kmod source
#   bpf      the bpf source, fentry/fexit where the kernel attaches them
#   bpfk     the bpf source, kprobes only (kernel_phases.bpf_attach kprobe)
# Each side: a daemon run (the same pattern each time), then a loop of 1 ns
# relative nanosleeps on cpu1 (each arms a non-pinned hrtimer: one
# get_nohz_timer_target call) with that side's probes in place, beside an
# idle daemon that took the last CPU offline, the hits counted by the
# module or the bpf source.
# Results: daemon reports base64 between markers, loop lines as text.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
rounds=${cpuhp_rounds:-4}
ops=${cpuhp_ops:-16}
loops=${cpuhp_loops:-20000}
sides=$(echo "${cpuhp_sides:-without,with,bpf,bpfk}" | tr , " ")
mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease) cmdline $(cat /proc/cmdline)"
last=$(sed 's/.*[-,]//' /sys/devices/system/cpu/online)
printf '{"kmod": {"enabled": true, "device": "/dev/cpuhp_probe"}, "kernel_phases": {"source": "kmod"}}\n' \
	> /tmp/without.json
cp /tmp/without.json /tmp/with.json
# The idle daemon beside the module's loop must not hold /dev/cpuhp_probe
# (one reader at a time: the loop reads the hits); the module's probes
# fire whether or not a reader is there.
printf '{"kmod": {"enabled": false}, "kernel_phases": {"source": "kmod"}}\n' > /tmp/idle.json
printf '{"kernel_phases": {"source": "bpf"}}\n' > /tmp/bpf.json
printf '{"kernel_phases": {"source": "bpf", "bpf_attach": "kprobe"}}\n' > /tmp/bpfk.json

loop() {  # loop SIDE ROUND: the nanosleep loop on cpu1 (+ the module's hits)
	r=$(busybox taskset -c 1 cpuhp_probe_dump sleeploopcpu "$loops")
	[ "$1" != with ] || r="$r $(cpuhp_probe_dump nohz)"
	mark "SLEEP $1 $2 $r"
}

side() {  # side SIDE ROUND
	[ "$1" != with ] || insmod /bin/cpuhp_probe.ko || mark "STATUS insmod $?"
	cpuhp-stress run --config "/tmp/$1.json" --pattern roundrobin --cpus all -n "$ops" \
		--progress never --state-dir "/tmp/state-$1-$2" --report "/tmp/$1-$2.json" \
		> "/tmp/$1-$2.out" 2>&1
	mark "STATUS daemon_$1_$2 $?"
	emit "$1-$2.json" "/tmp/$1-$2.json"
	# The loop beside a daemon with this side's config, on every side alike:
	# its first operation takes the last CPU offline (its sources start
	# before it), then it waits while the loop runs (the bpf source's probes
	# live as long as a daemon does; under one TCG thread an idle daemon's
	# threads must be on every side, not only the bpf ones).
	rm -f "/tmp/ops-$1-$2.jsonl"
	idle=/tmp/$1.json
	case "$1" in without|with) idle=/tmp/idle.json ;; esac
	cpuhp-stress run --config "$idle" --cpus "$last" -n 2 --interval 1h \
		--no-tracepoints --no-health --progress never --oplog "/tmp/ops-$1-$2.jsonl" \
		--state-dir "/tmp/lstate-$1-$2" --report "/tmp/loop-$1-$2.json" \
		> "/tmp/loop-$1-$2.out" 2>&1 &
	pid=$!
	n=0
	while ! [ -s "/tmp/ops-$1-$2.jsonl" ] && [ "$n" -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ "$1" != with ] || cpuhp_probe_dump reset
	loop "$1" "$2"
	kill -INT "$pid"
	wait "$pid"
	mark "STATUS loopdaemon_$1_$2 $?"  # 4: interrupted, as asked
	emit "loop-$1-$2.json" "/tmp/loop-$1-$2.json"
	[ "$1" != with ] || rmmod cpuhp_probe || mark "STATUS rmmod $?"
}

i=1
while [ "$i" -le "$rounds" ]; do
	# Round i starts with the ((i - 1) mod 4)th side.
	set -- $sides
	k=1
	while [ "$k" -lt "$i" ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	for s in "$@"; do
		side "$s" "$i"
	done
	i=$((i + 1))
done
mark "online at end $(cat /sys/devices/system/cpu/online)"
mark "DONE"
guest_exit
