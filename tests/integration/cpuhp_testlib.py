# SPDX-License-Identifier: GPL-2.0
"""Shared harness for the tests that drive the built cpuhp-stress binary on
this machine's real hotpluggable CPU (cpu1 unless CPUHP_TEST_CPU says
otherwise). Every such test file is run as

    some_test.py BUILD_DIR SOURCE_DIR

and exits 0 (pass), 1 (fail) or 77 (skipped, with the reason printed). Each
test case gets a scratch directory with `state` and `report.json` paths and,
whatever happens, leaves the CPU it toggles online again and fails if the
online mask differs from the one it started with.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SYS = "/sys/devices/system/cpu"
CPU = int(os.environ.get("CPUHP_TEST_CPU", "1"))
BIN = SRC = None  # set by main() from the command line


def read(path):
    with open(path) as f:
        return f.read().strip()


def online_file(cpu=CPU):
    return f"{SYS}/cpu{cpu}/online"


def bring_online(cpu=CPU):
    """Puts cpu back online if it is not; returns True if it had to."""
    if read(online_file(cpu)) == "1":
        return False
    with open(online_file(cpu), "w") as f:
        f.write("1")
    return True


def skip_reason(*checks):
    """None when the real-CPU tests can run, else why not. checks are extra
    callables returning a reason string or None."""
    if os.geteuid() != 0:
        return "not root: real hotplug needs root"
    if not os.access(online_file(), os.W_OK):
        return f"{online_file()} missing or not writable: cpu{CPU} cannot be hotplugged here"
    for check in checks:
        why = check()
        if why:
            return why
    return None


def validate(test, path):
    """Asserts that the report at path validates against the repo's schema."""
    v = subprocess.run(["/usr/bin/python3", f"{SRC}/tests/validate_report.py",
                        f"{SRC}/daemon/report/schema/report.schema.json", path],
                       capture_output=True, text=True)
    test.assertEqual(v.returncode, 0, v.stdout + v.stderr)


class RealCpuCase(unittest.TestCase):
    prefix = "cpuhp-it."

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix=self.prefix)
        self.dir = self.tmp.name
        self.state = os.path.join(self.dir, "state")
        self.report = os.path.join(self.dir, "report.json")
        self.start_online = read(f"{SYS}/online")

    def tearDown(self):
        # Whatever happened, every CPU this test may have touched comes back.
        left = read(f"{SYS}/online")
        bring_online()
        self.tmp.cleanup()
        self.assertEqual(left, self.start_online, "a CPU was left offline")

    def run_tool(self, *args, check=None, timeout=300, **kw):
        p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, **kw)
        if check is not None:
            self.assertEqual(p.returncode, check, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def load_report(self, path=None, restored=True):
        """Reads the report, validates it against the schema and, unless told
        otherwise, asserts the run restored the starting mask."""
        path = path or self.report
        with open(path) as f:
            r = json.load(f)
        validate(self, path)
        if restored:
            self.assertEqual(r["restore"]["ok"], True)
        return r


def main(case, *checks):
    """Entry point of a test file: parses BUILD_DIR SOURCE_DIR, skips (77)
    when the machine cannot run real hotplug, runs case's tests."""
    global BIN, SRC
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} BUILD_DIR SOURCE_DIR")
    BIN, SRC = os.path.join(sys.argv[1], "cpuhp-stress"), sys.argv[2]
    why = skip_reason(*checks)
    if why:
        print(f"SKIPPED: {why}")
        sys.exit(77)
    res = unittest.TextTestRunner(verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(case))
    failed = len(res.failures) + len(res.errors)
    print(f"{res.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
