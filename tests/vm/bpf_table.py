#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bpf source beside the module, as tables, from the guests a build tree ran.

    tests/vm/bpf_table.py BUILD_DIR

For every kmod guest under BUILD_DIR (vm-ARCH[-SERIES]) with a "both" run
(tests/vm/guest_init.sh: kernel_phases.source both, the same operations
timed by the module and the BPF programs): per phase, the count, the
module's p50, the bpf source's p50, their ratio and how the BPF programs
were attached (fentry, kprobe), why not fentry where not; the BPF programs'
own time per hit. For every lockdown
guest (vm-ARCH-SERIES-lockdown): the lockdown mode, what insmod said, the
kmod source's reason and the bpf source's phases. Markdown on stdout
(docs/bpf-source.md holds a copy); exit 1 when no guest was found.
"""
import glob
import json
import os
import re
import sys
from statistics import median


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def kernel_of(work):
    try:
        with open(os.path.join(work, "console.log"), errors="replace") as f:
            m = re.search(r"kernel (\S+)", f.read())
        return m.group(1) if m else "?"
    except OSError:
        return "?"


def both_table(work, r):
    ts = r.get("timing_sources", {})
    k, b = ts.get("kmod", {}), ts.get("bpf", {})
    mech = {p["name"]: p.get("mechanism", "?") for p in b.get("probes", [])}
    cell = os.path.basename(work)[len("vm-"):]
    out = [f"\n**{cell}** ({kernel_of(work)}, {r.get('totals', {}).get('ops')} operations)\n",
           "| phase | n | kmod p50 (us) | bpf p50 (us) | bpf/kmod | per op: median bpf - kmod (us) | attach |",
           "|---|---|---|---|---|---|---|"]
    kops = {o["index"]: o["phases"] for o in k.get("ops", [])}
    bops = {o["index"]: o["phases"] for o in b.get("ops", [])}
    for d in ("offline", "online"):
        for name, ph in sorted(k.get("kernel_phases", {}).get(d, {}).items()):
            bph = b.get("kernel_phases", {}).get(d, {}).get(name, {})
            k50 = ph.get("all", {}).get("p50_ns", 0)
            b50 = bph.get("all", {}).get("p50_ns", 0)
            ratio = f"{b50 / k50:.3f}" if k50 and b50 else "-"
            diffs = [bops[i][name] - kops[i][name] for i in kops if i in bops and name in kops[i] and name in bops[i]]
            paired = f"{median(diffs) / 1e3:+.1f} ({len(diffs)} ops)" if diffs else "-"
            attach = mech.get(name, "sum of two" if name == "bringup" else "?")
            out.append(f"| {d}/{name} | {ph.get('all', {}).get('count')} | {k50 / 1e3:.1f} | "
                       f"{b50 / 1e3:.1f} | {ratio} | {paired} | {attach} |")
    why = sorted({p["fentry_reason"] for p in b.get("probes", []) if p.get("placed") and p.get("fentry_reason")})
    if why:
        out.append("\nNot fentry: " + "; ".join(why))
    progs = {n: c for n, c in b.get("program_cost", {}).get("programs", {}).items() if c.get("runs")}
    if progs:
        out.append("\nBPF programs' own time per hit (bpf_stats): " + ", ".join(
            f"{n} {c.get('mean_ns', 0):.0f} ns ({c.get('runs')} runs)" for n, c in sorted(progs.items())))
    return out


def lockdown_row(work, r):
    try:
        with open(os.path.join(work, "console.log"), errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    mode = re.search(r"==CPUHP== LOCKDOWN .*\[(\w+)\]", text)
    insmod = re.search(r"==CPUHP== STATUS insmod_lockdown (\d+)", text)
    ts = r.get("timing_sources", {})
    b = ts.get("bpf", {})
    phases = [f"{d}/{n} {ph.get('all', {}).get('p50_ns', 0) / 1e3:.0f}"
              for d in ("offline", "online") for n, ph in sorted(b.get("kernel_phases", {}).get(d, {}).items())]
    refused = "refused (exit %s)" % insmod.group(1) if insmod and insmod.group(1) != "0" else "LOADED"
    why = "lockdown named" if "lockdown is" in ts.get("kmod", {}).get("reason", "") else \
        ts.get("kmod", {}).get("reason", "?")
    cell = os.path.basename(work)[len("vm-"):]
    mech = "/".join(sorted({p.get("mechanism", "?") for p in b.get("probes", []) if p.get("placed")})) or "-"
    return (f"| {cell} | {kernel_of(work)} | {mode.group(1) if mode else '?'} | {refused}, {why} | "
            f"{b.get('status')} | {mech} | {', '.join(phases) or '-'} |")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "."
    found = False
    out = ["### Both sources on the same operations"]
    for work in sorted(glob.glob(os.path.join(build, "vm-*"))):
        r = load(os.path.join(work, "out", "both.json"))
        if r:
            found = True
            out += both_table(work, r)
    out += ["", "### Lockdown integrity guests", "",
            "| guest | kernel | lockdown | insmod of the unsigned module | bpf | attach | bpf phase p50s (us) |",
            "|---|---|---|---|---|---|---|"]
    for work in sorted(glob.glob(os.path.join(build, "vm-*-lockdown"))):
        r = load(os.path.join(work, "out", "lockdown.json"))
        if r:
            found = True
            out.append(lockdown_row(work, r))
    print("\n".join(out))
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
