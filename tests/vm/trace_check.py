#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Decodes a trace fixture guest run (tests/vm/guest_trace.sh).

trace_check.py CONSOLE_LOG WORK_DIR ARCH SMP KERNEL_CONFIG QEMU_RC
Writes trace, states, ops and version into WORK_DIR/out/; exit 0 when all
four came back, the trace has cpuhp_enter and cpuhp_exit lines and every
CPU is online again.
"""
import os
import sys

from vmlib import Checks, decode_console

console, work = sys.argv[1], sys.argv[2]
text = open(console, errors="replace").read()
check = Checks()
files, _ = decode_console(text, os.path.join(work, "out"), check)
outdir = os.path.join(work, "out")
trace = files.get("trace", b"").decode(errors="replace")
ok = (not check.failures and all(k in files for k in ("trace", "states", "ops", "version"))
      and "cpuhp_enter:" in trace and "cpuhp_exit:" in trace and "==CPUHP== DONE" in text)
print(f"trace: {trace.count('cpuhp_enter:')} enter, {trace.count('cpuhp_multi_enter:')} "
      f"multi_enter, {trace.count('cpuhp_exit:')} exit; files in {outdir}")
sys.exit(0 if ok else 1)
