#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reads a tests/vm/bench_guest.sh console log and prints what the kernel-phase
sources cost.

bench_kmod_overhead.py CONSOLE_LOG ARCH

Sides: without (no kernel-phase source), with (the cpuhp_probe module), bpf
(the bpf source, fentry/fexit where the kernel attaches them), bpfk (the bpf
source, kprobes only). Per round and side: the daemon's median (p50_ns)
write latency per direction against the same round's `without`, and the
ratio's median over the rounds with min..max (run-level overhead, pairs
interleaved). Per round: the nanosleep loop's ns per iteration on each side
minus `without`, divided by the get_nohz_timer_target hits per iteration
the side's source counted = ns per probe hit (thread CPU time, less
host-load noise, and wall time); median and min..max. Exit 1 when the guest
did not finish or a step failed (the figures would be incomplete).
"""
import base64
import json
import re
import statistics
import sys

text = open(sys.argv[1], errors="replace").read()
arch = sys.argv[2]
reports = {}
for m in re.finditer(r"==CPUHP== BEGIN (\S+)\.json\n(.*?)==CPUHP== END \1\.json\n", text, re.S):
    try:
        reports[m.group(1)] = json.loads(base64.b64decode("".join(m.group(2).split())))
    except ValueError:
        pass
# A loop daemon is interrupted on purpose (exit 4: report written, CPUs restored).
bad = [f"{s} {c}" for s, c in re.findall(r"==CPUHP== STATUS (\S+) (-?\d+)", text)
       if c != "0" and not (s.startswith("loopdaemon_") and c == "4")]
head = re.search(r"==CPUHP== guest up: (.*)", text)
print(f"arch {arch}: {head.group(1) if head else '?'}")
ok = "==CPUHP== DONE" in text and not bad
if not ok:
    print(f"guest incomplete or a step failed: {bad or 'no DONE marker'}")

SIDES = {"with": "module (kmod)", "bpf": "bpf source, fentry where it attaches",
         "bpfk": "bpf source, kprobes only"}


def spread(xs):
    return f"median {statistics.median(xs):.3f}, min {min(xs):.3f}, max {max(xs):.3f}, n={len(xs)}"


def source_of(side, report):
    ts = report.get("timing_sources", {})
    return ts.get("kmod" if side == "with" else "bpf", {})


def mechanisms(side, report):
    src = source_of(side, report)
    if side == "with":
        return src.get("status", "?")
    mech = sorted({p.get("mechanism") for p in src.get("probes", []) if p.get("placed")})
    return f"{src.get('status', '?')} {'/'.join(mech) or src.get('reason', '')}"


rounds = sorted({int(k.rsplit("-", 1)[1]) for k in reports if re.match(r"^[a-z]+-\d+$", k)})
for side, what in SIDES.items():
    if not any(f"{side}-{r}" in reports for r in rounds):
        continue
    for d in ("offline", "online"):
        ratios = []
        for r in rounds:
            a, b = reports.get(f"without-{r}"), reports.get(f"{side}-{r}")
            if not a or not b:
                continue
            pa, pb = a["directions"][d]["p50_ns"], b["directions"][d]["p50_ns"]
            ratios.append(pb / pa)
            print(f"round {r} {d}: p50 without {pa / 1e6:.2f} ms, {side} {pb / 1e6:.2f} ms "
                  f"({mechanisms(side, b)}), ratio {pb / pa:.3f}")
        if ratios:
            print(f"{d} write latency ratio {side}/without ({what}): {spread(ratios)}")

# SLEEP SIDE ROUND N WALL_NS CPU_NS [HITS]. The module counts the hits of
# the loop's window (reset, loop, read); the bpf sources count over their
# daemon's life (start, one operation, the loop, the restore): their hits
# per iteration are the same round's module count when there is one (the
# same loop on the same kernel with the same CPUs online), else their own.
sleeps = {}
for m in re.finditer(r"==CPUHP== SLEEP ([a-z]+) (\d+) (\d+) (\d+) (\d+)(?: (\d+))?", text):
    sleeps[(m.group(1), int(m.group(2)))] = [int(x) for x in m.groups()[2:] if x is not None]
for (side, r), v in sleeps.items():
    if len(v) == 3 and side in ("bpf", "bpfk"):
        mod = sleeps.get(("with", r))
        nz = source_of(side, reports.get(f"loop-{side}-{r}", {})).get("get_nohz_timer_target", {})
        if mod and len(mod) == 4 and mod[3]:
            v.append(mod[3] * v[0] // mod[0])
        elif nz.get("count"):
            v.append(nz["count"])
for side, what in SIDES.items():
    cpu_costs, wall_costs = [], []
    for r in sorted({k[1] for k in sleeps}):
        a, b = sleeps.get(("without", r)), sleeps.get((side, r))
        if not a or not b or len(b) < 4 or not b[3]:
            continue
        hits_per_iter = b[3] / b[0]
        wa, wb = a[1] / a[0], b[1] / b[0]
        ca, cb = a[2] / a[0], b[2] / b[0]
        cpu_costs.append((cb - ca) / hits_per_iter)
        wall_costs.append((wb - wa) / hits_per_iter)
        extra = ""
        if side != "with":
            loop_report = reports.get(f"loop-{side}-{r}", {})
            extra = f" ({mechanisms(side, loop_report)})"
        print(f"round {r} {side} nanosleep per iteration: thread CPU {ca:.0f} ns without, {cb:.0f} ns with; "
              f"wall {wa:.0f} ns without, {wb:.0f} ns with; {hits_per_iter:.2f} get_nohz_timer_target "
              f"hits/iter: {cpu_costs[-1]:.0f} ns CPU, {wall_costs[-1]:.0f} ns wall per hit{extra}")
    if cpu_costs:
        print(f"get_nohz_timer_target probe cost per hit, {side} ({what}), thread CPU time (ns): {spread(cpu_costs)}")
        print(f"get_nohz_timer_target probe cost per hit, {side} ({what}), wall time (ns): {spread(wall_costs)}")
    # The programs' own run time per hit (bpf_stats), beside the loop's figure.
    own = []
    for r in sorted({k[1] for k in sleeps}):
        progs = source_of(side, reports.get(f"loop-{side}-{r}", {})).get("program_cost", {}).get("programs", {})
        per = [progs[n]["mean_ns"] for n in progs if "nohz" in n and progs[n].get("runs")]
        if len(per) == 2:
            own.append(sum(per))
    if own:
        print(f"get_nohz_timer_target programs' own time per hit (bpf_stats, entry + return), {side}: "
              f"{spread(own)}")
sys.exit(0 if ok else 1)
