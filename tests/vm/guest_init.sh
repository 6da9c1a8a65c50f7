#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the cpuhp_probe test guest (busybox). Every result goes to the
# serial console between "==CPUHP== BEGIN <name>" / "==CPUHP== END <name>"
# markers (base64 for files); tests/vm/check_vm_results.py reads them.
# cpuhp_ops=N on the kernel command line reaches us as $cpuhp_ops.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
# The daemon's tracepoints source reads the cpuhp events here.
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
ops=${cpuhp_ops:-24}
pattern=${cpuhp_pattern:-roundrobin}
# The nanosleep loops run on the first nohz_full CPU when the guest has one:
# from 7.x (hrtimer_prefer_local) a hrtimer started on a CPU whose tick runs
# stays there without a get_nohz_timer_target call, so a loop on such a CPU
# never reaches the probe; on a nohz_full CPU every start does.
nohz_cpu=$(sed -n 's/^\([0-9][0-9]*\).*/\1/p' /sys/devices/system/cpu/nohz_full 2>/dev/null)
sleeploop() {  # sleeploop N [CPU]: cpuhp_probe_dump sleeploop N, there or on CPU
	loop_cpu=${2:-$nohz_cpu}
	if [ -n "$loop_cpu" ]; then
		busybox taskset -c "$loop_cpu" cpuhp_probe_dump sleeploop "$1"
	else
		cpuhp_probe_dump sleeploop "$1"
	fi
}

mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease)"
run_daemon() {  # run_daemon NAME [config]
	[ "$cpuhp_daemon" = 0 ] && return 0
	cfg=""
	[ -n "$2" ] && cfg="--config $2"
	n=$ops
	[ "$pattern" = sweep ] && n=0  # the sweep ends by itself
	cpuhp-stress run $cfg --pattern "$pattern" --cpus all -n "$n" --progress never \
		--state-dir /tmp/state-$1 --report /tmp/$1.json > /tmp/$1.out 2>&1
	status "daemon_$1" $?
	emit "$1.out" /tmp/$1.out
	[ -f /tmp/$1.json ] && emit "$1.json" /tmp/$1.json
}

finish() {  # the online mask, the kernel log, DONE, and out of QEMU
	mark "online at end $(cat /sys/devices/system/cpu/online)"
	dmesg > /tmp/dmesg.txt
	emit dmesg /tmp/dmesg.txt
	mark "DONE"
	guest_exit
}

# A kernel in lockdown integrity mode (cpuhp_lockdown=1 beside lockdown=integrity
# on the command line, as Secure Boot sets it on distribution kernels,
# issue 34): the unsigned module is refused, and the default run times the
# kernel phases with the bpf source instead, saying why the module did not.
if [ "${cpuhp_lockdown:-0}" = 1 ]; then
	mark "LOCKDOWN $(cat /sys/kernel/security/lockdown 2>&1)"
	insmod /bin/cpuhp_probe.ko > /tmp/insmod.out 2>&1
	status insmod_lockdown $?
	emit insmod.out /tmp/insmod.out
	printf '{"sweep": {"cycles_per_level": 2}}\n' > /tmp/auto.json
	run_daemon lockdown /tmp/auto.json
	finish
fi

# Cost per get_nohz_timer_target hit: a nanosleep loop without the module
# (before insmod and after rmmod) and with it, hits counted by the module.
loops=${cpuhp_loops:-4000}
mark "SLEEPLOOP before $(sleeploop $loops)"

# 1. Without the module: the kmod source must say "unavailable" and run on.
#    The module's runs time the kernel phases with it alone (no BPF probes
#    beside it: "nomod" and "nomod2" are the runs without probes).
printf '{"kmod": {"enabled": true, "device": "/dev/cpuhp_probe"}, "kernel_phases": {"source": "kmod"}, "sweep": {"cycles_per_level": 2}}\n' > /tmp/kmod.json
run_daemon nomod /tmp/kmod.json

# 2. Load with the exact symbols the loader reads from /proc/kallsyms
#    (the later loads use the module's own name search: the two must place
#    the same symbols), check the ioctl contract, run with the kmod source.
t0=$(uptime_s)
cpuhp-probe-load /bin/cpuhp_probe.ko > /tmp/load.out 2>&1
status insmod $?
mark "LOADTIME loader $t0 $(uptime_s)"
cat /sys/module/cpuhp_probe/parameters/symbols >> /tmp/load.out 2>&1
emit load.out /tmp/load.out
ls -l /dev/cpuhp_probe > /tmp/devmode 2>&1
emit devmode /tmp/devmode
cpuhp_probe_dump check > /tmp/check.out 2>&1
status check $?
emit check.out /tmp/check.out
run_daemon withmod /tmp/kmod.json
cpuhp_probe_dump reset
mark "SLEEPLOOP with $(sleeploop $loops) $(cpuhp_probe_dump nohz)"
# 2b. The bpf source beside the module, the same operations timed by each
#     (issue 34): check_vm_results.py compares every phase both measured.
printf '{"kernel_phases": {"source": "both"}, "sweep": {"cycles_per_level": 2}}\n' > /tmp/both.json
run_daemon both /tmp/both.json

