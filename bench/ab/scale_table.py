#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seeds' scale tables (issue 14 part 3) from sweep reports: per online
CPU count (the level: online CPUs before an offline, after an online), the
write latency and the module's kernel phases (p50 and mean),
then the fitted cost per added online CPU of each.

    bench/ab/scale_table.py REPORT.json... [--label NAME]

Several reports (boots of one kernel) are read level by level side by side
(their per-level means are averaged, weighted by count). The fit is
ordinary least squares of the per-level mean on the online count; its 95 %
interval comes from the levels' own standard errors (stddev / sqrt(count))
carried through the fit, so it says how well the measured means pin the
slope, not whether the growth is linear: the step columns (the cost per
added CPU between neighbouring levels) show that.
"""
import json
import math
import sys

def row_names(reports):
    """(name, direction, where) per row: each direction's write latency,
    then every kernel phase the module timed in any of the reports (the
    probed functions differ between kernels and arches)."""
    rows = []
    for d in ("offline", "online"):
        rows.append((f"{d} write", d, "write"))
        phases = set()
        for r in reports:
            kp = r["timing_sources"].get("kmod", {}).get("kernel_phases", {}).get(d, {})
            phases |= {p for p, v in kp.items() if isinstance(v, dict) and v.get("by_online")}
        rows += [(p, d, p) for p in sorted(phases)]
    return rows


def levels_of(report, direction, where):
    """{online_cpus: (count, mean_ns, stddev_ns, p50_ns)} for one row."""
    if where == "write":
        rows = report["per_online_count"].get(direction, [])
    else:
        kmod = report["timing_sources"].get("kmod", {})
        rows = kmod.get("kernel_phases", {}).get(direction, {}).get(where, {}).get("by_online", [])
    # The level: online CPUs before an offline, after an online (the
    # report keys both by the count before the write).
    shift = 1 if direction == "online" else 0
    return {r["online_cpus"] + shift: (r["count"], r["mean_ns"], r.get("stddev_ns", 0.0),
                                       r["p50_ns"]) for r in rows if r.get("count")}


def pooled(reports, direction, where):
    """Per level: count, mean, standard error of the mean, the reports'
    p50s (sorted)."""
    out = {}
    per = [levels_of(r, direction, where) for r in reports]
    for lvl in sorted(set().union(*per)):
        xs = [p[lvl] for p in per if lvl in p]
        n = sum(x[0] for x in xs)
        mean = sum(x[0] * x[1] for x in xs) / n
        # pooled variance: within reports plus between their means
        var = sum((x[0] - 1) * x[2] ** 2 + x[0] * (x[1] - mean) ** 2 for x in xs) / max(n - 1, 1)
        p50s = sorted(x[3] for x in xs)
        out[lvl] = (n, mean, math.sqrt(var / n), p50s)
    return out


def fit(levels):
    """Slope (ns per online CPU) of the level means, its 95 % half-width."""
    xs = sorted(levels)
    if len(xs) < 2:
        return None
    xbar = sum(xs) / len(xs)
    sxx = sum((x - xbar) ** 2 for x in xs)
    ybar = sum(levels[x][1] for x in xs) / len(xs)
    slope = sum((x - xbar) * (levels[x][1] - ybar) for x in xs) / sxx
    se = math.sqrt(sum(((x - xbar) / sxx) ** 2 * levels[x][2] ** 2 for x in xs))
    return slope, 1.96 * se


def ms(ns):
    return f"{ns / 1e6:.3f}"


def p50_cell(p50s):
    """One report's p50, or the range of several reports' (boots')."""
    return ms(p50s[0]) if len(p50s) == 1 else f"{ms(p50s[0])}..{ms(p50s[-1])}"


def main(argv):
    label = None
    if "--label" in argv:
        i = argv.index("--label")
        label = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not argv:
        sys.exit("usage: scale_table.py REPORT.json... [--label NAME]")
    reports = []
    for path in argv:
        try:
            with open(path) as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            sys.exit(f"scale_table.py: {path}: {e}")
    r0 = reports[0]
    kernel = r0.get("host", {}).get("kernel_release", "?")
    print(f"{label or kernel}: {len(reports)} report(s), kernel {kernel}\n")
    rows = [(name, d, pooled(reports, d, w)) for name, d, w in row_names(reports)]
    rows = [(name, d, lv) for name, d, lv in rows if lv]
    for d in ("offline", "online"):
        part = [(n, lv) for n, dd, lv in rows if dd == d]
        lvls = sorted(set().union(*(lv.keys() for _, lv in part)))
        print(f"{d}, p50 / mean ms (n per level; several reports: the range of their p50s,"
              " the pooled mean):\n")
        print("| online CPUs | " + " | ".join(n for n, _ in part) + " |")
        print("|---" * (len(part) + 1) + "|")
        for lvl in lvls:
            cells = [f"{p50_cell(lv[lvl][3])} / {ms(lv[lvl][1])}" if lvl in lv else "-"
                     for _, lv in part]
            n = max(lv[lvl][0] for _, lv in part if lvl in lv)
            print(f"| {lvl} (n={n}) | " + " | ".join(cells) + " |")
        print()
    print("Cost per added online CPU (mean; OLS over the levels, 95 % interval from the"
          " levels' standard errors; then level to level):\n")
    print("| metric | us per CPU [95 % CI] | steps, us per CPU |")
    print("|---|---|---|")
    for name, _, lv in rows:
        f = fit(lv)
        if not f:
            continue
        xs = sorted(lv)
        steps = ", ".join(f"{a}->{b}: {(lv[b][1] - lv[a][1]) / (b - a) / 1e3:.1f}"
                          for a, b in zip(xs, xs[1:]))
        print(f"| {name} | {f[0] / 1e3:.1f} [{(f[0] - f[1]) / 1e3:.1f}, {(f[0] + f[1]) / 1e3:.1f}]"
              f" | {steps} |")


if __name__ == "__main__":
    main(sys.argv[1:])
