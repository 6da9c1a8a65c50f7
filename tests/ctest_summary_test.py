# SPDX-License-Identifier: GPL-2.0
"""tests/ctest_summary.py against real ctest runs: a tiny CMake project per
case (tests that pass, fail, exit 77, print unittest skips or SKIP-CASE
lines), ctest --output-junit, then the summary's exit code and last line.

    ctest_summary_test.py SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SRC = None


def summary_module():
    sys.path.insert(0, os.path.join(SRC, "tests"))
    import ctest_summary
    return ctest_summary


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-summary.")
        self.dir = self.tmp.name
        cond = summary_module().conditions()
        self.true_cond = next(c for c, v in cond.items() if v)
        self.false_cond = next(c for c, v in cond.items() if not v)

    def tearDown(self):
        self.tmp.cleanup()

    def run_suite(self, tests, expected_lines=()):
        """tests: {name: (shell script, exit code)}; returns (exit, stdout)."""
        proj = os.path.join(self.dir, "proj")
        os.makedirs(proj, exist_ok=True)
        cm = ["cmake_minimum_required(VERSION 3.22)", "project(t NONE)", "enable_testing()"]
        for name, (script, rc) in tests.items():
            path = os.path.join(proj, f"{name}.sh")
            with open(path, "w") as f:
                f.write(textwrap.dedent(script) + f"\nexit {rc}\n")
            cm.append(f"add_test(NAME {name} COMMAND sh {path})")
            cm.append(f"set_tests_properties({name} PROPERTIES SKIP_RETURN_CODE 77)")
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(cm) + "\n")
        b = os.path.join(self.dir, "b")
        subprocess.run(["cmake", "-S", proj, "-B", b], check=True, capture_output=True)
        junit = os.path.join(self.dir, "j.xml")
        subprocess.run(["ctest", "--test-dir", b, "--output-junit", junit, "-Q"],
                       capture_output=True)
        exp = os.path.join(self.dir, "expected-skips")
        with open(exp, "w") as f:
            f.write("# comment\n\n" + "\n".join(expected_lines) + "\n")
        p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "ctest_summary.py"), exp,
                            f"b={junit}"], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def last(self, out):
        return out.strip().splitlines()[-1]

    def test_all_pass(self):
        rc, out, _ = self.run_suite({"a": ("echo ok", 0), "b": ("echo ok", 0)})
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.last(out), "2 passed, 0 failed, 0 skipped")
        self.assertIn("tests run: 2", out)

    def test_failure_fails(self):
        rc, out, _ = self.run_suite({"a": ("echo ok", 0), "b": ("echo bad", 1)})
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.last(out), "1 passed, 1 failed, 0 skipped")
        self.assertIn("b/b", out)

    def test_unlisted_exit_77_fails_with_its_reason(self):
        rc, out, _ = self.run_suite({"a": ("echo ok", 0),
                                     "vmx": ("echo 'SKIP: qemu missing'", 77)})
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.last(out), "1 passed, 1 failed, 0 skipped")
        self.assertIn("b/vmx: qemu missing", out)

    def test_listed_skip_passes_only_when_its_condition_holds(self):
        tests = {"a": ("echo ok", 0), "vmx": ("echo 'SKIPPED: no cpu1'", 77)}
        rc, out, _ = self.run_suite(tests, [f"vm*  {self.true_cond}  the reason"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.last(out), "1 passed, 0 failed, 1 skipped")
        self.assertIn("b/vmx: no cpu1 -- expected: the reason", out)
        rc, out, _ = self.run_suite(tests, [f"vm*  {self.false_cond}  the reason"])
        self.assertEqual(rc, 1, out)
        rc, out, _ = self.run_suite(tests, [f"vm*  {self.false_cond}|{self.true_cond}  r"])
        self.assertEqual(rc, 0, out)

    def test_unittest_skip_inside_a_passing_test(self):
        script = """\
            echo "test_one (m.C.test_one) ... ok"
            echo "test_two (m.C.test_two) ... skipped 'chromium not installed'"
            echo "Ran 2 tests"; echo "OK (skipped=1)"
            """
        rc, out, _ = self.run_suite({"verdicts": (script, 0)})
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.last(out), "0 passed, 1 failed, 0 skipped")
        self.assertIn("b/verdicts:test_two: chromium not installed", out)
        rc, out, _ = self.run_suite({"verdicts": (script, 0)},
                                    [f"verdicts:test_two  {self.true_cond}  why"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.last(out), "1 passed, 0 failed, 1 skipped")

    def test_unittest_skip_with_a_docstring_line(self):
        script = """\
            echo "test_two (m.C.test_two)"
            echo "The docstring's first line. ... skipped 'no tracepoints'"
            echo "OK (skipped=1)"
            """
        rc, out, _ = self.run_suite({"tp": (script, 0)}, [f"tp:test_two  {self.true_cond}  y"])
        self.assertEqual(rc, 0, out)

    def test_unnamed_unittest_skip_counts(self):
        rc, out, _ = self.run_suite({"quiet": ("echo 's.'; echo 'OK (skipped=1)'", 0)})
        self.assertEqual(rc, 1, out)
        self.assertIn("quiet:unnamed", out)

    def test_skip_case_line(self):
        script = "echo 'SKIP-CASE read-only-tmpfs: cannot mount a tmpfs'; echo '3 passed'"
        rc, out, _ = self.run_suite({"hostile": (script, 0)})
        self.assertEqual(rc, 1, out)
        self.assertIn("b/hostile:read-only-tmpfs: cannot mount a tmpfs", out)
        rc, out, _ = self.run_suite({"hostile": (script, 0)},
                                    [f"hostile:read-only-*  {self.true_cond}  z"])
        self.assertEqual(rc, 0, out)

    def test_guest_excused_case_only_in_the_guest_tests(self):
        # real_check.py prints SKIP-CASE guest:... for a case the guest's
        # kernel explains; the shipped list allows it in vm_real_tests* only.
        with open(os.path.join(SRC, "tests", "expected-skips")) as f:
            line = next(l for l in f if "guest-explained" in l and not l.startswith("#"))
        script = ("echo 'SKIP-CASE guest:real_cpu_integration.test_bad_input_touches_nothing: "
                  "no non-hotpluggable CPU to refuse (excused: the guest kernel lacks it)'")
        rc, out, _ = self.run_suite({"vm_real_tests_arm64": (script, 0)}, [line.strip()])
        self.assertEqual(rc, 0, out)
        self.assertIn("vm_real_tests_arm64:guest:real_cpu_integration."
                      "test_bad_input_touches_nothing", out)
        rc, out, _ = self.run_suite({"real_cpu_integration": (script, 0)}, [line.strip()])
        self.assertEqual(rc, 1, out)

    # A stand-in for a gtest binary (tests/gtest_shard.py runs it): prints
    # gtest's lines for the tests of its shard and writes gtest's JSON; MODE
    # skip: S.Two skips itself; fail: S.Two fails; crash: exits 134 with no
    # JSON. Shard i of n holds tests i, i+n, ... of [S.One, S.Two, S.Three].
    FAKE_GTEST = """\
        import json, os, sys
        mode, out = sys.argv[-1], next(a for a in sys.argv if a.startswith("--gtest_output="))
        i, n = int(os.environ["GTEST_SHARD_INDEX"]), int(os.environ["GTEST_TOTAL_SHARDS"])
        names = ["One", "Two", "Three"][i::n]
        if mode == "crash":
            print("AddressSanitizer: heap-use-after-free"); sys.exit(134)
        rows = []
        for t in names:
            print(f"[ RUN      ] S.{t}")
            row = {"name": t, "status": "RUN", "result": "COMPLETED"}
            if t == "Two" and mode == "skip":
                print("x.cc:1: Skipped"); print("no widget here"); row["result"] = "SKIPPED"
            if t == "Two" and mode == "fail":
                print("x.cc:2: Failure"); row["failures"] = [{"failure": "x.cc:2"}]
            rows.append(row)
        with open(out.split(":", 1)[1], "w") as f:
            json.dump({"testsuites": [{"name": "S", "testsuite": rows}]}, f)
        sys.exit(1 if any("failures" in r for r in rows) else 0)
        """

    def run_shards(self, mode, shards, expected_lines=()):
        fake = os.path.join(self.dir, "fake_gtest.py")
        with open(fake, "w") as f:
            f.write(f"#!{sys.executable}\n" + textwrap.dedent(self.FAKE_GTEST))
        os.chmod(fake, 0o755)
        shard = os.path.join(SRC, "tests", "gtest_shard.py")
        tests = {f"unit_tests_{i}": (f"{sys.executable} {shard} {fake} {i} {shards} {mode}", "$?")
                 for i in range(shards)}
        return self.run_suite(tests, expected_lines)

    def test_gtest_shards_count_their_cases_and_name_their_skips(self):
        rc, out, _ = self.run_shards("ok", 2)
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.last(out), "2 passed, 0 failed, 0 skipped")
        self.assertIn("gtest cases in the sharded tests (tests/gtest_shard.py): 3 passed, 0 failed, "
                      "0 skipped", out)
        rc, out, _ = self.run_shards("skip", 2)  # S.Two: shard 1
        self.assertEqual(rc, 1, out)
        self.assertIn("b/unit_tests_1:S.Two: no widget here", out)
        rc, out, _ = self.run_shards("skip", 2, [f"unit_tests_*:S.Two  {self.true_cond}  why"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.last(out), "2 passed, 0 failed, 1 skipped")

    def test_a_gtest_shard_that_fails_or_crashes_fails(self):
        rc, out, _ = self.run_shards("fail", 2)
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.last(out), "1 passed, 1 failed, 0 skipped")
        rc, out, _ = self.run_shards("crash", 1)
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.last(out), "0 passed, 1 failed, 0 skipped")
        # More shards than tests: the empty shard fails.
        rc, out, _ = self.run_shards("ok", 4)
        self.assertEqual(self.last(out), "3 passed, 1 failed, 0 skipped")

    def test_no_tests_fails(self):
        rc, out, _ = self.run_suite({})
        self.assertEqual(rc, 1, out)
        self.assertIn("no tests were found", out)

    def test_unknown_condition_is_bad_input(self):
        rc, out, err = self.run_suite({"a": ("echo ok", 0)}, ["a  sunny  r"])
        self.assertEqual(rc, 2, out)
        self.assertIn("unknown condition sunny", err)

    def test_repository_list_parses(self):
        # The shipped file: every line well-formed, every condition known.
        m = summary_module()
        rows = m.load_expected(os.path.join(SRC, "tests", "expected-skips"), m.conditions())
        self.assertGreater(len(rows), 5)


if __name__ == "__main__":
    SRC = os.path.abspath(sys.argv[1])
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
