#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench, root, real hotplug of one CPU (default cpu1): what reading the cpuhp
# tracepoints costs, as writes per second against a bare run, interleaved
# rounds so that drift hits every mode alike.
#   cpuhp-stress --no-tracepoints   vs  cpuhp-stress (tracepoints on)
#   C loop bare  vs  C loop + a reader of an instance's text trace_pipe
#                vs  C loop + one reader per CPU of per_cpu/cpuN/trace_pipe_raw
# The last two compare the two ways of reading the same events, apart from
# the daemon (why the source reads trace_pipe: daemon/tracefs_source.h).
#   tracefs_reader.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [ROUNDS]
set -euo pipefail
bin=${1:?}; cloop=${2:?}; cpu=${3:-1}; ops=${4:-400}; rounds=${5:-3}
f=/sys/devices/system/cpu/cpu$cpu/online
[ -w "$f" ] || { echo "tracefs_reader.sh: $f is not writable (root and a hotpluggable CPU needed)"; exit 1; }
tr=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
[ -n "$tr" ] || { echo "tracefs_reader.sh: tracefs is not mounted"; exit 1; }
[ -d "$tr/events/cpuhp" ] || { echo "tracefs_reader.sh: no cpuhp events in $tr"; exit 1; }
tmp=$(mktemp -d)
inst="$tr/instances/cpuhp-bench-$$"
readers=()
cleanup() {
  for p in "${readers[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -d "$inst" ] && rmdir "$inst"
  echo 1 > "$f" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
start_instance() {
  mkdir "$inst"; echo mono > "$inst/trace_clock"; echo 1 > "$inst/events/cpuhp/enable"
}
stop_instance() {
  for p in "${readers[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${readers[@]}" 2>/dev/null || true
  readers=()
  rmdir "$inst"
}
declare -A total=([bare]=0 [on]=0 [cloop]=0 [text]=0 [raw]=0)
add() { total[$1]=$(echo "${total[$1]} + $(now) - $2" | bc -l); }
run_tool() {
  "$bin" run --pattern roundrobin --cpus "$cpu" --iterations "$ops" --seed 1 "$@" \
    --state-dir "$tmp/state" --report "$tmp/r.json" --progress never > /dev/null 2>&1
}
for r in $(seq "$rounds"); do
  t=$(now); run_tool --no-tracepoints; add bare "$t"
  t=$(now); run_tool --tracepoints; add on "$t"
  t=$(now); "$cloop" "$cpu" "$ops" > /dev/null; add cloop "$t"
  start_instance
  cat "$inst/trace_pipe" > /dev/null & readers+=($!)
  t=$(now); "$cloop" "$cpu" "$ops" > /dev/null; add text "$t"
  stop_instance
  start_instance
  for d in "$inst"/per_cpu/cpu*; do cat "$d/trace_pipe_raw" > /dev/null & readers+=($!); done
  t=$(now); "$cloop" "$cpu" "$ops" > /dev/null; add raw "$t"
  stop_instance
done
all=$((ops * rounds))
rate() { echo "$all / ${total[$1]}" | bc -l; }
printf '%-44s %9s %12s %7s\n' mode seconds writes_per_s ratio
row() { printf '%-44s %9.2f %12.1f %7.3f\n' "$1" "${total[$2]}" "$(rate "$2")" "$(echo "${total[$3]} / ${total[$2]}" | bc -l)"; }
row "cpuhp-stress --no-tracepoints" bare bare
row "cpuhp-stress (tracepoints on)" on bare
row "C loop" cloop cloop
row "C loop + text trace_pipe reader" text cloop
row "C loop + per-CPU trace_pipe_raw readers" raw cloop
