#!/usr/bin/env bash
# Bench (a): the whole run pipeline (schedule, timed write, readback,
# statistics, report) on the simulated backend, at 1e4, 1e6 and 1e7
# operations: ops/s and peak RSS of the real cpuhp-stress binary.
# Targets: >= 1 M ops/s; peak RSS flat within 1 % from 1e4 to 1e7.
set -euo pipefail
bin=${1:?usage: pipeline.sh path/to/cpuhp-stress}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %12s %12s %14s\n' ops seconds ops_per_s max_rss_kib
base_rss=
for n in 10000 1000000 10000000; do
  start=$(date +%s.%N)
  "$bin" run --backend sim --pattern random --iterations "$n" --seed 1 \
    --report "$tmp/r.json" --progress never > /dev/null
  end=$(date +%s.%N)
  rss=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["max_rss_kib"])' "$tmp/r.json")
  secs=$(echo "$end - $start" | bc -l)
  printf '%-10s %12.3f %12.0f %14s\n' "$n" "$secs" "$(echo "$n / $secs" | bc -l)" "$rss"
  base_rss=${base_rss:-$rss}
  last_rss=$rss
done
echo "rss growth 1e4 -> 1e7: $(echo "scale=4; ($last_rss - $base_rss) * 100 / $base_rss" | bc -l) %"
