# SPDX-License-Identifier: GPL-2.0
"""One tools/abtest.sh boot, judged from its console (tests/vm/guest_ab.sh):
the module loaded and unloaded, the daemon exited 0 with a report that
validates against the schema, every timing source it ran ok, every CPU
online at the end, no kernel splat. Copies the report to OUT.

  ab_check.py CONSOLE_LOG WORKDIR QEMU_STATUS OUT_REPORT

Prints one "ok"/"FAIL" line per check; exit 0 when all hold, 1 with the
first failure on stderr (one line) otherwise."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmlib import Checks, decode_console, kernel_splats  # noqa: E402

log, work, qrc, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(log, errors="replace").read()
check = Checks()
files, status = decode_console(text, os.path.join(work, "out"), check)
check("==CPUHP== DONE" in text, f"the guest finished (QEMU exit {qrc})")
up = re.search(r"==CPUHP== guest up: online (\S+) kernel (\S+)", text)
check(up is not None, "the guest reached /init" + (f": kernel {up.group(2)}" if up else ""))
for step in ("insmod", "daemon", "rmmod"):
    check(status.get(step) == "0", f"{step} exited {status.get(step, 'never')}")
end = re.search(r"==CPUHP== online at end (\S+)", text)
if up and end:
    check(end.group(1) == up.group(1), f"every CPU online at the end ({end.group(1)}, {up.group(1)} at start)")
report = None
if "report.json" in files:
    try:
        report = json.loads(files["report.json"])
    except ValueError as e:
        check(False, f"report.json is JSON ({e})")
check(report is not None, "the daemon's report came back")
if report is not None:
    here = os.path.dirname(os.path.abspath(__file__))
    schema = os.path.join(here, "..", "..", "daemon", "report", "schema", "report.schema.json")
    v = subprocess.run([sys.executable, os.path.join(here, "..", "validate_report.py"), schema,
                        os.path.join(work, "out", "report.json")], capture_output=True, text=True)
    check(v.returncode == 0, "the report validates" + ("" if v.returncode == 0 else ": " + (v.stdout + v.stderr).strip()[-300:]))
    run = report.get("run", {})
    check(run.get("stop_reason") in ("iterations", "schedule_complete"),
          f"the run ended by itself (stop_reason {run.get('stop_reason')})")
    check(report.get("totals", {}).get("failed", 1) == 0, f"no failed operation ({report.get('totals', {}).get('failed')})")
    # Every source the config turned on must have worked: one that fell
    # back to "unavailable" would compare nothing and look like no change.
    # kernel_phases.source "auto" (the default) turns on one of kmod and
    # bpf: the module when it runs, and then the bpf source stands down.
    sources = report.get("timing_sources", {})
    auto = report.get("config", {}).get("kernel_phases", {}).get("source", "auto") == "auto"
    for src, st in sorted(sources.items()):
        if src == "bpf" and auto and sources.get("kmod", {}).get("status") == "ok":
            continue
        check(st.get("status") == "ok", f"source {src}: {st.get('status')} {st.get('reason', '')}".rstrip())
bad, _ = kernel_splats(files.get("dmesg", b"").decode(errors="replace") or text)
check(not bad, "no kernel splat" + (": " + bad[0][:200] if bad else ""))
if check.failures:
    print(f"ab_check: {log}: {check.failures[0]}", file=sys.stderr)
    sys.exit(1)
shutil.copyfile(os.path.join(work, "out", "report.json"), out)
