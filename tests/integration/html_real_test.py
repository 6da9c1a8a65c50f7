#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The HTML report of a REAL run, read back from the DOM headless Chromium
builds: a run on this machine's cpu1 (CPUHP_TEST_CPU overrides) with the
tracepoints source, disturbance probes, kernel log health and the kmod source
enabled (unavailable without the module: the page must say so), and a
"WARNING:" line written into /dev/kmsg mid-run (as health_test.py does).
Every chart point checked here must carry the value of the report field it
stands for: disturbance p50/p99/p99.9/max per bucket (us), the kernel-log
marker at its operation index, the top kernel states by self time (ms), the
named phases per online count (ms), the histograms' operation counts.

Needs root, /dev/kmsg and a hotpluggable CPU (else exit 77); without
chromium the DOM checks run on the written file and the screenshot is
skipped. Run under flock /run/lock/cpuhp-real-cpu.lock (ctest does).

    html_real_test.py BUILD_DIR SOURCE_DIR

Artifacts (report, HTML, screenshot) stay in BUILD_DIR/html-real-artifacts.
CPUHP_WRITE_FIXTURE=PATH also copies the report there (how
tests/fixtures/report-real-cpu1.json was made).
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

SYS = "/sys/devices/system/cpu"
from cpuhp_testlib import CPU  # noqa: E402  (CPUHP_TEST_CPU, else found at run time)
TEST_LINE = "WARNING: cpuhp-stress html test line"


def read(path):
    with open(path) as f:
        return f.read().strip()


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.points = {}  # series -> [(x, y)]
        self.marks = []   # (x, kind)
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("class") == "pt" and "data-series" in a:
            self.points.setdefault(a["data-series"], []).append((a["data-x"], float(a["data-y"])))
        if a.get("class") == "mark":
            self.marks.append((a.get("data-x"), a.get("data-kind")))

    def handle_data(self, data):
        self.text.append(data)


