#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side asserts on the real-hotplug guest (tests/vm/guest_real.sh).

real_check.py CONSOLE_LOG WORK_DIR TESTS QEMU_RC
TESTS is the comma list the guest ran. Every test must have exited 0 (a
skip, 77, is a failure here: the guest kernel has everything they need;
except on a kernel without cpuN/hotplug/fail, where faults_integration
must skip and say that is why). No case inside a test
may be skipped either (unittest's "skipped", a SKIP-CASE line), except for
the two reasons the guest reports: no hotplug/fail (kill_anywhere's
fault-injection case) and no CPU without an online file (arm64, POWER:
real_cpu_test's "cannot be hotplugged" case). Every CPU must be online
and no hotplug/fail armed after each one, and the
guest's kernel log must hold no WARNING, BUG, Oops or lockup. Prints one line
per check, each test's summary line and time. Exit 0 if all held, else 1.

One kernel warning is expected and counted, not failed: kill_anywhere's
SIGKILL can land while the daemon is inside mkdir of its tracefs instance.
__rb_allocate_pages() then stops on fatal_signal_pending() and returns
-ENOMEM, and trace_rb_cpu_prepare() WARNs "failed to allocate ring buffer on
CPU n". That is the kernel's (6.12.117), not ours: the same guest kernel
gives 40 such WARNs for 265 SIGKILLed busybox `mkdir instances/rN`, with no
cpuhp-stress and no hotplug involved. It is accepted only with that message,
at trace_rb_cpu_prepare, in a process named cpuhp-stress; any other warning
fails the check.
"""
import os
import re
import sys

from vmlib import Checks, decode_console, kernel_splats

console, work, tests, qrc = sys.argv[1:5]
text = open(console, errors="replace").read()
check = Checks()
files, status = decode_console(text, os.path.join(work, "out"), check)

m = re.search(r"==CPUHP== guest up: online (\S+) kernel (\S+)", text)
check(m is not None, "guest booted and ran /init")
all_online = m.group(1) if m else None
if m:
    print(f"guest kernel {m.group(2)}, online {all_online}")
states = files.get("states.txt", b"").decode()
check("cpu:bringup" in states, "hotplug/states read in the guest")
if "cpu:kick_ap" in states:
    print("guest kernel has x86 split startup (cpu:kick_ap): faults.allow_unsafe applies")
m = re.search(r"==CPUHP== hotplug_fail (yes|no)", text)
check(m is not None, "guest said whether its kernel has hotplug/fail")
has_fail = m is None or m.group(1) == "yes"
if not has_fail:
    print("guest kernel has no cpuN/hotplug/fail: fault injection must skip with that reason")
m = re.search(r"==CPUHP== fixed_cpu (yes|no)", text)
check(m is not None, "guest said whether it has a CPU without an online file")
has_fixed = m is None or m.group(1) == "yes"
if not has_fixed:
    print("guest has no CPU without an online file: the 'cannot be hotplugged' case must skip with that reason")
# The skips a guest's kernel explains; any other skipped case fails.
excused = ([r"hotplug/fail"] if not has_fail else []) + \
    ([r"no non-hotpluggable CPU to refuse"] if not has_fixed else [])
times = {name: (float(a), float(b)) for name, a, b in re.findall(
    r"==CPUHP== TEST (\S+) start ([\d.]+)\n.*?==CPUHP== TEST \1 end ([\d.]+)", text, re.S)}
for spec in tests.split(","):
    # NAME:test_a+test_b: only those tests of NAME ran (tests/vm/guest_real.sh).
    t, _, only = spec.partition(":")
    rc = status.get(t)
    took = times.get(t)
    block = re.search(rf"==CPUHP== TEST {re.escape(t)} start .*?\n(.*?)==CPUHP== TEST {re.escape(t)} end",
                      text, re.S)
    out = block.group(1) if block else ""
    if not has_fail and t == "faults_integration":
        check(rc == "77" and re.search(r"SKIPPED: .*hotplug/fail", out) is not None,
              f"{t} skipped in the guest for want of hotplug/fail (got {rc})")
    elif not has_fail and t == "kill_anywhere":
        check(rc == "0" and "the kills run without fault injection" in out,
              f"{t} exited 0 in the guest, kills without fault injection (got {rc})"
              + (f", {took[1] - took[0]:.0f} s" if took else ""))
    else:
        check(rc == "0", f"{t} exited 0 in the guest (got {rc})"
              + (f", {took[1] - took[0]:.0f} s" if took else ""))
    if only and rc == "0":
        n = len(only.split("+"))
        check(re.search(rf"^{n} passed, 0 failed$", out, re.M) is not None,
              f"{t}: the {n} tests asked for ran ({only})")
    # The test's own summary lines (figures: injections, kills, rollbacks).
    if block:
        for line in block.group(1).splitlines():
            if re.match(r"(sweep:|\d+ kills|\d+ kills of|\d+ passed|Ran \d+|OK|FAILED|SKIPPED)", line):
                # ("skipped=N" reworded: the skips are listed below, once)
                line = re.sub(r"skipped=(\d+)", r"\1 case(s) skipped", line)
                print(f"    {t}: {line}")
        # A failed test's own account (unittest's FAIL/ERROR blocks with
        # their tracebacks) goes into the log CI keeps: the console does not.
        if rc != "0":
            for m in re.finditer(r"^(?:FAIL|ERROR): .*?(?=^(?:={20,}|-{20,}\nRan )|\Z)",
                                 block.group(1), re.S | re.M):
                for line in m.group(0).rstrip().splitlines()[:40]:
                    print(f"    {t}| {line}")
        # A case skipped inside the guest is a failure too: its kernel has
        # everything the tests need (tests/ctest_summary.py finds the same lines).
        skipped = re.findall(r"^(?:.*\.\.\. skipped '.*'|SKIP-CASE .*)$", block.group(1), re.M)
        explained = [line for line in skipped if any(re.search(e, line) for e in excused)]
        for line in explained:
            # One SKIP-CASE line per excused case, named, for tests/ctest_summary.py
            # (tests/expected-skips: vm_real_tests*:guest:*, condition guest-explained).
            m = re.search(r"(test\w+) \(.*?\.\.\. skipped '(.*)'$", line)
            case, why = (m.group(1), m.group(2)) if m else ("case", line.strip())
            print(f"SKIP-CASE guest:{t}.{case}: {why} (excused: the guest kernel lacks it)")
        unexplained = [line for line in skipped if line not in explained]
        counted = sum(int(n) for n in re.findall(r"\bskipped=(\d+)", block.group(1)))
        check(not unexplained and counted <= len(explained),
              f"{t}: no case skipped in the guest but for the guest kernel's reasons ({unexplained[:3]})")
    after = re.search(rf"==CPUHP== after {re.escape(t)}: online (\S+) fail (.*)", text)
    check(after is not None and after.group(1) == all_online,
          f"after {t}: online {after.group(1) if after else None} (want {all_online})")
    check(after is not None and set(after.group(2).split()) == ({"-1"} if has_fail else set()),
          f"after {t}: no hotplug/fail armed ({after.group(2).strip() if after else None})")
end = re.search(r"==CPUHP== online at end (\S+)", text)
check(end is not None and end.group(1) == all_online, "every CPU online at the end")
dmesg = files.get("dmesg", b"").decode(errors="replace")
check(bool(dmesg), "guest kernel log captured")
bad, known = kernel_splats(dmesg, known=(
    # The one kernel warning the kills themselves cause (see above), in the
    # very process a test SIGKILLed (the daemon creating its instance).
    ("tracefs instance allocation aborted by SIGKILL",
     (r"failed to allocate ring buffer on CPU",
      r"WARNING: CPU: \d+ PID: \d+ at kernel/trace/ring_buffer.c:\d+ trace_rb_cpu_prepare",
      r"Comm: cpuhp-stress ")),))
for name, n in known.items():
    print(f"known kernel warning, {n}x: {name} (trace_rb_cpu_prepare WARNs on it)")
check(not bad, f"no other WARNING/BUG/Oops/lockup in the guest log ({bad[:3]})")
check("==CPUHP== DONE" in text, "guest reached the end of /init")
print(f"qemu exit {qrc}")
if check.failures:
    print(f"{len(check.failures)} checks failed; console: {console}")
    sys.exit(1)
print("all checks passed")
