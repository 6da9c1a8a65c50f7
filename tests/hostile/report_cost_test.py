#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""compare and merge cost bounded by the input (issue 29.8), against the
built binary with sim-backend reports (no real CPU is touched):

- `merge res/*.json -o res/pooled.json` run twice: the second run finds its
  own output among the inputs and refuses it, exit 2, one line naming
  res/pooled.json; the pooled report is left as the first run wrote it.
- compare of a report with 2000 histogram summaries under timing_sources
  (the shape that took 370 s and 1 GB): refused before any bootstrap, exit
  2, one line naming the file, the place and the limit (merge and report
  too); 100 such summaries are compared (exit 0).
- merge of three reports with a 100,000-row array under timing_sources
  (the shape that took 20.5 s per array): pooled, every row once.

    report_cost_test.py BUILD_DIR [--make KIND N OUT]

--make writes one of the crafted reports from a sim report and exits (for
benchmarks): KIND summaries (N histogram summaries of 2000 samples and
buckets each under timing_sources) or rows (an array of N small rows under
timing_sources).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = None
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
BUCKET_LIMIT = 1000000  # report/report_limits.h ReportLimits::buckets


def bucket_low(index):
    octave = index >> 7
    if octave == 0:
        return index
    return (128 + (index & 127)) << (octave - 1)


def histogram_summary(name, samples):
    """A summary of `samples` operations, one per bucket: the worst case of
    compare's exact binomial bootstrap (2000 samples, 2000 buckets)."""
    first = 1100
    buckets = [[first + i, 1] for i in range(samples)]
    lo, hi = bucket_low(first), bucket_low(first + samples - 1)
    mid = bucket_low(first + samples // 2)
    return {"name": name, "count": samples, "min_ns": lo, "max_ns": hi, "mean_ns": float(mid),
            "p50_ns": mid, "p99_ns": bucket_low(first + samples * 99 // 100),
            "histogram": {"count": samples, "min_ns": lo, "max_ns": hi, "mean_ns": float(mid),
                          "m2": 0.0, "buckets": buckets}}


def own_buckets(j):
    """The histogram buckets of a report, wherever they sit."""
    if isinstance(j, dict):
        n = len(j["buckets"]) if "m2" in j and isinstance(j.get("buckets"), list) else 0
        return n + sum(own_buckets(v) for v in j.values())
    if isinstance(j, list):
        return sum(own_buckets(v) for v in j)
    return 0


def sim_report(path, state_dir, ops=200):
    subprocess.run([BIN, "run", "--backend", "sim", "-n", str(ops), "--state-dir", state_dir,
                    "--report", path], env=ENV, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


def make(kind, n, out, state_dir, samples=2000):
    r = sim_report(out, state_dir)
    if kind == "summaries":
        rows = [histogram_summary(f"s{i}", samples) for i in range(n)]
    else:
        rows = [{"name": f"row-{i:06d}", "hits": 1} for i in range(n)]
    r.setdefault("timing_sources", {})["crafted"] = {"rows": rows}
    with open(out, "w") as f:
        json.dump(r, f)


def run(*args):
    p = subprocess.run([BIN, *args], env=ENV, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


class ReportCost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-cost-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_merge_twice_into_the_same_directory(self):
        res = os.path.join(self.dir, "res")
        os.mkdir(res)
        for name in ("a", "b"):
            sim_report(os.path.join(res, name + ".json"), os.path.join(self.dir, "st-" + name))
        pooled = os.path.join(res, "pooled.json")

        def merge():
            inputs = sorted(os.path.join(res, f) for f in os.listdir(res))
            return run("merge", *inputs, "-o", pooled)

        code, _, err = merge()
        self.assertEqual(code, 0, err)
        with open(pooled) as f:
            first = f.read()
        self.assertEqual(json.loads(first)["pooled"]["boots"], 2)
        self.assertEqual(json.loads(first)["totals"]["ops"], 400)
        code, _, err = merge()
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("cpuhp-stress: merge: the same run twice: "), err)
        self.assertIn(pooled + " (a pooled report)", err)
        with open(pooled) as f:
            self.assertEqual(f.read(), first)

    def test_compare_of_thousands_of_summaries_is_refused_at_once(self):
        big = os.path.join(self.dir, "big.json")
        # 2000 summaries as in the issue, of 600 buckets each (the issue's
        # had 2000 each, 52 MB): 1.2 million buckets, a smaller file.
        make("summaries", 2000, big, os.path.join(self.dir, "st"), samples=600)
        with open(big) as f:
            report = json.load(f)
        del report["timing_sources"]["crafted"]
        own = own_buckets(report)
        crossing = (BUCKET_LIMIT - own) // 600  # the row that crosses the limit
        code, out, err = run("compare", big, big)
        self.assertEqual(code, 2, err + out[-400:])
        self.assertEqual(
            err, f"cpuhp-stress: compare: {big}: /timing_sources/crafted/rows/{crossing}/histogram"
            f"/buckets: more than {BUCKET_LIMIT} histogram buckets in the report's histograms "
            "together (the limit of a report; compare bootstraps each summary over its buckets)\n")
        for args in (["merge", big, "-o", "-"], ["report", big]):
            code, _, err = run(*args)
            self.assertEqual(code, 2, err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(f"{big}: /timing_sources/crafted/rows/{crossing}/histogram/buckets: "
                          f"more than {BUCKET_LIMIT} histogram buckets", err)

    def test_compare_within_the_limits(self):
        fits = os.path.join(self.dir, "fits.json")
        make("summaries", 100, fits, os.path.join(self.dir, "st"))
        code, out, err = run("compare", fits, fits, "--format", "json")
        self.assertEqual(code, 0, err)
        rows = [r for r in json.loads(out)["rows"] if "crafted" in r["label"]]
        self.assertEqual(len(rows), 100)

    def test_merge_of_arrays_of_100k_rows(self):
        inputs = []
        for name in ("a", "b", "c"):
            path = os.path.join(self.dir, name + ".json")
            make("rows", 100000, path, os.path.join(self.dir, "st-" + name))
            inputs.append(path)
        pooled = os.path.join(self.dir, "pooled.json")
        code, _, err = run("merge", *inputs, "-o", pooled)
        self.assertEqual(code, 0, err)
        with open(pooled) as f:
            rows = json.load(f)["timing_sources"]["crafted"]["rows"]
        self.assertEqual(len(rows), 100000)
        self.assertEqual(rows[99999], {"name": "row-099999", "hits": 3})


if __name__ == "__main__":
    BIN = os.path.join(os.path.abspath(sys.argv[1]), "cpuhp-stress")
    if len(sys.argv) == 6 and sys.argv[2] == "--make":
        with tempfile.TemporaryDirectory() as scratch:
            make(sys.argv[3], int(sys.argv[4]), sys.argv[5], os.path.join(scratch, "st"))
        sys.exit(0)
    sys.argv[1:] = sys.argv[2:]
    unittest.main(verbosity=2)
