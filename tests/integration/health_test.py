#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the disturbance probes and the kernel log health
checks on this machine's real cpu1 (CPUHP_TEST_CPU overrides). Needs root, a
hotpluggable CPU and a CPU that stays online; otherwise skipped (exit 77).
Run under flock /run/lock/cpuhp-real-cpu.lock (ctest does).

    health_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import subprocess
import threading
import time

import cpuhp_testlib as lib
from cpuhp_testlib import CPU, find_other_cpu, online_file, read

TEST_LINE = "WARNING: cpuhp-stress test line"


def kmsg_missing():
    if not os.access("/dev/kmsg", os.R_OK | os.W_OK):
        return "/dev/kmsg not readable and writable"
    return None


def write_kmsg(line, level=4):
    with open("/dev/kmsg", "w") as f:
        f.write(f"<{level}>{line}\n")


def after_offlines(n, done, timeout_s=30):
    """Waits until the CPU has gone offline n times (polled; a run with a
    5 ms interval keeps it offline longer than a poll). False if done was
    set first."""
    seen, was = 0, read(online_file())
    deadline = time.monotonic() + timeout_s
    while seen < n and time.monotonic() < deadline:
        if done.wait(0.001):
            return False
        now = read(online_file())
        seen += now == "0" and was != "0"
        was = now
    return True


