#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/ab/scale_table.py on synthetic sweep reports whose answer is known:
levels on a line (slope exact, interval from the levels' standard errors),
the online level shifted by one, two boots pooled, a phase only one kernel
has, and a bad file named in one line."""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
TOOL = os.path.join(SRC, "bench/ab/scale_table.py")
spec = importlib.util.spec_from_file_location("scale_table", TOOL)
st = importlib.util.module_from_spec(spec)
spec.loader.exec_module(st)


def level(online, count, mean, sd, p50):
    return {"online_cpus": online, "count": count, "mean_ns": mean, "stddev_ns": sd, "p50_ns": p50}


def report(offset=0.0, phases=("takedown_cpu",)):
    """Offline write mean = 10 ms + 1 ms per online CPU (+ offset); the
    online write keyed by the count before it (level - 1)."""
    lv = [8, 16, 32]
    off = [level(n, 100, 10e6 + 1e6 * n + offset, 2e6, 10e6 + 1e6 * n) for n in lv]
    on = [level(n - 1, 100, 5e6 + 0.5e6 * n, 1e6, 5e6 + 0.5e6 * n) for n in lv]
    kp = {"offline": {p: {"by_online": [level(n, 100, 1e5 * n, 1e4, 1e5 * n) for n in lv]}
                      for p in phases}, "online": {}}
    return {"host": {"kernel_release": "test"}, "per_online_count": {"offline": off, "online": on},
            "timing_sources": {"kmod": {"kernel_phases": kp}}}


class ScaleTableTest(unittest.TestCase):
    def test_line_gives_its_slope_and_interval(self):
        lv = st.pooled([report()], "offline", "write")
        self.assertEqual(sorted(lv), [8, 16, 32])
        slope, half = st.fit(lv)
        self.assertAlmostEqual(slope, 1e6)
        xs = [8, 16, 32]
        xbar = sum(xs) / 3
        sxx = sum((x - xbar) ** 2 for x in xs)
        se = math.sqrt(sum(((x - xbar) / sxx) ** 2 * (2e6 / 10) ** 2 for x in xs))
        self.assertAlmostEqual(half, 1.96 * se)

    def test_online_level_is_the_count_after(self):
        self.assertEqual(sorted(st.pooled([report()], "online", "write")), [8, 16, 32])

    def test_two_boots_pool_counts_means_and_spread(self):
        lv = st.pooled([report(), report(offset=2e6)], "offline", "write")
        n, mean, sem, p50s = lv[8]
        self.assertEqual(n, 200)
        self.assertEqual(p50s, [18e6, 18e6])
        self.assertEqual(st.p50_cell([17e6, 18.5e6]), "17.000..18.500")
        self.assertAlmostEqual(mean, 19e6)
        # within (2 ms) and between (1 ms either side of the mean) spreads
        self.assertAlmostEqual(sem, math.sqrt((99 * 4e12 + 100 * 1e12) * 2 / 199 / 200))

    def test_rows_are_every_phase_any_report_has(self):
        rows = st.row_names([report(), report(phases=("takedown_cpu", "take_cpu_down"))])
        self.assertIn(("take_cpu_down", "offline", "take_cpu_down"), rows)
        self.assertIn(("online write", "online", "write"), rows)

    def test_the_command_prints_tables_and_fits(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "r.json")
            with open(p, "w") as f:
                json.dump(report(), f)
            out = subprocess.run([sys.executable, TOOL, p], capture_output=True, text=True,
                                 check=True).stdout
            self.assertIn("| 16 (n=100) | 26.000 / 26.000 | 1.600 / 1.600 |", out)
            self.assertRegex(out, r"\| offline write \| 1000\.0 \[[0-9.]+, [0-9.]+\] \| "
                                  r"8->16: 1000\.0, 16->32: 1000\.0 \|")
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{")
            p = subprocess.run([sys.executable, TOOL, bad], capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn("bad.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
