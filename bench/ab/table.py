#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of one tools/abtest.sh run, for the docs: per kernel phase (the
module's kernel_phases, all levels) and the write latency, A and B p50, the
ratio B/A with its 95 % interval, the verdict, and each side's per-boot p50
range; then get_nohz_timer_target as the module counts it (log2 buckets: no
percentile interval), per boot: calls and mean (sum_ns / count).

    bench/ab/table.py OUT_DIR [--p99]     (tools/abtest.sh --out OUT_DIR)

--p99 adds the same rows at p99 (the tail: a sleep that only some
bring-ups take). The get_nohz_timer_target table is left out when no boot
counted a call.
"""
import glob
import json
import os
import sys

args = [a for a in sys.argv[1:] if a != "--p99"]
if len(args) != 1:
    sys.exit("usage: bench/ab/table.py OUT_DIR [--p99]")
out = args[0]
quantiles = ["p50"] + (["p99"] if "--p99" in sys.argv[1:] else [])
c = json.load(open(os.path.join(out, "compare.json")))


def ms(ns):
    return f"{ns / 1e6:.3f}"


def rng(r):
    return f"{ms(r[0])}..{ms(r[1])}" if r else "-"


print(f"A: {c['baseline']} ({c.get('baseline_boots', 1)} boots), "
      f"B: {c['candidate']} ({c.get('candidate_boots', 1)} boots), threshold {c['threshold']:.0%}\n")
for q in quantiles:
    print(("\n" if q != "p50" else "") +
          f"| phase | A {q} ms | B {q} ms | B/A [95% CI] | verdict | A boots | B boots |")
    print("|---|---|---|---|---|---|---|")
    for row in c["rows"]:
        label, group = row["label"], row["group"]
        if group.endswith("latency") and label == "all":
            name = group.replace(" latency", "") + " write"
        elif group == "timing_sources.kmod" and label.endswith(".all") and ".kernel_phases." in label:
            name = label.split(".kernel_phases.")[1][:-4].replace(".", " ", 1)
        else:
            continue
        m = row.get(q)
        if not m:
            continue
        ci = f" [{m['ci'][0]:.3f}, {m['ci'][1]:.3f}]" if "ci" in m else ""
        verdict = m["verdict"] + (" (boots disagree)" if m.get("boots_disagree") else "")
        b = m.get("boots", {})
        print(f"| {name} | {ms(m['base_ns'])} | {ms(m['cand_ns'])} | {m['ratio']:.3f}{ci} | {verdict} "
              f"| {rng(b.get('base_range_ns'))} | {rng(b.get('cand_range_ns'))} |")

def nohz(path):
    return json.load(open(path))["timing_sources"]["kmod"].get("get_nohz_timer_target", {})


boot_files = {side: sorted(glob.glob(os.path.join(out, side, "boot*.json"))) for side in ("a", "b")}
if not any(nohz(p).get("count", 0) for side in boot_files for p in boot_files[side]):
    sys.exit(0)
print("\nget_nohz_timer_target (the module's log2 histogram; mean = sum_ns / calls):\n")
print("| side | boot | calls | mean ns | median bucket |")
print("|---|---|---|---|---|")
means = {}
for side in ("a", "b"):
    tot_n = tot_sum = 0
    for path in boot_files[side]:
        g = nohz(path)
        n, s = g.get("count", 0), g.get("sum_ns", 0)
        tot_n, tot_sum = tot_n + n, tot_sum + s
        half, acc, med = n / 2, 0, "-"
        for bkt in g.get("log2_buckets", []):
            acc += bkt["count"]
            if acc >= half:
                med = f"{bkt['low_ns']}..{2 * bkt['low_ns']} ns"
                break
        boot = os.path.basename(path)[4:-5]
        print(f"| {side.upper()} | {boot} | {n} | {s / n:.0f} | {med} |" if n else
              f"| {side.upper()} | {boot} | 0 | - | {g.get('status', 'absent')} |")
    means[side] = tot_sum / tot_n if tot_n else 0
if means["a"] and means["b"]:
    print(f"\npooled mean: A {means['a']:.0f} ns, B {means['b']:.0f} ns, B/A {means['b'] / means['a']:.3f}")
