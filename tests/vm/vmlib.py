# SPDX-License-Identifier: GPL-2.0
"""What the host-side guest checks share: the files and step statuses the
guest printed on its console (==CPUHP== BEGIN/END base64 blocks, STATUS
lines), one "ok"/"FAIL" line per check, and what counts as a kernel problem
in a guest log."""
import base64
import binascii
import os
import re


B64_LINE = re.compile(r"[A-Za-z0-9+/]*={0,2}")
KERNEL_LINE = re.compile(r"\[\s*\d+\.\d+\] ")


def decode_console(text, outdir, check):
    """Writes every BEGIN/END block into outdir; returns (files, status).
    A kernel message the console printed inside a block is dropped; any
    other line that is not base64 (the shell's "Segmentation fault" when
    base64 itself died) fails the block, as does one that does not decode:
    a failed check naming the block, and no file, never an exception."""
    os.makedirs(outdir, exist_ok=True)
    files = {}
    for m in re.finditer(r"==CPUHP== BEGIN (\S+)\n(.*?)==CPUHP== END \1\n", text, re.S):
        name, lines = m.group(1), m.group(2).splitlines()
        foreign = [ln for ln in lines if not B64_LINE.fullmatch(ln.strip())]
        alien = [ln for ln in foreign if not KERNEL_LINE.match(ln)]
        if alien:
            check(False, f"console block {name}: only base64 between its markers (got {alien[:3]!r})")
            continue
        try:
            data = base64.b64decode("".join(ln.strip() for ln in lines if ln not in foreign),
                                    validate=True)
        except binascii.Error as e:
            check(False, f"console block {name}: decodes ({e})")
            continue
        if foreign:
            print(f"note {name}: {len(foreign)} kernel line(s) printed inside the block, dropped")
        files[name] = data
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    return files, dict(re.findall(r"==CPUHP== STATUS (\S+) (-?\d+)", text))


def nmissed_allowed(name, hits):
    """The nmissed a guest check accepts for a probe with hits hits, on every
    kernel (kmod/README.md, "nmissed"). get_nohz_timer_target is hot and
    called from interrupts and idle: a miss is a call while a kprobe handler
    already runs on the CPU (an interrupt in the kprobe code around ours, or
    another kprobe/BPF user) or, on 6.1, a return with RCU not watching;
    bounded at 1 % of hits, at least 1. The hotplug-path probes run once or
    twice per operation in task or stopper context: 0."""
    if name == "get_nohz_timer_target":
        return max(hits, 100) // 100
    return 0


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)


# A kernel problem in a guest log. A WARN() splat starts "WARNING: CPU: n
# PID: p at file:line": bare "WARNING: ..." lines are notices (pseries under
# VOF prints "WARNING: nvram ...") or health_test.py's own /dev/kmsg line.
SPLAT = re.compile(r"WARNING: CPU:|cut here \]|BUG:|Oops|Call Trace|[Kk]ernel panic|"
                   r"general protection|int3: |KASAN|UBSAN|possible circular locking|"
                   r"possible recursive locking|inconsistent lock state|suspicious RCU usage|"
                   r"INFO: task .* blocked|hung_task|soft lockup|hard LOCKUP|"
                   r"rcu_sched self-detected stall|rcu: INFO: rcu_(sched|preempt) detected stalls|"
                   r"list_(add|del) corruption")


def kernel_splats(log, known=()):
    """The lines of log that show a kernel problem (SPLAT). known: a tuple of
    (name, regexes); a whole WARN splat, "[ cut here ]" to "---[ end trace",
    that every regex of one entry matches is left out and counted instead.
    Returns (bad lines, {name: count})."""
    bad, counts, block = [], {}, None

    def close(block):
        text = "\n".join(block)
        for name, regexes in known:
            if all(re.search(r, text) for r in regexes):
                counts[name] = counts.get(name, 0) + 1
                return
        bad.extend(line for line in block if SPLAT.search(line))

    for line in log.splitlines():
        if "[ cut here ]" in line:
            if block:
                close(block)
            block = [line]
        elif block is not None:
            block.append(line)
            if "---[ end trace" in line:
                close(block)
                block = None
        elif SPLAT.search(line):
            bad.append(line)
    if block:
        close(block)
    return bad, counts
