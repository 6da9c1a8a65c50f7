# SPDX-License-Identifier: GPL-2.0
"""Runs a real-CPU test only if the CPU it toggles can be online:

    real_cpu_gate.py COMMAND [ARGS...]

A CPU that the kernel can no longer bring online (x86 "CPU1 failed to report
alive state": every attempt blocks 10 s, then EIO) would make every real test
time out one operation at a time. If the test CPU (CPUHP_TEST_CPU, default 1)
is offline, the gate tries once to bring it online; if the kernel refuses, it
prints why and exits 77 (skipped) without running COMMAND, and remembers the
verdict for the rest of this boot (/run, keyed by boot_id) so the next real
test skips at once. An online CPU always runs the test. Without root or a
writable online file the test itself decides (it skips with its own reason).
"""
import os
import sys

from cpuhp_testlib import CPU, SYS, read

VERDICT = f"/run/cpuhp-stress-cpu{CPU}-unusable"


def unusable_reason():
    online = f"{SYS}/cpu{CPU}/online"
    if os.geteuid() != 0 or not os.access(online, os.W_OK):
        return None
    if read(online) == "1":
        return None
    boot = read("/proc/sys/kernel/random/boot_id")
    try:
        seen_boot, why = read(VERDICT).split("\n", 1)
        if seen_boot == boot:
            return why + " (verdict from an earlier test of this boot)"
    except (OSError, ValueError):
        pass
    try:
        with open(online, "w") as f:
            f.write("1")
        return None
    except OSError as e:
        try:
            state = read(f"{SYS}/cpu{CPU}/hotplug/state")
        except OSError:
            state = "unknown"
        why = (f"cpu{CPU} is offline and the kernel cannot bring it online "
               f"(write 1 to {online}: {e.strerror}; hotplug/state {state}); "
               f"this machine needs a reboot before real-CPU tests can run")
    with open(VERDICT, "w") as f:
        f.write(f"{boot}\n{why}")
    return why


def main():
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} COMMAND [ARGS...]")
    why = unusable_reason()
    if why:
        print(f"SKIPPED: {why}", flush=True)
        sys.exit(77)
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
