#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side asserts on the module robustness guest (tests/vm/guest_robust.sh).

robust_check.py CONSOLE_LOG WORK_DIR ARCH SMP KERNEL_CONFIG QEMU_RC
Writes the decoded files into WORK_DIR/out/, prints one line per check and
the figures (cycles, phase times, drops), and a summary JSON in
WORK_DIR/out/robust-summary.json. Exit 0 if every check held, else 1.
"""
import json
import os
import re
import sys

from vmlib import Checks, decode_console, kernel_splats

console, work, arch, smp, config, qrc = sys.argv[1:7]
smp = int(smp)
text = open(console, errors="replace").read()
outdir = os.path.join(work, "out")
check = Checks()
failures = check.failures
files, status = decode_console(text, outdir, check)
phases = {}
for name, edge, t in re.findall(r"==CPUHP== PHASE (\S+) (start|end) ([\d.]+)", text):
    phases.setdefault(name, {})[edge] = float(t)


def load(name):
    try:
        return json.loads(files[name])
    except (KeyError, ValueError) as e:
        check(False, f"{name} present and parses ({e!r})")
        return {}


check("==CPUHP== DONE" in text, "guest reached the end of /init")
for step in ("cycles", "toggle_cycles", "insmod_readers", "readers", "toggle_readers",
             "contract", "rmmod_open"):
    check(status.get(step) == "0", f"{step} exit status 0 (got {status.get(step)})")

summary = {"arch": arch, "vcpus": smp, "qemu_rc": int(qrc)}
for name in ("cycles.json", "readers.json", "contract.json", "rmmod_open.json"):
    j = load(name)
    for c in j.get("checks", []):
        check(c["ok"], f"{name[:-5]}: {c['name']}: want {c['want']}, got {c['got']}")
    summary[name[:-5]] = {k: v for k, v in j.items() if k != "checks"}
    summary[name[:-5]]["checks"] = len(j.get("checks", []))

cyc = summary.get("cycles", {})
# TCG on a loaded host can be 10x slower than on CI's own cores: the guest
# stops the cycles at its time budget and says so; at least cpuhp_cycles_min
# (default 20) must have run, and the figure is printed either way.
mm = re.search(r"cpuhp_cycles_min=(\d+)", text)
need = int(mm.group(1)) if mm else 20
done, asked = cyc.get("cycles_done", 0), cyc.get("cycles_requested")
full = done == asked and done > 0
check(full or (cyc.get("cut_by_budget") and done >= need),
      f"insmod/rmmod cycles done {done} of {asked}"
      + ("" if full else f" (CUT by the {cyc.get('budget_s')} s budget; at least {need} required)"))
for ph in ("cycles", "readers"):
    t = load(f"toggle-{ph}.json")
    summary[f"toggle_{ph}"] = t
    check(t.get("ops", 0) >= 2 and t.get("errors") == 0,
          f"CPUs toggled during {ph}: {t.get('ops')} writes, {t.get('errors')} errors"
          + (f" ({t.get('first_error')})" if t.get("errors") else ""))
m = re.search(r"==CPUHP== online at end (\S+)", text)
check(m is not None and m.group(1) == f"0-{smp - 1}", f"all CPUs online at end ({m and m.group(1)})")
check("lsmod" in files and b"cpuhp_probe" not in files["lsmod"], "module unloaded at end")

dmesg = files.get("dmesg", b"").decode(errors="replace")
check(dmesg != "", "dmesg captured")
bad, _ = kernel_splats(dmesg + "\n" + text)
check(not bad, "no WARN/BUG/Oops/KASAN/lockdep/RCU splat in the guest log"
      + (": " + bad[0] if bad else ""))
loads = dmesg.count("probes placed, /dev/cpuhp_probe ready")
summary["module_loads_in_dmesg"] = loads
check(loads >= cyc.get("cycles_done", 0) + 1,
      f"dmesg shows {loads} module loads (cycles + 1 for the readers phase)")
lingers = dmesg.count("cpuhp_probe: torture build: return handlers linger")
check(loads > 0 and lingers == loads,
      f"every load was the torture build, return handlers lingering for rmmod to meet "
      f"({lingers} of {loads})")

# What the kernel could have caught: debug options of this kernel.
cfg = {}
if os.path.exists(config):
    for l in open(config):
        mm = re.match(r"(CONFIG_\w+)=(.*)", l)
        if mm:
            cfg[mm.group(1)] = mm.group(2)
debug = {k: cfg.get(k, "n") for k in (
    "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_LOCKDEP", "CONFIG_KASAN", "CONFIG_UBSAN",
    "CONFIG_DEBUG_ATOMIC_SLEEP", "CONFIG_DEBUG_LIST", "CONFIG_KFENCE",
    "CONFIG_HARDENED_USERCOPY", "CONFIG_BUG_ON_DATA_CORRUPTION")}
facts = dict(re.findall(r"==CPUHP== FACT (\S+) (\S+)", text))
summary["kernel_debug_config"] = debug
summary["guest_facts"] = facts
summary["phase_s"] = {k: round(v["end"] - v["start"], 1) for k, v in phases.items()
                      if "start" in v and "end" in v}
print("kernel debug options: " + ", ".join(f"{k[7:]}={v}" for k, v in debug.items())
      + f"; in the guest: lockdep {facts.get('lockdep')}, kasan {facts.get('kasan')}")
print("figures: " + json.dumps(summary, sort_keys=True))
json.dump(summary, open(os.path.join(outdir, "robust-summary.json"), "w"), indent=1, sort_keys=True)
if failures:
    print(f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
