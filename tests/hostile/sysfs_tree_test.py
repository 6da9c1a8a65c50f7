#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""FIFOs and symlinks under a sysfs root, hostile state and output paths
(issue 29.7 and 29.9), against fake --sysfs-root trees (no real CPU touched):

- a FIFO at the root's `online` list: `run` and `list` hung; now each exits
  non-zero within seconds, one error line naming the FIFO.
- a FIFO at cpu3/hotplug/fail after a fault run crashed: `restore` held both
  locks 26 minutes in fifo_open; now it exits non-zero at once, naming it,
  and state.json stays for the next try.
- a symlink at cpu3/online: `run` overwrote the first byte of the file it
  named; now refused by name, the file untouched.
- a symlink at cpu3/hotplug/fail and state.json from a run without faults
  (fail_may_be_armed false): `restore` truncated the named file to "-1"; now
  it puts the mask back and never writes hotplug/fail.
- `--oplog` at a FIFO: blocked before the start; now refused at start-up.
- `restore` on a fake root leaves the host's tracefs alone (strace: no look
  at the mount table, no tracefs path).
- a symlinked state directory, or one under a directory anyone may write
  without the sticky bit: refused in one line.

    sysfs_tree_test.py BUILD_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_tree  # noqa: E402

BIN = None
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
LIMIT_S = 10  # "within a few seconds"; the hangs were minutes, or forever


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


