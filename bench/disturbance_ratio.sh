#!/usr/bin/env bash
# Bench, root, real hotplug of one CPU (default cpu1): operations per second
# of `cpuhp-stress run` bare (health off), with the kernel log health checks
# (the default), and with health plus the disturbance probes (SCHED_OTHER,
# then SCHED_FIFO 50), interleaved round by round so drift hits all alike.
# Rates come from the reports (totals.ops / run.elapsed_ns: the probes'
# baseline phase is before the run and not counted).
#   disturbance_ratio.sh CPUHP_STRESS [CPU] [OPS] [ROUNDS]
set -euo pipefail
bin=${1:?}; cpu=${2:-1}; ops=${3:-1000}; rounds=${4:-3}
f=/sys/devices/system/cpu/cpu$cpu/online
[ -w "$f" ] || { echo "disturbance_ratio.sh: $f is not writable (root and a hotpluggable CPU needed)"; exit 1; }
tmp=$(mktemp -d)
trap 'echo 1 > "$f" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo '{"health": {"enabled": false}}' > "$tmp/bare.json"
echo '{}' > "$tmp/health.json"
echo '{"disturbance": {"enabled": true}}' > "$tmp/probes.json"
echo '{"disturbance": {"enabled": true, "fifo_priority": 50}}' > "$tmp/probes_fifo.json"
variants=(bare health probes probes_fifo)
declare -A secs ops_done
for v in "${variants[@]}"; do secs[$v]=0; ops_done[$v]=0; done
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    "$bin" run --config "$tmp/$v.json" --pattern roundrobin --cpus "$cpu" --iterations "$ops" \
      --seed 1 --state-dir "$tmp/state" --report "$tmp/r.json" --progress never > /dev/null 2>&1
    read -r n ns < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["totals"]["ops"], r["run"]["elapsed_ns"])' "$tmp/r.json")
    ops_done[$v]=$((${ops_done[$v]} + n))
    secs[$v]=$(echo "${secs[$v]} + $ns / 1000000000" | bc -l)
  done
done
printf '%-36s %8s %10s %8s\n' variant ops ops_per_s vs_bare
bare_rate=$(echo "${ops_done[bare]} / ${secs[bare]}" | bc -l)
for v in "${variants[@]}"; do
  rate=$(echo "${ops_done[$v]} / ${secs[$v]}" | bc -l)
  printf '%-36s %8d %10.1f %8.3f\n' "$v" "${ops_done[$v]}" "$rate" "$(echo "$rate / $bare_rate" | bc -l)"
done
