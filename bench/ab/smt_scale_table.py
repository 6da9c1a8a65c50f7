#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The SMT switch scale table (issue 35 part 4) from smt pattern reports:
per report (one guest size), the switch time to each mode (p50 and mean,
the switches timed) and the CPUs each switch moved; then, per method and
mode, the fitted cost per switched CPU.

    bench/ab/smt_scale_table.py REPORT.json...

Reports of both methods may be mixed; each is placed by its smt.method and
the CPUs its switches moved. The fit is ordinary least squares of the mean
switch time on the CPUs switched (one point per report); its 95 % interval
carries each mean's standard error (stddev / sqrt(switches)), so it says
how well the means pin the slope, not that growth is linear: the step
column (cost per added switched CPU between neighbouring sizes) shows that.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_table import fit, ms  # noqa: E402  (the seeds' table: one fit, one format)


def rows_of(path):
    with open(path) as f:
        r = json.load(f)
    smt = r.get("smt")
    if not isinstance(smt, dict):
        sys.exit(f"{path}: no smt section (not a run of --pattern smt)")
    cpus = r["cpus"].get("topology", {}).get("present", "?")
    out = []
    for row in smt["to"]:
        n = row["switches"]
        if n == 0:
            continue
        if row["cpus_per_switch_min"] != row["cpus_per_switch_max"]:
            print(f"note: {path}: switches to {row['mode']} moved "
                  f"{row['cpus_per_switch_min']}..{row['cpus_per_switch_max']} CPUs",
                  file=sys.stderr)
        se = row.get("stddev_ns", 0) / math.sqrt(n)
        out.append({"method": smt["method"], "mode": row["mode"], "present": cpus,
                    "switched": row["cpus_per_switch_max"], "n": n, "p50": row["p50_ns"],
                    "mean": row.get("mean_ns", row["p50_ns"]), "se": se,
                    "failed": row["failed_writes"]})
    return out


def main(argv):
    if not argv:
        sys.exit(__doc__)
    rows = [x for p in argv for x in rows_of(p)]
    rows.sort(key=lambda x: (x["method"], x["mode"], x["switched"]))
    print("| method | to mode | CPUs present | CPUs switched | switches | p50 (ms) | mean (ms) "
          "| ms per switched CPU (mean) | failed writes |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for x in rows:
        print(f"| {x['method']} | {x['mode']} | {x['present']} | {x['switched']} | {x['n']} "
              f"| {ms(x['p50'])} | {ms(x['mean'])} | {ms(x['mean'] / x['switched'])} "
              f"| {x['failed']} |")
    print()
    print("Cost per switched CPU (mean switch time; OLS over the sizes, 95 % interval from the "
          "means' standard errors; then size to size):")
    print()
    groups = {}
    for x in rows:
        groups.setdefault((x["method"], x["mode"]), {})[x["switched"]] = (
            x["n"], x["mean"], x["se"])
    for (method, mode), pts in sorted(groups.items()):
        f = fit(pts)
        xs = sorted(pts)
        steps = ", ".join(f"{a}->{b}: {ms((pts[b][1] - pts[a][1]) / (b - a))}"
                          for a, b in zip(xs, xs[1:]))
        fitted = f"{ms(f[0])} ms [{ms(f[0] - f[1])}, {ms(f[0] + f[1])}]" if f else "one size"
        print(f"- {method}, to {mode}: {fitted}; steps (ms per CPU) {steps or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
