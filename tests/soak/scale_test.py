#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Scale: an N-operation simulated run with injected errors, killed with
SIGKILL twice after checkpoints and resumed, ends with the report of an
uninterrupted run with the same seed (everything but the run timing, the
process section and the restart records), and memory stays flat.

usage: scale_test.py BUILD_DIR [OPERATIONS]   (default 10000000)
Prints wall time and peak RSS of both runs."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

build, ops = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
exe = os.path.join(build, "cpuhp-stress")
tmp = tempfile.mkdtemp(prefix="cpuhp-scale.")
config = os.path.join(tmp, "scale.json")
with open(config, "w") as f:
    json.dump({"backend": "sim", "pattern": "random", "iterations": ops, "seed": 20261130,
               "progress": "never", "checkpoint_interval": "300ms",
               "sim": {"cpus": 16, "error_rate": 0.001,
                       # Small runs finish in about a second: a real 50 us
                       # stall every 100 writes leaves room for the kills
                       # on a loaded machine (same in both runs).
                       **({"stall_every": 100, "stall_ns": 50000} if ops < 5_000_000 else {})}}, f)


def run(name, state, kills=()):
    """Runs to completion; for each fraction in kills, SIGKILLs the process
    once a checkpoint past that fraction exists and some more operations
    were done. Returns (report, wall seconds, peak RSS KiB over processes)."""
    report = os.path.join(tmp, name + ".json")
    ckpt = os.path.join(state, "checkpoint.json")
    argv = [exe, "run", "--config", config, "--state-dir", state, "--report", report]
    t0 = time.monotonic()
    peak = 0
    for fraction in list(kills) + [None]:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while fraction is not None:
            hwm = vm_hwm(p.pid)
            peak = max(peak, hwm)
            if p.poll() is not None:
                sys.exit(f"FAIL: {name}: run ended before the kill at {fraction}: {p.stderr.read()}")
            try:
                with open(ckpt) as f:
                    done = json.load(f)["next_index"]
            except (OSError, ValueError, KeyError):
                done = 0
            if done >= fraction * ops:
                time.sleep(0.15)  # operations after the checkpoint: lost, then redone
                peak = max(peak, vm_hwm(p.pid))
                p.send_signal(signal.SIGKILL)
                p.wait()
                assert p.returncode == -signal.SIGKILL, p.returncode
                print(f"{name}: killed (SIGKILL) after checkpoint at op {done}")
                break
            time.sleep(0.02)
        if fraction is None:
            _, err = p.communicate()
            if p.returncode not in (0, 3):  # 3: finished, 0.1 % of writes failed
                sys.exit(f"FAIL: {name}: exit {p.returncode}: {err}")
    wall = time.monotonic() - t0
    with open(report) as f:
        r = json.load(f)
    return r, wall, max(peak, r["process"]["max_rss_kib"])


def vm_hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def comparable(r):
    r = dict(r)
    for k in ("run", "process", "soak"):
        r.pop(k, None)
    r["config"] = {k: v for k, v in r["config"].items() if k not in ("report", "state_dir")}
    return r


whole, whole_s, whole_rss = run("whole", os.path.join(tmp, "state-whole"))
resumed, resumed_s, resumed_rss = run("resumed", os.path.join(tmp, "state-resumed"),
                                      kills=(0.3, 0.65))
fail = []
if whole["totals"]["ops"] != ops or resumed["totals"]["ops"] != ops:
    fail.append(f"ops: whole {whole['totals']['ops']}, resumed {resumed['totals']['ops']}, want {ops}")
if whole["totals"]["failed"] == 0:
    fail.append("no injected error happened")
restarts = resumed["soak"]["restarts"]
if [x["kind"] for x in restarts] != ["crash", "crash"]:
    fail.append(f"restarts: {restarts}")
if whole["soak"]["restarts"]:
    fail.append("the uninterrupted run has restarts")
a, b = comparable(whole), comparable(resumed)
if a != b:
    diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    fail.append(f"reports differ in {diff}")
print(f"ops {ops}, failed {whole['totals']['failed']} (both runs)")
print(f"uninterrupted: wall {whole_s:.1f} s, peak RSS {whole_rss} KiB")
print(f"2 x SIGKILL + resume: wall {resumed_s:.1f} s, peak RSS {resumed_rss} KiB, "
      f"resumed at ops {[x['resumed_at_index'] for x in restarts]}")
if fail:
    print("FAIL: " + "; ".join(fail))
    sys.exit(1)
subprocess.run(["rm", "-rf", tmp])
print("PASS")
