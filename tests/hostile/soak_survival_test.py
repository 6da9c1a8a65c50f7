#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A soak survives what labs do to it (issue 29.1-3), reproduced on the sim
backend with a state directory (no real CPU is touched):

- kill -9 between the run's end and its report (strace holds the report's
  rename for 4 s): the same command again writes the report from the
  finished checkpoint, redoes no operation, exit 0; the restart is recorded
  as "finished". Before, the checkpoint was already gone: the run started
  again from operation 0 and truncated the log.
- kill -9 after the report, before the checkpoint is removed (strace holds
  its unlink): the same, nothing redone, the log untouched.
- a crash loop (one kill after 4 s, three 1.5 s after each start, periodic
  checkpoints every 3 s): every start is in soak.restarts (4), not only the
  one that lived to a periodic checkpoint.
- logrotate by rename (mv op.jsonl op.jsonl.1, SIGHUP) then kill -9 before
  the next periodic checkpoint: the restart continues (before: exit 2 on
  every restart, the service down); every operation is in op.jsonl.1 or
  op.jsonl exactly once.
- logrotate copytruncate (the log emptied during the run): no NUL bytes,
  the run ends normally.

    soak_survival_test.py BUILD_DIR

Needs strace (tools/setup.sh installs it for the tests).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BIN = None
# LeakSanitizer cannot run under ptrace; a killed process leaks by design.
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")


