# SPDX-License-Identifier: GPL-2.0
"""Shared harness for the tests that drive the built cpuhp-stress binary on
this machine's real hotpluggable CPU (CPUHP_TEST_CPU, else found at run
time: the lowest-numbered CPU other than cpu0 with an `online` file; cpu0
only when it is the one such CPU. cpu1 on x86; arm64/PSCI and POWER usually
let cpu0 go too, so nothing here assumes cpu0 is fixed). Every such test file is run as

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
import time
import unittest


def read(path):
    with open(path) as f:
        return f.read().strip()

SYS = "/sys/devices/system/cpu"


def cpulist(text):
    """A kernel CPU list ("0-3,5") as numbers."""
    cpus = []
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


BIN = SRC = None  # set by main() from the command line


def present_cpus(sys_root=SYS):
    """The CPU numbers with a cpuN directory, in order."""
    try:
        names = os.listdir(sys_root)
    except OSError:
        return []
    return sorted(int(d[3:]) for d in names if d.startswith("cpu") and d[3:].isdigit())


def hotpluggable_cpus(sys_root=SYS):
    """CPUs the kernel lets user space take offline (they have an online file)."""
    return [c for c in present_cpus(sys_root) if os.path.exists(f"{sys_root}/cpu{c}/online")]


def find_test_cpu(sys_root=SYS, env=os.environ):
    """The CPU the real tests toggle: CPUHP_TEST_CPU, else the lowest
    hotpluggable CPU other than cpu0 (cpu0 keeps the boot-time duties on
    every architecture even where it can go), else cpu0 if it is the only
    hotpluggable one, else 1 (skip_reason then says why it cannot run)."""
    if env.get("CPUHP_TEST_CPU"):
        return int(env["CPUHP_TEST_CPU"])
    hot = hotpluggable_cpus(sys_root)
    rest = [c for c in hot if c != 0]
    return (rest or hot or [1])[0]


def find_fixed_cpu(sys_root=SYS):
    """A present CPU without an online file (the kernel never takes it
    offline: cpu0 on x86), or None when every CPU is hotpluggable."""
    fixed = [c for c in present_cpus(sys_root) if not os.path.exists(f"{sys_root}/cpu{c}/online")]
    return fixed[0] if fixed else None


def find_other_cpu(cpu, sys_root=SYS):
    """An online CPU other than cpu that stays online while cpu is toggled,
    preferring one without an online file; None on a one-CPU machine."""
    fixed = find_fixed_cpu(sys_root)
    if fixed is not None and fixed != cpu:
        return fixed
    for c in present_cpus(sys_root):
        if c == cpu:
            continue
        try:
            if read(f"{sys_root}/cpu{c}/online") == "1":
                return c
        except OSError:
            return c
    return None


CPU = find_test_cpu()
# Why a case that needs a non-hotpluggable CPU cannot run here (None: it can).
FIXED_CPU = find_fixed_cpu()
NO_FIXED_CPU = None if FIXED_CPU is not None else (
    f"every CPU here has an online file ({SYS}/cpu*/online): no non-hotpluggable CPU to refuse")


def online_file(cpu=CPU):
    return f"{SYS}/cpu{cpu}/online"


def wait_online_state(want, timeout, proc=None, cpu=CPU):
    """Reads cpuN/online every 5 ms until it says WANT ("0" or "1"), TIMEOUT
    seconds pass (monotonic clock) or PROC (a Popen) has exited; returns the
    read that ended the wait. Callers decide on that read: a second one could
    already see the next write's result (vm_real_tests_arm64 failed so once)."""
    deadline = time.monotonic() + timeout
    state = read(online_file(cpu))
    while state != want and time.monotonic() < deadline and (proc is None or proc.poll() is None):
        time.sleep(0.005)
        state = read(online_file(cpu))
    return state


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
    # CPUHP_TEST_ONLY=test_a,test_b: only these (tests/vm/guest_real.sh's
    # NAME:test_a+test_b); a name that is not one of case's tests (a helper, a
    # typo) is an error, not a silent skip.
    only = [n for n in os.environ.get("CPUHP_TEST_ONLY", "").split(",") if n]
    missing = [n for n in only if not (n.startswith("test") and callable(getattr(case, n, None)))]
    if missing:
        sys.exit(f"CPUHP_TEST_ONLY: {case.__name__} has no {', '.join(missing)}")
    loader = unittest.defaultTestLoader
    suite = (unittest.TestSuite(case(n) for n in only) if only
             else loader.loadTestsFromTestCase(case))
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(res.failures) + len(res.errors)
    print(f"{res.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
