# SPDX-License-Identifier: GPL-2.0
"""Runs configs/lava/jobs/qemu-ARCH.yaml with Debian's lava-run and asserts on
LAVA's own recorded results (tests/lava/lava_job.sh prepares the kernel, the
ramdisk and the definition's repository, then execs this).

The job as the repository keeps it is the lab's starting point; here only its
artifact URLs (kernel, ramdisk: file:// URLs of what lava_job.sh made) and the
definitions' repository (a git repository of this tree's configs/) are
replaced. The device is configs/lava/devices/qemu-ARCH.jinja2 rendered with
lava-server's device-type templates and the job's context as variables,
which is what a LAVA server does before it hands a job to its dispatcher.

The asserts, from LAVA's `results` records:
- the job and every LAVA action passed (validate, deploy, boot, the test
  shell of each definition) and each definition ran to its end;
- cpuhp-sim (the sim backend) and cpuhp-real (the guest's real CPUs, module
  loaded): every case passed (the stages, every check and measurement of the
  report, cpus_online), load_module among them in cpuhp-real, and cpuhp-real
  timed the kernel's phases (its case list has the module's measurements);
- cpuhp-fail (a sim fault sweep whose rollback is broken): run and
  sim.faults_rolled_back failed, every other check passed;
- cpus_online passed in all three.
A table of every definition's cases (result, measurement, units) is printed.
"""
import argparse
import os
import subprocess
import sys
import time

import yaml

DEFINITIONS = ("cpuhp-sim", "cpuhp-real", "cpuhp-fail")
# cpuhp-fail: the cases that must fail; every other case passes
MUST_FAIL = {"run", "sim.faults_rolled_back"}
# stages the definition records that are not the report's checks
STAGES = {"install", "build", "load_module", "run", "report", "cpus_online"}


def fail(msg):
    print(f"lava_check: FAIL: {msg}")
    sys.exit(1)


def render_device(args, context):
    import jinja2  # (lava-dispatcher's dependency; not needed to judge a log)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([os.path.join(args.src, "configs", "lava", "devices"), args.templates]),
        trim_blocks=True, autoescape=False)
    text = env.get_template(f"qemu-{args.arch}.jinja2").render(**context)
    device = yaml.safe_load(text)
    if not device or "actions" not in device:
        fail(f"qemu-{args.arch}.jinja2 rendered no device")
    return text


def job_for_test(args):
    path = os.path.join(args.src, "configs", "lava", "jobs", f"qemu-{args.arch}.yaml")
    with open(path) as f:
        job = yaml.safe_load(f)
    deploy = next(a["deploy"] for a in job["actions"] if "deploy" in a)
    deploy["images"]["kernel"]["url"] = "file://" + args.kernel
    deploy["images"]["ramdisk"]["url"] = "file://" + args.ramdisk
    names = []
    for action in job["actions"]:
        for d in action.get("test", {}).get("definitions", []):
            d["repository"] = args.repo
            names.append(d["name"])
    if tuple(names) != DEFINITIONS:
        fail(f"{path}: definitions {names}, expected {list(DEFINITIONS)}")
    return job


