#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The boot matrix as a table, from the guests a build tree ran.

    tests/vm/matrix_table.py BUILD_DIR

For every kmod guest under BUILD_DIR (vm-ARCH[-SERIES][-TAG], written by
tests/vm/run_vm_test.sh): the guest's kernel, how many of the module's
probes were placed and which were unavailable on that kernel, the hits and nmissed of the placed ones in the daemon's
run with the kmod source, that run's operations, and how long the guest
ran. Markdown on stdout; exit 1 when no guest was found.
"""
import glob
import json
import os
import re
import sys


def row(work):
    rep = os.path.join(work, "out", "withmod.json")
    if not os.path.exists(rep):
        return None
    with open(rep) as f:
        k = json.load(f)
    probes = k.get("timing_sources", {}).get("kmod", {}).get("probes", [])
    placed = [p for p in probes if p.get("placed")]
    absent = [p for p in probes if not p.get("placed")]
    with open(os.path.join(work, "console.log"), errors="replace") as f:
        m = re.search(r"kernel (\S+)", f.read())
    kernel = m.group(1) if m else "?"
    try:
        with open(os.path.join(work, "guest_time")) as f:
            accel, secs = f.read().split()
        gtime = f"{secs} s ({accel})"
    except (OSError, ValueError):
        gtime = "?"
    cell = os.path.basename(work)[len("vm-"):]
    return (f"| {cell} | {kernel} | {len(placed)} of {len(probes)} "
            f"| {', '.join(p['name'] for p in absent) or '-'} "
            f"| {sum(p.get('hits', 0) for p in placed)} "
            f"| {sum(p.get('nmissed', 0) for p in placed)} "
            f"| {k.get('totals', {}).get('ops', 0)} | {gtime} |")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    rows = [r for r in (row(w) for w in sorted(glob.glob(os.path.join(sys.argv[1], "vm-*")))) if r]
    if not rows:
        print(f"{sys.argv[1]}: no kmod guest results (vm-*/out/withmod.json)", file=sys.stderr)
        return 1
    print("| guest | kernel | probes placed | unavailable here | hits | nmissed | ops | guest time |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