class HealthTest(lib.RealCpuCase):
    prefix = "cpuhp-health."

    def args(self, *extra):
        return [lib.BIN, "run", "--cpus", str(CPU), "--seed", "1", "--state-dir", self.state,
                "--report", self.report, "--progress", "never", *extra]

    def load(self):
        return self.load_report()

    def run_ok(self, *extra, config=None):
        args = self.args(*extra)
        if config is not None:
            path = os.path.join(self.dir, "config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            args += ["--config", path]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p, self.load()

    # ---- disturbance ----

    def test_probes_report_baseline_and_in_operation_samples(self):
        p, r = self.run_ok("--iterations", "200", "--disturbance")
        d = r["timing_sources"]["disturbance"]
        self.assertEqual(d["status"], "ok", d)
        self.assertEqual(d["toggled_cpus"], str(CPU))
        self.assertNotIn(str(CPU), d["probe_cpus"].split(","))
        self.assertEqual(d["period_ns"], 1_000_000)
        t = d["total"]
        # 1 s of baseline at 1 ms, then 200 real operations of a few ms each.
        self.assertGreater(t["baseline"]["count"], 500, t)
        self.assertGreater(t["offline"]["count"], 0, t)
        self.assertGreater(t["online"]["count"], 0, t)
        self.assertEqual(d["samples"], sum(t[b]["count"] for b in t))
        for b in ("baseline", "offline", "online"):
            self.assertLessEqual(t[b]["p99_ns"], t[b]["max_ns"])
            self.assertGreater(t[b]["max_ns"], 0)
            self.assertLess(t[b]["max_ns"], 10_000_000_000)
        self.assertEqual(r["totals"]["failed"], 0)
        self.assertIn("wakeup latency of the other CPUs", p.stdout)
        self.assertRegex(p.stdout, r"during offline +\d+")

    def test_fifo_probe_on_a_toggled_cpu_never_blocks_its_offline(self):
        # A SCHED_FIFO probe pinned to the CPU being taken offline: the kernel
        # breaks its affinity and moves it; the offline succeeds every time,
        # and the probe gets its CPU back when the CPU returns.
        other = find_other_cpu(CPU)
        if other is None:
            self.skipTest(f"no CPU other than cpu{CPU} stays online to compare with")
        cfg = {"disturbance": {"enabled": True, "cpus": f"{other},{CPU}",
                               "fifo_priority": 50, "baseline": "100ms"}}
        p, r = self.run_ok("--iterations", "60", "--interval", "20ms", config=cfg)
        self.assertEqual(r["totals"]["ops"], 60)
        self.assertEqual(r["totals"]["failed"], 0)
        self.assertEqual(r["totals"]["readback_mismatches"], 0)
        d = r["timing_sources"]["disturbance"]
        self.assertEqual(d["policy"], "SCHED_FIFO")
        rows = {row["cpu"]: row for row in d["per_cpu"]}
        moved = rows[CPU]
        self.assertGreater(moved["off_cpu_samples"], 0, moved)
        self.assertGreater(moved["repins"], 0, moved)
        self.assertEqual(rows[other]["off_cpu_samples"], 0)
        self.assertGreater(moved["offline"]["count"] + moved["online"]["count"], 0)

    # ---- kernel log health ----

    def test_health_is_ok_and_quiet_on_this_machine(self):
        # The reader must really see the run's records. x86 and arm64 log
        # each hotplug ("CPU 1 is now offline", "psci: CPU1 killed"); POWER
        # pseries logs nothing: 50 benign info lines written during the run
        # are records on every kernel, and no problem.
        def benign_lines():
            for _ in range(50):
                write_kmsg("cpuhp-stress test: a benign line", level=6)

        # A 5 ms interval keeps the CPU offline for several polls: at the
        # default, a ppc64el guest's 100 operations went by unseen, nothing
        # was written, and the reader rightly read nothing.
        rc, out, err = self.run_writing_kmsg(self.args("--iterations", "100", "--interval", "5ms"),
                                             1, benign_lines, 300)
        self.assertEqual(rc, 0, f"stdout:\n{out}\nstderr:\n{err}")
        r = self.load()
        h = r["timing_sources"]["kmsg_health"]
        self.assertEqual(h["status"], "ok", h)
        self.assertEqual(h["events"], 0, h)
        self.assertTrue(all(v == 0 for v in h["counts"].values()), h)
        self.assertIsNone(h["first_event"])
        self.assertGreaterEqual(h["records_read"], 50, h)
        self.assertEqual(h["records_lost"], 0)
        self.assertEqual(h["taint"]["added_flags"], "")
        self.assertIn("kernel log: 0 problem lines", out)

    def run_and_inject(self, *extra):
        """Writes TEST_LINE to the kernel log once the run has taken the CPU
        offline 5 times (its sources, the kernel log reader among them, are
        running by then, and operation 8 or later is under way; a fixed
        delay from the start was too short for an emulated guest)."""
        return self.run_writing_kmsg(self.args("--iterations", "0", "--interval", "5ms", *extra),
                                     5, lambda: write_kmsg(TEST_LINE), 120)

    def run_writing_kmsg(self, args, offlines, write, timeout):
        """Runs the tool; calls write() once it has taken the CPU offline
        `offlines` times, and fails the test if the run ended first.
        Returns (exit code, stdout, stderr)."""
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        done = threading.Event()
        wrote = []

        def writer():
            if after_offlines(offlines, done):
                write()
                wrote.append(True)

        t = threading.Thread(target=writer)
        t.start()
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            done.set()
            t.join()
        self.assertTrue(wrote, f"the run ended before this test saw cpu{CPU} go offline "
                        f"{offlines} times: nothing was written to /dev/kmsg\nstdout:\n{out}")
        return proc.returncode, out, err

    def test_a_warning_mid_run_is_caught_with_its_operation(self):
        rc, out, err = self.run_and_inject("--duration", "3s")
        self.assertEqual(rc, 0, out + err)
        r = self.load()
        self.assertEqual(r["run"]["stop_reason"], "duration")
        h = r["timing_sources"]["kmsg_health"]
        self.assertEqual(h["counts"]["warning"], 1, h)
        f = h["first_event"]
        self.assertEqual(f["kind"], "warning")
        self.assertEqual(f["message"], TEST_LINE)
        self.assertEqual(f["facility"], 1)  # written by user space
        self.assertEqual(f["level"], 4)
        # Injected about 1 s into a 3 s run of operations every ~5-30 ms.
        self.assertIsInstance(f["op_index"], int)
        self.assertGreater(f["op_index"], 5)
        self.assertLess(f["op_index"], r["totals"]["ops"] - 5)
        self.assertFalse(h["stopped_run"])
        self.assertIn("first: warning at operation", out)

    def test_stop_mode_stops_the_run_naming_the_line(self):
        t0 = time.monotonic()
        rc, out, err = self.run_and_inject("--duration", "60s", "--on-kernel-warning", "stop")
        self.assertLess(time.monotonic() - t0, 30, "the run did not stop at the warning")
        self.assertEqual(rc, 3, out + err)  # finished (stopped on an error), failure reported
        r = self.load()
        self.assertEqual(r["run"]["stop_reason"], "error")
        h = r["timing_sources"]["kmsg_health"]
        self.assertTrue(h["stopped_run"])
        self.assertEqual(h["stop_on"][-1], "warning")
        self.assertIn(f"kmsg_health: warning in kernel log at operation "
                      f"{h['first_event']['op_index']}: {TEST_LINE}", err)
        self.assertEqual(read(online_file()), "1")


if __name__ == "__main__":
    lib.main(HealthTest, kmsg_missing)
