#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Decodes a trace fixture guest run (tests/vm/guest_trace.sh).

trace_check.py CONSOLE_LOG WORK_DIR ARCH SMP KERNEL_CONFIG QEMU_RC
Writes trace, states, ops and version into WORK_DIR/out/; exit 0 when all
four came back, the trace has cpuhp_enter and cpuhp_exit lines and every
CPU is online again.
"""
import base64
import os
import re
import sys

console, work = sys.argv[1], sys.argv[2]
text = open(console, errors="replace").read()
outdir = os.path.join(work, "out")
os.makedirs(outdir, exist_ok=True)
files = {}
for m in re.finditer(r"==CPUHP== BEGIN (\S+)\n(.*?)==CPUHP== END \1\n", text, re.S):
    files[m.group(1)] = base64.b64decode("".join(m.group(2).split()))
    open(os.path.join(outdir, m.group(1)), "wb").write(files[m.group(1)])
trace = files.get("trace", b"").decode(errors="replace")
ok = (all(k in files for k in ("trace", "states", "ops", "version"))
      and "cpuhp_enter:" in trace and "cpuhp_exit:" in trace and "==CPUHP== DONE" in text)
print(f"trace: {trace.count('cpuhp_enter:')} enter, {trace.count('cpuhp_multi_enter:')} "
      f"multi_enter, {trace.count('cpuhp_exit:')} exit; files in {outdir}")
sys.exit(0 if ok else 1)