def wait_for(cond, timeout=60, what=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def indices(path, torn_head=False):
    """The operation indices of a log, in order. torn_head: the first line
    may be the tail of one cut by copytruncate (the log is written 1 MiB at
    a time), skipped."""
    with open(path, "rb") as f:
        data = f.read()
    assert b"\0" not in data, f"{path}: NUL bytes"
    lines = [l for l in data.decode().splitlines() if l.strip()]
    if torn_head and lines and not lines[0].startswith('{"i":'):
        lines = lines[1:]
    return [json.loads(l)["i"] for l in lines]


class SoakSurvival(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cpuhp-survive.")
        self.state = os.path.join(self.dir, "state")
        self.report = os.path.join(self.dir, "r.json")
        self.oplog = os.path.join(self.dir, "op.jsonl")
        self.ckpt = os.path.join(self.state, "checkpoint.json")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def cmd(self, n, *extra):
        return [BIN, "run", "--backend", "sim", "--seed", "7", "--progress", "never",
                "--state-dir", self.state, "--report", self.report, "--oplog", self.oplog,
                "--iterations", str(n), *extra]

    def load(self):
        with open(self.report) as f:
            return json.load(f)

    def finished_checkpoint(self):
        try:
            with open(self.ckpt) as f:
                return json.load(f).get("finished") is not None
        except (OSError, ValueError):
            return False

    def kill_under_strace(self, n, syscall, ready):
        """Runs the command under strace holding every `syscall` for 3 s;
        kill -9 of the daemon once ready() is true (in one of those holds:
        strace 6.1's -P does not match a path that does not exist yet)."""
        s = subprocess.Popen(["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e",
                              f"trace={syscall}", "-e", f"inject={syscall}:delay_enter=3000000",
                              *self.cmd(n)], env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            wait_for(ready, timeout=120, what=f"the hold on {syscall}")
            children = subprocess.run(["pgrep", "-P", str(s.pid)], capture_output=True,
                                      text=True).stdout.split()
            self.assertTrue(children, "the daemon under strace")
            for pid in children:
                os.kill(int(pid), signal.SIGKILL)
        finally:
            s.wait(timeout=60)

    def rerun(self, n, *extra):
        p = subprocess.run(self.cmd(n, *extra), env=ENV, capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p

    def test_kill_before_the_report(self):
        n = 20000
        self.kill_under_strace(n, "rename",
                               lambda: self.finished_checkpoint()
                               and not os.path.exists(self.report))
        self.assertFalse(os.path.exists(self.report))
        lines = len(indices(self.oplog))
        self.rerun(n)
        r = self.load()
        self.assertEqual(r["totals"]["ops"], n)
        self.assertEqual(r["soak"]["restarts"][-1]["kind"], "finished", r["soak"]["restarts"])
        self.assertEqual(indices(self.oplog), list(range(n)))
        self.assertEqual(lines, n, "the log was complete before the kill")
        self.assertFalse(os.path.exists(self.ckpt))

    def test_kill_after_the_report(self):
        n = 20000
        self.kill_under_strace(n, "unlink",
                               lambda: os.path.exists(self.report) and os.path.exists(self.ckpt)
                               and self.finished_checkpoint())
        first = self.load()
        self.assertEqual(first["totals"]["ops"], n)
        self.rerun(n)
        r = self.load()
        self.assertEqual(r["totals"]["ops"], n)
        self.assertEqual(r["run"]["started_at"], first["run"]["started_at"], "the same run")
        self.assertEqual(r["soak"]["restarts"][-1]["kind"], "finished")
        self.assertEqual(r["directions"], first["directions"])
        self.assertEqual(indices(self.oplog), list(range(n)))
        self.assertFalse(os.path.exists(self.ckpt))

    def test_crash_loop_counts_every_start(self):
        n = 9000
        args = self.cmd(n, "--interval", "1ms", "--checkpoint-interval", "3s")
        for after in (4.0, 1.5, 1.5, 1.5):
            p = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(after)
            self.assertIsNone(p.poll(), "still running when killed")
            p.kill()
            p.wait()
        p = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        r = self.load()
        self.assertEqual(r["totals"]["ops"], n)
        self.assertEqual(len(r["soak"]["restarts"]), 4, r["soak"]["restarts"])
        self.assertTrue(all(x["kind"] == "crash" for x in r["soak"]["restarts"]))

    def test_logrotate_by_rename_then_kill(self):
        n = 8000
        args = self.cmd(n, "--interval", "1ms", "--checkpoint-interval", "4s")
        p = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(self.ckpt), what="the first checkpoint")
        os.rename(self.oplog, self.oplog + ".1")
        p.send_signal(signal.SIGHUP)
        # The checkpoint names the new file at once (the log is buffered: its
        # size says nothing yet), well before the next periodic one.
        def names_new_log():
            try:
                with open(self.ckpt) as f:
                    return json.load(f)["oplog_ino"] == os.stat(self.oplog).st_ino
            except (OSError, ValueError, KeyError):
                return False
        # At once: the next periodic checkpoint is 4 s away.
        wait_for(names_new_log, timeout=2, what="a checkpoint naming the reopened log")
        self.assertIsNone(p.poll(), "still running when killed")
        p.kill()
        p.wait()
        rerun = self.rerun(n, "--interval", "1ms", "--checkpoint-interval", "4s")
        self.assertEqual(self.load()["totals"]["ops"], n)
        self.assertIn("resuming the run", rerun.stderr)
        both = indices(self.oplog + ".1") + indices(self.oplog)
        self.assertEqual(both, list(range(n)), "every operation once, in order")

    def test_copytruncate(self):
        # The log is written 1 MiB at a time (~7000 lines): truncated once
        # it has been written to, well before the end.
        n = 40000
        p = subprocess.Popen(self.cmd(n, "--interval", "100us"), env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: os.path.exists(self.oplog) and os.path.getsize(self.oplog) > 0,
                 what="the log written to")
        os.truncate(self.oplog, 0)
        self.assertIsNone(p.poll(), "truncated during the run")
        _, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err[-3000:])
        got = indices(self.oplog, torn_head=True)  # asserts no NUL bytes
        self.assertTrue(got and got[-1] == n - 1 and got == list(range(got[0], n)), got[:5])
        self.assertIn("truncated under the run", err)


if __name__ == "__main__":
    BIN = os.path.join(os.path.abspath(sys.argv[1]), "cpuhp-stress")
    if not shutil.which("strace"):
        print("FAIL: strace is missing (tools/setup.sh installs it for the tests)")
        sys.exit(1)
    unittest.main(argv=sys.argv[:1], verbosity=2)