def run_lava(args, job, device_text):
    out = os.path.join(args.work, "out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(args.work, "job.yaml"), "w") as f:
        yaml.safe_dump(job, f, sort_keys=False)
    with open(os.path.join(args.work, "device.yaml"), "w") as f:
        f.write(device_text)
    with open(os.path.join(args.work, "dispatcher.yaml"), "w") as f:
        f.write("dispatcher_ip: 127.0.0.1\n")
    # lava-dispatcher imports guestfs at start; unpacked (lava_job.sh), its
    # libraries are loaded by path first, so that nothing else (QEMU) runs
    # with them on its library path.
    boot = (
        "import ctypes, os, runpy, sys\n"
        "libs, py, prog = sys.argv[1:4]\n"
        "if libs:\n"
        "    for n in ('libyajl.so.2', 'libssh.so.4', 'libfuse.so.2', 'libvirt.so.0', 'libguestfs.so.0'):\n"
        "        d = next(d for d in (libs + '/usr/lib/x86_64-linux-gnu', libs + '/lib/x86_64-linux-gnu')\n"
        "                 if os.path.exists(os.path.join(d, n)))\n"
        "        ctypes.CDLL(os.path.join(d, n), mode=ctypes.RTLD_GLOBAL)\n"
        "if py:\n"
        "    sys.path.insert(0, py)\n"
        "sys.argv = [prog] + sys.argv[4:]\n"
        "runpy.run_path(prog, run_name='__main__')\n")
    cmd = ["/usr/bin/python3", "-c", boot, args.lava_libs, args.lava_py, args.lava_run,
           "--job-id", str(os.getpid()), "--output-dir", out,
           "--device", os.path.join(args.work, "device.yaml"),
           "--dispatcher", os.path.join(args.work, "dispatcher.yaml"),
           os.path.join(args.work, "job.yaml")]
    log = os.path.join(args.work, "lava.log")
    start = time.monotonic()
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            fail(f"lava-run still running after {args.timeout} s (log: {log})")
    print(f"lava_check: lava-run exited {rc} after {time.monotonic() - start:.0f} s (log: {log})")
    return rc, log


def read_results(log):
    """LAVA's results and errors, and the console lines of each definition
    (between its STARTRUN and ENDRUN signals)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    results, errors, console, current = [], [], {}, None
    with open(log) as f:
        for line in f:
            if '"lvl": "target"' in line:
                try:
                    msg = str(yaml.load(line, Loader=loader).get("msg", ""))
                except yaml.YAMLError:
                    continue
                if "<LAVA_SIGNAL_STARTRUN " in msg:
                    current = msg.split("<LAVA_SIGNAL_STARTRUN ", 1)[1].split()[0]
                elif "<LAVA_SIGNAL_ENDRUN " in msg:
                    current = None
                elif current:
                    console.setdefault(current, []).append(msg)
                continue
            if '"lvl": "results"' not in line and '"lvl": "error"' not in line:
                continue
            try:
                rec = yaml.load(line, Loader=loader)
            except yaml.YAMLError:
                continue
            if rec.get("lvl") == "results":
                results.append(rec["msg"])
            elif rec.get("lvl") == "error":
                errors.append(str(rec.get("msg")))
    return results, errors, console


def judge(results, console, rc, out=print):
    """The problems with LAVA's recorded results (an empty list: as
    expected); each definition's cases are printed with out."""
    problems = []
    lava = [r for r in results if r.get("definition") == "lava"]
    for r in lava:
        if r.get("result") != "pass":
            problems.append(f"LAVA action {r.get('case')} (level {r.get('level', '-')}): {r.get('result')}")
    if not any(r.get("case") == "job" and r.get("result") == "pass" for r in lava):
        problems.append(f"no passing 'job' result (lava-run exit {rc})")
    cases = {}
    for i, name in enumerate(DEFINITIONS):
        suite = f"{i}_{name}"
        got = [r for r in results if r.get("definition") == suite]
        cases[name] = {r["case"]: r for r in got}
        if not any(r.get("case") == suite and r.get("result") == "pass" for r in lava):
            problems.append(f"{name}: LAVA did not record the definition's end ({suite})")
        if not got:
            problems.append(f"{name}: no test case recorded")
            continue
        out(f"\n{name} ({len(got)} cases)")
        for r in got:
            m = f"{r['measurement']} {r.get('units', '')}" if "measurement" in r else ""
            out(f"  {r['case']:<40} {r['result']:<5} {m}")
        c = cases[name]
        if c.get("cpus_online", {}).get("result") != "pass":
            problems.append(f"{name}: cpus_online is {c.get('cpus_online', {}).get('result', 'missing')}")
        checks = set(c) - STAGES
        if not checks:
            problems.append(f"{name}: no check of the report was recorded")
        if name == "cpuhp-fail":
            for case in sorted(MUST_FAIL):
                if c.get(case, {}).get("result") != "fail":
                    problems.append(f"{name}: {case} must fail, is {c.get(case, {}).get('result', 'missing')}")
            bad = [k for k, r in c.items() if k not in MUST_FAIL and r["result"] != "pass" and
                   not (k == "build" and r["result"] == "skip")]
        else:
            bad = [k for k, r in c.items() if r["result"] != "pass" and not (k == "build" and r["result"] == "skip")]
        if bad:
            problems.append(f"{name}: not passed: " + ", ".join(f"{k}={c[k]['result']}" for k in bad))
    real = cases.get("cpuhp-real", {})
    if real.get("load_module", {}).get("result") != "pass":
        problems.append("cpuhp-real: load_module did not pass")
    # The module's timings: the report's text (the definition prints it after
    # the cases) has its kernel phases tables, takedown_cpu among them.
    text = console.get("1_cpuhp-real", [])
    phases = [ln for ln in text if "kernel phases beside the write" in ln]
    takedown = [ln.strip() for ln in text if ln.strip().startswith("takedown_cpu ")]
    if len(phases) < 2 or not takedown:
        problems.append("cpuhp-real: the report has no kernel phases (offline and online) with takedown_cpu: "
                        "the module's records did not reach it")
    else:
        out(f"\ncpuhp-real, the module's phases: {takedown[0]}")
    for name in ("cpuhp-sim", "cpuhp-fail"):
        if not any(k.startswith("sim.") for k in cases.get(name, {})):
            problems.append(f"{name}: its checks are not named sim.* (was it the sim backend?)")
    if "offline_p50" not in real or any(k.startswith("sim.") for k in real):
        problems.append("cpuhp-real: not a measured run (no offline_p50, or sim.* cases)")
    return problems


def main():
    ap = argparse.ArgumentParser()
    for a in ("arch", "src", "work", "kernel", "ramdisk", "repo", "lava-run", "lava-py", "lava-libs", "templates"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("CPUHP_LAVA_TIMEOUT", "1500")))
    args = ap.parse_args()

    job = job_for_test(args)
    device_text = render_device(args, job.get("context", {}))
    rc, log = run_lava(args, job, device_text)
    results, errors, console = read_results(log)
    for e in errors:
        print(f"lava_check: LAVA error: {e}")
    if not results:
        with open(log) as f:
            print("".join(f.readlines()[-20:]), end="")
        fail(f"LAVA recorded no result (lava-run exit {rc})")

    problems = judge(results, console, rc)
    if problems:
        for p in problems:
            print(f"lava_check: FAIL: {p}")
        sys.exit(1)
    print(f"\nlava_check: {args.arch}: LAVA ran the three definitions; every case as expected")


if __name__ == "__main__":
    main()
