# SPDX-License-Identifier: GPL-2.0
"""`cpuhp-stress report` sees every way a run can fail (issue 15, part 2):
reports made by the sim backend of runs that failed, each rendered as text,
JUnit, KCIDB and LAVA; none may render as all-pass, each names the check
that failed, and `report` exits 1.

    report_checks_test.py BUILD_DIR SOURCE_DIR

- a fault_sweep whose rollbacks failed (sim broken_rollback_state 193);
- hotplug/fail not cleared at the end (the same sweep's report with
  cleared_at_end false, as a run whose clear failed writes it);
- a run stopped by SIGTERM (run exits 4), a double Ctrl-C, an interrupted
  sweep (INCOMPLETE), by an error (stop_on_error), by a lost CPU;
- an interim report (the run was still going);
- a restore that failed (restore.ok false, as a run whose restore failed
  writes it).
A clean run passes every check in every format (the control).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

BIN = None
SIM = {"cpus": 4, "jitter": 0.1}


class ReportChecksTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-checks.")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def config(self, **cfg):
        base = {"backend": "sim", "pattern": "roundrobin", "cpus": "1-3", "seed": 1,
                "iterations": 200, "progress": "never", "sim": dict(SIM),
                "report": os.path.join(self.dir, "report.json")}
        sim = cfg.pop("sim", {})
        base.update(cfg)
        base["sim"].update(sim)
        path = os.path.join(self.dir, "config.json")
        with open(path, "w") as f:
            json.dump(base, f)
        return path, base["report"]

    def run_sim(self, expect_rc, **cfg):
        path, report = self.config(**cfg)
        p = subprocess.run([BIN, "run", "--config", path], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, expect_rc, p.stdout + p.stderr)
        return report

    def run_until_signal(self, wait_for=None, signals=(signal.SIGTERM,), **cfg):
        """A long sim run (stalled writes keep it slow), sent `signals` (one
        after another) once wait_for exists (or after 1 s)."""
        cfg.setdefault("iterations", 100000)
        cfg.setdefault("sim", {}).update({"stall_every": 20, "stall_ns": 20000000})
        path, report = self.config(**cfg)
        p = subprocess.Popen([BIN, "run", "--config", path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (wait_for and os.path.exists(wait_for)) or (
                    not wait_for and time.monotonic() > deadline - 59):
                break
            time.sleep(0.05)
        for sig in signals:
            p.send_signal(sig)
            time.sleep(0.05)
        out, err = p.communicate(timeout=120)
        return report, p.returncode, out + err

    def edit(self, report, fn):
        with open(report) as f:
            r = json.load(f)
        fn(r)
        path = os.path.join(self.dir, "edited.json")
        with open(path, "w") as f:
            json.dump(r, f)
        return path

    def render(self, report, fmt):
        p = subprocess.run([BIN, "report", report, "--format", fmt], capture_output=True,
                           text=True, timeout=120)
        return p

    def assert_fails(self, report, check, words=()):
        """check fails in every format, nothing renders as all-pass, exit 1."""
        p = self.render(report, "text")
        self.assertEqual(p.returncode, 1, f"report exit\n{p.stdout}{p.stderr}")
        # A check's line and the lines it wraps onto (80 columns, indented 36).
        lines = p.stdout.splitlines()
        at = [i for i, l in enumerate(lines) if l.split()[1:2] == [check]]
        self.assertTrue(at and lines[at[0]].split()[0] == "FAIL", f"text: {check}\n{p.stdout}")
        end = at[0] + 1
        while end < len(lines) and lines[end].startswith(" " * 36):
            end += 1
        text = " ".join(" ".join(lines[at[0]:end]).split())
        for w in words:
            self.assertIn(w, text)

        p = self.render(report, "junit")
        self.assertEqual(p.returncode, 1)
        suite = ET.fromstring(p.stdout).find("testsuite")
        self.assertGreater(int(suite.get("failures")), 0, p.stdout)
        case = [c for c in suite.findall("testcase") if c.get("name") == check]
        self.assertTrue(case and case[0].find("failure") is not None, f"junit: {check}")

        p = self.render(report, "kcidb")
        self.assertEqual(p.returncode, 1)
        tests = {t["path"].split(".", 1)[1]: t["status"] for t in json.loads(p.stdout)["tests"]}
        self.assertEqual(tests.get(check), "FAIL", tests)

        p = self.render(report, "lava")
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"lava-test-case sim.{check} --result fail", p.stdout)  # a sim run

    def test_clean_run_passes_everywhere(self):
        report = self.run_sim(0)
        for fmt in ("text", "junit", "kcidb", "lava"):
            p = self.render(report, fmt)
            self.assertEqual(p.returncode, 0, f"{fmt}\n{p.stdout}{p.stderr}")
        p = self.render(report, "lava")
        for check in ("run_completed", "final_report", "cpus_restored"):
            self.assertIn(f"lava-test-case sim.{check} --result pass", p.stdout)

    def test_smt_pattern_passes_everywhere(self):
        # The smt pattern ends by itself after smt.switches: that end is its
        # target (it was reported "not its target: signal" before), for both
        # methods, in every format; the switch times are measured rows.
        for method in ("threads", "control"):
            with self.subTest(method=method):
                report = self.run_sim(0, pattern="smt", cpus="all", iterations=0,
                                      sim={"cpus": 8, "threads_per_core": 2},
                                      smt={"method": method, "switches": 6})
                for fmt in ("text", "markdown", "junit", "kcidb", "lava", "html"):
                    p = self.render(report, fmt)
                    self.assertEqual(p.returncode, 0, f"{method} {fmt}\n{p.stdout}{p.stderr}")
                p = self.render(report, "lava")
                self.assertIn("lava-test-case sim.run_completed --result pass", p.stdout)
                self.assertRegex(p.stdout, r"lava-test-case sim.smt_to_off_p50 --result pass "
                                           r"--measurement [0-9.]+ --units ms")
                self.assertIn(f"SMT switches ({method} method", self.render(report, "markdown").stdout)
                # Limited by iterations before its switches end: the limit is
                # its target too.
                report = self.run_sim(0, pattern="smt", cpus="all", iterations=2,
                                      sim={"cpus": 8, "threads_per_core": 2},
                                      smt={"method": method, "switches": 6})
                self.assertEqual(self.render(report, "junit").returncode, 0)

    def test_smt_pattern_stopped_by_a_signal(self):
        report, rc, out = self.run_until_signal(
            pattern="smt", cpus="all", iterations=0, sim={"cpus": 8, "threads_per_core": 2},
            smt={"method": "control", "switches": 10 ** 9})
        self.assertEqual(rc, 4, out)
        self.assert_fails(report, "run_completed", ["signal", "schedule_complete"])

    def test_rollbacks_that_failed(self):
        report = self.run_sim(3, pattern="fault_sweep", iterations=0,
                              faults={"direction": "both", "states": "all", "repeats": 1},
                              sim={"broken_rollback_state": 193})
        with open(report) as f:
            self.assertGreater(json.load(f)["faults"]["totals"]["not_rolled_back"], 0)
        self.assert_fails(report, "faults_rolled_back", ["NOT rolled back"])

    def test_fail_not_cleared(self):
        report = self.run_sim(0, pattern="fault_sweep", iterations=0,
                              faults={"direction": "both", "states": "all", "repeats": 1})

        def not_cleared(r):
            r["faults"]["cleared_at_end"] = False
            r["faults"]["clear_failures"] = ["cpu1/hotplug/fail: write -1: Device or resource busy"]
        self.assert_fails(self.edit(report, not_cleared), "fail_cleared", ["cpu1/hotplug/fail"])

    def test_stopped_by_sigterm(self):
        report, rc, out = self.run_until_signal()
        self.assertEqual(rc, 4, out)  # interrupted (issue 28 item 6): not 0, "finished"
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["run"]["stop_reason"], "signal")
        self.assertLess(r["totals"]["ops"], 100000)
        self.assert_fails(report, "run_completed", ["signal"])

    def test_double_ctrl_c(self):
        report, rc, out = self.run_until_signal(signals=(signal.SIGINT, signal.SIGINT))
        self.assertEqual(rc, 4, out)
        with open(report) as f:
            self.assertEqual(json.load(f)["run"]["stop_reason"], "signal")
        self.assert_fails(report, "run_completed", ["Interrupt"])

    def test_interrupted_sweep(self):
        report, rc, out = self.run_until_signal(
            pattern="sweep", iterations=0, cpus="1-7", sim={"cpus": 8},
            sweep={"levels": [2, 4, 8], "cycles_per_level": 100000})
        self.assertEqual(rc, 4, out)
        self.assertIn("sweep INCOMPLETE", out)
        self.assert_fails(report, "run_completed", ["signal"])

    def test_stopped_run_without_a_target_completes(self):
        # -n 0 and no duration: only a signal ends it, and that is its 0.
        report, rc, out = self.run_until_signal(iterations=0)
        self.assertEqual(rc, 0, out)
        p = self.render(report, "lava")
        self.assertIn("lava-test-case sim.run_completed --result pass", p.stdout)

    def test_stopped_by_an_error(self):
        report = self.run_sim(3, stop_on_error=True, sim={"error_rate": 0.2})
        self.assert_fails(report, "run_completed", ["error"])

    def test_lost_cpu(self):
        report = self.run_sim(3, iterations=5000, lost_cpu_after=2, sim={"error_rate": 0.6})
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["run"]["stop_reason"], "error")
        self.assertIn("lost", r["run"]["stop_message"])
        self.assert_fails(report, "run_completed", ["lost"])

    def test_interim_report(self):
        interim = os.path.join(self.dir, "report.interim.json")
        _, rc, out = self.run_until_signal(wait_for=interim, interim_interval="100ms")
        self.assertTrue(os.path.exists(interim), out)
        with open(interim) as f:
            self.assertTrue(json.load(f)["interim"])
        self.assert_fails(interim, "final_report", ["interim"])
        self.assert_fails(interim, "run_completed")

    def test_restore_failed(self):
        report = self.run_sim(0)

        def broken(r):
            r["restore"]["ok"] = False
            r["restore"]["failures"] = ["cpu2 online: Input/output error"]
        self.assert_fails(self.edit(report, broken), "cpus_restored")


if __name__ == "__main__":
    BIN = os.path.abspath(os.path.join(sys.argv[1], "cpuhp-stress"))
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
