#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""SMT on this machine's real kernel (issue 35): `cpuhp-stress list` must say
what /sys/devices/system/cpu/smt and each CPU's thread_siblings_list say.
On a machine whose SMT can be switched (the SMT guest, tests/vm/
run_real_guest.sh with CPUHP_VM_THREADS): smt/control "off" must leave the
first thread of each core online and nothing else, list must then say why it
cannot read the cores (an offline CPU has no topology), and "on" must bring
every thread back. On a machine without (this lab's host: "notsupported"),
list must say so; without an smt/ directory at all, list must say that.
Every CPU online and smt/control as found at the end.

    smt_test.py BUILD_DIR SOURCE_DIR
"""
import errno
import json
import os
import subprocess
import time

import cpuhp_testlib as lib
from cpuhp_testlib import SYS, cpulist, read


def cores_from_sysfs():
    """The sibling lists of the present CPUs, each ascending, by first thread."""
    cores, seen = [], set()
    for cpu in lib.present_cpus():
        if cpu in seen:
            continue
        core = cpulist(read(f"{SYS}/cpu{cpu}/topology/thread_siblings_list"))
        seen.update(core)
        cores.append(core)
    return cores


def fmt(cpus):
    """The kernel's list form of ascending CPU numbers ("0-1", "0,2")."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if j == i else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


class SmtTest(lib.RealCpuCase):
    prefix = "cpuhp-smt."

    def setUp(self):
        super().setUp()
        # None: a kernel without CONFIG_HOTPLUG_SMT (no smt/ directory).
        self.control = read(f"{SYS}/smt/control") if os.path.exists(f"{SYS}/smt/control") else None

    def tearDown(self):
        # Back to the mode it had, then every CPU this test may have left.
        if self.control is not None and read(f"{SYS}/smt/control") != self.control:
            with open(f"{SYS}/smt/control", "w") as f:
                f.write(self.control)
        for cpu in lib.hotpluggable_cpus():
            lib.bring_online(cpu)
        super().tearDown()

    def smt_line(self):
        p = self.run_tool("list", check=0)
        lines = [l for l in p.stdout.splitlines() if l.startswith("smt: ")]
        self.assertEqual(len(lines), 1, p.stdout)
        print(f"list, online {read(f'{SYS}/online')}: {lines[0]}")
        return lines[0]

    def set_control(self, mode):
        with open(f"{SYS}/smt/control", "w") as f:
            f.write(mode)
        self.assertEqual(read(f"{SYS}/smt/control"), mode)

    def test_list_says_what_sysfs_says(self):
        cores = cores_from_sysfs()
        threads = max(len(c) for c in cores)
        # The SMT guest says how many threads per core it was booted with: a
        # kernel that saw fewer would make the switch below test nothing.
        want_threads = os.environ.get("CPUHP_EXPECT_SMT_THREADS", "")
        if want_threads:
            self.assertEqual(threads, int(want_threads), f"cores {cores}")
        line = self.smt_line()
        if self.control is None:
            self.assertEqual(line, f"smt: unknown: {SYS}/smt/control: absent: this kernel has no "
                                   "SMT control (CONFIG_HOTPLUG_SMT)")
            return
        want = (f"smt: control {self.control}, active {read(f'{SYS}/smt/active')}, {threads} "
                f"thread{'' if threads == 1 else 's'} per core, cores {' '.join(fmt(c) for c in cores)}")
        self.assertTrue(line.startswith(want), f"{line!r} does not start with {want!r}")
        switchable = self.control in ("on", "off") or self.control.isdigit()
        if not switchable or threads == 1:
            self.assertRegex(line, r"; (smt/control is |no SMT: every core has one thread)", line)
        else:
            self.assertNotIn(";", line)

    def test_control_off_and_on(self):
        cores = cores_from_sysfs()
        threads = max(len(c) for c in cores)
        if self.control is None:
            with self.assertRaises(FileNotFoundError):
                open(f"{SYS}/smt/control", "w").close()
            return
        if self.control in ("notsupported", "notimplemented", "forceoff"):
            # The kernel refuses the write as list says it cannot switch
            # (control_store: ENODEV, EPERM for forceoff), and nothing moves.
            online = read(f"{SYS}/online")
            with self.assertRaises(OSError) as e:
                with open(f"{SYS}/smt/control", "w") as f:
                    f.write("off")
            self.assertEqual(e.exception.errno,
                             errno.EPERM if self.control == "forceoff" else errno.ENODEV)
            self.assertEqual(read(f"{SYS}/online"), online)
            return
        self.assertEqual(self.control, "on", "the SMT guest boots with every thread on")
        self.assertGreater(threads, 1)
        self.set_control("off")
        self.assertEqual(read(f"{SYS}/smt/active"), "0")
        self.assertEqual(cpulist(read(f"{SYS}/online")), sorted(c[0] for c in cores))
        line = self.smt_line()
        self.assertRegex(line, r"^smt: unknown: .*/topology/thread_siblings_list: absent: cpu\d+ "
                               r"is offline .*: bring every CPU online first$")
        self.set_control("on")
        self.assertEqual(read(f"{SYS}/smt/active"), "1")
        self.assertEqual(cpulist(read(f"{SYS}/online")), lib.present_cpus())
        self.assertTrue(self.smt_line().startswith(
            f"smt: control on, active 1, {threads} threads per core, cores "
            f"{' '.join(fmt(c) for c in cores)}"))

    def run_pattern(self, method, switches):
        cfg = os.path.join(self.dir, f"smt-{method}.json")
        with open(cfg, "w") as f:
            json.dump({"pattern": "smt", "smt": {"switches": switches, "method": method}}, f)
        return self.run_tool("run", "--config", cfg, "--seed", "1", "--state-dir", self.state,
                             "--report", self.report, "--progress", "never")

    def test_smt_pattern(self):
        """run --pattern smt, both methods: every switch timed whole in the
        report, the per-CPU kernel steps of an smt/control write joined to
        it, the verdict a pass in every format; on a machine that cannot
        switch, refused in one line before any write."""
        cores = cores_from_sysfs()
        threads = max(len(c) for c in cores)
        siblings = sum(len(c) - 1 for c in cores)
        for method in ("threads", "control"):
            with self.subTest(method=method):
                if os.path.exists(self.report):
                    os.unlink(self.report)
                p = self.run_pattern(method, 4)
                if self.control != "on" or threads == 1:
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    err = [l for l in p.stderr.splitlines() if "error" in l]
                    self.assertEqual(len(err), 1, p.stderr)
                    self.assertIn("/pattern: smt: ", err[0])
                    self.assertFalse(os.path.exists(self.report))
                    continue
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                r = self.load_report()
                self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
                # threads: one write a sibling a switch; control: one a switch.
                self.assertEqual(r["totals"]["ops"], 4 * (siblings if method == "threads" else 1))
                self.assertEqual(r["totals"]["failed"], 0)
                self.assertEqual(r["totals"]["readback_mismatches"], 0)
                smt = r["smt"]
                print(f"smt switches, {method}: {json.dumps(smt['to'])}")
                self.assertEqual((smt["method"], smt["incomplete"]), (method, 0))
                for i, mode in enumerate(("off", "on")):
                    row = smt["to"][i]
                    self.assertEqual((row["mode"], row["switches"], row["failed_writes"]),
                                     (mode, 2, 0))
                    self.assertEqual(row["cpus_per_switch_min"], siblings)
                    self.assertEqual(row["cpus_per_switch_max"], siblings)
                    self.assertGreater(row["min_ns"], 0)
                self.assertIn(f"SMT switches ({method} method):", p.stdout)
                self.assertEqual(read(f"{SYS}/smt/control"), "on")
                tp = r["timing_sources"].get("tracepoints", {})
                print(f"{method}: tracepoints {tp.get('status')}, ops with steps "
                      f"{tp.get('ops_with_steps')}, kmod {r['timing_sources'].get('kmod', {}).get('status')}"
                      f", bpf {r['timing_sources'].get('bpf', {}).get('status')}")
                if method == "control" and tp.get("status") == "ok":
                    # Every write moved every sibling: its steps are theirs.
                    self.assertEqual(tp["ops_with_steps"], 4, json.dumps(tp)[:2000])
                    cpus = {op["cpu"] for op in tp.get("first_operations", [])}
                    self.assertEqual(cpus, {-1})
                for name in ("kmod", "bpf"):
                    src = r["timing_sources"].get(name, {})
                    if method == "control" and src.get("status") == "ok":
                        # The kernel phases of every CPU the write moved.
                        ops = src["ops"]
                        self.assertEqual({op["cpu"] for op in ops}, {-1}, name)
                        self.assertEqual(len(ops), 4, name)
                        self.assertGreaterEqual(src["records"]["joined"], 4 * siblings, name)
                for fmt in ("text", "markdown", "junit", "kcidb", "lava", "html"):
                    q = self.run_tool("report", "--format", fmt, self.report)
                    self.assertEqual(q.returncode, 0, f"{method} {fmt}:\n{q.stdout}{q.stderr}")
                    if fmt in ("markdown", "html"):
                        self.assertIn(f"SMT switches ({method} method", q.stdout)
                    if fmt == "lava":
                        self.assertIn("smt_to_off_p50", q.stdout)

    def test_smt_control_restored_after_kill(self):
        """kill -9 during the control method: `restore` writes smt/control
        back before the online mask, and every CPU is as found."""
        cores = cores_from_sysfs()
        if self.control != "on" or max(len(c) for c in cores) == 1:
            return  # test_smt_pattern covers the refusal
        cfg = os.path.join(self.dir, "forever.json")
        with open(cfg, "w") as f:
            json.dump({"pattern": "smt", "smt": {"switches": 0, "method": "control"}}, f)
        proc = subprocess.Popen([lib.BIN, "run", "--config", cfg, "--state-dir", self.state,
                                 "--report", self.report, "--progress", "never"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Killed once the state file exists and smt/control has said "off".
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                os.path.exists(os.path.join(self.state, "state.json"))
                and read(f"{SYS}/smt/control") == "off"):
            time.sleep(0.005)
        proc.kill()
        proc.wait()
        with open(os.path.join(self.state, "state.json")) as f:
            self.assertEqual(json.load(f)["smt_control"], "on")
        p = self.run_tool("restore", "--state-dir", self.state, check=0)
        print(p.stdout.strip())
        self.assertIn("smt/control on", p.stdout)
        self.assertEqual(read(f"{SYS}/smt/control"), "on")
        self.assertEqual(read(f"{SYS}/online"), self.start_online)

    def test_smt_soak_resumes_after_kill(self):
        """A soak of the smt pattern killed with -9 after a checkpoint, both
        methods: the same `run` again restores the start mask and mode,
        resumes, and ends with all its switches (the one the restore undid
        redone, or counted incomplete if it was in progress), no failed
        write, a pass in every format, every CPU and smt/control as found."""
        cores = cores_from_sysfs()
        if self.control != "on" or max(len(c) for c in cores) == 1:
            return  # test_smt_pattern covers the refusal
        siblings = sum(len(c) - 1 for c in cores)
        switches = 40
        for method in ("threads", "control"):
            with self.subTest(method=method):
                state = os.path.join(self.dir, f"soak-{method}")
                report = os.path.join(self.dir, f"soak-{method}.json")
                cfg = os.path.join(self.dir, f"soak-{method}.cfg.json")
                with open(cfg, "w") as f:
                    json.dump({"pattern": "smt", "checkpoint_interval": "100ms",
                               "smt": {"switches": switches, "method": method}}, f)
                argv = [lib.BIN, "run", "--config", cfg, "--state-dir", state, "--report",
                        report, "--progress", "never"]
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                ckpt = os.path.join(state, "checkpoint.json")
                # Killed once a checkpoint has some switches behind it.
                per_switch = siblings if method == "threads" else 1
                done, deadline = 0, time.monotonic() + 120
                while proc.poll() is None and time.monotonic() < deadline:
                    try:
                        with open(ckpt) as f:
                            done = json.load(f)["next_index"]
                    except (OSError, ValueError, KeyError):
                        done = 0
                    if done >= 3 * per_switch:
                        break
                    time.sleep(0.005)
                proc.kill()
                proc.wait()
                self.assertEqual(proc.returncode, -9, "the run ended before the kill")
                p = self.run_tool(*argv[1:], check=0)
                self.assertIn("resuming the run", p.stderr)
                r = self.load_report(report)
                smt = r["smt"]
                print(f"{method}: killed after checkpoint at op {done}, resumed at "
                      f"{r['soak']['restarts'][0]['resumed_at_index']}; ops {r['totals']['ops']}"
                      f", switches {[row['switches'] for row in smt['to']]}, incomplete "
                      f"{smt['incomplete']}")
                self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
                self.assertEqual([x["kind"] for x in r["soak"]["restarts"]], ["crash"])
                self.assertEqual(r["totals"]["failed"], 0)
                self.assertEqual(r["totals"]["readback_mismatches"], 0)
                self.assertEqual(sum(row["switches"] for row in smt["to"]) + smt["incomplete"],
                                 switches, json.dumps(smt)[:1000])
                self.assertLessEqual(smt["incomplete"], 1)
                for row in smt["to"]:
                    self.assertEqual(row["cpus_per_switch_min"], siblings, row["mode"])
                    self.assertEqual(row["failed_writes"], 0, row["mode"])
                for fmt in ("text", "markdown", "junit", "kcidb", "lava", "html"):
                    q = self.run_tool("report", "--format", fmt, report)
                    self.assertEqual(q.returncode, 0, f"{method} {fmt}:\n{q.stdout}{q.stderr}")
                self.assertEqual(read(f"{SYS}/smt/control"), "on")
                self.assertEqual(read(f"{SYS}/online"), self.start_online)
                self.assertFalse(os.path.exists(ckpt))


if __name__ == "__main__":
    lib.main(SmtTest)
