# SPDX-License-Identifier: GPL-2.0
"""What the host-side guest checks share: the files and step statuses the
guest printed on its console (==CPUHP== BEGIN/END base64 blocks, STATUS
lines), and one "ok"/"FAIL" line per check."""
import base64
import os
import re


def decode_console(text, outdir):
    """Writes every BEGIN/END block into outdir; returns (files, status)."""
    os.makedirs(outdir, exist_ok=True)
    files = {}
    for m in re.finditer(r"==CPUHP== BEGIN (\S+)\n(.*?)==CPUHP== END \1\n", text, re.S):
        data = base64.b64decode("".join(m.group(2).split()))
        files[m.group(1)] = data
        with open(os.path.join(outdir, m.group(1)), "wb") as f:
            f.write(data)
    return files, dict(re.findall(r"==CPUHP== STATUS (\S+) (-?\d+)", text))


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)
