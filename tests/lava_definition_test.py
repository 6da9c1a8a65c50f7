# SPDX-License-Identifier: GPL-2.0
"""configs/lava/cpuhp-stress.yaml run the way LAVA's test shell runs it: the
definition's parameters as shell variables, `set -e`, the steps, the end
marker, in /bin/sh, with a `lava-test-case` that records its arguments.
apt-get, cmake, insmod and rmmod are stubs (nothing is installed; "cmake"
puts the built binary in place); the run is the sim backend; curl is real
(file:// URLs).

    lava_definition_test.py BUILD_DIR SOURCE_DIR            every stage, sim runs
    lava_definition_test.py BUILD_DIR SOURCE_DIR --module   the module step
        (LOAD_MODULE=true) against Debian's headers from tests/vm/fetch's
        cache: the command kmod/README.md documents, really run

Each case asserts that every stage has a result, whatever failed, and that
the definition reached its end.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = SRC = None
MODULE = False

STUBS = {
    # installing .deb files puts the binary where the packages would
    # STUB_APT_DEB_FAIL_ONCE=FILE: the first .deb install fails (a dependency
    # the image's stale package lists do not have), later ones install.
    "apt-get": """echo "apt-get $*" >> "$STUB_LOG"
case "$*" in *.deb*)
  if [ -n "${STUB_APT_DEB_FAIL_ONCE:-}" ] && [ ! -e "$STUB_APT_DEB_FAIL_ONCE" ]; then
    touch "$STUB_APT_DEB_FAIL_ONCE"; exit 100
  fi
  cp "$STUB_BINARY" "$STUB_INSTALLED/cpuhp-stress" ;; esac
exit "${STUB_APT_RC:-0}"
""",
    "cpuhp-probe-load": 'echo "cpuhp-probe-load $*" >> "$STUB_LOG"',
    "dkms": 'echo "dkms $*" >> "$STUB_LOG"',
    "cmake": """echo "cmake $*" >> "$STUB_LOG"
