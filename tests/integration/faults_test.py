#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Fault injection through cpuN/hotplug/fail on this machine's real cpu1
(CPUHP_TEST_CPU overrides): the shipped fault sweep (every armable state,
both directions, twice) rolls back cleanly and its learned sets agree with
what the kernel says when this test asks it directly; a roundrobin run with
a fault rate mixes injected and normal operations without counting the
injected ones as errors; restore clears a fail left armed; a bad state name
is a one-line error. Needs root and a hotpluggable CPU with hotplug/fail;
otherwise skipped (exit 77). Run under flock /run/lock/cpuhp-real-cpu.lock
(ctest does).

    faults_test.py BUILD_DIR SOURCE_DIR
"""
import errno
import json
import os
import subprocess
import sys
import tempfile
import unittest

SYS = "/sys/devices/system/cpu"
from cpuhp_testlib import CPU  # noqa: E402  (CPUHP_TEST_CPU, else found at run time)
BIN = SRC = None


def read(path):
    with open(path) as f:
        return f.read().strip()


def hp(name, cpu=CPU):
    return f"{SYS}/cpu{cpu}/hotplug/{name}"


def write_errno(path, text):
    """0, or the errno of writing text to path."""
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return 0
    except OSError as e:
        return e.errno


def state_table():
    table = {}
    for line in read(f"{SYS}/hotplug/states").splitlines():
        number, name = line.split(":", 1)
        table[int(number)] = name.strip()
    return table


def all_fail_files():
    out = {}
    for d in sorted(os.listdir(SYS)):
        if d.startswith("cpu") and d[3:].isdigit() and os.path.exists(f"{SYS}/{d}/hotplug/fail"):
            out[d] = read(f"{SYS}/{d}/hotplug/fail")
    return out


def skip_reason():
    if os.geteuid() != 0:
        return "not root: real hotplug needs root"
    if not os.access(f"{SYS}/cpu{CPU}/online", os.W_OK):
        return f"cpu{CPU} cannot be hotplugged here"
    if not os.path.exists(hp("fail")) or not os.path.exists(f"{SYS}/hotplug/states"):
        return f"this kernel has no {hp('fail')} or hotplug/states"
    return None


class FaultsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-faults.")
        self.dir = self.tmp.name
        self.state = os.path.join(self.dir, "state")
        self.report = os.path.join(self.dir, "report.json")
        self.start_online = read(f"{SYS}/online")
        self.assertEqual(read(hp("fail")), "-1", "a fail was armed before the test")

    def tearDown(self):
        left_online = read(f"{SYS}/online")
        left_fail = all_fail_files()
        write_errno(hp("fail"), "-1")
        if read(f"{SYS}/cpu{CPU}/online") != "1":
            write_errno(f"{SYS}/cpu{CPU}/online", "1")
        self.tmp.cleanup()
        self.assertEqual(left_online, self.start_online, "a CPU was left offline")
        self.assertEqual(set(left_fail.values()), {"-1"}, f"fail left armed: {left_fail}")

    def run_daemon(self, config, *extra):
        path = os.path.join(self.dir, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        args = [BIN, "run", "--config", path, "--cpus", str(CPU), "--seed", "1",
                "--state-dir", self.state, "--report", self.report, "--progress", "never", *extra]
        return subprocess.run(args, capture_output=True, text=True, timeout=300)

    def load(self):
        v = subprocess.run(["/usr/bin/python3", f"{SRC}/tests/validate_report.py",
                            f"{SRC}/daemon/report/schema/report.schema.json", self.report],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        with open(self.report) as f:
            return json.load(f)

    def test_sweep_rolls_back_every_armable_state_both_ways(self):
        with open(f"{SRC}/configs/fault-sweep.json") as f:
            config = json.load(f)
        self.assertEqual(config["faults"]["repeats"], 2)
        p = self.run_daemon(config, "--no-tracepoints")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        r = self.load()
        f = r["faults"]
        self.assertEqual(f["status"], "ok", f)
        self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
        self.assertTrue(f["cleared_at_end"])
        self.assertEqual(f["failures"], [])
        t = f["totals"]
        self.assertEqual((t["not_rolled_back"], t["unverified"], t["arm_refused"]), (0, 0, 0), t)
        self.assertIn("fault injection (sweep)", p.stdout)

        table = state_table()
        learned = {l["direction"]: l for l in f["learned"] if l["cpu"] == CPU}
        self.assertEqual(set(learned), {"offline", "online"})
        states = {(s["state"], s["direction"]): s for s in f["states"]}
        for d, l in learned.items():
            refused = {n for ns in l["refused"].values() for n in ns}
            # Every state of the table was asked about, once.
            self.assertEqual(sorted(refused | set(l["armable"])), sorted(table), d)
            self.assertFalse(refused & set(l["armable"]), d)
            self.assertEqual(set(l["refused"]), {"EINVAL"}, d)
            self.assertIn(0, refused)    # "offline": no callbacks
            self.assertIn(max(table), refused)  # "online": no callbacks
            fired = [n for n in l["armable"]
                     if n not in l["not_reached"] and n not in l["skipped_unsafe"]]
            self.assertTrue(fired, f"{d}: nothing fired")
            # With split startup (cpu:kick_ap), cpu:bringup is skipped going online.
            unsafe = [n for n in l["armable"] if d == "online" and "cpu:kick_ap" in
                      table.values() and n > next(k for k, v in table.items()
                                                  if v == "cpu:kick_ap")
                      and n <= next(k for k, v in table.items() if v == "cpu:bringup")]
            self.assertEqual(l["skipped_unsafe"], unsafe, d)
            for n in unsafe:
                self.assertNotIn((n, d), states)
            for n in fired:
                s = states[(n, d)]
                self.assertEqual((s["injected"], s["rolled_back"]), (2, 2), s)
                self.assertEqual(s["errnos"], {"EAGAIN": 2}, s)
                self.assertEqual(s["name"], table[n])
            for n in l["not_reached"]:
                s = states[(n, d)]
                self.assertEqual((s["injected"], s["not_reached"], s["rolled_back"]), (1, 1, 0), s)
                self.assertEqual(s["errnos"], {"ok": 1}, s)
        # sched:active (the last state before "online") fails both ways here;
        # the STARTING section never can.
        active = next(n for n, name in table.items() if name == "sched:active")
        starting = next(n for n, name in table.items() if name == "sched:starting")
        for d in ("offline", "online"):
            self.assertEqual(states[(active, d)]["rolled_back"], 2)
            self.assertIn(starting, learned[d]["refused"]["EINVAL"])
        # The sets agree with the kernel asked directly (cpu online now:
        # the offline direction's starting state).
        for n in (active, starting, 0):
            e = write_errno(hp("fail"), str(n))
            write_errno(hp("fail"), "-1")
            self.assertEqual(e == 0, n in learned["offline"]["armable"], n)
            if e:
                self.assertEqual(e, errno.EINVAL)
        # Injected writes are not operations: the run's own ops all succeeded.
        self.assertEqual(r["totals"]["failed"], 0, r["errors"])
        self.assertEqual(r["errors"]["by_errno"], [])
        self.assertEqual(r["first_errors"], [])
        self.assertEqual(r["totals"]["ops"] % 2, 0)  # cpu1 ends where it started
        self.assertEqual(t["rolled_back"], 2 * sum(
            len(l["armable"]) - len(l["not_reached"]) - len(l["skipped_unsafe"])
            for l in learned.values()))
        # No kernel warning from any rollback.
        h = r["timing_sources"].get("kmsg_health", {})
        if h.get("status") == "ok":
            self.assertEqual(h["counts"].get("warning", 0), 0, h)
        print(f"\nsweep: {t['injected']} injected, {t['rolled_back']} rolled back and "
              f"verified, {t['not_reached']} not reached; "
              f"offline fired {len(learned['offline']['armable']) - len(learned['offline']['not_reached'])}"
              f"/{len(learned['offline']['armable'])} armable, online fired "
              f"{len(learned['online']['armable']) - len(learned['online']['not_reached'])}"
              f"/{len(learned['online']['armable'])} armable", file=sys.stderr)
        self.assertEqual(read(hp("fail")), "-1")

    def test_rate_mixes_injected_and_normal_operations(self):
        p = self.run_daemon({"pattern": "roundrobin", "iterations": 200,
                             "faults": {"rate": 0.3, "direction": "both"}})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        r = self.load()
        t = r["faults"]["totals"]
        self.assertEqual(r["totals"]["ops"], 200)
        self.assertEqual(r["totals"]["failed"], 0, r["errors"])
        self.assertEqual(r["first_errors"], [])
        self.assertEqual(t["not_rolled_back"], 0, r["faults"]["failures"])
        # 200 draws at 0.3: 60 expected; far outside 25..100 means a bug.
        self.assertGreater(t["injected"], 25)
        self.assertLess(t["injected"], 100)
        self.assertGreater(t["rolled_back"], 10)
        self.assertEqual(t["injected"], t["rolled_back"] + t["not_reached"] + t["unverified"])
        dirs = {s["direction"] for s in r["faults"]["states"] if s["rolled_back"]}
        self.assertEqual(dirs, {"offline", "online"})
        self.assertEqual(r["config"]["faults"]["rate"], 0.3)

    def test_restore_clears_a_fail_left_armed(self):
        # What a run killed between arming and clearing leaves behind.
        os.makedirs(self.state)
        with open(os.path.join(self.state, "state.json"), "w") as f:
            with open("/proc/sys/kernel/random/boot_id") as b:
                boot_id = b.read().strip()  # a mask from another boot is not applied
            json.dump({"pid": 1, "boot_id": boot_id, "started_at": "", "sysfs_root": SYS,
                       "online_at_start": self.start_online, "controlled": str(CPU),
                       "fail_may_be_armed": True}, f)
        active = next(n for n, name in state_table().items() if name == "sched:active")
        self.assertEqual(write_errno(hp("fail"), str(active)), 0)
        p = subprocess.run([BIN, "restore", "--state-dir", self.state], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"cleared hotplug/fail armed on cpu{CPU}: {active}", p.stdout)
        self.assertEqual(read(hp("fail")), "-1")
        self.assertFalse(os.path.exists(os.path.join(self.state, "state.json")))

    def test_unknown_state_name_is_one_line_and_touches_nothing(self):
        p = self.run_daemon({"faults": {"rate": 0.5, "states": ["sched:active", "no/such:state"]}})
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn('/faults/states: no hotplug state named "no/such:state" in '
                      f"{SYS}/hotplug/states", lines[0])
        self.assertFalse(os.path.exists(os.path.join(self.state, "state.json")))
        self.assertEqual(read(hp("fail")), "-1")

    def test_bad_faults_keys_are_refused_before_start(self):
        for faults, want in [({"rate": 1.5}, "/faults/rate: expected a number from 0 to 1"),
                             ({"direction": "up"}, "/faults/direction:"),
                             ({"states": []}, "/faults/states: expected \"all\""),
                             ({"repeats": 0}, "/faults/repeats: expected an integer from 1"),
                             ({"every": 3}, "/faults/every: unknown key")]:
            p = self.run_daemon({"faults": faults})
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(want, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    BIN, SRC = os.path.join(sys.argv[1], "cpuhp-stress"), sys.argv[2]
    why = skip_reason()
    if why:
        print(f"SKIPPED: {why}")
        sys.exit(77)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(FaultsTest)
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(res.failures) + len(res.errors)
    print(f"{res.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
