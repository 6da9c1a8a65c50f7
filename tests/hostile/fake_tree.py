# SPDX-License-Identifier: GPL-2.0
"""A fake /sys/devices/system/cpu for the hostile tests (no real CPU is
touched): 4 CPUs, cpu0 without an online file like x86's, cpu1-3 online."""
import os


def make_cpu_tree(root, fail=False):
    """The tree under root; fail: an isolated list and cpuN/hotplug/fail
    ("-1", nothing armed) on each hotpluggable CPU, for fault runs."""
    os.makedirs(os.path.join(root, "cpu0"))
    for name in ("present", "possible", "online"):
        put(root, name, "0-3\n")
    if fail:
        put(root, "isolated", "\n")
    for cpu in (1, 2, 3):
        os.makedirs(os.path.join(root, f"cpu{cpu}", "hotplug" if fail else ""))
        put(root, f"cpu{cpu}/online", "1\n")
        if fail:
            put(root, f"cpu{cpu}/hotplug/fail", "-1\n")


def put(root, rel, text):
    with open(os.path.join(root, rel), "w") as f:
        f.write(text)


def get(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().strip()