[ -n "${STUB_CMAKE_FAIL:-}" ] && exit 1
case "$1" in -S) mkdir -p build && cp "$STUB_BINARY" build/cpuhp-stress ;; esac
exit 0""",
    "insmod": 'echo "insmod $*" >> "$STUB_LOG"; exit "${STUB_INSMOD_RC:-0}"',
    "rmmod": 'echo "rmmod $*" >> "$STUB_LOG"',
    "lava-test-case": 'echo "$*" >> "$STUB_CASES"',
}

SIM = {"backend": "sim", "pattern": "roundrobin", "cpus": "1-3", "iterations": 200, "seed": 1,
       "sim": {"cpus": 4, "jitter": 0.1}}


class LavaDefinitionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cpuhp-lava.")
        t = self.t = self.tmp.name
        self.checkout = os.path.join(t, "checkout")
        os.makedirs(self.checkout)
        shutil.copytree(os.path.join(SRC, "configs"), os.path.join(self.checkout, "configs"))
        shutil.copytree(os.path.join(SRC, "kmod"), os.path.join(self.checkout, "kmod"))
        shutil.copy(os.path.join(SRC, "Kbuild"), self.checkout)
        self.bin = os.path.join(t, "bin")
        os.makedirs(self.bin)
        for name, body in STUBS.items():
            p = os.path.join(self.bin, name)
            with open(p, "w") as f:
                f.write("#!/bin/sh\n" + body + "\n")
            os.chmod(p, 0o755)
        self.installed = os.path.join(t, "usr-bin")  # what the packages install
        os.makedirs(self.installed)
        self.cases = os.path.join(t, "cases")
        self.log = os.path.join(t, "log")

    def tearDown(self):
        self.tmp.cleanup()

    def config(self, name, cfg):
        path = os.path.join(self.t, name)
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def run_definition(self, params, env=None):
        """Returns ({case: [args]}, run.sh exit, output)."""
        import yaml
        with open(os.path.join(SRC, "configs", "lava", "cpuhp-stress.yaml")) as f:
            d = yaml.safe_load(f)
        lines = ["#!/bin/sh", "###default parameters from test definition###"]
        lines += [f"{k}='{v}'" for k, v in d["params"].items()]
        lines += ["######", "###test parameters from job submission###"]
        lines += [f"{k}='{v}'" for k, v in params.items()]
        lines += ["######", "set -e", "export TESTRUN_ID=0_cpuhp-stress",
                  f"cd {self.checkout}", 'echo "<LAVA_SIGNAL_STARTRUN $TESTRUN_ID>"']
        lines += d["run"]["steps"]
        lines += ['echo "<LAVA_SIGNAL_ENDRUN $TESTRUN_ID>"']
        runsh = os.path.join(self.t, "run.sh")
        with open(runsh, "w") as f:
            f.write("\n".join(lines) + "\n")
        for p in (self.cases, self.log):
            open(p, "w").close()
        e = dict(os.environ, PATH=f"{self.bin}:{self.installed}:{os.environ['PATH']}",
                 STUB_LOG=self.log,
                 STUB_CASES=self.cases, STUB_BINARY=os.path.join(BUILD, "cpuhp-stress"),
                 CPUHP_LAVA_OUT=os.path.join(self.t, "out"), STUB_INSTALLED=self.installed)
        e.update(env or {})
        p = subprocess.run(["/bin/sh", runsh], capture_output=True, text=True, env=e, timeout=600)
        cases = {}
        with open(self.cases) as f:
            for line in f:
                parts = line.split()
                cases.setdefault(parts[0], []).append(parts[1:])
        return cases, p.returncode, p.stdout + p.stderr

    def result(self, cases, name):
        self.assertIn(name, cases, f"no test case {name}: {sorted(cases)}")
        self.assertEqual(len(cases[name]), 1, cases[name])
        args = cases[name][0]
        return args[args.index("--result") + 1]

    def assert_installed_and_loaded(self, cases):
        for name, want in (("install", "pass"), ("build", "skip"), ("load_module", "pass"),
                           ("run", "pass"), ("report", "pass"), ("cpus_online", "pass"),
                           ("sim.no_operation_errors", "pass")):
            self.assertEqual(self.result(cases, name), want, name)

    def assert_ended(self, rc, out):
        self.assertEqual(rc, 0, out[-3000:])
        self.assertIn("<LAVA_SIGNAL_ENDRUN", out)

    def test_definition_installs_what_cmake_requires(self):
        # CMakeLists.txt's pkg_check_modules(libsystemd): a fresh image fails
        # the build without libsystemd-dev.
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM)})
        self.assert_ended(rc, out)
        with open(self.log) as f:
            installs = [l for l in f if l.startswith("apt-get ") and " install " in l]
        self.assertTrue(installs)
        # Everything tools/setup.sh installs to build the daemon (a fresh
        # image failed without libtracefs-dev), and pahole for the module's
        # BTF (Debian's 6.12 headers: "pahole: not found", Error 127).
        run_tier = subprocess.run([os.path.join(SRC, "tools", "setup.sh"), "packages", "run"],
                                  capture_output=True, text=True, check=True).stdout.split()
        self.assertIn("libtracefs-dev", run_tier)
        for pkg in run_tier + ["dwarves", "kmod", "curl"]:
            self.assertIn(pkg, installs[0].split())

    def test_pass(self):
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM)})
        self.assert_ended(rc, out)
        # The report's cases of a sim run are sim.<check> (issue 28 item 7):
        # a LAVA chart of offline_p50 never shows a modeled latency. The
        # definition's own stages ran for real and keep their names.
        for name in ("install", "build", "run", "report", "sim.no_operation_errors",
                     "sim.cpus_restored", "cpus_online"):
            self.assertEqual(self.result(cases, name), "pass", (name, out[-2000:]))
        self.assertEqual(cases["run"][0], ["--result", "pass", "--measurement", "0", "--units",
                                           "exit_code"])
        self.assertEqual(cases["sim.offline_p50"][0][:3], ["--result", "pass", "--measurement"])
        self.assertEqual(sorted(c for c in cases if not c.startswith("sim.")),
                         ["build", "cpus_online", "install", "report", "run"])

    def test_failed_check_is_recorded(self):
        # 5 % of writes fail (EBUSY): report exits 1; its cases still count.
        cfg = dict(SIM, sim=dict(SIM["sim"], error_rate=0.05))
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", cfg)})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "sim.no_operation_errors"), "fail", out[-2000:])
        self.assertEqual(self.result(cases, "report"), "pass")
        self.assertEqual(self.result(cases, "cpus_online"), "pass")

    def test_run_error_is_recorded(self):
        # A config the daemon refuses: run exits 2 and writes no report.
        cfg = dict(SIM, pattern="no-such-pattern")
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", cfg)})
        self.assert_ended(rc, out)
        self.assertEqual(cases["run"][0][:4], ["--result", "fail", "--measurement", "2"])
        self.assertEqual(self.result(cases, "report"), "fail")
        self.assertEqual(self.result(cases, "cpus_online"), "pass")

    def test_no_baseline(self):
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "BASELINE_URL": f"file://{self.t}/missing.json"})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "baseline"), "fail")
        # The report is still checked, without the baseline (not with the
        # run's arguments).
        self.assertEqual(self.result(cases, "report"), "pass", out[-2000:])
        self.assertEqual(self.result(cases, "sim.no_operation_errors"), "pass")
        self.assertFalse([c for c in cases if "compare_" in c])

    def test_baseline_regression_is_recorded(self):
        fast = self.config("fast.json", dict(SIM, report=os.path.join(self.t, "base.json"),
                                             sim=dict(SIM["sim"], offline_base_ns=500000)))
        p = subprocess.run([os.path.join(BUILD, "cpuhp-stress"), "run", "--config", fast,
                            "--progress", "never"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "BASELINE_URL": f"file://{self.t}/base.json"})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "baseline"), "pass")
        self.assertEqual(self.result(cases, "sim.compare_offline.p50"), "fail", out[-2000:])

    def test_build_failure_is_recorded(self):
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM)},
                                             env={"STUB_CMAKE_FAIL": "1", "STUB_APT_RC": "100"})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "install"), "fail")
        self.assertEqual(self.result(cases, "build"), "fail")
        for name in ("run", "report", "cpus_online"):
            self.assertEqual(self.result(cases, name), "skip")

    def debs(self, *names):
        d = os.path.join(self.t, "debs")
        os.makedirs(d, exist_ok=True)
        for n in names:
            with open(os.path.join(d, n), "w") as f:
                f.write("!<arch>\n")
        return d

    def test_packages_instead_of_a_build(self):
        # A directory of CI's packages, with the module: installed in one
        # apt-get call with the running kernel's headers when it has no build
        # tree, the DKMS module loaded with cpuhp-probe-load, the installed
        # binary runs and reports; nothing is built.
        d = self.debs("cpuhp-stress_0.1.0_amd64.deb", "cpuhp-probe-dkms_0.1.0_all.deb")
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "PACKAGES": d, "LOAD_MODULE": "true"})
        self.assert_ended(rc, out)
        self.assert_installed_and_loaded(cases)
        with open(self.log) as f:
            log = f.read().splitlines()
        self.assertFalse([l for l in log if l.startswith("cmake")], log)
        installs = [l for l in log if l.startswith("apt-get ") and ".deb" in l]
        self.assertEqual(len(installs), 1, log)
        self.assertIn("cpuhp-stress_0.1.0_amd64.deb", installs[0])
        self.assertIn("cpuhp-probe-dkms_0.1.0_all.deb", installs[0])
        if not os.path.isdir(f"/lib/modules/{os.uname().release}/build"):
            self.assertIn(f"linux-headers-{os.uname().release}", installs[0].split())
        self.assertIn("cpuhp-probe-load ", log)
        self.assertIn("rmmod cpuhp_probe", log)
        self.assertFalse([l for l in log if l.startswith("insmod")], log)

    def test_local_packages_install_offline(self):
        # Local .debs, no module: nothing to fetch, so no apt-get update (a
        # lab image without the network, LAVA's QEMU jobs); one install.
        d = self.debs("cpuhp-stress_0.1.0_amd64.deb")
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "PACKAGES": d})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "install"), "pass")
        self.assertEqual(self.result(cases, "run"), "pass")
        with open(self.log) as f:
            log = f.read().splitlines()
        deb = os.path.join(self.t, "out", "debs", "cpuhp-stress_0.1.0_amd64.deb")
        self.assertEqual([l for l in log if l.startswith("apt-get ")],
                         [f"apt-get install -y -qq --no-install-recommends {deb}"], log)

    def test_local_packages_update_when_the_install_fails(self):
        # The offline install fails (a dependency the image's lists lack):
        # apt-get update, then the install once more, which passes.
        d = self.debs("cpuhp-stress_0.1.0_amd64.deb")
        cases, rc, out = self.run_definition(
            {"CONFIG": self.config("c.json", SIM), "PACKAGES": d},
            env={"STUB_APT_DEB_FAIL_ONCE": os.path.join(self.t, "apt-failed")})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "install"), "pass")
        self.assertEqual(self.result(cases, "run"), "pass")
        with open(self.log) as f:
            apt = [l.split()[1] for l in f if l.startswith("apt-get ")]
        self.assertEqual(apt, ["install", "update", "install"])

    def test_packages_by_url(self):
        d = self.debs("cpuhp-stress_0.1.0_amd64.deb")
        url = "file://" + os.path.join(d, "cpuhp-stress_0.1.0_amd64.deb")
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "PACKAGES": url})
        self.assert_ended(rc, out)
        self.assertEqual(self.result(cases, "install"), "pass")
        self.assertEqual(self.result(cases, "run"), "pass")
        self.assertNotIn("load_module", cases)
        self.assertTrue(os.path.exists(os.path.join(self.t, "out", "debs",
                                                    "cpuhp-stress_0.1.0_amd64.deb")))

    def test_packages_that_cannot_be_had_fail_install(self):
        d = self.debs("cpuhp-stress_0.1.0_amd64.deb")
        cases, rc, out = self.run_definition({
            "CONFIG": self.config("c.json", SIM),
            "PACKAGES": d + "/cpuhp-stress_0.1.0_amd64.deb file:///nonexistent/x.deb"})
        self.assert_ended(rc, out)
        self.assertIn("PACKAGES: file:///nonexistent/x.deb: download failed", out)
        self.assertEqual(self.result(cases, "install"), "fail")
        for name in ("build", "run", "report", "cpus_online"):
            self.assertEqual(self.result(cases, name), "skip", name)
        self.assertFalse(os.path.exists(os.path.join(self.installed, "cpuhp-stress")))

    def test_binary_and_module_of_the_image(self):
        # BINARY and MODULE: what the image carries runs and loads; nothing is
        # installed, built or fetched, not even with PACKAGES beside them.
        ko = os.path.join(self.t, "cpuhp_probe.ko")
        open(ko, "w").close()
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "BINARY": os.path.join(BUILD, "cpuhp-stress"),
                                              "LOAD_MODULE": "true", "MODULE": ko})
        self.assert_ended(rc, out)
        self.assert_installed_and_loaded(cases)
        with open(self.log) as f:
            log = f.read().splitlines()
        self.assertEqual(log, [f"insmod {ko}", "rmmod cpuhp_probe"])

    def test_binary_that_does_not_run_fails_install(self):
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "BINARY": "/nonexistent/cpuhp-stress"})
        self.assert_ended(rc, out)
        self.assertIn("BINARY: /nonexistent/cpuhp-stress: does not run", out)
        self.assertEqual(self.result(cases, "install"), "fail")
        for name in ("build", "run", "report", "cpus_online"):
            self.assertEqual(self.result(cases, name), "skip", name)

    def test_module_that_does_not_load_is_a_failed_stage(self):
        # insmod refuses it: load_module fails, the run goes on without it.
        cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                              "BINARY": os.path.join(BUILD, "cpuhp-stress"),
                                              "LOAD_MODULE": "true", "MODULE": "/nonexistent.ko"},
                                             env={"STUB_INSMOD_RC": "1"})
        self.assert_ended(rc, out)
        self.assertIn("MODULE: /nonexistent.ko: insmod failed", out)
        self.assertEqual(self.result(cases, "load_module"), "fail")
        self.assertEqual(self.result(cases, "run"), "pass")
        with open(self.log) as f:
            self.assertNotIn("rmmod cpuhp_probe", f.read())

    def test_module_step_against_debian_headers(self):
        # Every Debian amd64 header tree the fetch step left: 6.1 always,
        # 6.12 (BTF: needs pahole) when the 6.12 guests are fetched too.
        cache = os.environ.get("CPUHP_VM_CACHE", "/var/cache/cpuhp-stress")
        trees = sorted(glob.glob(f"{cache}/vm-kernel-*-amd64-*/root/usr/src/linux-headers-*-amd64"))
        self.assertTrue(trees, f"no Debian amd64 headers in {cache} (tests/vm/fetch)")
        for kdir in trees:
            with self.subTest(kdir=os.path.basename(kdir)):
                ko = os.path.join(self.checkout, "kmod", "cpuhp_probe.ko")
                if os.path.exists(ko):
                    os.unlink(ko)
                cases, rc, out = self.run_definition({"CONFIG": self.config("c.json", SIM),
                                                      "LOAD_MODULE": "true", "KDIR": kdir})
                self.assert_ended(rc, out)
                self.assertEqual(self.result(cases, "load_module"), "pass", out[-3000:])
                self.assertTrue(os.path.exists(ko))
                with open(self.log) as f:
                    log = f.read()
                self.assertIn("insmod kmod/cpuhp_probe.ko", log)
        self.assertIn("rmmod cpuhp_probe", log)
        with open(os.path.join(self.t, "out", "kmod.log")) as f:
            self.assertFalse(re.search(r"warning:|error:", f.read()))


if __name__ == "__main__":
    BUILD, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    MODULE = "--module" in sys.argv[3:]
    sys.argv = sys.argv[:1]
    if MODULE:
        suite = unittest.TestSuite([LavaDefinitionTest("test_module_step_against_debian_headers")])
    else:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(LavaDefinitionTest)
        suite = unittest.TestSuite(t for t in suite if "module_step" not in t.id())
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if res.wasSuccessful() else 1)
