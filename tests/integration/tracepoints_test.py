#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the tracepoints timing source on this machine's real
hotpluggable CPU (cpu1; CPUHP_TEST_CPU overrides): per-state kernel timing in
the report, the state sum within the write latency, events of the dying CPU's
cpuhp/N thread kept, the kept tracefs instance left stopped and silent after
the run and reused by the next one, a run's own instance (when another holds
the kept one) gone after the run, and both removed by `restore` after a
kill -9. Needs root, a hotpluggable CPU and the cpuhp events;
otherwise skipped with the reason (exit 77).

    tracepoints_test.py BUILD_DIR SOURCE_DIR
"""
import fcntl
import glob
import json
import os
import subprocess

import cpuhp_testlib as lib
from cpuhp_testlib import CPU, cpulist, online_file, read


def tracefs():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, typ = line.split()[:3]
            if typ == "tracefs":
                return mnt
    # Not mounted: the tool mounts it itself; the standard place.
    return "/sys/kernel/tracing"


def our_instances():
    """The runs' own instances (cpuhp-stress-<pid>), not the kept one."""
    return sorted(i for i in glob.glob(f"{tracefs()}/instances/cpuhp-stress-*")
                  if not i.endswith("-kept"))


def kept_instance():
    return f"{tracefs()}/instances/cpuhp-stress-kept"


