#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""compare and report, end to end through the built binary, without root:
simulated runs (--backend sim) with known latency shifts are compared and
classified; every report format is checked structurally (JUnit with an XML
parser, KCIDB v5 fields, LAVA lines by pattern, HTML rendered by headless
Chromium with a screenshot and its charts' data points read back); the LAVA
YAML files in configs/lava are checked for the fields LAVA needs.

    verdicts_test.py BUILD_DIR SOURCE_DIR [ARTIFACT_DIR]

ARTIFACT_DIR (default BUILD_DIR/verdicts-artifacts) keeps the reports, the
HTML page and its screenshot for a human to look at.
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

BIN = SRC = ART = None

BASE_SIM = {"cpus": 8, "offline_base_ns": 2000000, "offline_per_cpu_ns": 150000,
            "online_base_ns": 1000000, "online_per_cpu_ns": 100000, "jitter": 0.2}


def sim_report(path, seed, offline_scale=1.0, online_scale=1.0, cycles=300):
    """A simulated sweep (levels 2, 4, 8 online CPUs) with latencies scaled."""
    sim = dict(BASE_SIM)
    for k in ("offline_base_ns", "offline_per_cpu_ns"):
        sim[k] = int(sim[k] * offline_scale)
    for k in ("online_base_ns", "online_per_cpu_ns"):
        sim[k] = int(sim[k] * online_scale)
    cfg = {"pattern": "sweep", "cpus": "1-7", "iterations": 0, "backend": "sim", "seed": seed,
           "progress": "never", "report": path, "force": True,
           "sweep": {"levels": "auto", "cycles_per_level": cycles, "victim": -1}, "sim": sim}
    cfg_path = path + ".config.json"
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    p = subprocess.run([BIN, "run", "--config", cfg_path], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(path) as f:
        return json.load(f)


def run(*args, **kw):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, **kw)


class Reports:
    """Built once: base, same model other seed, +5 %, +20 % offline, -20 % online."""
    done = False

    @classmethod
    def build(cls):
        if cls.done:
            return
        cls.base = os.path.join(ART, "base.json")
        cls.same = os.path.join(ART, "same.json")
        cls.up5 = os.path.join(ART, "offline+5.json")
        cls.up20 = os.path.join(ART, "offline+20.json")
        cls.down20 = os.path.join(ART, "online-20.json")
        sim_report(cls.base, 1)
        sim_report(cls.same, 2)
        sim_report(cls.up5, 3, offline_scale=1.05)
        sim_report(cls.up20, 4, offline_scale=1.20)
        sim_report(cls.down20, 5, online_scale=0.80)
        cls.done = True


def compare_json(base, cand, *extra):
    p = run("compare", base, cand, "--format", "json", *extra)
    return p.returncode, json.loads(p.stdout) if p.stdout else None, p.stderr


def rows(result, group):
    return {r["label"]: r for r in result["rows"] if r["group"] == group}


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Reports.build()

    def test_report_with_buckets_and_timeline_is_schema_valid(self):
        v = subprocess.run(["/usr/bin/python3", f"{SRC}/tests/validate_report.py",
                            f"{SRC}/daemon/report/schema/report.schema.json", Reports.base, Reports.up20],
                           capture_output=True, text=True)
        if v.returncode == 77:
            self.skipTest("python3-jsonschema missing")
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        with open(Reports.base) as f:
            r = json.load(f)
        self.assertIn("histogram", r["directions"]["offline"])
        self.assertLessEqual(len(r["timeline"]["points"]), r["timeline"]["max_points"])
        self.assertEqual(sum(p[2] for p in r["timeline"]["points"]), r["totals"]["ops"])
        # Bounded: a few hundred KiB at most for this run.
        self.assertLess(os.path.getsize(Reports.base), 400 * 1024)

    def test_identical_is_no_change_exit_0(self):
        code, res, err = compare_json(Reports.base, Reports.base)
        self.assertEqual(code, 0, err)
        self.assertEqual(res["regressions"], 0)
        self.assertEqual(res["improvements"], 0)
        for r in res["rows"]:
            if r["p50"]["verdict"] != "n/a":
                self.assertEqual(r["p50"]["verdict"], "no change", r)
                self.assertAlmostEqual(r["p50"]["ratio"], 1.0)

    def test_same_model_other_seed_is_no_change(self):
        code, res, err = compare_json(Reports.base, Reports.same)
        self.assertEqual(code, 0, json.dumps(res, indent=1))
        self.assertEqual(res["improvements"], 0)

    def test_twenty_percent_slower_offline_regresses_exit_1(self):
        code, res, err = compare_json(Reports.base, Reports.up20)
        self.assertEqual(code, 1)
        off = rows(res, "offline latency")
        self.assertTrue({"2", "4", "8", "all"} <= set(off), sorted(off))
        for label in ("2", "4", "8", "all"):
            r = off[label]
            self.assertEqual(r["p50"]["verdict"], "REGRESSED", label)
            self.assertAlmostEqual(r["p50"]["ratio"], 1.2, delta=0.04)
            self.assertGreater(r["p50"]["ci"][0], 1.05)
        for label, r in rows(res, "online latency").items():
            self.assertNotEqual(r["p50"]["verdict"], "REGRESSED", label)

    def test_twenty_percent_faster_online_improves_exit_0(self):
        code, res, err = compare_json(Reports.base, Reports.down20)
        self.assertEqual(code, 0)
        self.assertEqual(rows(res, "online latency")["all"]["p50"]["verdict"], "improved")
        self.assertAlmostEqual(rows(res, "online latency")["all"]["p50"]["ratio"], 0.8, delta=0.03)

    def test_five_percent_shift(self):
        # At a 5 % threshold the CI of a 5 % shift cannot exclude the band.
        code, res, _ = compare_json(Reports.base, Reports.up5)
        r = rows(res, "offline latency")["all"]["p50"]
        self.assertAlmostEqual(r["ratio"], 1.05, delta=0.02)
        self.assertEqual(r["verdict"], "no change")
        # At 2 % it is a regression, and the exit code says so.
        code, res, _ = compare_json(Reports.base, Reports.up5, "--threshold", "2%")
        self.assertEqual(code, 1)
        self.assertEqual(rows(res, "offline latency")["all"]["p50"]["verdict"], "REGRESSED")
        # A per-metric override can waive it again.
        code, res, _ = compare_json(Reports.base, Reports.up5, "--threshold", "2%",
                                    "--threshold", "offline=10%")
        self.assertEqual(code, 0)

    def test_text_and_markdown_tables(self):
        p = run("compare", Reports.base, Reports.up20)
        self.assertEqual(p.returncode, 1)
        self.assertIn("offline latency, p50 (ms)", p.stdout)
        self.assertRegex(p.stdout, r"\n\s+8\s+[0-9.]+\s+[0-9.]+\s+1\.[12]\d\d \[[0-9.]+, [0-9.]+\]")
        self.assertIn("verdict: REGRESSED", p.stdout)
        p = run("compare", Reports.base, Reports.up20, "--format", "markdown")
        self.assertIn("| online CPUs | ops | baseline | candidate | ratio [95 % CI] | verdict |",
                      p.stdout)
        # Set-up writes are out of the tables: exactly 300 per level and side.
        self.assertRegex(p.stdout, r"\n\| 8 \| 300 / 300 \| [0-9.]+ \| [0-9.]+ \| 1\.[12]\d\d ")
        with open(os.path.join(ART, "compare.md"), "w") as f:
            f.write(p.stdout)

    def test_bad_input_exit_2_one_line(self):
        with open(Reports.base) as f:
            r = json.load(f)
        tmp = tempfile.mkdtemp(prefix="cpuhp-verdicts.")
        try:
            v2 = os.path.join(tmp, "v2.json")
            r2 = dict(r, schema_version=2)
            with open(v2, "w") as f:
                json.dump(r2, f)
            p = run("compare", Reports.base, v2)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stderr, f"cpuhp-stress: compare: {v2}: schema_version 2, "
                                       "this cpuhp-stress reads 1\n")
            other = os.path.join(tmp, "other.json")
            r3 = json.loads(json.dumps(r))
            r3["cpus"]["selected"] = "1-3"
            with open(other, "w") as f:
                json.dump(r3, f)
            p = run("compare", Reports.base, other)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stderr.count("\n"), 1)
            self.assertIn("different CPU sets: baseline operated on CPUs 1-7, candidate on 1-3",
                          p.stderr)
            garbage = os.path.join(tmp, "garbage.json")
            with open(garbage, "w") as f:
                f.write("{not json")
            p = run("compare", garbage, Reports.base)
            self.assertEqual((p.returncode, p.stderr),
                             (2, f"cpuhp-stress: compare: {garbage}: invalid JSON at line 1, "
                                 "column 3: invalid literal; expected string literal\n"))
            p = run("compare", Reports.base, os.path.join(tmp, "missing.json"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("missing.json: cannot read: No such file or directory", p.stderr)
            p = run("compare", Reports.base, Reports.base, "--threshold", "lots")
            self.assertEqual(p.returncode, 2)
        finally:
            shutil.rmtree(tmp)

    def test_unknown_sections_are_skipped_not_fatal(self):
        with open(Reports.base) as f:
            r = json.load(f)
        tmp = tempfile.mkdtemp(prefix="cpuhp-verdicts.")
        try:
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            ra = dict(r, kernel_phases={"takedown_cpu": {"offline": r["directions"]["offline"]}},
                      future_thing=[1, 2, {"x": "y"}])
            rb = dict(r, kernel_phases={"takedown_cpu": {"offline": r["directions"]["offline"]}},
                      future_thing={"z": 1})
            for path, doc in ((a, ra), (b, rb)):
                with open(path, "w") as f:
                    json.dump(doc, f)
            code, res, err = compare_json(a, b)
            self.assertEqual(code, 0, err)
            labels = [x["label"] for x in res["rows"]]
            self.assertIn("kernel_phases.takedown_cpu.offline", labels)
            self.assertTrue(any("future_thing" in n for n in res["notes"]), res["notes"])
        finally:
            shutil.rmtree(tmp)


class TagCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.points = []
        self.tags = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "data-series" in a:
            self.points.append((a["data-series"], a.get("data-x"), a.get("data-y")))


class FormatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Reports.build()

    def report(self, fmt, *extra, path=None):
        return run("report", path or Reports.up20, "--format", fmt, *extra)

    def test_text_and_markdown(self):
        p = self.report("text")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("offline latency (ms)", p.stdout)
        self.assertRegex(p.stdout, r"pass\s+no_operation_errors")
        p = self.report("markdown")
        self.assertIn("| online CPUs | ops | p50 | p99 | max |", p.stdout)

    def test_junit_parses_with_one_case_per_check(self):
        p = self.report("junit", "--baseline", Reports.base, "--limit", "online.p99=500us")
        self.assertEqual(p.returncode, 1)
        root = ET.fromstring(p.stdout)
        self.assertEqual(root.tag, "testsuites")
        suite = root.find("testsuite")
        cases = {c.get("name"): c for c in suite.findall("testcase")}
        self.assertEqual(int(suite.get("tests")), len(cases))
        for name in ("no_operation_errors", "cpus_restored", "offline_p50", "online_p99",
                     "compare_offline.p50", "compare_online.p50", "compare_offline.p50_online_8"):
            self.assertIn(name, cases)
        failed = {n for n, c in cases.items() if c.find("failure") is not None}
        self.assertEqual(int(suite.get("failures")), len(failed))
        self.assertIn("compare_offline.p50", failed)
        self.assertIn("online_p99", failed)  # above the 500 us limit
        self.assertNotIn("compare_online.p50", failed)
        self.assertNotIn("no_operation_errors", failed)
        with open(os.path.join(ART, "junit.xml"), "w") as f:
            f.write(p.stdout)

    def test_kcidb_v5_fields(self):
        p = self.report("kcidb", "--origin", "mylab", "--build-id", "mylab:build42")
        self.assertEqual(p.returncode, 0, p.stderr)
        k = json.loads(p.stdout)
        self.assertEqual(k["version"]["major"], 5)
        self.assertLessEqual(k["version"].get("minor", 0), 3)
        self.assertTrue(k["tests"])
        ids = set()
        for t in k["tests"]:
            for field in ("id", "build_id", "origin"):  # required by the v5 schema
                self.assertIsInstance(t[field], str)
            self.assertRegex(t["origin"], r"^[a-z0-9_]+$")
            self.assertRegex(t["id"], r"^[a-z0-9_]+:.*$")
            self.assertEqual(t["build_id"], "mylab:build42")
            self.assertRegex(t["path"], r"^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$")
            self.assertIn(t["status"], ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP"))
            if "number" in t:
                self.assertIsInstance(t["number"]["value"], (int, float))
                self.assertTrue(set(t["number"]) <= {"value", "unit", "prefix"})
            self.assertNotIn(None, t.values())  # no nulls in KCIDB
            ids.add(t["id"])
        self.assertEqual(len(ids), len(k["tests"]))
        by_path = {t["path"]: t for t in k["tests"]}
        self.assertEqual(by_path["cpuhp_stress.no_operation_errors"]["status"], "PASS")
        p50 = by_path["cpuhp_stress.offline_p50"]
        self.assertEqual(p50["status"], "DONE")
        self.assertEqual(p50["number"]["unit"], "ms")
        with open(Reports.up20) as f:
            r = json.load(f)
        self.assertAlmostEqual(p50["number"]["value"], r["directions"]["offline"]["p50_ns"] / 1e6)

    def test_lava_lines(self):
        p = self.report("lava", "--baseline", Reports.base)
        self.assertEqual(p.returncode, 1)
        pat = re.compile(r"^lava-test-case [A-Za-z0-9_.@=-]+ --result (pass|fail|skip)"
                         r"( --measurement [-+0-9.e]+ --units [A-Za-z0-9_.-]+)?$")
        # A failed case comes after an echo of why (a test case has no message).
        echo = re.compile(r"^echo 'FAIL [A-Za-z0-9_.@=-]+: ([^']|'\\'')*'$")
        lines = p.stdout.splitlines()
        cases = [line for line in lines if not line.startswith("echo ")]
        self.assertGreater(len(cases), 8)
        for line in lines:
            self.assertRegex(line, echo if line.startswith("echo ") else pat)
        for line in cases:
            self.assertNotIn(" ", line.split(" ")[1])
        # Sim reports: every case is sim.<check> (issue 28 item 7).
        self.assertIn("echo 'FAIL sim.compare_offline.p50: offline.p50: ", p.stdout)
        self.assertIn("lava-test-case sim.compare_offline.p50 --result fail --measurement",
                      p.stdout)
        self.assertRegex(p.stdout, r"lava-test-case sim.offline_p50 --result pass --measurement "
                                   r"[0-9.]+ --units ms\n")

    def test_html_structure_and_data_points(self):
        out = os.path.join(ART, "report.html")
        p = self.report("html", "--output", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            page = f.read()
        self.assertNotIn("<script", page)
        self.assertIsNone(re.search(r"(src|href)=\"https?:", page))  # self-contained
        c = TagCollector()
        c.feed(page)
        with open(Reports.up20) as f:
            r = json.load(f)
        pts = {}
        for series, x, y in c.points:
            pts.setdefault(series, []).append((x, y))
        for d in ("offline", "online"):
            levels = {str(l["online_cpus"]): l for l in r["per_online_count"][d]}
            got = dict(pts[f"{d} p50"])
            self.assertEqual(set(got), set(levels))
            for x, l in levels.items():
                self.assertAlmostEqual(float(got[x]), l["p50_ns"] / 1e6, places=4)
            got99 = dict(pts[f"{d} p99"])
            for x, l in levels.items():
                self.assertAlmostEqual(float(got99[x]), l["p99_ns"] / 1e6, places=4)
            hist = pts[f"{d} histogram"]
            self.assertGreater(len(hist), 5)
            self.assertEqual(round(sum(float(y) for _, y in hist)), r["directions"][d]["count"])
            col = r["timeline"]["columns"].index(f"{d}_n")
            self.assertEqual(len(pts[f"{d} max"]),
                             sum(1 for p in r["timeline"]["points"] if p[col] > 0))
        # Latency vs online CPUs per direction, two histograms, the timeline.
        self.assertEqual(sum(1 for t, _ in c.tags if t == "svg"), 5)
        # A simulated run has no kernel sources: the page says so, draws none.
        self.assertIn("Disturbance probes: not in this report", page)
        self.assertIn("Kernel states (tracepoints source): not in this report", page)
        self.assertFalse(any(s.startswith(("disturbance", "kernel_states")) for s in pts))
        self.assertIn("latency (ms)", page)
        self.assertIn("online CPUs before the operation (count)", page)

    def test_html_in_headless_chromium(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            self.skipTest("chromium not installed (Debian package chromium)")
        out = os.path.join(ART, "report.html")
        self.assertEqual(self.report("html", "--output", out).returncode, 0)
        png = os.path.join(ART, "report.png")
        if os.path.exists(png):
            os.unlink(png)
        profile = tempfile.mkdtemp(prefix="cpuhp-chromium.")
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={profile}", "--hide-scrollbars"]
        try:
            p = subprocess.run([chromium, *flags, f"--screenshot={png}", "--window-size=1280,2600",
                                f"file://{out}"], capture_output=True, text=True, timeout=180)
            self.assertTrue(os.path.exists(png), p.stderr[-2000:])
            with open(png, "rb") as f:
                head = f.read(24)
            self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
            width = int.from_bytes(head[16:20], "big")
            self.assertEqual(width, 1280)
            self.assertGreater(os.path.getsize(png), 20000)  # not a blank page
            # The DOM Chromium built holds every chart point.
            p = subprocess.run([chromium, *flags, "--dump-dom", f"file://{out}"],
                               capture_output=True, text=True, timeout=180)
            c = TagCollector()
            c.feed(p.stdout)
            series = {s for s, _, _ in c.points}
            for s in ("offline p50", "offline p99", "online p50", "online p99",
                      "offline histogram", "online histogram", "offline max", "online mean"):
                self.assertIn(s, series)
        finally:
            shutil.rmtree(profile, ignore_errors=True)


class LavaYamlTest(unittest.TestCase):
    def load(self, name):
        try:
            import yaml
        except ImportError:
            self.skipTest("python3-yaml missing")
        with open(os.path.join(SRC, "configs", "lava", name)) as f:
            return yaml.safe_load(f)

    def test_definition(self):
        d = self.load("cpuhp-stress.yaml")
        md = d["metadata"]
        self.assertEqual(md["format"], "Lava-Test Test Definition 1.0")
        for k in ("name", "description"):
            self.assertIsInstance(md[k], str)
        self.assertRegex(md["name"], r"^[A-Za-z0-9_.-]+$")
        steps = d["run"]["steps"]
        self.assertTrue(steps and all(isinstance(s, str) for s in steps))
        text = "\n".join(steps)
        # The steps call configs/lava/cpuhp-stress.sh (tests/lava_definition_test.py
        # runs them as LAVA does).
        self.assertIn("sh configs/lava/cpuhp-stress.sh", text)
        with open(os.path.join(SRC, "configs", "lava", "cpuhp-stress.sh")) as f:
            script = f.read()
        self.assertIn("--format lava", script)
        self.assertIn("cpuhp-stress run", script)
        self.assertIn("insmod", script)
        for k, v in d["params"].items():
            self.assertRegex(k, r"^[A-Z_]+$")
            self.assertIsInstance(v, str)
            self.assertIn("$" + k, text, k)

    def test_example_job(self):
        self.check_job("example-job.yaml")

    def test_qemu_jobs(self):
        # the jobs tests/lava runs with lava-run, one per architecture
        jobs = sorted(os.listdir(os.path.join(SRC, "configs", "lava", "jobs")))
        self.assertEqual(jobs, ["qemu-amd64.yaml", "qemu-arm64.yaml", "qemu-ppc64el.yaml"])
        for name in jobs:
            with self.subTest(job=name):
                self.check_job("jobs/" + name)
                self.assertTrue(os.path.exists(os.path.join(
                    SRC, "configs", "lava", "devices", name.replace(".yaml", ".jinja2"))))

    def check_job(self, name):
        j = self.load(name)
        for k in ("device_type", "job_name", "visibility", "priority"):
            self.assertIn(k, j)
        self.assertIn(j["visibility"], ("public", "personal")) if isinstance(j["visibility"], str) else None
        self.assertIn("job", j["timeouts"])
        kinds = [next(iter(a)) for a in j["actions"]]
        self.assertEqual(kinds, ["deploy", "boot", "test"])
        deploy, boot, test = (a[k] for a, k in zip(j["actions"], kinds))
        self.assertIn("to", deploy)
        self.assertIn("method", boot)
        for a in (deploy, boot, test):
            self.assertIn("timeout", a)
        defs = test["definitions"]
        self.assertTrue(defs)
        for d in defs:
            for k in ("repository", "from", "path", "name"):
                self.assertIn(k, d)
            self.assertTrue(os.path.exists(os.path.join(SRC, d["path"])), d["path"])
            definition = self.load(os.path.basename(d["path"]))
            for p in d.get("parameters", {}):
                self.assertIn(p, definition["params"])
            if "CONFIG" in d.get("parameters", {}):
                self.assertTrue(os.path.exists(os.path.join(SRC, d["parameters"]["CONFIG"])))


if __name__ == "__main__":
    build, SRC = sys.argv[1], sys.argv[2]
    ART = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else os.path.join(build, "verdicts-artifacts"))
    os.makedirs(ART, exist_ok=True)
    BIN = os.path.abspath(os.path.join(build, "cpuhp-stress"))
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
