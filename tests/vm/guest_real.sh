#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the real-hotplug guest (tests/vm/run_real_guest.sh): a kernel
# built with CONFIG_CPU_HOTPLUG_STATE_CONTROL, so cpuN/hotplug/fail exists
# (or Debian's own, without it: fault injection skips), and the host's own real-CPU tests (tests/integration, tests/hostile) run
# here unchanged against the guest's cpu1, from /opt/cpuhp/{build,src}.
# cpuhp_tests=a,b,c on the kernel command line picks them (names as in
# tests/CMakeLists.txt). Each test's output goes to the console as it runs,
# then "==CPUHP== STATUS <name> <exit>"; tests/vm/real_check.py asserts on it.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mkdir -p /run/lock
B=/opt/cpuhp/build
S=/opt/cpuhp/src

mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease)"
# A kernel without cpuN/hotplug/fail: fault injection skips (real_check.py).
if ls /sys/devices/system/cpu/cpu*/hotplug/fail >/dev/null 2>&1; then mark "hotplug_fail yes"; else mark "hotplug_fail no"; fi
# x86 cpu0 has no online file; on arm64/PSCI and POWER every CPU has one, so
# real_cpu_test's "cannot be hotplugged" case skips there.
fixed=no
for c in /sys/devices/system/cpu/cpu[0-9]*; do [ -e "$c/online" ] || fixed=yes; done
mark "fixed_cpu $fixed"
cat /sys/devices/system/cpu/hotplug/states > /tmp/states.txt
emit states.txt /tmp/states.txt
for spec in $(echo "${cpuhp_tests:-faults_integration}" | tr ',' ' '); do
	# NAME:test_a+test_b runs only those tests of NAME (CPUHP_TEST_ONLY).
	t=${spec%%:*} only=""
	[ "$t" = "$spec" ] || only=$(echo "${spec#*:}" | tr '+' ',')
	case "$t" in
	faults_integration) cmd="$S/tests/integration/faults_test.py $B $S" ;;
	kill_anywhere) cmd="$S/tests/hostile/kill_anywhere_test.py $B ${cpuhp_kills:-40} 1" ;;
	hostile_input) cmd="$S/tests/hostile/hostile_input_test.py $B $S" ;;
	real_cpu_integration) cmd="$S/tests/integration/real_cpu_test.py $B $S" ;;
	tracepoints_integration) cmd="$S/tests/integration/tracepoints_test.py $B $S" ;;
	real_health_integration) cmd="$S/tests/integration/health_test.py $B $S" ;;
	smt_integration) cmd="$S/tests/integration/smt_test.py $B $S" ;;
	*) status "$t" 127; continue ;;
	esac
	mark "TEST $t start $(uptime_s)"
	# shellcheck disable=SC2086 # cmd is split into its words on purpose
	CPUHP_REAL_FAULTS=1 CPUHP_TEST_ONLY=$only CPUHP_EXPECT_SMT_THREADS=${cpuhp_threads:-} python3 $cmd 2>&1
	rc=$?
	mark "TEST $t end $(uptime_s)"
	status "$t" "$rc"
	mark "after $t: online $(cat /sys/devices/system/cpu/online) fail $(cat /sys/devices/system/cpu/cpu*/hotplug/fail 2>/dev/null | tr '\n' ' ')"
done
mark "online at end $(cat /sys/devices/system/cpu/online)"
dmesg > /tmp/dmesg.txt
emit dmesg /tmp/dmesg.txt
mark "DONE"
guest_exit reboot
