#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The real-CPU tests find their CPUs at run time (issue 13, part 4): on
fake sysfs trees shaped like x86 (cpu0 has no online file), arm64/PSCI and
POWER (every CPU has one), a one-CPU board and CPUHP_TEST_CPU. No root."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpuhp_testlib as lib  # noqa: E402


def tree(root, cpus):
    """cpus: {n: None (no online file) or "0"/"1"}"""
    for n, online in cpus.items():
        os.makedirs(f"{root}/cpu{n}")
        if online is not None:
            with open(f"{root}/cpu{n}/online", "w") as f:
                f.write(online + "\n")
    os.makedirs(f"{root}/cpufreq")  # not a CPU
    os.makedirs(f"{root}/cpuidle")
    return root


class FindCpus(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name + "/cpu"

    def tearDown(self):
        self.tmp.cleanup()

    def test_x86_cpu0_fixed(self):
        r = tree(self.root, {0: None, 1: "1", 2: "1", 10: "1"})
        self.assertEqual(lib.find_test_cpu(r, {}), 1)
        self.assertEqual(lib.find_fixed_cpu(r), 0)
        self.assertEqual(lib.find_other_cpu(1, r), 0)

    def test_arm64_every_cpu_hotpluggable(self):
        r = tree(self.root, {0: "1", 1: "1", 2: "1", 3: "1"})
        self.assertEqual(lib.find_test_cpu(r, {}), 1)
        self.assertIsNone(lib.find_fixed_cpu(r))
        self.assertEqual(lib.find_other_cpu(1, r), 0)

    def test_numbering_gap_and_offline_neighbour(self):
        # cpu1 absent (e.g. POWER SMT off), cpu0 offline: cpu4 is toggled,
        # cpu8 stays online to compare with.
        r = tree(self.root, {0: "0", 4: "1", 8: "1"})
        self.assertEqual(lib.find_test_cpu(r, {}), 4)
        self.assertEqual(lib.find_other_cpu(4, r), 8)

    def test_only_cpu0_hotpluggable(self):
        r = tree(self.root, {0: "1"})
        self.assertEqual(lib.find_test_cpu(r, {}), 0)
        self.assertIsNone(lib.find_other_cpu(0, r))

    def test_env_wins(self):
        r = tree(self.root, {0: None, 1: "1", 2: "1"})
        self.assertEqual(lib.find_test_cpu(r, {"CPUHP_TEST_CPU": "2"}), 2)

    def test_no_sysfs(self):
        self.assertEqual(lib.present_cpus(self.root + "/missing"), [])
        self.assertEqual(lib.find_test_cpu(self.root + "/missing", {}), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
