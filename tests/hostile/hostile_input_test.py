#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile input against the built binary: every bad config of the corpus in
tests/hostile/configs/ (and a few made here) gets exit 2, exactly one error
line naming the file or key, no report, no state file, and cpu1 untouched;
unusable report directories are refused before any operation; a full disk
while writing the report keeps the previous report intact, leaves every CPU
online and saves the report in the state directory instead.

Real hotplug (root, cpu1); skipped otherwise (exit 77).
    hostile_input_test.py BUILD_DIR SOURCE_DIR
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cpuhp_testlib as lib  # noqa: E402
from cpuhp_testlib import CPU, online_file, read  # noqa: E402

ONLINE = online_file()


class HostileInputTest(lib.RealCpuCase):
    prefix = "cpuhp-hostile."

    def setUp(self):
        super().setUp()
        self.mounts = []

    def tearDown(self):
        for m in reversed(self.mounts):
            subprocess.run(["umount", m], check=False)
        super().tearDown()

    def run_tool(self, *args):
        return super().run_tool(*args, timeout=120)

    def assert_refused(self, p, needle, code=2):
        lines = p.stderr.strip().splitlines()
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(needle, lines[0])
        self.assertEqual(read(ONLINE), "1")
        self.assertFalse(os.path.exists(self.report))
        self.assertFalse(os.path.exists(f"{self.state}/state.json"))

    def run_config(self, path):
        return self.run_tool("run", "--config", path, "--state-dir", self.state,
                             "--report", self.report, "--progress", "never")

    def test_config_corpus(self):
        files = sorted(glob.glob(f"{lib.SRC}/tests/hostile/configs/*"))
        self.assertGreaterEqual(len(files), 39)
        machine_keys = {"cpus-not-present.json": "/cpus", "cpus-not-hotpluggable.json": "/cpus",
                        "min-online-too-high.json": "/min_online"}
        for i, f in enumerate(files):
            with self.subTest(config=os.path.basename(f)):
                if os.path.basename(f) == "cpus-not-hotpluggable.json":
                    # The corpus names cpu0, x86's fixed CPU; on arm64/PSCI
                    # and POWER cpu0 hotplugs like any other: the run would
                    # toggle it. The CPU without an online file, found here.
                    if lib.FIXED_CPU is None:
                        self.skipTest(lib.NO_FIXED_CPU)
                    f = os.path.join(self.dir, "cpus-not-hotpluggable.json")
                    with open(f, "w") as out:
                        out.write(f'{{"cpus": "{lib.FIXED_CPU}"}}')
                self.report = os.path.join(self.dir, f"report-{i}.json")
                p = self.run_config(f)
                # Errors from the file name it; those found against the machine name the key.
                self.assert_refused(p, machine_keys.get(os.path.basename(f), f))

    def test_generated_inputs(self):
        big = os.path.join(self.dir, "big.json")
        with open(big, "w") as f:
            f.write('{"comment": "' + "x" * (1 << 20) + '"}')
        self.assert_refused(self.run_config(big), "too large (more than 1 MiB)")
        self.assert_refused(self.run_config(os.path.join(self.dir, "missing.json")),
                            "missing.json: cannot read: No such file or directory")
        self.assert_refused(self.run_config(self.dir), "cannot read: Is a directory")
        self.assert_refused(self.run_config("/dev/zero"), "/dev/zero: too large")

    def test_unusable_report_directories(self):
        afile = os.path.join(self.dir, "afile")
        open(afile, "w").close()
        cases = [(os.path.join(afile, "r.json"), "Not a directory"),
                 (os.path.join(self.dir, "no", "such", "r.json"), "No such file or directory")]
        ro = os.path.join(self.dir, "ro")
        os.mkdir(ro)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro]).returncode == 0:
            self.mounts.append(ro)
            cases.append((os.path.join(ro, "r.json"), "Read-only file system"))
        else:  # a dropped case is a skip (tests/expected-skips, tests/ctest_summary.py)
            print("SKIP-CASE read-only-tmpfs: cannot mount a read-only tmpfs", flush=True)
        for report, needle in cases:
            with self.subTest(report=report):
                p = self.run_tool("run", "--cpus", str(CPU), "--iterations", "10", "--state-dir",
                                  self.state, "--report", report, "--progress", "never")
                self.assert_refused(p, needle)
                self.assertIn(report, p.stderr)

    def test_full_disk_keeps_the_previous_report(self):
        small = os.path.join(self.dir, "small")
        os.mkdir(small)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small]).returncode:
            self.skipTest("cannot mount a tmpfs")
        self.mounts.append(small)
        report = os.path.join(small, "report.json")
        previous = '{"schema_version": 1, "previous": true}\n'
        with open(report, "w") as f:
            f.write(previous)
        # Fill the disk but for a few KiB: less than a report needs.
        filler = os.path.join(small, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        os.truncate(filler, os.path.getsize(filler) - 4096)
        p = self.run_tool("run", "--cpus", str(CPU), "--iterations", "20", "--state-dir",
                          self.state, "--report", report, "--progress", "never")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"{report}: write: No space left on device", p.stderr)
        self.assertIn("offline latency", p.stdout)  # the summary is still printed
        with open(report) as f:
            self.assertEqual(f.read(), previous)
        self.assertEqual([x for x in os.listdir(small) if ".tmp." in x], [])
        saved = glob.glob(f"{self.state}/report-unsaved-*.json")
        self.assertEqual(len(saved), 1, p.stderr)
        self.assertIn(saved[0], p.stderr)
        self.assertEqual(read(ONLINE), "1")

    def test_corrupt_state_file_is_refused(self):
        os.makedirs(self.state)
        with open(f"{self.state}/state.json", "w") as f:
            f.write('{"online_at_start": "0-x"')
        p = self.run_tool("run", "--cpus", str(CPU), "--iterations", "4", "--state-dir",
                          self.state, "--report", self.report, "--progress", "never")
        self.assertNotEqual(p.returncode, 0)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("state.json: corrupt state file", lines[0])
        self.assertTrue(os.path.exists(f"{self.state}/state.json"))  # kept for a human
        self.assertEqual(read(ONLINE), "1")
        os.remove(f"{self.state}/state.json")


if __name__ == "__main__":
    lib.main(HostileInputTest)
