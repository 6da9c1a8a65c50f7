#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""First contact (issue 18): what a lab engineer types from the README and
configs/README.md does what they mean, and what it prints can go into a
mail. Every run uses the sim backend: no root, no real CPU touched.

    first_contact_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

BIN = SRC = None


def run(*args, cwd=None, timeout=120):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


class FirstContact(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cpuhp-first.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def config(self, name, doc):
        p = self.path(name)
        with open(p, "w") as f:
            json.dump(doc, f)
        return p

    def sim(self, *args, report="r.json", sim_cpus=None):
        extra = []
        if sim_cpus:
            extra = ["--config", self.config("sim.json", {"sim": {"cpus": sim_cpus}})]
        return run("run", *extra, "--backend", "sim", "--progress", "never", "--seed", "1",
                   "--report", self.path(report), *args)

    def load(self, name="r.json"):
        with open(self.path(name)) as f:
            return json.load(f)

    # ---- 1: no hidden default ends a duration, a sweep or a fault sweep ----

    def test_01_duration_is_not_ended_by_the_default_iterations(self):
        # The README's soak line, ten (simulated) seconds long.
        p = self.sim("--pattern", "all", "--cpus", "1-7", "--duration", "10s")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.load()
        self.assertEqual(r["run"]["stop_reason"], "duration")
        self.assertGreater(r["totals"]["ops"], 1000)
        self.assertEqual(r["config"]["iterations"], "auto")
        # Issue 28 item 7: on sim, --duration is simulated time, the clock of
        # every number shown ("10.0xx s simulated"), not the loop's wall time
        # (which ran millions of 2 ms writes in 10 s and said 27544 s).
        simulated = r["run"]["simulated_elapsed_ns"]
        self.assertGreaterEqual(simulated, 10_000_000_000)
        self.assertLess(simulated, 10_000_000_000 + 5_000_000)  # one write more at most
        self.assertLess(r["totals"]["ops"], 10_000)  # 2-3 ms a modeled write
        self.assertRegex(p.stdout, r" failed in 10\.0\d\d s simulated ")

    def test_01_sweep_measures_every_level(self):
        p = self.sim("--pattern", "sweep", sim_cpus=64)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.load()
        self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
        sched = r["cpus"]["schedule"]
        self.assertIn(32, sched["levels"])
        self.assertIn(64, sched["levels"])
        self.assertEqual(sched["levels_missing"], [])
        self.assertEqual(sched["levels_complete"], sched["levels"])

    def test_01_cut_sweep_names_the_missing_levels(self):
        p = self.sim("--pattern", "sweep", "--iterations", "500", sim_cpus=64)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.load()
        missing = r["cpus"]["schedule"]["levels_missing"]
        self.assertIn(64, missing)
        # The level it was in is short (issue 28 item 4), not "not measured".
        self.assertRegex(p.stdout, r"sweep INCOMPLETE: level \d+ short \(\d+ of 200 operations\); "
                                   r"levels [0-9, ]*64 not measured \(stop reason: iterations\)")

    def test_01_fault_sweep_is_not_ended_by_the_default_iterations(self):
        p = self.sim("--pattern", "fault_sweep", sim_cpus=64)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.load()
        self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
        self.assertGreater(r["totals"]["ops"], 1000)

    # ---- 2: one metric spelling, unknown names refused ----

    def sweep_config(self, cycles=100):
        # A file, not --cycles: the same input the code before issue 18 took.
        return self.config("sweep.json", {"pattern": "sweep", "iterations": 0,
                                          "sweep": {"cycles_per_level": cycles}})

    def two_reports(self):
        for name, seed in (("a.json", "1"), ("b.json", "2")):
            p = run("run", "--backend", "sim", "--progress", "never", "--seed", seed,
                    "--config", self.sweep_config(), "--report", self.path(name))
            self.assertEqual(p.returncode, 0, p.stderr)
        return self.path("a.json"), self.path("b.json")

    def test_02_threshold_spelling_is_the_json_spelling(self):
        a, b = self.two_reports()
        p = run("compare", a, b, "--format", "json", "-t", "offline.p50@online=2=50%")
        self.assertIn(p.returncode, (0, 1), p.stderr)
        res = json.loads(p.stdout)
        names = {row["p50"]["name"] for row in res["rows"]}
        self.assertIn("offline.p50@online=2", names)
        m = [row["p50"] for row in res["rows"] if row["p50"]["name"] == "offline.p50@online=2"]
        self.assertEqual(m[0]["threshold"], 0.5)

    def test_02_unknown_metric_names_refused(self):
        a, b = self.two_reports()
        for t in ("bogus=5%", "offline.p77=5%", "offline.p50@online=999=5%"):
            with self.subTest(t=t):
                p = run("compare", a, b, "-t", t)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(t.rsplit("=", 1)[0], p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    # ---- 3: output paths checked before the first operation, exit 2 ----

    def test_03_report_path_that_is_a_directory(self):
        os.mkdir(self.path("reports"))
        p = run("run", "--backend", "sim", "--progress", "never", "-r",
                self.path("reports") + "/")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("is a directory", p.stderr)
        self.assertNotIn("ops", p.stdout)  # no operation ran
        self.assertEqual(os.listdir(self.path("reports")), [])

    def test_03_report_name_too_long_for_its_temporary_name(self):
        # Issue 29 item 9: written as <name>.tmp.<pid> first; a name that fits
        # NAME_MAX only without that suffix is refused before any operation.
        os.mkdir(self.path("reports"))
        name = self.path("reports") + "/" + "r" * 250
        p = run("run", "--backend", "sim", "--progress", "never", "--iterations", "10",
                "-r", name)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = [l for l in p.stderr.splitlines() if "too long" in l]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(name + ": file name too long: 250 characters", lines[0])
        self.assertNotIn("ops", p.stdout)
        self.assertEqual(os.listdir(self.path("reports")), [])

    def test_03_report_output_without_directory(self):
        self.sim("--iterations", "10")
        p = run("report", self.path("r.json"), "--format", "html", "-o",
                self.path("nodir/x.html"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nodir", p.stderr)

    def test_03_oplog_in_missing_directory(self):
        p = self.sim("--iterations", "10", "--oplog", self.path("no/ops.jsonl"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(os.path.exists(self.path("r.json")))

    # ---- 4: sweep set-up writes stay out of the latency tables ----

    def test_04_setup_writes_out_of_latency_tables(self):
        p = self.sim("--config", self.sweep_config(), "--oplog", self.path("ops.jsonl"))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.load()
        levels = r["cpus"]["schedule"]["levels"]
        off = {l["online_cpus"]: l for l in r["per_online_count"]["offline"]}
        self.assertEqual(sorted(off), levels)
        for level in levels:
            self.assertEqual(off[level]["count"], 100, level)
        on = {l["online_cpus"]: l["count"] for l in r["per_online_count"]["online"]}
        self.assertEqual(sorted(on), [l - 1 for l in levels])
        self.assertEqual(set(on.values()), {100})
        setup = r["totals"]["setup_ops"]
        self.assertGreater(setup, 0)
        self.assertEqual(r["totals"]["ops"], setup + 200 * len(levels))
        with open(self.path("ops.jsonl")) as f:
            marked = sum(1 for line in f if json.loads(line).get("setup"))
        self.assertEqual(marked, setup)
        # The all row lies within the levels.
        all_p99 = r["directions"]["offline"]["p99_ns"]
        self.assertLessEqual(all_p99, max(l["p99_ns"] for l in off.values()))

    # ---- 5: the docs are the binary's ----

    def test_05_help_lists_every_pattern(self):
        p = run("run", "--help")
        for name in ("roundrobin", "all", "random", "sweep", "fault_sweep"):
            self.assertIn(name, p.stdout)

    def test_05_default_json_is_print_config(self):
        p = run("run", "--print-config")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(SRC, "configs", "default.json")) as f:
            shipped = json.load(f)
        shipped.pop("comment")
        self.assertEqual(json.loads(p.stdout), shipped)

    # ---- 6: compare fits a mail ----

    def test_06_compare_layout_within_80_columns(self):
        a, b = self.two_reports()
        p = run("compare", a, b)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        for line in p.stdout.splitlines():
            self.assertLessEqual(len(line), 80, line)
        release = os.uname().release
        self.assertRegex(p.stdout, rf"baseline +{re.escape(release)}, \d+ ops, SIMULATED")
        self.assertRegex(p.stdout, r"online CPUs +baseline +candidate +ratio \[95% CI\] +verdict")
        # 100 cycles per level: the p99 cells have no interval, and say why.
        self.assertRegex(p.stdout, r"\[1\] no interval: p99 needs 1000 operations per side")
        md = run("compare", a, b, "--format", "markdown").stdout
        self.assertIn("| online CPUs | ops | baseline | candidate | ratio [95 % CI] | verdict |",
                      md)
        self.assertRegex(md, r"\| 2 \| 100 / 100 \| ")
        self.assertIn(f"`{release}` (SIMULATED)", md)

    def boots(self, seeds, *args):
        paths = []
        for seed in seeds:
            name = f"boot{seed}.json"
            p = run("run", "--backend", "sim", "--progress", "never", "--seed", str(seed),
                    "--config", self.sweep_config(), "--report", self.path(name), *args)
            self.assertEqual(p.returncode, 0, p.stderr)
            paths.append(self.path(name))
        return paths

    def test_06_merge_and_compare_several_boots(self):
        # Issue 14: boots of one kernel pooled by merge, or per side by compare.
        a1, a2, b1, b2 = self.boots((1, 2, 3, 4))
        p = run("merge", "-o", self.path("a.json"), a1, a2)
        self.assertEqual(p.returncode, 0, p.stderr)
        pooled = self.load("a.json")
        self.assertEqual(pooled["pooled"]["reports"], [a1, a2])
        self.assertEqual(pooled["pooled"]["boots"], 2)
        self.assertEqual([r["seed"] for r in pooled["pooled"]["runs"]], [1, 2])
        ops = sum(self.load(os.path.basename(b))["totals"]["ops"] for b in (a1, a2))
        self.assertEqual(pooled["totals"]["ops"], ops)
        self.assertEqual(len(pooled["directions"]["offline"]["per_boot"]), 2)
        p = run("compare", "--base", a1, "--base", a2, "--cand", b1, "--cand", b2,
                "--format", "json")
        self.assertIn(p.returncode, (0, 1), p.stderr)
        res = json.loads(p.stdout)
        self.assertEqual((res["baseline_boots"], res["candidate_boots"]), (2, 2))
        self.assertEqual(res["boots_disagree_rows"],
                         sum(1 for r in res["rows"] if r["boots_disagree"]))
        self.assertIn("base_range_ns", res["rows"][0]["p50"]["boots"])
        # A pooled report is read as its boots; the text still fits a mail.
        p = run("compare", self.path("a.json"), b1)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertIn("in 2 boots", p.stdout)
        for line in p.stdout.splitlines():
            self.assertLessEqual(len(line), 80, line)
        # Refused in one line, exit 2: both forms at once, a side missing,
        # merge without -o, a boot of another CPU set.
        for args, needle in ((["compare", a1, "--cand", b1], "not both"),
                             (["compare", "--base", a1], "--cand"),
                             (["merge", a1, a2], "--output"),):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, p.stdout)
                self.assertIn(needle, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        # One run twice (issue 28): a file given twice, or merge run again
        # with its own output among its inputs (issue 29); the first pool
        # is left as it was.
        before = self.load("a.json")
        for args, files in ((["merge", "-o", self.path("x.json"), a1, a1], (a1, a1)),
                            (["compare", "--base", a1, "--base", a1, "--cand", b1], (a1, a1)),
                            (["merge", "-o", self.path("a.json"), a1, a2, self.path("a.json")],
                             (a1, self.path("a.json") + " (a pooled report)"))):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, p.stdout)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(f"the same run twice: {files[0]} and {files[1]} both hold the run",
                              p.stderr)
        self.assertFalse(os.path.exists(self.path("x.json")))
        self.assertEqual(self.load("a.json"), before)
        (other,) = self.boots((5,), "--cpus", "1-3")
        p = run("merge", "-o", self.path("x.json"), a1, other)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.strip(), f"cpuhp-stress: merge: different CPU sets: {a1} "
                         f"operated on CPUs {pooled['cpus']['selected']}, {other} on 1-3")
        self.assertFalse(os.path.exists(self.path("x.json")))

    # ---- 7, 8: the summary quotes what the seeds quote, and a model says so ----

    def test_07_summary_has_what_the_seeds_quote(self):
        p = self.sim("--pattern", "random", "--iterations", "400",
                     "--config", self.config("e.json", {"sim": {"error_rate": 0.05}}))
        self.assertEqual(p.returncode, 3, p.stderr)  # finished, with failed writes
        out = p.stdout
        self.assertRegex(out, r"kernel .*, CPUs 1-7, pattern random, seed 1, backend sim")
        self.assertRegex(out, r"online before +ops +mean +stddev +p50 +p99 +max")
        self.assertIn("by online CPUs before the write", out)
        self.assertRegex(out, r"per CPU \(ms\)\n +cpu +off ops +p50 +p99 +failed +on ops")
        r = self.load()
        failed = sum(c["offline_failed"] + c["online_failed"] for c in r["per_cpu"])
        self.assertEqual(failed, r["totals"]["failed"])

    def test_08_simulated_everywhere(self):
        p = self.sim("--iterations", "1000")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("SIMULATED run", p.stdout)
        r = self.load()
        sim_s = r["run"]["simulated_elapsed_ns"] / 1e9
        self.assertGreater(sim_s, 1.0)  # 1000 writes of modeled milliseconds
        self.assertIn(f"in {sim_s:.3f} s simulated", p.stdout)
        for fmt in ("text", "markdown", "junit", "kcidb", "lava", "html"):
            with self.subTest(fmt=fmt):
                out = run("report", self.path("r.json"), "--format", fmt).stdout
                self.assertIn("SIMULATED", out)

    # ---- 10: the flags people change most ----

    def test_10_sweep_flags_and_print_config(self):
        p = run("run", "--backend", "sim", "--pattern", "sweep", "--levels", "2,4",
                "--cycles", "7", "--victim", "5", "--no-health", "--print-config")
        self.assertEqual(p.returncode, 0, p.stderr)
        cfg = json.loads(p.stdout)
        self.assertEqual(cfg["sweep"], {"levels": [2, 4], "cycles_per_level": 7, "victim": 5})
        self.assertFalse(cfg["health"]["enabled"])

    def test_10_dry_run_prints_the_schedule(self):
        p = run("run", "--backend", "sim", "--pattern", "sweep", "--levels", "2,4",
                "--cycles", "2", "--cpus", "1-7", "--dry-run", "100", "--report",
                self.path("r.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("dry run (nothing is written)", p.stdout)
        self.assertRegex(p.stdout, r"\n +0 +offline +6 +8  set-up\n")
        self.assertIn("end of the run after", p.stdout)
        self.assertFalse(os.path.exists(self.path("r.json")))
        # The smt pattern's control method: the cpu column fits "smt/control off".
        with open(self.path("smt.json"), "w") as f:
            json.dump({"backend": "sim", "pattern": "smt", "sim": {"threads_per_core": 2},
                       "smt": {"method": "control", "switches": 3}}, f)
        p = run("run", "--config", self.path("smt.json"), "--dry-run", "10")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        head = next(i for i, l in enumerate(lines) if l.lstrip().startswith("op "))
        rows = lines[head + 1:head + 4]
        self.assertRegex(rows[0], r"^ +0 +offline +smt/control off +8  switch 1$")
        self.assertRegex(rows[1], r"^ +1 +online +smt/control on +4  switch 2$")
        end = lines[head].index("cpu") + len("cpu")
        for row in rows:  # right-aligned under the header's "cpu"
            self.assertTrue(row[:end].endswith(("smt/control off", "smt/control on")), p.stdout)

    # ---- 11: CLI conventions ----

    def test_11_errors_name_the_flag(self):
        for args, needles in ((["--iterations", "-5"], ["--iterations", "got -5"]),
                              (["--seed", "abc"], ["--seed", "\"abc\""]),
                              (["--cycles", "0"], ["--cycles: expected"])):
            with self.subTest(args=args):
                p = run("run", "--backend", "sim", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                for n in needles:
                    self.assertIn(n, p.stderr)
                self.assertNotIn(": /", p.stderr)  # the option, not the config path

    def test_11_one_output_flag_and_one_duration_syntax(self):
        p = run("run", "--backend", "sim", "--progress", "never", "--iterations", "10", "-o",
                self.path("o.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(self.path("o.json")))
        p = run("report", self.path("o.json"), "--limit", "offline.p99=3")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("missing unit", p.stderr)
        p = run("report", self.path("o.json"), "--limit", "offline.p99=3s")
        self.assertEqual(p.returncode, 0, p.stderr)

    # ---- 15, 16: state directory and existing reports ----

    def test_15_state_dir_created_with_parents_0700(self):
        state = self.path("var/lib/cpuhp-stress")
        p = self.sim("--iterations", "10", "--state-dir", state)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)

    def test_16_bare_run_does_not_overwrite_its_report(self):
        base = ["run", "--backend", "sim", "--progress", "never", "--iterations", "10"]
        self.assertEqual(run(*base, cwd=self.dir).returncode, 0)
        def text():
            with open(self.path("cpuhp-stress-report.json")) as f:
                return f.read()
        first = text()
        p = run(*base, cwd=self.dir)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--force", p.stderr)
        self.assertEqual(text(), first)
        p = run(*base, "--force", cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)

    # ---- 30: the command line says what you meant ----

    def refused(self, args, line, env=None):
        """`args` exit 2 with the one line `line`, and nothing is written."""
        before = sorted(os.listdir(self.dir))
        p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=self.dir,
                           env=env, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, f"cpuhp-stress: error: {line}\n")
        self.assertEqual(sorted(os.listdir(self.dir)), before)

    def test_30_parse_errors_name_the_option_typed(self):
        base = ["run", "--backend", "sim", "--progress", "never", "--report", self.path("r.json")]
        for args, line in (
                (["--iterations", "-o", self.path("e.json")],
                 "--iterations needs a value (found the option -o)"),
                (["--iterations", "--backend", "sim"],
                 "--iterations needs a value (found the option --backend)"),
                (["--iteration", "10"], "unknown option --iteration (did you mean --iterations?)"),
                (["--backend", "sim"], "--backend given twice"),
                (["--iterations"], "--iterations needs a value")):
            with self.subTest(args=args):
                self.refused(base + args, line)

    def test_30_help_shows_the_true_defaults(self):
        help_text = run("run", "--help").stdout
        self.assertNotIn("{false}", help_text)
        for flag in ("--tracepoints,--no-tracepoints", "--health,--no-health"):
            with self.subTest(flag=flag):
                self.assertRegex(help_text, re.escape(flag) + r"\s+[^\n]*; on by default")
        cfg = json.loads(run("run", "--backend", "sim", "--print-config").stdout)
        self.assertIs(cfg["tracepoints"], True)
        self.assertIs(cfg["health"]["enabled"], True)

    def test_30_empty_values_refused_naming_the_option(self):
        # Every option that takes a text value, in every command, as its help lists it.
        env = dict(os.environ, STATE_DIRECTORY=self.path("state"))
        sim = self.config("sim.json", {"backend": "sim"})
        run_base = [["--backend", "sim"], ["--progress", "never"], ["--iterations", "3"],
                    ["--report", self.path("r.json")], ["--state-dir", self.path("state")]]
        checked = 0
        for cmd in ("run", "restore", "list", "compare", "merge", "report"):
            for m in re.finditer(r"^ +((?:-[\w-]+,)*-[\w-]+) TEXT", run(cmd, "--help").stdout,
                                 re.M):
                names = m.group(1).split(",")
                args = [cmd]
                if cmd == "run":
                    for pair in run_base:
                        if pair[0] not in names:
                            args += pair
                    if "--backend" in names:
                        args += ["--config", sim]  # never the real CPUs
                with self.subTest(cmd=cmd, option=names[0]):
                    self.refused(args + [names[0], ""], f"{names[0]}: empty value", env=env)
                    checked += 1
        self.assertGreaterEqual(checked, 35)
        with self.subTest(option="--dry-run"):
            self.refused(["run", "--backend", "sim", "--dry-run", ""], "--dry-run: empty value")
        for args, line in ((["merge", "", "-o", self.path("m.json")], "reports: empty value"),
                           (["compare", "", "b.json"], "baseline: empty value"),
                           (["report", ""], "report: empty value")):
            with self.subTest(args=args):
                self.refused(args, line)

    def test_30_machine_errors_name_the_option_typed(self):
        sim_hint = " (the sim backend simulates 8 CPUs, 0 to 7: --sim-cpus or /sim/cpus)"
        base = ["run", "--backend", "sim", "--progress", "never", "--report", self.path("r.json")]
        sweep = base + ["--pattern", "sweep"]
        for args, line in (
                (base + ["--cpus", "9"], "--cpus: CPU 9 does not exist (present: 0-7)" + sim_hint),
                (sweep + ["--victim", "0"],
                 "--victim: CPU 0 is not among the selected CPUs 1-7"),
                (sweep + ["--levels", "8,16,32"],
                 "--levels: level 16 is not reachable: with CPUs 1-7 selected and min_online 1, "
                 "online counts 2 to 8 are reachable" + sim_hint),
                (base + ["--min-online", "8"],
                 "--min-online: 8 leaves no CPU to take offline: 8 CPUs are present" + sim_hint),
                (base + ["--cpus", "9", "--dry-run", "3"],
                 "--cpus: CPU 9 does not exist (present: 0-7)" + sim_hint)):
            with self.subTest(args=args[len(base):]):
                self.refused(args, line)
        # A config file's key keeps its path, after the file's name.
        cfg = self.config("c.json", {"backend": "sim", "cpus": "9"})
        self.refused(["run", "--config", cfg, "--report", self.path("r.json")],
                     f"{cfg}: /cpus: CPU 9 does not exist (present: 0-7)" + sim_hint)
        # --sim-cpus reaches the levels the hint speaks of.
        p = self.sim("--pattern", "sweep", "--levels", "8,16,32", "--cycles", "10", "--victim",
                     "7", "--sim-cpus", "33")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = [l["online_cpus"] for l in self.load()["per_online_count"]["offline"]]
        self.assertEqual(got, [8, 16, 32])

    def test_30_docs_agree_with_the_binary(self):
        # configs/README.md quotes the duplicate-key error: the binary prints it.
        with open(os.path.join(SRC, "configs", "README.md")) as f:
            readme = f.read()
        self.assertNotIn("last one wins", readme)
        quoted = re.search(r"`(f\.json: /cpus: duplicate key[^`]*)`", readme)
        self.assertIsNotNone(quoted, "configs/README.md quotes the duplicate-key error")
        with open(self.path("f.json"), "w") as f:
            f.write('{"backend": "sim", "cpus": "1", "cpus": "2"}')
        self.refused(["run", "--config", "f.json"], quoted.group(1))
        # A bare threshold is refused, not read as a tiny percentage.
        a, b = self.two_reports()
        for cmd in (["compare", a, b], ["report", a, "--baseline", b]):
            with self.subTest(cmd=cmd[0]):
                self.refused(cmd + ["--threshold", "0.05"],
                             "--threshold '0.05': a percentage needs its % sign (5%, METRIC=20%)")
        # report --limit takes compare's bare statistic: both directions.
        p = run("report", a, "--format", "lava", "--limit", "p99=1us")
        self.assertEqual(p.returncode, 1, p.stderr)
        for d in ("offline", "online"):
            self.assertIn(f"lava-test-case sim.{d}_p99 --result fail", p.stdout)

    def test_30_lost_report_is_the_last_line(self):
        os.mkdir(self.path("sub"))
        report = os.path.join(self.path("sub"), "r.json")
        state = self.path("state")
        proc = subprocess.Popen([BIN, "run", "--backend", "sim", "--progress", "never",
                                 "--iterations", "400", "--interval", "5ms", "--state-dir",
                                 state, "--checkpoint-interval", "100ms", "--report", report,
                                 "--oplog", self.path("op.jsonl")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Once the operations have begun (the start-up checks saw sub/): the
        # log is buffered, the first checkpoint (100 ms of a 2 s run) writes it.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (os.path.exists(self.path("op.jsonl")) and
                                                   os.path.getsize(self.path("op.jsonl")) > 0):
            time.sleep(0.02)
        shutil.rmtree(self.path("sub"))
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 1, err)
        last = out.strip().splitlines()[-1]
        self.assertTrue(last.startswith(f"report NOT written: {report}: "), out)
        saved = re.search(r"saved instead to (\S+\.json)$", last)
        self.assertIsNotNone(saved, last)
        with open(saved.group(1)) as f:
            self.assertEqual(json.load(f)["totals"]["ops"], 400)

    def test_30_html_baseline_and_sim_placeholders(self):
        a, b = self.two_reports()
        page = run("report", a, "--format", "html", "--baseline", a).stdout
        series = re.findall(r'data-series="([^"]+)"', page)
        for d in ("offline", "online"):
            # The baseline first: this run's line is drawn over it.
            self.assertLess(series.index(f"baseline {d} p50"), series.index(f"{d} p50"))
        page = run("report", a, "--format", "html").stdout
        self.assertNotIn("/kmod/enabled", page)
        self.assertIn("a sim backend run: no kernel to measure", page)


if __name__ == "__main__":
    BIN = os.path.join(sys.argv[1], "cpuhp-stress")
    SRC = sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