class HoldKept:
    """Holds the kept instance as a running cpuhp-stress would (flock)."""

    def __enter__(self):
        os.makedirs(kept_instance(), exist_ok=True)
        self.fd = os.open(kept_instance(), os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def assert_silent(case, inst):
    """Stopped and every cpuhp event disabled: it records nothing."""
    case.assertEqual(read(f"{inst}/tracing_on"), "0")
    for e in ("cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"):
        case.assertEqual(read(f"{inst}/events/cpuhp/{e}/enable"), "0", e)


class TracepointsTest(lib.RealCpuCase):
    prefix = "cpuhp-tp."

    def setUp(self):
        super().setUp()
        self.instances_before = our_instances()

    def run_traced(self, ops, *extra):
        p = self.run_tool("run", "--pattern", "roundrobin", "--cpus", str(CPU), "--seed", "1",
                          "--iterations", str(ops), "--state-dir", self.state, "--report",
                          self.report, "--progress", "never", *extra, check=0)
        return p, self.load_report(restored=False)

    def test_kernel_states_in_report(self):
        ops = 20
        oplog = os.path.join(self.dir, "ops.jsonl")
        p, r = self.run_traced(ops, "--tracepoints", "--oplog", oplog)
        tp = r["timing_sources"]["tracepoints"]
        if tp["status"] == "unavailable":
            self.skipTest("tracepoints unavailable here: " + tp["reason"])
        self.assertEqual(tp["status"], "ok")
        self.assertEqual(tp["ops_with_steps"], ops)
        self.assertEqual(tp["ops_without_steps"], 0)
        self.assertEqual(tp["lost_events"]["total"], 0)
        self.assertEqual(tp["events"]["unmatched_exits"], 0)
        self.assertGreater(tp["events"]["parsed"], 50 * ops)  # ~95 per write here

        states = {(s["function"], s["direction"]): s for s in tp["kernel_states"]}
        td = states[("takedown_cpu", "offline")]
        self.assertEqual(td["state"], "cpu:teardown")
        self.assertEqual(td["where"], "control")
        self.assertEqual(td["count"], ops // 2)
        self.assertGreater(td["min_ns"], 10_000)  # stop_machine: never 10 us
        # Events of the dying CPU's own cpuhp/N thread: one per offline.
        sd = states[("sched_cpu_deactivate", "offline")]
        self.assertEqual(sd["state"], "sched:active")
        self.assertEqual(sd["where"], "cpuhp_thread")
        self.assertEqual(sd["count"], ops // 2)
        sa = states[("sched_cpu_activate", "online")]
        self.assertEqual(sa["count"], ops // 2)

        phases = {(ph["name"], ph["direction"]): ph for ph in tp["phases"]}
        for key in (("takedown_cpu", "offline"), ("sched_cpu_deactivate", "offline")):
            self.assertIn(key, phases)
            rows = phases[key]["per_online_count"]
            self.assertEqual(sum(row["count"] for row in rows), ops // 2)
        self.assertTrue(("bringup_cpu", "online") in phases or
                        ("cpuhp_bringup_ap", "online") in phases, list(phases))

        # The state sum never exceeds the write, and matches the operation log.
        with open(oplog) as f:
            log = {l["i"]: l for l in map(json.loads, f)}
        self.assertEqual(len(tp["first_operations"]), ops)
        for op in tp["first_operations"]:
            self.assertLessEqual(op["state_sum_ns"], op["write_ns"], op)
            self.assertGreater(op["state_sum_ns"], 0, op)
            self.assertEqual(op["write_ns"], log[op["i"]]["duration_ns"], op)
            self.assertEqual(op["state_sum_ns"] + op["unaccounted_ns"], op["write_ns"])
        for d in ("offline", "online"):
            self.assertLessEqual(tp["per_operation"][d]["max_state_sum_fraction"], 1.0)
        shares = sum(s["share"] for s in tp["kernel_states"])
        self.assertLessEqual(shares, 1.0 + 1e-9)

        self.assertTrue(tp["instance_kept"])
        self.assertFalse(tp["instance_removed"])
        self.assertNotIn("instance_error", tp)
        self.assertEqual(tp["instance"], kept_instance())
        assert_silent(self, tp["instance"])
        self.assertEqual(read(f"{tp['instance']}/trace_clock").split("[")[1][:5], "mono]")
        self.assertEqual(our_instances(), self.instances_before)
        self.assertIn("kernel states (tracepoints)", p.stdout)
        self.assertIn("cpu:teardown", p.stdout)

        # The next run reuses it, with none of the first run's events and a
        # lost-event count of its own.
        _, r2 = self.run_traced(4, "--tracepoints")
        tp2 = r2["timing_sources"]["tracepoints"]
        self.assertEqual(tp2["status"], "ok")
        self.assertTrue(tp2["instance_reused"])
        self.assertEqual(tp2["ops_with_steps"], 4)
        self.assertEqual(tp2["ops_without_steps"], 0)
        self.assertEqual(tp2["events"]["unmatched_exits"], 0)
        self.assertEqual(tp2["lost_events"]["total"], 0)
        self.assertLess(tp2["events"]["parsed"], tp["events"]["parsed"] * 4 // ops + 200)

    def test_drainer_thread_joins_every_write_while_the_next_is_in_flight(self):
        # A few seconds of writes: the names drain after the first offline and
        # online, drains each second while a write is in flight, the last one.
        # Timed, not counted: 300 writes took 4.6 s on one host and 0.67 s on
        # another (2 drains: names and the last).
        _, r = self.run_traced(0, "--tracepoints", "--duration", "3s")
        ops = r["totals"]["ops"]
        self.assertEqual(r["run"]["stop_reason"], "duration")
        self.assertGreater(ops, 2)
        tp = r["timing_sources"]["tracepoints"]
        if tp["status"] == "unavailable":
            self.skipTest("tracepoints unavailable here: " + tp["reason"])
        self.assertEqual(tp["status"], "ok")
        self.assertTrue(tp["drainer"].startswith("SCHED_IDLE"), tp["drainer"])
        # Pinned to the CPUs the run leaves online, never the one it toggles.
        with open("/sys/devices/system/cpu/online") as f:
            others = [c for c in cpulist(f.read()) if c != CPU]
        if others:
            pinned = [int(c) for c in tp["drainer"].split(" on CPU ")[1].split(",")]
            self.assertEqual(pinned, others)
        # Where the drainer's CPU never idles (cpu1 hotplugging at ~650
        # writes/s on a 2-CPU host) the writer drains itself after 2 s
        # without a finished drain; either way nothing is lost.
        # The ring holds ~850 writes' events on the writer's CPU there: a
        # drain is also due by count, not only by the clock.
        how = {k: tp[k] for k in ("drains", "inline_drains", "drainer_boosts", "buffer_kb_per_cpu")}
        how["ops"] = ops
        how["elapsed_ns"] = r["run"]["elapsed_ns"]
        self.assertEqual(tp["lost_events"]["total"], 0, (tp["lost_events"], how))
        self.assertLessEqual(tp["inline_drains"], tp["drains"])
        self.assertGreaterEqual(tp["drains"], 3, how)
        self.assertGreater(tp["drain_cpu_ns"], 0)
        ev = tp["events"]
        self.assertEqual((ev["unmatched_exits"], ev["unmatched_enters"], ev["open_at_end"],
                          ev["steps_outside_operations"]), (0, 0, 0, 0), how)
        self.assertEqual(tp["ops_with_steps"], ops)
        self.assertEqual(tp["ops_without_steps"], 0)
        self.assertEqual(tp["unnamed_callbacks"], 0)

    def test_a_held_kept_instance_makes_an_own_one(self):
        with HoldKept():
            _, r = self.run_traced(2, "--tracepoints")
        tp = r["timing_sources"]["tracepoints"]
        self.assertEqual(tp["status"], "ok")
        self.assertFalse(tp["instance_kept"])
        self.assertRegex(tp["instance"], r"/instances/cpuhp-stress-[0-9]+$")
        self.assertTrue(tp["instance_removed"])
        self.assertFalse(os.path.exists(tp["instance"]))
        self.assertEqual(tp["ops_with_steps"], 2)
        self.assertEqual(our_instances(), self.instances_before)

    def test_off_leaves_no_section(self):
        _, r = self.run_traced(2, "--no-tracepoints")
        self.assertNotIn("tracepoints", r["timing_sources"])
        self.assertEqual(r["config"]["tracepoints"], False)

    def kill9_run(self):
        p = subprocess.Popen([lib.BIN, "run", "--cpus", str(CPU), "--iterations", "0",
                              "--state-dir", self.state, "--report", self.report,
                              "--interval", "200ms", "--progress", "never", "--tracepoints"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lib.wait_online_state("0", 20, proc=p)
        p.kill()
        p.wait()
        return p.pid

    def test_kill9_leaves_instance_restore_removes_it(self):
        # A run's own instance (the kept one held): restore removes it, and
        # not the kept one while it is held.
        with HoldKept():
            pid = self.kill9_run()
            inst = f"{tracefs()}/instances/cpuhp-stress-{pid}"
            self.assertTrue(os.path.isdir(inst), "no instance while the run was going")
            r = self.run_tool("restore", "--state-dir", self.state, check=0)
            self.assertIn(f"removed tracefs instance {inst}", r.stdout)
            self.assertNotIn("kept between runs", r.stdout)
            self.assertFalse(os.path.exists(inst))
            self.assertTrue(os.path.isdir(kept_instance()))
        self.assertEqual(read(online_file()), "1")
        # The kept instance, left recording by a killed run: restore removes it.
        self.kill9_run()
        self.assertEqual(read(f"{kept_instance()}/tracing_on"), "1")
        r = self.run_tool("restore", "--state-dir", self.state, check=0)
        self.assertIn(f"removed tracefs instance {kept_instance()} (kept between runs)", r.stdout)
        self.assertFalse(os.path.exists(kept_instance()))
        self.assertEqual(read(online_file()), "1")

if __name__ == "__main__":
    lib.main(TracepointsTest)
