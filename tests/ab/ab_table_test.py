#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/ab/table.py on a synthetic tools/abtest.sh output whose answer is
known: the bootstrap over boots (exact for few boots, its bounds inside the
range of boot means, a constant side giving a point interval), the wall-time
table (seconds, writes, the "CPUn: shutdown" lines counted per console) and
the verdict on the boots' order."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
TOOL = os.path.join(SRC, "bench/ab/table.py")
spec = importlib.util.spec_from_file_location("ab_table", TOOL)
tb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tb)


class BootstrapTest(unittest.TestCase):
    def test_equal_boots_give_a_point_interval(self):
        self.assertEqual(tb.boot_bootstrap([10.0, 10.0, 10.0], [8.0, 8.0, 8.0]), (0.8, 0.8, 0.8))

    def test_interval_holds_the_ratio_and_stays_inside_the_extremes(self):
        a, b = [10.0, 10.5, 9.5], [8.0, 8.6, 8.3]
        ratio, lo, hi = tb.boot_bootstrap(a, b)
        self.assertAlmostEqual(ratio, (sum(b) / 3) / (sum(a) / 3))
        self.assertLessEqual(lo, ratio)
        self.assertGreaterEqual(hi, ratio)
        self.assertGreaterEqual(lo, min(b) / max(a))
        self.assertLessEqual(hi, max(b) / min(a))
        self.assertLess(lo, hi)

    def test_many_boots_use_seeded_draws(self):
        a, b = [10.0 + i % 3 for i in range(8)], [9.0 + i % 2 for i in range(8)]
        self.assertEqual(tb.boot_bootstrap(a, b), tb.boot_bootstrap(a, b))


def report(secs, ops):
    return {"run": {"elapsed_ns": int(secs * 1e9)}, "totals": {"ops": ops},
            "timing_sources": {"kmod": {}}}


class WallTableTest(unittest.TestCase):
    def test_seed_figure_per_boot_and_the_shutdown_lines(self):
        with tempfile.TemporaryDirectory() as out:
            for side in ("a", "b", "console"):
                os.mkdir(os.path.join(out, side))
            with open(os.path.join(out, "compare.json"), "w") as f:
                json.dump({"baseline": "A", "candidate": "B", "threshold": 0.05, "rows": []}, f)
            boots = "side\tboot\tkernel\tseconds\tconsole\n"
            for i, (sa, sb) in enumerate([(10.0, 8.5), (10.2, 8.6), (9.9, 8.4)], 1):
                # consoles found through boots.tsv, whatever their names
                boots += f"A\t{i}\tk\t40\tconsole/side-a-{i}.txt\nB\t{i}\tk\t40\tconsole/side-b-{i}.txt\n"
                for side, s in (("a", sa), ("b", sb)):
                    with open(os.path.join(out, side, f"boot{i}.json"), "w") as f:
                        json.dump(report(s, 1000), f)
                with open(os.path.join(out, "console", f"side-a-{i}.txt"), "w") as f:
                    f.write("[    1.0] CPU1: shutdown\n" * 500 + "[    2.0] CPU2: shutdown\n")
                with open(os.path.join(out, "console", f"side-b-{i}.txt"), "w") as f:
                    f.write("==CPUHP== guest up\n")
            with open(os.path.join(out, "boots.tsv"), "w") as f:
                f.write(boots)
            p = subprocess.run([sys.executable, TOOL, out], capture_output=True, text=True, check=True)
        self.assertIn("| A | 1 | 1000 | 10.000 | 501 |", p.stdout)
        self.assertIn("| B | 3 | 1000 | 8.400 | 0 |", p.stdout)
        self.assertIn("mean wall: A 10.033 s, B 8.500 s, B/A 0.847 [", p.stdout)
        self.assertIn("every B boot below every A boot", p.stdout)
        self.assertNotIn("get_nohz_timer_target", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
