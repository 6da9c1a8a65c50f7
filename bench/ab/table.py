#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of one tools/abtest.sh run, for the docs: per kernel phase (the
module's kernel_phases, all levels) and the write latency, A and B p50, the
ratio B/A with its 95 % interval, the verdict, and each side's per-boot p50
range; then the run's wall time per boot, the figure seed 002's thread
timed (500 hotplug operations under `time`): run.elapsed_ns for totals.ops
writes, the "CPUn: shutdown" lines on that boot's console, and B/A of the
mean wall time with a 95 % bootstrap interval over the boots; then
get_nohz_timer_target as the module counts it (log2 buckets: no percentile
interval), per boot: calls and mean (sum_ns / count).

    bench/ab/table.py OUT_DIR [--p99]     (tools/abtest.sh --out OUT_DIR)

--p99 adds the same rows at p99 (the tail: a sleep that only some
bring-ups take). The get_nohz_timer_target table is left out when no boot
counted a call.
"""
import csv
import glob
import itertools
import json
import os
import random
import re
import sys


def ms(ns):
    return f"{ns / 1e6:.3f}"


def rng(r):
    return f"{ms(r[0])}..{ms(r[1])}" if r else "-"


def boot_bootstrap(a, b, draws=20000):
    """B/A of the means of A's and B's per-boot values, and the 2.5 and
    97.5 percentiles of that ratio over resamplings (with replacement) of
    each side's boots: every resampling when there are at most 100000 pairs
    of them (3 boots a side: 27 x 27), else DRAWS seeded ones."""
    ratio = (sum(b) / len(b)) / (sum(a) / len(a))
    if len(a) ** len(a) * len(b) ** len(b) <= 100000:
        ma = [sum(r) / len(r) for r in itertools.product(a, repeat=len(a))]
        mb = [sum(r) / len(r) for r in itertools.product(b, repeat=len(b))]
        rs = sorted(y / x for x in ma for y in mb)
    else:
        rnd = random.Random(2017)
        rs = sorted((sum(rnd.choices(b, k=len(b))) / len(b)) / (sum(rnd.choices(a, k=len(a))) / len(a))
                    for _ in range(draws))
    return ratio, rs[int(0.025 * (len(rs) - 1))], rs[int(0.975 * (len(rs) - 1))]


def phases(c, quantiles):
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


def consoles(out):
    """(SIDE, BOOT) -> that boot's console file, from the boots.tsv that
    tools/abtest.sh writes beside the reports."""
    paths = {}
    try:
        with open(os.path.join(out, "boots.tsv")) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                paths[(row["side"].lower(), row["boot"])] = os.path.join(out, row["console"])
    except OSError:
        pass
    return paths


def wall(out, boot_files):
    console = consoles(out)
    print("\nrun wall time per boot (seed 002's figure):\n")
    print("| side | boot | writes | wall s | \"CPUn: shutdown\" lines |")
    print("|---|---|---|---|---|")
    secs = {}
    for side in ("a", "b"):
        secs[side] = []
        for path in boot_files[side]:
            r = json.load(open(path))
            boot = os.path.basename(path)[4:-5]
            s = r["run"]["elapsed_ns"] / 1e9
            secs[side].append(s)
            try:
                with open(console[(side, boot)], errors="replace") as f:
                    lines = str(len(re.findall(r"CPU\d+: shutdown", f.read())))
            except (KeyError, OSError):
                lines = "-"
            print(f"| {side.upper()} | {boot} | {r['totals']['ops']} | {s:.3f} | {lines} |")
    if secs["a"] and secs["b"]:
        ratio, lo, hi = boot_bootstrap(secs["a"], secs["b"])
        apart = (" every B boot below every A boot" if max(secs["b"]) < min(secs["a"]) else
                 " every B boot above every A boot" if min(secs["b"]) > max(secs["a"]) else
                 " the boots overlap")
        print(f"\nmean wall: A {sum(secs['a']) / len(secs['a']):.3f} s, B {sum(secs['b']) / len(secs['b']):.3f} s, "
              f"B/A {ratio:.3f} [{lo:.3f}, {hi:.3f}] (bootstrap over boots);{apart}")


def nohz_table(boot_files):
    def nohz(path):
        return json.load(open(path))["timing_sources"]["kmod"].get("get_nohz_timer_target", {})

    if not any(nohz(p).get("count", 0) for side in boot_files for p in boot_files[side]):
        return
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


def main():
    args = [a for a in sys.argv[1:] if a != "--p99"]
    if len(args) != 1:
        sys.exit("usage: bench/ab/table.py OUT_DIR [--p99]")
    out = args[0]
    quantiles = ["p50"] + (["p99"] if "--p99" in sys.argv[1:] else [])
    c = json.load(open(os.path.join(out, "compare.json")))
    print(f"A: {c['baseline']} ({c.get('baseline_boots', 1)} boots), "
          f"B: {c['candidate']} ({c.get('candidate_boots', 1)} boots), threshold {c['threshold']:.0%}\n")
    phases(c, quantiles)
    boot_files = {side: sorted(glob.glob(os.path.join(out, side, "boot*.json")),
                               key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
                  for side in ("a", "b")}
    wall(out, boot_files)
    nohz_table(boot_files)


if __name__ == "__main__":
    main()
