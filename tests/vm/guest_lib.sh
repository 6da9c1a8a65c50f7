# SPDX-License-Identifier: GPL-2.0
# Sourced first by every guest /init (packed as /bin/guest_lib.sh by
# run_vm_test.sh, run_real_guest.sh and bench_kmod_overhead.sh): the mounts,
# the console protocol tests/vm/vmlib.py reads, and the way out of QEMU.
export PATH=/usr/bin:/bin:/sbin
/bin/busybox --install -s /bin 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
# /sys/kernel/security/lockdown: the daemon names lockdown as what stops the
# module (and, in confidentiality mode, the bpf source).
mount -t securityfs none /sys/kernel/security 2>/dev/null
mark() { echo "==CPUHP== $*"; }
emit() {  # emit NAME FILE: the file, base64, between BEGIN and END lines
	mark "BEGIN $1"
	base64 "$2"
	mark "END $1"
}
status() { mark "STATUS $1 $2"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# QEMU runs with -no-reboot. x86 Debian kernels leave through isa-debug-exit
# (QEMU exits (v << 1) | 1, the host decides pass or fail), arm64 and POWER
# power off. `guest_exit reboot` is for a kernel that cannot power off (the
# real-hotplug guest's: "Power off not available: System halted instead"):
# with -no-reboot a reboot ends QEMU too.
guest_exit() {
	sync
	# The console's last lines may still sit in the tty buffer: isa-debug-exit
	# ends QEMU at once (one vm_kmod_amd64 run lost its END dmesg and DONE).
	sleep 1
	[ -e /dev/port ] && printf '\000' | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	[ "${1:-}" = reboot ] && reboot -f
	poweroff -f
}
