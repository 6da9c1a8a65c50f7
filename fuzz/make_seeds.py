#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rebuilds the seed corpora of the report, trace and kmod fuzz targets.

  fuzz/make_seeds.py            (from the repo root or anywhere)

report: the report fixtures of tests/fixtures (valid and schema-invalid ones:
        compare reads both).
trace:  the recorded and hand-written traces of tests/fixtures/trace with
        "#op" lines (see fuzz/trace_fuzz.cc) where each write returned, as in
        the unit tests.
kmod:   inputs in fuzz/kmod_fuzz.cc's layout built from the structs of
        kmod/uapi/cpuhp_probe.h (API version 1).
"""
import os
import re
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(ROOT, "fuzz", "corpus")


def fresh(name):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def reports():
    d = fresh("report")
    for f in sorted(os.listdir(FIX)):
        if f.startswith("report-") and f.endswith(".json"):
            shutil.copy(os.path.join(FIX, f), os.path.join(d, f))


# (trace, [(cpu, dir, start_s, duration_ms, online_before)]) as in
# daemon/sources/trace_join_test.cc.
TRACES = [
    ("x86_64-6.18-cpu1-offline-online.trace",
     [(1, "offline", 2497.383, 50.0, 2), (1, "online", 2497.468, 4.7, 1)]),
    ("x86_64-6.1-cpu1-offline-online.trace",
     [(1, "offline", 1000.0, 13.0, 2), (1, "online", 1001.0, 3.0, 1)]),
    ("arm64-6.1-cpu3-online.trace", [(3, "online", 500.0, 2.1, 3)]),
    ("malformed.trace", [(1, "offline", 3000.0, 7.5, 2)]),
]
TS = re.compile(r"\s(\d+)\.(\d{6}):\s")


def traces():
    d = fresh("trace")
    for name, ops in TRACES:
        with open(os.path.join(FIX, "trace", name)) as f:
            lines = f.read().splitlines()
        out = []
        pending = list(ops)
        for line in lines:
            m = TS.search(line)
            ts_ns = (int(m.group(1)) * 1000000 + int(m.group(2))) * 1000 if m else None
            while pending and ts_ns is not None:
                cpu, direction, start_s, dur_ms, online = pending[0]
                start = round(start_s * 1e6) * 1000
                dur = round(dur_ms * 1e6)
                if ts_ns <= start + dur:
                    break
                out.append(f"#op {cpu} {direction} {start} {dur} {online}")
                pending.pop(0)
            out.append(line)
        for cpu, direction, start_s, dur_ms, online in pending:
            out.append(f"#op {cpu} {direction} {round(start_s * 1e6) * 1000} "
                       f"{round(dur_ms * 1e6)} {online}")
        with open(os.path.join(d, name), "w") as f:
            f.write("\n".join(out) + "\n")
    # The bare traces too: no operation, every step outside one.
    for name, _ in TRACES[:1]:
        shutil.copy(os.path.join(FIX, "trace", name), os.path.join(d, "bare-" + name))


# kmod/uapi/cpuhp_probe.h, API version 1.
API, NR_PROBES, REC = 1, 10, struct.Struct("<QQQqIiIIII")
(ARCH_CPU_UP, NATIVE_CPU_UP, KICK_AP_ALIVE, BRINGUP_AP, BRINGUP_CPU, TAKEDOWN_CPU,
 TAKE_CPU_DOWN, CPU_UP, CPU_DOWN, NOHZ) = range(10)
ARG_UNSURE = 1
assert REC.size == 56


def version(api=API, rec=REC.size, probes=NR_PROBES, nr_cpu_ids=2, ring=4096):
    return struct.pack("<6I", api, rec, probes, nr_cpu_ids, ring, 0)


def info(pid, name, symbol, placed=1, selected=1, error=0, reason=b"", hits=2, nmissed=0,
         dropped=0):
    return struct.pack("<IIIi64s64s96sQQQ", pid, placed, selected, error, name, symbol, reason,
                       hits, nmissed, dropped)


def hist(buckets, count=None, sum_ns=0, max_ns=0):
    b = [0] * 40
    for i, c in buckets.items():
        b[i] = c
    return struct.pack("<IIQQQ40Q", 0xffffffff, 0, sum(b) if count is None else count, sum_ns,
                       max_ns, *b)


def counts(values, ok=1):
    return struct.pack("<II", len(values), ok) + struct.pack(f"<{len(values)}Q", *values)


def op(start, dur, cpu, online, online_before, records, extra=b""):
    body = b"".join(REC.pack(*r) for r in records) + extra
    return struct.pack("<QQiIiI", start, dur, cpu, 1 if online else 0, online_before,
                       len(body)) + body


def rec(seq, start, dur, pid, target, exec_cpu=0, online=2, retval=0, flags=0):
    return (seq, start, dur, retval, pid, target, exec_cpu, online, flags, 0)


def kmod():
    d = fresh("kmod")
    t = 1_000_000_000
    # cpu1 offline then online on a 2-CPU x86 guest (6.5+): nested phases.
    offline = op(t, 5_000_000, 1, False, 2, [
        rec(0, t + 10_000, 4_900_000, CPU_DOWN, 1),
        rec(1, t + 3_000_000, 1_500_000, TAKEDOWN_CPU, 1),
        rec(2, t + 3_200_000, 40_000, TAKE_CPU_DOWN, 1, exec_cpu=1),
    ])
    t2 = t + 10_000_000
    online = op(t2, 3_000_000, 1, True, 1, [
        rec(3, t2 + 5_000, 2_900_000, CPU_UP, 1, online=1),
        rec(4, t2 + 100_000, 600_000, KICK_AP_ALIVE, 1, online=1),
        rec(5, t2 + 800_000, 1_900_000, BRINGUP_AP, 1, online=1),
    ])
    placed = info(TAKEDOWN_CPU, b"takedown_cpu", b"takedown_cpu", hits=1)
    nohz = hist({9: 40, 10: 12, 12: 1}, sum_ns=40 * 700 + 12 * 1500 + 5000, max_ns=5000)
    seeds = {
        "offline-online.bin": version() + placed + nohz + counts([30, 23]) + offline + online,
        # arm64: __cpu_up, a renamed symbol (argument unsure), one not placed.
        "arm64-renamed.bin": version(nr_cpu_ids=4)
        + info(BRINGUP_CPU, b"bringup_cpu", b"bringup_cpu.constprop.0", hits=1)
        + hist({}) + counts([0, 0, 0, 0], ok=0)
        + op(t, 2_000_000, 3, True, 3, [
            rec(0, t + 1_000, 1_900_000, BRINGUP_CPU, 0, online=3, flags=ARG_UNSURE),
            rec(1, t + 2_000, 1_800_000, ARCH_CPU_UP, 3, online=3)]),
        "not-placed.bin": version()
        + info(NATIVE_CPU_UP, b"native_cpu_up", b"", placed=0, error=-2,
               reason=b"symbol not found (x86 6.5+ uses cpuhp_kick_ap_alive)", hits=0)
        + hist({0: 3}) + counts([3, 0]) + offline,
        # Unjoined and odd records: outside the write, other CPU, wrong
        # direction, ends after the write, failed, unknown probe id.
        "unjoined.bin": version() + placed + nohz + counts([1, 1])
        + op(t, 1_000_000, 1, False, 2, [
            rec(0, t - 5_000, 10_000, CPU_DOWN, 1),
            rec(1, t + 1_000, 10_000, TAKEDOWN_CPU, 0),
            rec(2, t + 2_000, 10_000, CPU_UP, 1),
            rec(3, t + 3_000, 2_000_000, TAKEDOWN_CPU, 1),
            rec(4, t + 4_000, 10_000, CPU_DOWN, 1, retval=-16),
            rec(5, t + 5_000, 10_000, 42, 1),
            rec(6, t + 6_000, 10_000, NOHZ, -1)]),
        # A read() cut inside a record: the decoder refuses it.
        "partial-record.bin": version() + placed + nohz + counts([])
        + op(t, 1_000_000, 1, False, 2, [rec(0, t + 1, 1, CPU_DOWN, 1)], extra=b"\0" * 20),
        "other-version.bin": version(api=2) + placed + nohz + counts([]),
        "other-record-size.bin": version(rec=64, probes=12) + placed + nohz + counts([]),
    }
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    reports()
    traces()
    kmod()
