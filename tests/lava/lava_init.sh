#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the LAVA guests (tests/lava/lava_job.sh): what a board's root
# gives a test (proc, sys, devtmpfs, tracefs, a writable /tmp), kernel
# messages off the console (LAVA reads its signals there: a hotplug's
# messages would cut them), then a root shell on the console for LAVA's test
# shell. The busybox of /opt/cpuhp gives the applets the root lacks (all of
# them in a busybox ramdisk; insmod, rmmod and lsmod in Debian's minimal
# root, which has no kmod), in /bin: LAVA's test runner keeps its own PATH.
bb=/opt/cpuhp/busybox
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
for a in $($bb --list); do
	for d in /bin /sbin /usr/bin /usr/sbin; do [ -e "$d/$a" ] && continue 2; done
	$bb ln -s "$bb" "/bin/$a"
done
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /run/lock /root && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
dmesg -n 1
hostname cpuhp-lava
echo "cpuhp-lava: online CPUs $(cat /sys/devices/system/cpu/online), kernel $(uname -r)"
export PS1='root@cpuhp-lava:~# '
exec $bb setsid $bb cttyhack /bin/sh
