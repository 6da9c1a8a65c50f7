#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bench, root, real hotplug of one CPU (default cpu1): operations per second
# of `cpuhp-stress run --no-tracepoints` bare (health off), with the kernel
# log health checks (the default), and with health plus the disturbance
# probes (SCHED_OTHER, then SCHED_FIFO 50), each as the ratio to the C loop
# in interleaved pairs (bench/pairs_lib.sh). Rates come from the reports
# (totals.ops / run.elapsed_ns: the probes' baseline phase is before the run
# and not counted).
#   disturbance_ratio.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: disturbance_ratio.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [PAIRS]}
cloop=${2:?}
cpu=${3:-1}
ops=${4:-400}
pairs=${5:-5}
tmp=$(mktemp -d)
# shellcheck source=pairs_lib.sh
. "$here/pairs_lib.sh"
bench_init
echo '{"health": {"enabled": false}, "kmod": {"enabled": false}}' > "$tmp/bare.json"
echo '{"kmod": {"enabled": false}}' > "$tmp/health.json"
echo '{"kmod": {"enabled": false}, "disturbance": {"enabled": true}}' > "$tmp/probes.json"
echo '{"kmod": {"enabled": false}, "disturbance": {"enabled": true, "fifo_priority": 50}}' \
  > "$tmp/probes_fifo.json"

run_variant() {
  if ! "$bin" run --config "$tmp/$1.json" --no-tracepoints --pattern roundrobin --cpus "$cpu" \
    --iterations "$ops" --seed 1 --state-dir "$tmp/state" --report "$tmp/r.json" \
    --progress never > "$tmp/run.log" 2>&1; then
    tail -n 20 "$tmp/run.log" >&2
    bench_die "cpuhp-stress run ($1) failed"
  fi
  python3 - "$tmp/r.json" "$ops" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t, run = r["totals"], r["run"]
if run["stop_reason"] != "iterations" or t["ops"] != int(sys.argv[2]) or t["failed"]:
    sys.exit(f"cpuhp-stress report: stop_reason {run['stop_reason']}, {t['ops']} ops, {t['failed']} failed")
print(t["ops"], run["elapsed_ns"] / 1e9)
EOF
}
driver_bare() { run_variant bare; }
driver_health() { run_variant health; }
driver_probes() { run_variant probes; }
driver_probes_fifo() { run_variant probes_fifo; }

bench_pairs bare health probes probes_fifo
bench_table "disturbance_ratio.sh, ratio to the C loop, median of $pairs pairs" \
  "bare:--no-tracepoints, health off" "health:--no-tracepoints (health on)" \
  "probes:+ disturbance probes (SCHED_OTHER)" "probes_fifo:+ disturbance probes (SCHED_FIFO 50)"
