#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""End to end on this machine's real cpu1 (root; skipped otherwise, exit 77):
two real runs, compare them, write the HTML report. Run under
flock /run/lock/cpuhp-real-cpu.lock (ctest does).

    verdicts_real_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from cpuhp_testlib import CPU, SYS, read


def main():
    build = sys.argv[1]
    binary = os.path.join(build, "cpuhp-stress")
    online = f"{SYS}/cpu{CPU}/online"
    if os.geteuid() != 0 or not os.access(online, os.W_OK):
        print(f"skip: needs root and a writable {online}")
        return 77
    start = read(f"{SYS}/online")
    art = os.path.join(build, "verdicts-artifacts")
    os.makedirs(art, exist_ok=True)
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory(prefix="cpuhp-verdicts-real.") as tmp:
        reports = []
        for name, seed in (("real-base.json", 1), ("real-cand.json", 2)):
            path = os.path.join(art, name)
            p = subprocess.run([binary, "run", "--pattern", "roundrobin", "--cpus", str(CPU),
                                "--iterations", "200", "--seed", str(seed), "--state-dir",
                                os.path.join(tmp, "state"), "--report", path, "--progress",
                                "never"], capture_output=True, text=True, timeout=600)
            check(p.returncode == 0, f"run {name}: exit {p.returncode} {p.stderr.strip()}")
            reports.append(path)
        check(read(f"{SYS}/online") == start, "every CPU online again after the runs")
        p = subprocess.run([binary, "compare", *reports, "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode in (0, 1), f"compare exit {p.returncode} (0 or 1): {p.stderr.strip()}")
        res = json.loads(p.stdout)
        alls = {r["group"]: r for r in res["rows"] if r["label"] == "all"}
        for d in ("offline", "online"):
            r = alls.get(f"{d} latency")
            check(r is not None and r["base_count"] == 100 and r["cand_count"] == 100,
                  f"{d}: 100 operations on each side")
            check(r is not None and "ci" in r["p50"] and r["p50"]["ci"][0] <= r["p50"]["ratio"]
                  <= r["p50"]["ci"][1], f"{d}: p50 ratio inside its CI")
            if r:
                print(f"     {d} p50 {r['p50']['base_ns'] / 1e6:.3f} ms -> "
                      f"{r['p50']['cand_ns'] / 1e6:.3f} ms, ratio {r['p50']['ratio']:.3f} "
                      f"CI [{r['p50']['ci'][0]:.3f}, {r['p50']['ci'][1]:.3f}] "
                      f"{r['p50']['verdict']}")
        p = subprocess.run([binary, "compare", *reports], capture_output=True, text=True)
        print(p.stdout)
        html = os.path.join(art, "real-report.html")
        p = subprocess.run([binary, "report", reports[1], "--format", "html", "--output", html,
                            "--baseline", reports[0], "--threshold", "50%"],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode in (0, 1) and os.path.getsize(html) > 5000,
              f"HTML written: {html} ({p.stderr.strip()})")
        with open(html) as f:
            page = f.read()
        check(page.count('data-series="offline p50"') == 1 and "<svg" in page,
              "HTML has the latency-vs-online-CPUs point")
    check(read(f"{SYS}/online") == start, "every CPU online at the end")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
