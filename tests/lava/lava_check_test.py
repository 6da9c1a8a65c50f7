# SPDX-License-Identifier: GPL-2.0
"""tests/lava/lava_check.py's reading of a lava-run log and its verdict,
without a guest: a log written in lava-run's own line format (one YAML flow
mapping per line, `! "567"` tags and all) for a job that went as expected,
then the same job with one thing wrong at a time, each of which must be
named.

    lava_check_test.py
"""
import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lava_check  # noqa: E402

SIM = ["SIMULATED", "run_completed", "final_report", "no_operation_errors", "cpus_restored", "offline_p50"]
REAL = ["run_completed", "final_report", "no_operation_errors", "no_kernel_warnings", "cpus_restored",
        "offline_p50", "online_p50"]
PHASES = ["offline kernel phases beside the write (ms)",
          "  takedown_cpu                 50      0.551      8.742      8.742",
          "online kernel phases beside the write (ms)",
          "  _cpu_up                      50     24.969     26.756     26.756"]


def good_job():
    """(results, console lines per definition) of a job that went right"""
    res = [{"case": c, "definition": "lava", "result": "pass"} for c in ("validate", "login-action")]
    console = {}
    for i, name in enumerate(lava_check.DEFINITIONS):
        suite = f"{i}_{name}"
        stages = ["install", "build", "run"] + (["load_module"] if name == "cpuhp-real" else [])
        checks = REAL if name == "cpuhp-real" else ["sim." + c for c in SIM]
        if name == "cpuhp-fail":
            checks = checks + ["sim.faults_rolled_back"]
        for c in stages + checks + ["report", "cpus_online"]:
            r = "pass"
            if c == "build":
                r = "skip"
            if name == "cpuhp-fail" and c in lava_check.MUST_FAIL:
                r = "fail"
            res.append({"case": c, "definition": suite, "result": r, "measurement": "1.0", "units": "ms"})
        res.append({"case": suite, "definition": "lava", "result": "pass"})
        console[suite] = PHASES if name == "cpuhp-real" else ["sim run"]
    res.append({"case": "job", "definition": "lava", "result": "pass"})
    return res, console


def set_result(results, definition, case, result):
    for r in results:
        if r["definition"] == definition and r["case"] == case:
            r["result"] = result
            return
    raise KeyError(case)


class JudgeTest(unittest.TestCase):
    def judge(self, results, console, rc=0):
        return lava_check.judge(results, console, rc, out=lambda *a: None)

    def assert_named(self, results, console, words):
        problems = self.judge(results, console)
        self.assertTrue(any(all(w in p for w in words) for p in problems), problems)

    def test_good_job(self):
        self.assertEqual(self.judge(*good_job()), [])

    def test_failing_run_that_passed(self):
        res, con = good_job()
        set_result(res, "2_cpuhp-fail", "sim.faults_rolled_back", "pass")
        self.assert_named(res, con, ["cpuhp-fail", "sim.faults_rolled_back must fail"])

    def test_a_check_failed_in_the_real_run(self):
        res, con = good_job()
        set_result(res, "1_cpuhp-real", "no_kernel_warnings", "fail")
        self.assert_named(res, con, ["cpuhp-real", "no_kernel_warnings=fail"])

    def test_cpus_left_offline(self):
        for suite, name in (("0_cpuhp-sim", "cpuhp-sim"), ("2_cpuhp-fail", "cpuhp-fail")):
            res, con = good_job()
            set_result(res, suite, "cpus_online", "fail")
            self.assert_named(res, con, [name, "cpus_online is fail"])

    def test_module_not_loaded_or_silent(self):
        res, con = good_job()
        set_result(res, "1_cpuhp-real", "load_module", "fail")
        self.assert_named(res, con, ["load_module did not pass"])
        res, con = good_job()
        con["1_cpuhp-real"] = ["no phases here"]
        self.assert_named(res, con, ["no kernel phases"])

    def test_definition_that_never_ended(self):
        res, con = good_job()
        res = [r for r in res if not (r["definition"] == "lava" and r["case"] == "1_cpuhp-real")]
        self.assert_named(res, con, ["cpuhp-real", "did not record the definition's end"])

    def test_definition_that_recorded_nothing(self):
        res, con = good_job()
        res = [r for r in res if r["definition"] != "0_cpuhp-sim"]
        self.assert_named(res, con, ["cpuhp-sim", "no test case recorded"])

    def test_lava_action_failed_or_job_incomplete(self):
        res, con = good_job()
        set_result(res, "lava", "login-action", "fail")
        self.assert_named(res, con, ["LAVA action login-action", "fail"])
        res, con = good_job()
        res = [r for r in res if r["case"] != "job"]
        self.assert_named(res, con, ["no passing 'job' result"])

    def test_real_run_that_was_simulated(self):
        res, con = good_job()
        for r in res:
            if r["definition"] == "1_cpuhp-real" and r["case"] == "offline_p50":
                r["case"] = "sim.offline_p50"
        self.assert_named(res, con, ["cpuhp-real: not a measured run"])


class ReadTest(unittest.TestCase):
    def test_lava_run_log_format(self):
        # lava-run's lines: YAML flow mappings, tags on numbers; the console
        # of a definition is what lies between its STARTRUN and ENDRUN.
        res, _ = good_job()
        lines = []
        for r in res:
            lines.append('{"dt": "2026-12-05T20:24:00.1", "lvl": "results", "msg": %s}' % json.dumps(r))
        lines.insert(3, '{"dt": "2026-12-05T20:24:00.1", "lvl": "target", '
                        '"msg": "<LAVA_SIGNAL_STARTRUN 1_cpuhp-real 26524_1.1.3.5>"}')
        for p in PHASES:
            lines.insert(4, '{"dt": "2026-12-05T20:24:00.1", "lvl": "target", "msg": %s}' % json.dumps(p))
        lines.insert(4 + len(PHASES), '{"dt": "2026-12-05T20:24:00.1", "lvl": "target", '
                                      '"msg": "<LAVA_SIGNAL_ENDRUN 1_cpuhp-real 26524_1.1.3.5>"}')
        lines.append('{"dt": "2026-12-05T20:24:00.2", "lvl": "results", "msg": {"case": "hello", '
                     '"definition": "9_x", "endtc": ! "567", "measurement": ! "3.0", "result": "pass"}}')
        lines.append('{"dt": "2026-12-05T20:24:00.3", "lvl": "error", "msg": "boot timed out"}')
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            results, errors, console = lava_check.read_results(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(len(results), len(res) + 1)
        self.assertEqual(float(results[-1]["measurement"]), 3.0)
        self.assertEqual(errors, ["boot timed out"])
        self.assertEqual(sorted(console), ["1_cpuhp-real"])
        self.assertEqual(sorted(console["1_cpuhp-real"]), sorted(PHASES))
        self.assertEqual(lava_check.judge(copy.deepcopy(results[:-1]), console, 0, out=lambda *a: None), [])


if __name__ == "__main__":
    unittest.main(verbosity=1)
