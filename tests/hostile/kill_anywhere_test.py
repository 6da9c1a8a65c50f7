#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Kill anywhere: SIGKILL the daemon at 50 random points of a real run on cpu1
(during start-up, mid-operation, while cpu1 is offline, while the report is
written), then run `cpuhp-stress restore`: after each, the online mask equals
the starting mask and no state file is left. Counts how many kills landed
with cpu1 offline (there must be some, or the test proved little).

Real hotplug (root, cpu1); skipped otherwise (exit 77).
    kill_anywhere_test.py BUILD_DIR [KILLS] [SEED]
"""
import os
import random
import subprocess
import sys
import tempfile
import time

SYS = "/sys/devices/system/cpu"
CPU = int(os.environ.get("CPUHP_TEST_CPU", "1"))
ONLINE = f"{SYS}/cpu{CPU}/online"


def read(path):
    with open(path) as f:
        return f.read().strip()


def main():
    binary = os.path.join(sys.argv[1], "cpuhp-stress")
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    if os.geteuid() != 0 or not os.access(ONLINE, os.W_OK):
        print(f"SKIPPED: needs root and a hotpluggable cpu{CPU}")
        return 77
    start_mask = read(f"{SYS}/online")
    failed = offline_kills = 0
    with tempfile.TemporaryDirectory(prefix="cpuhp-kill.") as d:
        state = os.path.join(d, "state")
        for i in range(kills):
            # Short runs so some kills land in start-up, the report or restore.
            args = [binary, "run", "--cpus", str(CPU), "--pattern", rng.choice(["roundrobin", "all", "random"]),
                    "--iterations", str(rng.choice([20, 200, 0])), "--duration", "5s",
                    "--interval", rng.choice(["0", "1ms", "5ms"]), "--seed", str(i),
                    "--state-dir", state, "--report", os.path.join(d, "r.json"), "--progress", "never"]
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.4))
            was_offline = read(ONLINE) == "0"
            p.kill()
            p.wait()
            offline_kills += was_offline
            r = subprocess.run([binary, "restore", "--state-dir", state], capture_output=True, text=True)
            mask = read(f"{SYS}/online")
            ok = r.returncode == 0 and mask == start_mask and not os.path.exists(f"{state}/state.json")
            if not ok:
                failed += 1
                print(f"kill {i}: restore rc={r.returncode} mask={mask} (want {start_mask}) {r.stderr.strip()}")
                if read(ONLINE) != "1":
                    with open(ONLINE, "w") as f:
                        f.write("1")
    print(f"{kills} kills, {offline_kills} with cpu{CPU} offline at the kill")
    if offline_kills == 0:
        print("no kill landed while the CPU was offline")
        failed += 1
    print(f"{kills - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
