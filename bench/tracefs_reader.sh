#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench, root, real hotplug of one CPU (default cpu1): what tracing the cpuhp
# events costs the bare C loop, apart from the daemon, as the ratio to the C
# loop alone in interleaved pairs (bench/pairs_lib.sh):
#   events_on      the three cpuhp events enabled in an instance, nobody reading
#   text_reader    same, `cat trace_pipe` reading the text as it comes
#   raw_readers    same, one `cat per_cpu/cpuN/trace_pipe_raw` per CPU
# The instance is set up before the C loop starts and removed after it ends:
# its set-up is not timed (the C loop times its own loop).
#   tracefs_reader.sh HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cloop=${1:?usage: tracefs_reader.sh HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS]}
cpu=${2:-1}
ops=${3:-400}
pairs=${4:-5}
tr=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
[ -n "$tr" ] || { echo "tracefs_reader.sh: tracefs is not mounted" >&2; exit 1; }
[ -d "$tr/events/cpuhp" ] || { echo "tracefs_reader.sh: no cpuhp events in $tr" >&2; exit 1; }
tmp=$(mktemp -d)
# shellcheck source=pairs_lib.sh
. "$here/pairs_lib.sh"
inst="$tr/instances/cpuhp-bench-$$"
readers=()
stop_instance() {
  for p in "${readers[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${readers[@]}"; do wait "$p" 2> /dev/null || true; done
  readers=()
  if [ -d "$inst" ]; then
    for _ in $(seq 50); do rmdir "$inst" 2> /dev/null && break; sleep 0.1; done
    [ ! -d "$inst" ] || bench_die "$inst: cannot remove"
  fi
}
bench_cleanup_hooks+=(stop_instance)
bench_init

start_instance() {
  mkdir "$inst"
  echo mono > "$inst/trace_clock"
  echo 1 > "$inst/events/cpuhp/enable"
}
with_instance() {
  local res
  start_instance
  case $1 in
    text) cat "$inst/trace_pipe" > /dev/null & readers+=($!) ;;
    raw) for d in "$inst"/per_cpu/cpu*; do cat "$d/trace_pipe_raw" > /dev/null & readers+=($!); done ;;
  esac
  res=$(run_cloop) || exit 1
  stop_instance
  echo "$res"
}
driver_events_on() { with_instance none; }
driver_text_reader() { with_instance text; }
driver_raw_readers() { with_instance raw; }

bench_pairs events_on text_reader raw_readers
bench_table "tracefs_reader.sh, C loop with tracing, ratio to the C loop alone, median of $pairs pairs" \
  "events_on:cpuhp events on, nobody reading" \
  "text_reader:+ a text trace_pipe reader" \
  "raw_readers:+ per-CPU trace_pipe_raw readers"
