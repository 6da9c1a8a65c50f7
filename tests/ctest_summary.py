# SPDX-License-Identifier: GPL-2.0
"""The verdict of `tools/setup.sh check|test`: what ran, what passed, what
failed, what was skipped and why, from ctest's JUnit files.

    ctest_summary.py EXPECTED_SKIPS BUILD=JUNIT_XML [BUILD=JUNIT_XML ...]

A skip is allowed only if tests/expected-skips lists it and its condition
holds on this machine; any other skip fails the run, like a failed test.
Skips are found three ways:
  - a ctest that did not run (exit 77, SKIP_RETURN_CODE; a gtest GTEST_SKIP);
  - inside a test's output: unittest's "... skipped 'REASON'" (verbose
    runner) and its "(skipped=N)" total, so a skip the runner did not name
    still counts;
  - a "SKIP-CASE CASE: REASON" line: a sub-case the test dropped (say, a
    read-only tmpfs it could not mount), or a gtest that skipped itself in
    a shard (tests/gtest_shard.py, whose "GTEST-CASES" line is counted too).
Exit 0 when every test ran and passed or skipped as expected, 1 otherwise,
2 on bad usage or an unreadable file. The last line is
"N passed, N failed, N skipped" (N skipped: the expected skips).
"""
import fnmatch
import os
import platform
import re
import sys
import xml.etree.ElementTree as ET

SYS = "/sys/devices/system/cpu"


def cap_sys_admin():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 21 & 1)
    except OSError:
        pass
    return False


def cpu1_unusable():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open("/run/cpuhp-stress-cpu1-unusable") as f:
            return f.read().split("\n", 1)[0] == boot
    except OSError:
        return False


def no_cpuhp_tracepoints():
    try:
        with open("/proc/filesystems") as f:
            if "tracefs" not in f.read():
                return True
    except OSError:
        return True
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(f"{root}/events"):
            return not os.path.isdir(f"{root}/events/cpuhp")
    return False  # tracefs not mounted: cannot tell, so the skip is not excused


def kvm_usable():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
        return True
    except OSError:
        return False


def no_fixed_cpu():
    """Every CPU has an online file (arm64/PSCI, POWER): none to refuse as
    not hotpluggable (tests/integration/cpuhp_testlib.py, find_fixed_cpu)."""
    try:
        cpus = [d for d in os.listdir(SYS) if re.fullmatch(r"cpu\d+", d)]
    except OSError:
        return False
    return bool(cpus) and all(os.path.exists(f"{SYS}/{d}/online") for d in cpus)


def conditions():
    """Every condition expected-skips may name, evaluated on this machine."""
    online = f"{SYS}/cpu1/online"
    return {
        "arch!=x86_64": platform.machine() != "x86_64",
        "root": os.geteuid() == 0,
        "no-cpu1-hotplug": not os.access(online, os.W_OK),
        "cpu1-unusable": cpu1_unusable(),
        "no-hotplug-fail": not os.path.exists(f"{SYS}/cpu1/hotplug/fail"),
        "no-cpuhp-tracepoints": no_cpuhp_tracepoints(),
        "no-mount": not cap_sys_admin(),
        "no-kvm": not kvm_usable(),
        "no-fixed-cpu": no_fixed_cpu(),
        # A guest's case that tests/vm/real_check.py excused by what the
        # guest's kernel lacks (it fails every other skipped case and prints
        # SKIP-CASE guest:... only for these): decided in the guest, not here.
        "guest-explained": True,
    }


