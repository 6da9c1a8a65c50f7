# SPDX-License-Identifier: GPL-2.0
"""tools/setup.sh itself, with apt, dpkg, cmake and ctest replaced by stubs
that log their arguments (a copy of tools/ and the summary in a scratch
tree; nothing is installed or built):

    setup_test.py SOURCE_DIR

- `run` on an arm64 or ppc64el host installs only the run packages, adds no
  dpkg architecture, configures build/ without tests and runs the binary;
- every CPUHP_* option and cache variable of the CMakeLists.txt files is
  passed explicitly to every build directory, and `run` never shares one
  with `check`/`test`;
- `check` runs ctest with --no-tests=error and fails on an empty test set, on
  a skip tests/expected-skips does not allow, and passes when all ran.
"""
import glob
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

SRC = None

STUB = r"""#!/bin/sh
echo "$(basename "$0") $*" >> "$STUB_LOG"
# STUB_APT_UPDATE_FAILS=N: the first N apt-get updates fail as apt's does
if [ "$(basename "$0")" = apt-get ] && [ -n "$STUB_APT_UPDATE_FAILS" ]; then
  case " $* " in *" update "*)
    [ "$(grep -c '^apt-get .* update' "$STUB_LOG")" -gt "$STUB_APT_UPDATE_FAILS" ] || exit 100 ;;
  esac
fi
case "$(basename "$0") $1" in
"id -u") echo 0 ;;
"uname -m") echo "$STUB_MACHINE" ;;
"dpkg --print-architecture") echo "$STUB_ARCH" ;;
"dpkg --print-foreign-architectures") : ;;
"dpkg-query "*) exit 1 ;;  # nothing installed
"cmake --build") mkdir -p "$2"; printf '#!/bin/sh\necho "binary $*" >> "$STUB_LOG"\n' > "$2/cpuhp-stress"; chmod +x "$2/cpuhp-stress" ;;
"ctest "*)
  dir=""; junit=""
  while [ $# -gt 0 ]; do
    case "$1" in --test-dir) dir=$2; shift ;; --output-junit) junit=$2; shift ;; esac
    shift
  done
  cp "$STUB_JUNIT" "$dir/$junit" ;;
esac
exit 0
"""

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="{n}">{cases}</testsuite>
"""


def junit(*cases):
    xml = ""
    for name, status, out in cases:
        skip = '<skipped message="SKIP_RETURN_CODE=77"/>' if status == "notrun" else ""
        xml += (f'<testcase name="{name}" classname="{name}" status="{status}">{skip}'
                f"<system-out>{out}</system-out></testcase>")
    return JUNIT.format(n=len(cases), cases=xml)


class SetupTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-setup.")
        root = self.root = os.path.join(self.tmp.name, "repo")
        os.makedirs(os.path.join(root, "tests"))
        shutil.copytree(os.path.join(SRC, "tools"), os.path.join(root, "tools"))
        for f in ("ctest_summary.py", "expected-skips"):
            shutil.copy(os.path.join(SRC, "tests", f), os.path.join(root, "tests", f))
        self.bin = os.path.join(self.tmp.name, "bin")
        os.makedirs(self.bin)
        for tool in ("id", "uname", "dpkg", "dpkg-query", "apt-get", "apt-cache", "cmake",
                     "ctest"):
            p = os.path.join(self.bin, tool)
            with open(p, "w") as f:
                f.write(STUB)
            os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.tmp.name, "log")
        self.junit = os.path.join(self.tmp.name, "junit.xml")

    def tearDown(self):
        self.tmp.cleanup()

    def setup_sh(self, *args, arch="amd64", machine="x86_64", junit_xml=None, extra_env=None):
        with open(self.log, "w"):
            pass
        if junit_xml is not None:
            with open(self.junit, "w") as f:
                f.write(junit_xml)
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", STUB_LOG=self.log,
                   STUB_ARCH=arch, STUB_MACHINE=machine, STUB_JUNIT=self.junit)
        env.pop("CCACHE_DIR", None)
        env["CPUHP_VM_CACHE"] = os.path.join(self.tmp.name, "cache")
        env.update(extra_env or {})
        p = subprocess.run(["bash", os.path.join(self.root, "tools", "setup.sh"), *args],
                           capture_output=True, text=True, env=env, timeout=120)
        with open(self.log) as f:
            return p, f.read().splitlines()

    def test_run_on_arm64_and_ppc64el_installs_only_what_running_needs(self):
        for arch, machine in (("arm64", "aarch64"), ("ppc64el", "ppc64le"), ("amd64", "x86_64")):
            with self.subTest(arch=arch):
                p, log = self.setup_sh("run", arch=arch, machine=machine)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                installs = [l for l in log if l.startswith("apt-get ") and " install " in l]
                self.assertEqual(len(installs), 1, log)
                got = set(installs[0].split(" install ", 1)[1].split()) - {"-y", "-qq",
                                                                          "--no-install-recommends"}
                self.assertEqual(got, {"build-essential", "cmake", "pkg-config", "libspdlog-dev",
                                       "nlohmann-json3-dev", "libcli11-dev", "libsystemd-dev",
                                       "libtracefs-dev", "libtraceevent-dev", "libbpf-dev",
                                       "clang", "bpftool"})
                self.assertFalse([l for l in log if "--add-architecture" in l], log)
                conf = [l for l in log if l.startswith("cmake -S")]
                self.assertEqual(len(conf), 1, log)
                self.assertIn("-B build ", conf[0] + " ")
                self.assertIn("-DCPUHP_TESTS=OFF", conf[0])
                self.assertIn("binary run", log)

    def test_a_second_run_keeps_the_previous_report(self):
        # The binary refuses to overwrite its default report: `setup.sh run`
        # twice must neither fail nor lose the first report.
        report = os.path.join(self.root, "cpuhp-stress-report.json")
        with open(report, "w") as f:
            f.write("first run\n")
        p, log = self.setup_sh("run")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("binary run", log)
        self.assertFalse(os.path.exists(report))
        with open(os.path.join(self.root, "cpuhp-stress-report.previous.json")) as f:
            self.assertEqual(f.read(), "first run\n")
        self.assertIn("cpuhp-stress-report.previous.json", p.stdout)

    def test_every_option_explicit_and_run_has_its_own_tree(self):
        names = set()
        for cm in glob.glob(os.path.join(SRC, "**", "CMakeLists.txt"), recursive=True):
            if os.path.relpath(cm, SRC).startswith("build"):
                continue
            with open(cm) as f:
                text = f.read()
            names |= set(re.findall(r"\boption\((CPUHP_\w+)", text))
            names |= set(re.findall(r"\bset\((CPUHP_\w+)[^)]*\bCACHE\b", text))
        self.assertIn("CPUHP_REAL_FAULTS", names)
        self.assertIn("CPUHP_PYTHON", names)
        trees = {}
        for d in ("build", "build-asan", "build-o2", "build-fuzz", "build-tsan"):
            p, _ = self.setup_sh("cmake-args", d)
            self.assertEqual(p.returncode, 0, p.stderr)
            given = set(re.findall(r"^-D(CPUHP_\w+)=", p.stdout, re.M))
            self.assertEqual(names - given, set(), f"{d}: options left to the cache")
            trees[d] = p.stdout
        self.assertIn("-DCPUHP_TESTS=OFF", trees["build"])
        for d in ("build-asan", "build-o2"):
            self.assertIn("-DCPUHP_TESTS=ON", trees[d])
        # Real-CPU tests in one tree; host fault injection off unless asked.
        self.assertIn("-DCPUHP_REAL_TESTS=ON", trees["build-asan"])
        self.assertIn("-DCPUHP_REAL_TESTS=OFF", trees["build-o2"])
        self.assertIn("-DCPUHP_REAL_FAULTS=OFF", trees["build-asan"])
        # One ThreadSanitizer tree, never mixed with ASan (they exclude each other).
        self.assertEqual([d for d in trees if "-DCPUHP_TSAN=ON" in trees[d]], ["build-tsan"])
        self.assertIn("-DCPUHP_SANITIZE=OFF", trees["build-tsan"])

    def test_check_fails_on_no_tests(self):
        p, log = self.setup_sh("check", junit_xml=junit())
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        ct = [l for l in log if l.startswith("ctest ")]
        self.assertEqual(len(ct), 1, log)
        self.assertIn("--no-tests=error", ct[0])
        self.assertIn("no tests were found", p.stdout)

    def test_test_fails_on_no_tests_and_fetches_before_any_test(self):
        # The issue-15 run: ctest found no tests and `test` exited 0.
        fetch = os.path.join(self.root, "tests", "vm", "fetch")
        os.makedirs(os.path.dirname(fetch))
        with open(fetch, "w") as f:
            f.write('#!/bin/sh\necho "fetch $*" >> "$STUB_LOG"\n')
        os.chmod(fetch, 0o755)
        p, log = self.setup_sh("test", junit_xml=junit())
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        ct = [l for l in log if l.startswith("ctest ")]
        self.assertEqual(len(ct), 4, log)  # build-asan, build-o2, build-fuzz, build-tsan
        self.assertTrue(all("--no-tests=error" in l for l in ct), ct)
        # The fetch runs beside the builds and ends before the first test.
        last_fetch = max(i for i, l in enumerate(log) if l.startswith("fetch "))
        first_ctest = next(i for i, l in enumerate(log) if l.startswith("ctest "))
        self.assertLess(last_fetch, first_ctest, log)
        self.assertIn("fetch done (exit 0)", p.stdout)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "0 passed, 4 failed, 0 skipped")

    def test_test_fails_when_a_fetch_fails(self):
        fetch = os.path.join(self.root, "tests", "vm", "fetch")
        os.makedirs(os.path.dirname(fetch))
        with open(fetch, "w") as f:
            f.write('#!/bin/sh\necho "fetch $*" >> "$STUB_LOG"\nexit 1\n')
        os.chmod(fetch, 0o755)
        p, log = self.setup_sh("test", junit_xml=junit(("a", "run", "ok")),
                               extra_env={"CPUHP_FETCH_RETRY_S": "0"})
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sum(1 for l in log if l.startswith("fetch ")), 3, log)
        self.assertFalse([l for l in log if l.startswith("ctest ")], log)
        self.assertIn("FAILED: fetch", p.stderr)

    def test_a_failed_apt_update_is_tried_again(self):
        env = {"CPUHP_FETCH_RETRY_S": "0", "STUB_APT_UPDATE_FAILS": "2"}
        p, log = self.setup_sh("check", junit_xml=junit(("a", "run", "ok")), extra_env=env)
        updates = [l for l in log if l.startswith("apt-get ") and " update" in l]
        self.assertEqual(len(updates), 3, log)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("apt-get update failed (attempt 2 of 3)", p.stderr)

    def test_apt_update_failing_three_times_fails_in_one_line(self):
        env = {"CPUHP_FETCH_RETRY_S": "0", "STUB_APT_UPDATE_FAILS": "3"}
        p, log = self.setup_sh("check", junit_xml=junit(("a", "run", "ok")), extra_env=env)
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("tools/setup.sh: FAILED: apt-get update (Debian's package index) after 3 "
                      "attempts", p.stderr)
        self.assertFalse([l for l in log if " install " in l or l.startswith("cmake")], log)

    def test_check_fails_on_an_unexpected_skip(self):
        p, _ = self.setup_sh("check", junit_xml=junit(
            ("clang_format", "run", "ok"),
            ("verdicts", "run", "test_html (v.V.test_html) ... skipped 'chromium not installed'\n"
                                "OK (skipped=1)"),
            ("systemd_units", "notrun", "systemd-analyze missing")))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "1 passed, 2 failed, 0 skipped")
        self.assertIn("build-asan/verdicts:test_html: chromium not installed", p.stdout)
        self.assertIn("build-asan/systemd_units: systemd-analyze missing", p.stdout)

    def test_check_passes_when_all_ran(self):
        p, log = self.setup_sh("check", junit_xml=junit(("clang_format", "run", "ok"),
                                                        ("verdicts", "run", "OK")))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "2 passed, 0 failed, 0 skipped")
        self.assertIn("tests run: 2", p.stdout)
        # check: one build, the sanitizer tree; nothing fetched.
        conf = [l for l in log if l.startswith("cmake -S")]
        self.assertEqual(len(conf), 1, log)
        self.assertIn("-B build-asan ", conf[0] + " ")


if __name__ == "__main__":
    SRC = os.path.abspath(sys.argv[1])
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