# 3. A plain reader dump after a second short loop (records the daemon did
#    not consume), then unload.
cpuhp_probe_dump reset
for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sed 's/.*cpu//'); do
	[ "$c" = 0 ] && continue
	[ -f /sys/devices/system/cpu/cpu$c/online ] || continue
	echo 0 > /sys/devices/system/cpu/cpu$c/online
	echo 1 > /sys/devices/system/cpu/cpu$c/online
done
sleeploop 200 > /dev/null
cpuhp_probe_dump dump > /tmp/dump.json 2>&1
status dump $?
emit dump.json /tmp/dump.json

# 4. The module review (issue 13 part 3, tests/vm/cpuhp_probe_review.c):
#    no get_nohz_timer_target hits of the module's own (device open, read), HIST
#    snapshots consistent under load, the probe's self-cost, the variants
#    kallsyms holds for each probed name.
review() {  # review NAME ARGS...
	n=$1
	shift
	cpuhp_probe_review "$@" > /tmp/$n.json 2>&1
	status "$n" $?
	emit "$n.json" /tmp/$n.json
}
review selfhits selfhits 5
review histcons histcons 3000
review calib calib
# RESET in a loop while HIST is read and checked, CPUs toggling
# (tests/vm/cpuhp_probe_torture.c resethist); then sequence numbers from 0.
cpuhp_probe_torture resethist 5 > /tmp/resethist.json 2>&1
status resethist $?
emit resethist.json /tmp/resethist.json
grep -E ' (__cpu_up|native_cpu_up|cpuhp_kick_ap_alive|cpuhp_bringup_ap|bringup_cpu|takedown_cpu|take_cpu_down|_cpu_up|_cpu_down|get_nohz_timer_target)(\.[a-z0-9.]+)?$' \
	/proc/kallsyms > /tmp/kallsyms.txt
emit kallsyms.txt /tmp/kallsyms.txt
rmmod cpuhp_probe
status rmmod $?
mark "SLEEPLOOP after $(sleeploop $loops)"
# Small rings and two per-CPU target counters: toggling every CPU three
# times, and at least 10 toggles in all (a 2-vCPU guest has one CPU to
# toggle: 3 cycles of ~6 records fit in two 16-record rings), overflows the
# rings (sequence gaps = dropped) and targets of cpu2+ land in the shared
# counters.
t0=$(uptime_s)
insmod /bin/cpuhp_probe.ko ring_records=16 targets_pcpu_max=2
status insmod_small $?
mark "LOADTIME search $t0 $(uptime_s)"
hp=$(for c in /sys/devices/system/cpu/cpu[0-9]*; do [ -f "$c/online" ] && echo "${c##*cpu}"; done)
n=$(echo "$hp" | grep -c .)
[ "$n" -gt 0 ] || n=1
rounds=$(( (10 + n - 1) / n ))
[ "$rounds" -ge 3 ] || rounds=3
r=0
while [ "$r" -lt "$rounds" ]; do
	for c in $hp; do
		echo 0 > /sys/devices/system/cpu/cpu$c/online
		echo 1 > /sys/devices/system/cpu/cpu$c/online
	done
	r=$((r + 1))
done
# The targets review wants hits aimed beyond the two per-CPU counters:
# get_nohz_timer_target returns the calling CPU when it is busy, so the
# loop runs pinned on each CPU from cpu2 on (left to the scheduler, a
# 4-vCPU pseries guest once kept it on cpu1 for all 500 sleeps: targets
# [114, 550, 0, 0]). With nohz_full the housekeeping CPUs are the targets
# whoever calls; with 2 CPUs there is no cpu2.
hi=""
for c in $hp; do [ "$c" -ge 2 ] && hi="$hi $c"; done
if [ -n "$nohz_cpu" ] || [ -z "$hi" ]; then
	sleeploop 500 > /dev/null
else
	for c in $hi; do
		sleeploop 250 "$c" > /dev/null
	done
fi
review gaps gaps
review targets targets
cpuhp_probe_dump dump > /tmp/dump_search.json 2>&1
emit dump_search.json /tmp/dump_search.json
rmmod cpuhp_probe
status rmmod_small $?
# The kernel's share of the loader's load: insmod with the same symbols=.
t0=$(uptime_s)
insmod /bin/cpuhp_probe.ko "symbols=$(tail -n 1 /tmp/load.out)"
status insmod_symbols $?
mark "LOADTIME insmod_symbols $t0 $(uptime_s)"
rmmod cpuhp_probe
# symbols= naming no probe is refused (EINVAL), nothing loaded.
insmod /bin/cpuhp_probe.ko symbols=takedown_cpu,no_such_function > /tmp/badsym.out 2>&1
echo "rc $?" >> /tmp/badsym.out
lsmod >> /tmp/badsym.out 2>&1
emit badsym.out /tmp/badsym.out
# Without get_nohz_timer_target: its sections are ENODEV, never zeros.
insmod /bin/cpuhp_probe.ko probes=takedown_cpu
status insmod_nonohz $?
review enodev enodev
run_daemon nonohz /tmp/kmod.json
rmmod cpuhp_probe
status rmmod_nonohz $?
# A second run without the module: with-module latency is compared with
# the mean of the runs before and after it (TCG warms up over time).
run_daemon nomod2 /tmp/kmod.json
finish