class SysfsTree(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cpuhp-tree.")
        self.root = os.path.join(self.dir, "cpu")
        self.state = os.path.join(self.dir, "state")
        self.report = os.path.join(self.dir, "r.json")
        self.victim = os.path.join(self.dir, "victim")
        with open(self.victim, "w") as f:
            f.write("precious\n")
        # 4 CPUs, cpu0 fixed, like x86; hotplug/fail on each hotpluggable CPU.
        fake_tree.make_cpu_tree(self.root, fail=True)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def put(self, rel, text):
        fake_tree.put(self.root, rel, text)

    def fifo(self, rel):
        path = os.path.join(self.root, rel)
        os.unlink(path)
        os.mkfifo(path)
        return path

    def link(self, rel):
        path = os.path.join(self.root, rel)
        os.unlink(path)
        os.symlink(self.victim, path)
        return path

    def untouched(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), "precious\n", "the symlink's target was written")

    def plant_state(self, armed, online="0-3"):
        os.makedirs(self.state, mode=0o700, exist_ok=True)
        with open(os.path.join(self.state, "state.json"), "w") as f:
            json.dump({"pid": 999999, "boot_id": boot_id(), "started_at": "",
                       "sysfs_root": self.root, "online_at_start": online,
                       "controlled": "1-3", "fail_may_be_armed": armed}, f)

    def tool(self, *args, strace=None):
        """Runs the binary; asserts it is back within LIMIT_S (a hang is
        killed there and fails the test)."""
        cmd = [BIN, *args]
        if strace:
            cmd = ["strace", "-f", "-qq", "-o", strace, "-e", "trace=%file", *cmd]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=LIMIT_S,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            self.fail(f"{' '.join(args)}: still running after {LIMIT_S} s (blocked)")
        p.elapsed = time.monotonic() - t0
        return p

    def run_args(self, *extra, state=None):
        return ["run", "--sysfs-root", self.root, "--state-dir", state or self.state, "--report",
                self.report, "--cpus", "1-3", "--iterations", "4", "--progress", "never",
                "--no-tracepoints", "--no-health", *extra]

    def assert_refused(self, p, path, what):
        """Non-zero, one error line, and it names `path` and what it is."""
        self.assertNotEqual(p.returncode, 0, p.stderr)
        self.assertIn(p.returncode, (1, 2), p.stderr)
        errors = [l for l in p.stderr.splitlines() if "error" in l.lower()]
        naming = [l for l in errors if path in l]
        self.assertTrue(naming, p.stderr)
        self.assertIn(what, naming[0])
        self.assertIn("refused", naming[0])
        return errors

    def test_fifo_at_the_online_list(self):
        fifo = self.fifo("online")
        errors = self.assert_refused(self.tool(*self.run_args()), fifo, "a FIFO")
        self.assertEqual(len(errors), 1, errors)
        self.assertFalse(os.path.exists(self.report))
        errors = self.assert_refused(self.tool("list", "--sysfs-root", self.root), fifo, "a FIFO")
        self.assertEqual(len(errors), 1, errors)

    def test_fifo_at_hotplug_fail_after_a_crashed_fault_run(self):
        self.put("cpu2/online", "0\n")
        self.plant_state(armed=True)
        fifo = self.fifo("cpu3/hotplug/fail")
        p = self.tool("restore", "--state-dir", self.state, "--sysfs-root", self.root)
        self.assert_refused(p, fifo, "a FIFO")
        self.assertTrue(os.path.exists(os.path.join(self.state, "state.json")),
                        "kept for the next restore")
        # The next `run` restores first: the same, at once.
        self.assert_refused(self.tool(*self.run_args()), fifo, "a FIFO")

    def test_symlink_at_cpu_online(self):
        link = self.link("cpu3/online")
        p = self.tool(*self.run_args())
        errors = self.assert_refused(p, link, "a symbolic link")
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(p.returncode, 2, "bad input, before any write")
        self.assertFalse(os.path.exists(self.report))
        self.untouched()
        # restore, with cpu3 to bring back: the same.
        self.plant_state(armed=False)
        self.assert_refused(
            self.tool("restore", "--state-dir", self.state, "--sysfs-root", self.root), link,
            "a symbolic link")
        self.untouched()

    def test_symlink_at_hotplug_fail_without_faults(self):
        self.put("cpu2/online", "0\n")
        self.plant_state(armed=False)
        self.link("cpu3/hotplug/fail")
        p = self.tool("restore", "--state-dir", self.state, "--sysfs-root", self.root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("restored online mask 0-3", p.stdout)
        self.untouched()
        with open(os.path.join(self.root, "cpu2/online")) as f:
            self.assertEqual(f.read()[0], "1")
        # A fault run's state: fail must be cleared, and is refused by name.
        self.put("cpu2/online", "0\n")
        self.plant_state(armed=True)
        p = self.tool("restore", "--state-dir", self.state, "--sysfs-root", self.root)
        self.assert_refused(p, os.path.join(self.root, "cpu3/hotplug/fail"), "a symbolic link")
        self.untouched()

    def test_oplog_at_a_fifo(self):
        fifo = os.path.join(self.dir, "ops.jsonl")
        os.mkfifo(fifo)
        p = self.tool(*self.run_args("--oplog", fifo))
        errors = self.assert_refused(p, fifo, "a FIFO")
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(p.returncode, 2, "bad input")
        # Nothing was toggled: every CPU still online, no state left.
        for c in range(1, 4):
            with open(os.path.join(self.root, f"cpu{c}/online")) as f:
                self.assertEqual(f.read(), "1\n")
        self.assertFalse(os.path.exists(os.path.join(self.state, "state.json")))

    def test_restore_on_a_fake_root_leaves_tracefs_alone(self):
        if not shutil.which("strace"):
            self.skipTest("strace is missing")
        self.put("cpu2/online", "0\n")
        self.plant_state(armed=False)
        trace = os.path.join(self.dir, "strace.out")
        p = self.tool("restore", "--state-dir", self.state, "--sysfs-root", self.root,
                      strace=trace)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(trace) as f:
            calls = f.read()
        self.assertIn(self.root, calls, "the trace holds the run's file calls")
        host = ("/proc/mounts", "/proc/self/mounts", "/sys/kernel/tracing",
                "/sys/kernel/debug/tracing")
        touched = [l for l in calls.splitlines() if any(f'"{h}' in l for h in host)]
        self.assertEqual(touched, [], "the host's tracefs (or the mount table to find it)")

    def test_state_directory_symlinked_or_under_an_open_parent(self):
        real = os.path.join(self.dir, "real")
        os.mkdir(real, 0o700)
        link = os.path.join(self.dir, "link")
        os.symlink(real, link)
        p = self.tool("restore", "--state-dir", link, "--sysfs-root", self.root)
        errors = self.assert_refused(p, link, "a symbolic link")
        self.assertEqual(len(errors), 1, errors)
        self.assertFalse(os.path.exists(os.path.join(real, "lock")))
        open_dir = os.path.join(self.dir, "open")
        os.mkdir(open_dir)
        os.chmod(open_dir, 0o777)
        state = os.path.join(open_dir, "state")
        p = self.tool(*self.run_args(state=state))
        errors = self.assert_refused(p, open_dir, "anyone may write")
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(p.returncode, 2)
        os.chmod(open_dir, 0o1777)  # sticky, as /tmp: fine
        p = self.tool("restore", "--state-dir", state, "--sysfs-root", self.root)
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    BIN = os.path.join(os.path.abspath(sys.argv[1]), "cpuhp-stress")
    unittest.main(argv=sys.argv[:1], verbosity=2)