def bad_input(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def load_expected(path, known):
    """[(id_glob, [conditions], reason)]; exits 2 on a malformed line."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                bad_input(f"{path}:{n}: expected ID CONDITION REASON")
            conds = parts[1].split("|")
            bad = [c for c in conds if c not in known]
            if bad:
                bad_input(f"{path}:{n}: unknown condition {bad[0]} (known: {', '.join(known)})")
            out.append((parts[0], conds, parts[2]))
    return out


SKIP_LINE = re.compile(r"\bSKIP(?:PED)?\b:?\s*(.+)", re.IGNORECASE)
UNITTEST_NAME = re.compile(r"^(test\w*) \(")
UNITTEST_SKIP = re.compile(r"\.\.\. skipped '(.*)'$")
UNITTEST_TOTAL = re.compile(r"\bskipped=(\d+)\)")
SKIP_CASE = re.compile(r"^SKIP-CASE (\S+): (.*)$")
GTEST_CASES = re.compile(r"^GTEST-CASES passed=(\d+) failed=(\d+) skipped=(\d+)$", re.MULTILINE)


def whole_skip_reason(out):
    """The reason a test printed when it skipped itself."""
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    for i, l in enumerate(lines):  # gtest: "file:line: Skipped", then the message
        if l.endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1]
    for l in reversed(lines):
        m = SKIP_LINE.search(l)
        if m and not l.startswith("["):
            return m.group(1)
    return lines[-1] if lines else "(the test printed no reason)"


def case_skips(out):
    """[(case, reason)] skipped inside a test that ran."""
    found, last_test, named = [], None, 0
    for line in out.splitlines():
        line = line.rstrip()
        m = UNITTEST_NAME.match(line)
        if m:
            last_test = m.group(1)
        m = UNITTEST_SKIP.search(line)
        if m:
            found.append((last_test or "unnamed", m.group(1)))
            named += 1
        m = SKIP_CASE.match(line)
        if m:
            found.append((m.group(1), m.group(2)))
    total = sum(int(m.group(1)) for m in UNITTEST_TOTAL.finditer(out))
    for _ in range(total - named):
        found.append(("unnamed", "unittest counted a skip it did not name (non-verbose runner?)"))
    return found


def excuse(test, case, expected, cond):
    """The expected-skips line that allows this skip now, or None."""
    ident = f"{test}:{case}" if case else test
    for pattern, conds, reason in expected:
        if fnmatch.fnmatchcase(ident, pattern) and any(cond[c] for c in conds):
            return f"{reason} [{'|'.join(c for c in conds if cond[c])}]"
    return None


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cond = conditions()
    try:
        expected = load_expected(argv[1], cond)
    except OSError as e:
        print(f"{argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    passed, failed, skipped_ok, bad = [], [], [], []
    run = 0
    gtest_cases = [0, 0, 0]  # passed, failed, skipped inside sharded gtest binaries
    for arg in argv[2:]:
        build, path = arg.split("=", 1)
        try:
            suite = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"{path}: cannot read ctest's JUnit file: {e}", file=sys.stderr)
            return 2
        cases = suite.findall("testcase")
        if not cases:
            failed.append(f"{build}: no tests were found")
        for tc in cases:
            name = tc.get("name")
            label = f"{build}/{name}"
            out = (tc.findtext("system-out") or "")
            status = tc.get("status")
            if status == "notrun" or tc.find("skipped") is not None:
                why = whole_skip_reason(out)
                ok = excuse(name, None, expected, cond)
                if ok:
                    skipped_ok.append(f"{label}: {why} -- expected: {ok}")
                else:  # it did not run: a failure
                    bad.append(f"{label}: {why}")
                    failed.append(f"{label} (skipped)")
                continue
            run += 1
            for m in GTEST_CASES.finditer(out):
                for i in range(3):
                    gtest_cases[i] += int(m.group(i + 1))
            test_bad = []
            for case, why in case_skips(out):
                ok = excuse(name, case, expected, cond)
                if ok:
                    skipped_ok.append(f"{label}:{case}: {why} -- expected: {ok}")
                else:
                    test_bad.append(f"{label}:{case}: {why}")
            bad.extend(test_bad)
            if status == "fail" or tc.find("failure") is not None:
                failed.append(label)
            elif test_bad:
                failed.append(f"{label} (a case was skipped)")
            else:
                passed.append(label)
    print("== summary")
    print(f"tests run: {run} (in {', '.join(a.split('=', 1)[0] for a in argv[2:])})")
    print(f"passed: {len(passed)}")
    if any(gtest_cases):
        print(f"  gtest cases in the sharded tests (tests/gtest_shard.py): {gtest_cases[0]} passed, "
              f"{gtest_cases[1]} failed, {gtest_cases[2]} skipped")
    print(f"failed: {len(failed)}" + "".join(f"\n  {f}" for f in failed))
    print(f"skipped as expected (tests/expected-skips): {len(skipped_ok)}" +
          "".join(f"\n  {s}" for s in skipped_ok))
    if bad:
        print(f"UNEXPECTED skips (each fails the run; list it in tests/expected-skips "
              f"only if it is right to skip it): {len(bad)}" + "".join(f"\n  {s}" for s in bad))
    print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped_ok)} skipped")
    return 1 if failed or not run else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
