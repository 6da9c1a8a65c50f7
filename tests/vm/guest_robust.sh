#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the module robustness guest (issue 7, part 5; selected by
# CPUHP_VM_MODE=robust in tests/vm/run_vm_test.sh). Phases, each with CPUs
# toggled by a second process (cpuhp_probe_torture toggle):
#   1. cpuhp_cycles insmod/rmmod cycles (finit_module/delete_module)
#   2. two concurrent readers of one open /dev/cpuhp_probe (ring_records=16)
#   3. the ioctl/read error contract
#   4. delete_module with the device open, then after close
# Results go to the serial console base64 between "==CPUHP== BEGIN/END"
# markers; tests/vm/robust_check.py asserts on them and on dmesg.
. /bin/guest_lib.sh  # mounts, mark/emit/status, guest_exit
cycles=${cpuhp_cycles:-200}
budget_s=${cpuhp_cycles_budget_s:-240}  # the cycles phase stops there (and says so)
pause_ms=${cpuhp_toggle_pause_ms:-100}  # between two hotplug writes of the toggler
readers_s=${cpuhp_readers_s:-20}
T=/bin/cpuhp_probe_torture
KO=/bin/cpuhp_probe.ko
toggle_start() { rm -f /tmp/stop; $T toggle /tmp/stop "$pause_ms" > "/tmp/toggle-$1.json" & tpid=$!; }
toggle_stop() { touch /tmp/stop; wait $tpid; status "toggle_$1" $?; emit "toggle-$1.json" "/tmp/toggle-$1.json"; }

mark "guest up: online $(cat /sys/devices/system/cpu/online) kernel $(cat /proc/sys/kernel/osrelease)"
mark "FACT lockdep $([ -e /proc/lockdep ] && echo on || echo off)"
mark "FACT kasan $(grep -q kasan /proc/kallsyms 2>/dev/null && echo on || echo off)"

mark "PHASE cycles start $(uptime_s)"
toggle_start cycles
$T cycles "$cycles" "$budget_s" "$KO" > /tmp/cycles.json
status cycles $?
toggle_stop cycles
emit cycles.json /tmp/cycles.json
mark "PHASE cycles end $(uptime_s)"

mark "PHASE readers start $(uptime_s)"
insmod "$KO" ring_records=16
status insmod_readers $?
toggle_start readers
$T readers "$readers_s" > /tmp/readers.json
status readers $?
toggle_stop readers
emit readers.json /tmp/readers.json
mark "PHASE readers end $(uptime_s)"

mark "PHASE contract start $(uptime_s)"
$T contract > /tmp/contract.json
status contract $?
emit contract.json /tmp/contract.json
$T rmmod_open > /tmp/rmmod_open.json
status rmmod_open $?
emit rmmod_open.json /tmp/rmmod_open.json
mark "PHASE contract end $(uptime_s)"

lsmod > /tmp/lsmod.txt 2>&1
emit lsmod /tmp/lsmod.txt
mark "online at end $(cat /sys/devices/system/cpu/online)"
dmesg > /tmp/dmesg.txt
emit dmesg /tmp/dmesg.txt
mark "DONE"
guest_exit
