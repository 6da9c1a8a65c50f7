#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reads a tests/vm/bench_guest.sh console log and prints the cpuhp_probe costs.

bench_kmod_overhead.py CONSOLE_LOG ARCH

Per round: the daemon's median (p50_ns) write latency per direction with the
module loaded and read by the kmod source vs not loaded, and their ratio;
then the median ratio over the rounds with min..max. Per round: nanosleep
loop ns/iteration with and without the module; (with - without) divided by
the get_nohz_timer_target hits per iteration the module counted = ns per
hit (from the thread's CPU time, less host-load noise, and from wall
time); median and min..max. Exit 1 when the guest did not finish or a
daemon run failed (the figures would be incomplete).
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
bad = [l for l in re.findall(r"==CPUHP== STATUS (\S+ -?\d+)", text) if not l.endswith(" 0")]
head = re.search(r"==CPUHP== guest up: (.*)", text)
print(f"arch {arch}: {head.group(1) if head else '?'}")
ok = "==CPUHP== DONE" in text and not bad
if not ok:
    print(f"guest incomplete or a step failed: {bad or 'no DONE marker'}")


def spread(xs):
    return f"median {statistics.median(xs):.3f}, min {min(xs):.3f}, max {max(xs):.3f}, n={len(xs)}"


rounds = sorted({int(k.split("-")[1]) for k in reports})
for d in ("offline", "online"):
    ratios = []
    for r in rounds:
        a, b = reports.get(f"without-{r}"), reports.get(f"with-{r}")
        if not a or not b:
            continue
        pa, pb = a["directions"][d]["p50_ns"], b["directions"][d]["p50_ns"]
        ka = b.get("timing_sources", {}).get("kmod", {}).get("status")
        ratios.append(pb / pa)
        print(f"round {r} {d}: p50 without {pa / 1e6:.2f} ms, with {pb / 1e6:.2f} ms (kmod {ka}), "
              f"ratio {pb / pa:.3f}")
    if ratios:
        print(f"{d} write latency ratio with/without module: {spread(ratios)}")

# SLEEP with|without ROUND N WALL_NS CPU_NS [HITS]
sleeps = {}
for m in re.finditer(r"==CPUHP== SLEEP (with|without) (\d+) (\d+) (\d+) (\d+)(?: (\d+))?", text):
    sleeps[(m.group(1), int(m.group(2)))] = [int(x) for x in m.groups()[2:] if x is not None]
cpu_costs, wall_costs = [], []
for r in sorted({k[1] for k in sleeps}):
    a, b = sleeps.get(("without", r)), sleeps.get(("with", r))
    if not a or not b or len(b) < 4 or not b[3]:
        continue
    hits_per_iter = b[3] / b[0]
    wa, wb = a[1] / a[0], b[1] / b[0]
    ca, cb = a[2] / a[0], b[2] / b[0]
    cpu_costs.append((cb - ca) / hits_per_iter)
    wall_costs.append((wb - wa) / hits_per_iter)
    print(f"round {r} nanosleep per iteration: thread CPU {ca:.0f} ns without, {cb:.0f} ns with; "
          f"wall {wa:.0f} ns without, {wb:.0f} ns with; {hits_per_iter:.2f} get_nohz_timer_target hits/iter: "
          f"{cpu_costs[-1]:.0f} ns CPU, {wall_costs[-1]:.0f} ns wall per hit")
if cpu_costs:
    print(f"get_nohz_timer_target probe cost per hit, thread CPU time (ns): {spread(cpu_costs)}")
    print(f"get_nohz_timer_target probe cost per hit, wall time (ns): {spread(wall_costs)}")
sys.exit(0 if ok else 1)
