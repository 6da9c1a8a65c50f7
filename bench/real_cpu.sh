#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench (b), root, real hotplug of one CPU (default cpu1): operations per
# second of `cpuhp-stress run` as a ratio to a minimal C loop writing 0/1 to
# the same file, in interleaved pairs (bench/pairs_lib.sh), per source:
#   default             what a user gets: every default source on
#   no_tracepoints      --no-tracepoints (kernel log health and kmod still on)
#   tracepoints_only    the tracepoints source alone
#   health_only         the kmsg_health source alone
#   kmod_only           the kmod source alone (needs the cpuhp_probe module)
#   bare                no source but the write timing
#   stress_ng           stress-ng --cpu-online, when it can only pick this CPU
#   c_loop_traced       the C loop itself with the three cpuhp events enabled
#                       in a scratch tracefs instance nobody reads: the
#                       kernel's own cost of recording them, the floor of any
#                       run with the tracepoints source (issue 31: ~0.97 at
#                       ~780 writes/s)
# Rates of cpuhp-stress come from its report (totals.ops / run.elapsed_ns:
# the operation loop, not the sources' set-up nor the report writing); the
# whole process is timed separately, 60 writes against the C loop's 60
# ("startup"). Target: default >= 0.98, no_tracepoints >= 0.99, startup
# < 100 ms. Beside each ratio, the tracepoints source's CPU per write (its
# report's drain_cpu_ns / ops, median over the pairs; target <= 15 us) and
# the tool's CPU per write: the whole process's CPU over its loop (report
# process.loop_cpu_ns, every thread) per write minus the C loop's in the same
# pair. Both include the writes' own kernel work, so the difference is what
# the tool adds; unlike the ratio it does not move with the machine's pace.
# And the kernel-log source's time per write (kmsg_health.drain_ns / ops:
# the writer reads /dev/kmsg before and after each write).
#   real_cpu.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS] [DRIVER...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: real_cpu.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS] [DRIVER...]}
cloop=${2:?}
cpu=${3:-1}
ops=${4:-400}
pairs=${5:-5}
shift $(($# < 5 ? $# : 5))
[ "$pairs" -ge 1 ] || { echo "real_cpu.sh: PAIRS must be >= 1" >&2; exit 2; }
[ $((ops % 2)) = 0 ] || { echo "real_cpu.sh: OPS must be even (the CPU ends online)" >&2; exit 2; }
tmp=$(mktemp -d)
# shellcheck source=pairs_lib.sh
. "$here/pairs_lib.sh"
bench_init

echo '{"health": {"enabled": false}, "kmod": {"enabled": false}}' > "$tmp/tracepoints_only.json"
echo '{"kmod": {"enabled": false}}' > "$tmp/health_only.json"
echo '{"health": {"enabled": false}}' > "$tmp/kmod_only.json"
echo '{"health": {"enabled": false}, "kmod": {"enabled": false}}' > "$tmp/bare.json"
echo '{}' > "$tmp/default.json"

# run_tool N EXPECT CONFIG [ARG...]: one run of N writes; EXPECT lists the
# sources that must report "ok" (a source that fell back to "unavailable"
# would make the run look cheap). Prints "OPS SECONDS" of the loop, and the
# tracepoints source's drain CPU per write in microseconds when it ran.
run_tool() {
  local n=$1 expect=$2 config=$3
  shift 3
  if ! "$bin" run --config "$tmp/$config.json" --pattern roundrobin --cpus "$cpu" \
    --iterations "$n" --seed 1 --state-dir "$tmp/state" --report "$tmp/r.json" \
    --progress never "$@" > "$tmp/run.log" 2>&1; then
    tail -n 20 "$tmp/run.log" >&2
    bench_die "cpuhp-stress run ($config $*) failed"
  fi
  python3 - "$tmp/r.json" "$n" "$expect" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
n, expect = int(sys.argv[2]), [s for s in sys.argv[3].split(",") if s]
t, run, src = r["totals"], r["run"], r["timing_sources"]
bad = []
if run["stop_reason"] != "iterations" or t["ops"] != n or t["failed"] or t["readback_mismatches"]:
    bad.append(f"stop_reason {run['stop_reason']}, {t['ops']} ops, {t['failed']} failed")
for s in expect:
    if src.get(s, {}).get("status") != "ok":
        bad.append(f"source {s}: {src.get(s, {}).get('status', 'absent')} {src.get(s, {}).get('reason', '')}")
if bad:
    sys.exit("cpuhp-stress report: " + "; ".join(bad))
tp = src.get("tracepoints", {})
cpu = f" trace_us={tp['drain_cpu_ns'] / t['ops'] / 1000:.1f}" if tp.get("status") == "ok" else ""
kh = src.get("kmsg_health", {})
if kh.get("status") == "ok" and "drain_ns" in kh:
    cpu += f" kmsg_us={kh['drain_ns'] / t['ops'] / 1000:.2f}"
proc = r.get("process", {})
if proc.get("loop_ops") == n:
    cpu += f" proc={proc['loop_cpu_ns'] / 1e9:.6f}"
print(t["ops"], run["elapsed_ns"] / 1e9, cpu)
EOF
}

driver_default() { run_tool "$ops" tracepoints,kmsg_health default; }
driver_no_tracepoints() { run_tool "$ops" kmsg_health default --no-tracepoints; }
driver_tracepoints_only() { run_tool "$ops" tracepoints tracepoints_only; }
driver_health_only() { run_tool "$ops" kmsg_health health_only --no-tracepoints; }
driver_kmod_only() { run_tool "$ops" kmod kmod_only --no-tracepoints; }
driver_bare() { run_tool "$ops" "" bare --no-tracepoints; }
driver_stress_ng() {
  # One bogo op is one offline+online pair.
  local want=$((ops / 2)) got secs
  if ! stress-ng --cpu-online 1 --cpu-online-ops "$want" --pathological --metrics-brief \
    > "$tmp/stress.log" 2>&1; then
    tail -n 20 "$tmp/stress.log" >&2
    bench_die "stress-ng --cpu-online failed"
  fi
  # "stress-ng: info:  [pid] cpu-online  OPS  REAL_S  USR_S  SYS_S ..."
  read -r got secs < <(awk '$4 == "cpu-online" && $5 ~ /^[0-9]+$/ {print $5, $6}' "$tmp/stress.log")
  [ "${got:-0}" = "$want" ] || {
    cat "$tmp/stress.log" >&2
    bench_die "stress-ng did $got of $want offline+online pairs"
  }
  echo "$((got * 2)) $secs"
}

# The scratch instance of c_loop_traced: made before the pairs (drivers run
# in subshells), removed at exit.
traced=""
traced_remove() { [ -z "$traced" ] || rmdir "$traced"; }
traced_make() {
  local t ev
  t=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
  [ -n "$t" ] || bench_die "c_loop_traced: tracefs is not mounted"
  traced=$t/instances/cpuhp-bench-$$
  mkdir "$traced" || bench_die "c_loop_traced: cannot make $traced"
  bench_cleanup_hooks+=(traced_remove)
  echo 1410 > "$traced/buffer_size_kb"
  echo mono > "$traced/trace_clock"
}
traced_events() {  # traced_events 0|1
  local ev
  for ev in cpuhp_enter cpuhp_multi_enter cpuhp_exit; do
    echo "$1" > "$traced/events/cpuhp/$ev/enable" || bench_die "c_loop_traced: cannot set cpuhp/$ev/enable to $1"
  done
}
# The events are on only around this driver's loop: the C loop it is compared
# with, and the other drivers, run untraced.
driver_c_loop_traced() {
  local out
  echo > "$traced/trace"  # each run starts with an empty ring, as a run's own instance
  traced_events 1
  out=$("$cloop" "$cpu" "$ops") || { traced_events 0; bench_die "c_loop_traced: $cloop failed"; }
  traced_events 0
  # "ops=N seconds=S ops_per_s=R cpu_seconds=C"
  sed -n 's/^ops=\([0-9]*\) seconds=\([0-9.]*\) .* cpu_seconds=\([0-9.]*\)$/\1 \2 proc=\3/p' <<< "$out"
}

drivers=("$@")
if [ ${#drivers[@]} = 0 ]; then
  drivers=(default no_tracepoints tracepoints_only health_only kmod_only bare stress_ng)
fi
labels=()
run=()
for d in "${drivers[@]}"; do
  declare -F "driver_$d" > /dev/null || bench_die "unknown driver $d"
  case $d in
    kmod_only)
      # A source that cannot start is measured as nothing: say why, skip it.
      if [ ! -e /dev/cpuhp_probe ]; then
        echo "kmod_only: skipped: /dev/cpuhp_probe is absent (the cpuhp_probe module is not loaded;" \
          "$( [ -e /proc/modules ] && echo "load it with insmod" || echo "this kernel has no module support")" \
          ")" >&2
        continue
      fi
      ;;
    c_loop_traced) traced_make ;;
    stress_ng)
      command -v stress-ng > /dev/null || { echo "stress_ng: skipped: no stress-ng" >&2; continue; }
      # stress-ng --cpu-online toggles a random hotpluggable CPU: only when
      # ours is the only one does it measure the same CPU as the others.
      others=""
      for o in /sys/devices/system/cpu/cpu[0-9]*/online; do
        [ "$o" = "$online" ] || others="$others ${o%/online}"
      done
      if [ -n "$others" ]; then
        echo "stress_ng: skipped: it would also toggle$others" >&2
        continue
      fi
      ;;
  esac
  run+=("$d")
  labels+=("$d:$d")
done
[ ${#run[@]} -gt 0 ] || bench_die "no driver left to run"
bench_pairs "${run[@]}"
bench_table "real_cpu.sh, ratio to the C loop, median of $pairs interleaved pairs" "${labels[@]}"

# Startup: the whole process of a 60-write default run against the whole C
# loop process of 60 writes, interleaved; the extra milliseconds per pair.
python3 - "$bin" "$cloop" "$cpu" "$pairs" "$tmp" << 'EOF'
import statistics, subprocess, sys, time
bin, cloop, cpu, pairs, tmp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def wall(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"startup: {cmd[0]} exited {p.returncode}: {p.stderr[-2000:]}")
    return time.monotonic() - t
tool = [bin, "run", "--pattern", "roundrobin", "--cpus", cpu, "--iterations", "60", "--seed", "1",
        "--state-dir", f"{tmp}/state", "--report", f"{tmp}/startup.json", "--progress", "never"]
extra = []
for p in range(pairs):
    pair = [lambda: wall([cloop, cpu, "60"]), lambda: wall(tool)]
    if p % 2:
        pair.reverse()
    a, b = (f() for f in pair)
    c, t = (a, b) if p % 2 == 0 else (b, a)
    extra.append((t - c) * 1000)
print(f"startup, 60 writes, default run minus C loop (whole processes): median "
      f"{statistics.median(extra):.1f} ms, min..max {min(extra):.1f}..{max(extra):.1f} ms, "
      f"n {len(extra)} (target < 100 ms)")
EOF