def near(a, b):
    return abs(a - b) <= abs(b) * 1e-9 + 1e-9


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    binary = os.path.join(build, "cpuhp-stress")
    online = f"{SYS}/cpu{CPU}/online"
    if os.geteuid() != 0 or not os.access(online, os.W_OK):
        print(f"SKIPPED: needs root and a writable {online}")
        return 77
    if not os.access("/dev/kmsg", os.R_OK | os.W_OK):
        print("SKIPPED: /dev/kmsg not readable and writable")
        return 77
    start = read(f"{SYS}/online")
    art = os.path.join(build, "html-real-artifacts")
    os.makedirs(art, exist_ok=True)
    report = os.path.join(art, "report.json")
    page = os.path.join(art, "report.html")
    png = os.path.join(art, "report.png")
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)
        return cond

    with tempfile.TemporaryDirectory(prefix="cpuhp-html-real.") as tmp:
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump({"kmod": {"enabled": True}, "tracepoints": True,
                       "health": {"enabled": True},
                       "disturbance": {"enabled": True, "baseline": "500ms"}}, f)
        proc = subprocess.Popen(
            [binary, "run", "--config", cfg, "--cpus", str(CPU), "--seed", "1", "--duration",
             "3s", "--iterations", "0", "--interval", "5ms", "--state-dir",
             os.path.join(tmp, "state"), "--report", report, "--progress", "never"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def inject():
            with open("/dev/kmsg", "w") as f:
                f.write(f"<4>{TEST_LINE}\n")
        t = threading.Timer(1.5, inject)
        t.start()
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            t.cancel()
    check(proc.returncode == 0, f"run exit {proc.returncode}: {err.strip()[-500:]}")
    check(read(f"{SYS}/online") == start, f"every CPU online again ({read(f'{SYS}/online')})")
    if failures:
        return 1
    v = subprocess.run(["/usr/bin/python3", f"{src}/tests/validate_report.py",
                        f"{src}/daemon/report/schema/report.schema.json", report],
                       capture_output=True, text=True)
    check(v.returncode == 0, f"report valid against the schema (exit {v.returncode}) {v.stdout}{v.stderr}")
    with open(report) as f:
        r = json.load(f)
    if os.environ.get("CPUHP_WRITE_FIXTURE"):
        shutil.copyfile(report, os.environ["CPUHP_WRITE_FIXTURE"])
    ts = r["timing_sources"]
    check(ts["disturbance"]["status"] == "ok", f"disturbance ok: {ts['disturbance']}"[:300])
    check(ts["kmsg_health"]["status"] == "ok", "kmsg_health ok")
    check(ts["kmod"]["status"] in ("ok", "unavailable"), "kmod ok or unavailable")
    tp_ok = ts.get("tracepoints", {}).get("status") == "ok"
    print(f"     tracepoints: {ts.get('tracepoints', {}).get('status')} "
          f"{ts.get('tracepoints', {}).get('reason', '')}")

    p = subprocess.run([binary, "report", report, "--format", "html", "--output", page],
                       capture_output=True, text=True, timeout=120)
    # Exit 1: the injected warning fails no_kernel_warnings.
    check(p.returncode == 1, f"report exit 1 (the kernel warning check fails): {p.returncode} "
                             f"{p.stderr.strip()}")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        profile = tempfile.mkdtemp(prefix="cpuhp-chromium.")
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={profile}", "--hide-scrollbars"]
        try:
            if os.path.exists(png):
                os.unlink(png)
            subprocess.run([chromium, *flags, f"--screenshot={png}", "--window-size=1280,5200",
                            f"file://{page}"], capture_output=True, text=True, timeout=180)
            check(os.path.exists(png) and os.path.getsize(png) > 50000,
                  f"screenshot {png}")
            dom = subprocess.run([chromium, *flags, "--dump-dom", f"file://{page}"],
                                 capture_output=True, text=True, timeout=180).stdout
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        check("<svg" in dom, "Chromium built the page's DOM")
    else:
        # A dropped case is a skip (tests/expected-skips, tests/ctest_summary.py).
        print("SKIP-CASE chromium: chromium not installed: DOM checks on the file, no screenshot")
        with open(page) as f:
            dom = f.read()
    d = Dom()
    d.feed(dom)
    text = " ".join(d.text)

    # Disturbance: per bucket, baseline vs during offline/online, in us.
    total = ts["disturbance"]["total"]
    for stat, key in (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"),
                      ("max", "max_ns")):
        got = dict(d.points.get(f"disturbance {stat}", []))
        for bucket, label in (("baseline", "baseline"), ("offline", "during offline"),
                              ("online", "during online")):
            s = total[bucket]
            if s["count"] == 0:
                check(label not in got, f"disturbance {stat} {label}: no samples, no bar")
            else:
                check(label in got and near(got[label], s[key] / 1e3),
                      f"disturbance {stat} {label}: {got.get(label)} us = {s[key] / 1e3} us")

    # The injected line, marked at its operation on the timeline.
    h = ts["kmsg_health"]
    first = h["first_event"]
    check(first is not None and first["message"] == TEST_LINE and first["kind"] == "warning",
          f"the injected line is the first event: {first}")
    if first:
        check((str(first["op_index"]), "warning") in d.marks,
              f"timeline mark at operation {first['op_index']}: marks {d.marks}")
        check(0 < first["op_index"] < r["totals"]["ops"], "the mark is inside the run")
    want_marks = sum(len(v) for v in h["first_lines"].values())
    check(len(d.marks) == want_marks, f"{want_marks} marks, one per kept line")

    # Timeline covers the run.
    tl = r["timeline"]
    n_col = tl["columns"].index("offline_n")
    # Max and mean lines only where a point holds several offlines; one line
    # ("offline") when each holds one, where both would coincide.
    several = any(p[n_col] > 1 for p in tl["points"])
    series = "offline max" if several else "offline"
    check(len(d.points.get(series, [])) == sum(1 for p in tl["points"] if p[n_col] > 0),
          f"timeline: one {series} point per point with offline operations")
    check(("offline mean" in d.points) == several, "timeline: a mean line only beside a max")

    # Histograms hold every operation.
    for dr in ("offline", "online"):
        n = sum(y for _, y in d.points.get(f"{dr} histogram", []))
        check(round(n) == r["directions"][dr]["count"], f"{dr} histogram holds {n} operations")
        levels = {str(l["online_cpus"]): l for l in r["per_online_count"][dr] if l["count"]}
        got = dict(d.points.get(f"{dr} p50", []))
        check(set(got) == set(levels) and all(near(got[x], levels[x]["p50_ns"] / 1e6)
                                              for x in levels), f"{dr} p50 vs online CPUs")

    if tp_ok:
        states = sorted((s for s in ts["tracepoints"]["kernel_states"] if s["count"]),
                        key=lambda s: -s["self_ns"])[:15]
        bars = d.points.get("kernel_states", [])
        check(len(bars) == len(states), f"{len(states)} kernel state bars ({len(bars)})")
        if bars and states:
            check(near(bars[0][1], states[0]["self_ns"] / 1e6),
                  f"top kernel state {bars[0][0]}: {bars[0][1]} ms")
        for ph in ts["tracepoints"]["phases"]:
            series = f"{ph['direction']} {ph['name']} (tracepoints) p50"
            got = dict(d.points.get(series, []))
            for l in ph["per_online_count"]:
                # A step shorter than the trace's 1 us resolution reads 0 ns:
                # measured, but not drawable on the log axis these charts use.
                if l["count"] and l["p50_ns"] > 0:
                    check(near(got.get(str(l["online_cpus"]), -1), l["p50_ns"] / 1e6),
                          f"{series} at {l['online_cpus']} online CPUs")
    if ts["kmod"]["status"] == "unavailable":
        check("Kernel phases from the cpuhp_probe module (kmod source): unavailable" in text,
              "the page says the kmod source is unavailable")
        check(not any(s.endswith("(kmod) p50") for s in d.points), "no kmod series drawn")
    check(read(f"{SYS}/online") == start, "every CPU online at the end")
    print(f"artifacts: {art}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
