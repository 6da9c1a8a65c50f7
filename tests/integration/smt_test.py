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

    def test_smt_pattern(self):
        """run --pattern smt: every switch timed whole in the report; on a
        machine that cannot switch, refused in one line before any write."""
        cfg = os.path.join(self.dir, "smt.json")
        with open(cfg, "w") as f:
            json.dump({"pattern": "smt", "smt": {"switches": 4}}, f)
        p = self.run_tool("run", "--config", cfg, "--seed", "1", "--state-dir", self.state,
                          "--report", self.report, "--progress", "never")
        cores = cores_from_sysfs()
        threads = max(len(c) for c in cores)
        if self.control != "on" or threads == 1:
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            err = [l for l in p.stderr.splitlines() if "error" in l]
            self.assertEqual(len(err), 1, p.stderr)
            self.assertIn("/pattern: smt: ", err[0])
            self.assertFalse(os.path.exists(self.report))
            return
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        r = self.load_report()
        self.assertEqual(r["run"]["stop_reason"], "schedule_complete")
        siblings = sum(len(c) - 1 for c in cores)
        self.assertEqual(r["totals"]["ops"], 4 * siblings)
        self.assertEqual(r["totals"]["failed"], 0)
        smt = r["smt"]
        print(f"smt switches: {json.dumps(smt['to'])}")
        self.assertEqual(smt["incomplete"], 0)
        for i, mode in enumerate(("off", "on")):
            row = smt["to"][i]
            self.assertEqual((row["mode"], row["switches"], row["failed_writes"]), (mode, 2, 0))
            self.assertEqual(row["cpus_per_switch_min"], siblings)
            self.assertEqual(row["cpus_per_switch_max"], siblings)
            self.assertGreater(row["min_ns"], 0)
        self.assertIn("SMT switches (threads method):", p.stdout)
        self.assertEqual(read(f"{SYS}/smt/control"), "on")


if __name__ == "__main__":
    lib.main(SmtTest)
