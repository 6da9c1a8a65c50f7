#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""daemon/'s folders are layers: a file may include its own folder and the
folders below it, never one above (daemon/README.md). Tests may also include
daemon/testing/. Prints every back-edge and exits 1 if there is one.

    tests/lint/layering.py [DAEMON_DIR]
"""
import os
import re
import sys

# Bottom to top; the same list as daemon/README.md.
LAYERS = ["util", "config", "machine", "stats", "sources", "run", "faults",
          "report", "soak", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def back_edges(daemon):
    rank = {name: i for i, name in enumerate(LAYERS)}
    found = []
    for folder in sorted(os.listdir(daemon)):
        path = os.path.join(daemon, folder)
        if not os.path.isdir(path) or folder in ("schema",):
            continue
        if folder not in rank and folder != "testing":
            found.append(f"{folder}/: not a known layer (add it to LAYERS and daemon/README.md)")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".cc", ".h")):
                continue
            is_test = folder == "testing" or name.endswith("_test.cc")
            with open(os.path.join(path, name), encoding="utf-8") as f:
                text = f.read()
            for target in INCLUDE.findall(text):
                if target == "testing":
                    if not is_test:
                        found.append(f"{folder}/{name}: product code includes testing/")
                    continue
                if target not in rank:
                    found.append(f"{folder}/{name}: includes unknown folder {target}/")
                elif folder != "testing" and rank[target] > rank[folder]:
                    found.append(f"{folder}/{name}: includes {target}/ (above {folder}/)")
    return found


def main():
    daemon = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "daemon")
    edges = back_edges(daemon)
    for e in edges:
        print(e)
    print(f"layering: {len(edges)} back-edge(s) in {os.path.normpath(daemon)}")
    return 1 if edges else 0


if __name__ == "__main__":
    sys.exit(main())
