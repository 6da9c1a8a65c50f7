#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side verdict on the module-free reproducer (tests/vm/guest_kprobe_loop.sh).

kprobe_loop_check.py CONSOLE_LOG WORK_DIR ARCH SMP KERNEL_CONFIG QEMU_RC
Prints the loop count reached, the CPU offline operations seen, and each
Oops/BUG/lockup line; exit 0 if the loop finished with a clean guest log,
else 1.
"""
import re
import sys

from vmlib import kernel_splats

console, work, arch, smp, config, qrc = sys.argv[1:7]
text = open(console, errors="replace").read()
loops = [int(m) for m in re.findall(r"==CPUHP== loop (\d+) ", text)]
done = re.search(r"==CPUHP== loop done (\d+)", text)
offlines = len(re.findall(r"CPU \d+ is now offline", text))
bad, _ = kernel_splats(text)
print(f"kprobe_loop[{arch}]: loop reached {done.group(1) if done else (max(loops) if loops else 0)}"
      f"{' (finished)' if done else ' (did not finish)'}, {offlines} CPU offline operations,"
      f" qemu rc {qrc}")
for line in bad[:20]:
    print("  " + line.strip())
ok = bool(done) and not bad
print("ok" if ok else "FAIL")
sys.exit(0 if ok else 1)
