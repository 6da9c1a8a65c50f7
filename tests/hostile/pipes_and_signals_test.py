#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Pipes and early signals are harmless (issue 29.4, 29.5), on the real CPU:

- `run ... --progress always --interval 1ms 2>&1 | head -c 200`: the reader
  goes away after 200 bytes. The run goes on to its end: exit 0, the report
  written, no state.json left, every CPU online (it exited 141 with a CPU
  offline when SIGPIPE killed it). Also with only stdout closed.
- Every handler is in place before anything else runs: under strace, the
  daemon's first open of its config file comes after SIGPIPE is ignored and
  SIGHUP, SIGUSR1, SIGINT and SIGTERM are caught (a SIGHUP from logrotate
  20 ms into start-up killed it, exit 129). Then a storm of SIGHUP and
  SIGUSR1 from the first moment the handlers are there to the end of a run
  changes nothing: exit 0, the report written.

    pipes_and_signals_test.py BUILD_DIR SOURCE_DIR

Root and a writable cpuN/online, else exit 77.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cpuhp_testlib import CPU, SYS, read  # noqa: E402

BIN = None


def caught(pid):
    """The signal numbers pid catches (SigCgt) and ignores (SigIgn)."""
    with open(f"/proc/{pid}/status") as f:
        st = dict(l.split(":\t", 1) for l in f.read().splitlines() if ":\t" in l)
    bits = lambda k: {n for n in range(1, 65) if int(st[k].strip(), 16) >> (n - 1) & 1}
    return bits("SigCgt"), bits("SigIgn")


class PipesAndSignals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cpuhp-pipes.")
        self.state = os.path.join(self.tmp, "state")
        self.report = os.path.join(self.tmp, "r.json")
        self.start = read(f"{SYS}/online")

    def tearDown(self):
        online = read(f"{SYS}/online")
        if online != self.start:
            subprocess.run([BIN, "restore", "--state-dir", self.state], timeout=120)
        shutil.rmtree(self.tmp)
        self.assertEqual(online, self.start, "a CPU was left offline")

    def args(self, n=400):
        return [BIN, "run", "--cpus", str(CPU), "--iterations", str(n), "--progress", "always",
                "--interval", "1ms", "--state-dir", self.state, "--report", self.report,
                "--force"]

    def assert_finished(self, rc, what, n=400):
        self.assertEqual(rc, 0, what)
        with open(self.report) as f:
            self.assertEqual(json.load(f)["totals"]["ops"], n, what)
        self.assertFalse(os.path.exists(os.path.join(self.state, "state.json")), what)
        self.assertEqual(read(f"{SYS}/online"), self.start, what)

    def test_reader_gone_after_200_bytes(self):
        # 100 writes: the reader is gone after its 200 bytes, a few progress
        # lines (1 ms apart) into the run, and the run goes on writing into
        # the closed pipe for every write after that; 400 took 48 s of the
        # real-CPU lock at ~50 writes/s (issue 27).
        n = 100
        for attempt in range(3):
            for both in (True, False):
                what = f"attempt {attempt}, {'stdout and stderr' if both else 'stdout'} closed"
                with self.subTest(what=what):
                    p = subprocess.Popen(self.args(n), stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT if both else subprocess.DEVNULL)
                    got = p.stdout.read(200) if both else b""
                    p.stdout.close()  # like head -c 200 exiting
                    # Still running: its later progress lines meet the closed
                    # pipe (not a run that had ended before the reader left).
                    running = p.poll() is None
                    self.assertTrue(not both or len(got) == 200, got)
                    self.assert_finished(p.wait(timeout=300), what, n)
                    self.assertTrue(running, f"{what}: the run had ended before the reader left")

    def test_handlers_before_anything_else(self):
        if not shutil.which("strace"):
            self.fail("strace is missing (tools/setup.sh installs it for the tests)")
        cfg = os.path.join(self.tmp, "c.json")
        with open(cfg, "w") as f:
            json.dump({"iterations": 10}, f)
        log = os.path.join(self.tmp, "strace.log")
        p = subprocess.run(["strace", "-qq", "-f", "-o", log, "-e",
                            "trace=rt_sigaction,openat,open", *self.args(10), "--config", cfg],
                           capture_output=True, text=True, timeout=300,
                           # LeakSanitizer cannot run under ptrace.
                           env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        with open(log) as f:
            lines = f.read().splitlines()
        opened = [i for i, l in enumerate(lines) if cfg in l]
        self.assertTrue(opened, "the config file was opened")
        for sig, how in (("SIGPIPE", "SIG_IGN"), ("SIGHUP", None), ("SIGUSR1", None),
                         ("SIGINT", None), ("SIGTERM", None)):
            at = [i for i, l in enumerate(lines)
                  if re.search(rf"rt_sigaction\({sig}, \{{sa_handler=(0x[0-9a-f]+|{how})", l)]
            self.assertTrue(at and at[0] < opened[0],
                            f"{sig} handled ({how or 'caught'}) before the config is read")

    def test_signal_storm_from_the_start(self):
        p = subprocess.Popen(self.args(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sent = 0
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            try:
                cgt, _ = caught(p.pid)
            except (OSError, KeyError):
                break
            if {signal.SIGHUP, signal.SIGUSR1} <= cgt:
                for sig in (signal.SIGHUP, signal.SIGUSR1):
                    try:
                        os.kill(p.pid, sig)
                        sent += 1
                    except ProcessLookupError:
                        pass
            time.sleep(0.002)
        self.assert_finished(p.wait(timeout=300), f"{sent} SIGHUP/SIGUSR1 sent")
        self.assertGreater(sent, 20)


if __name__ == "__main__":
    BIN = os.path.join(os.path.abspath(sys.argv[1]), "cpuhp-stress")
    online = f"{SYS}/cpu{CPU}/online"
    if os.geteuid() != 0 or not os.access(online, os.W_OK):
        print(f"skip: needs root and a writable {online}")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
