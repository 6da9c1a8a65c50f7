#!/usr/bin/env bash
# Bench (a): the whole run pipeline (schedule, timed write, readback,
# statistics, report) on the simulated backend, at 1e4, 1e6 and 1e7
# operations: ops/s and peak RSS of the real cpuhp-stress binary.
# Targets: >= 1 M ops/s; peak RSS flat within 1 % from 1e4 to 1e7.
# Peak RSS of one process varies by about +-1.5 % from run to run (where the
# loader maps libraries), so each size runs REPEATS times, interleaved, and
# the minimum RSS and the median rate are printed.
set -euo pipefail
bin=${1:?usage: pipeline.sh path/to/cpuhp-stress [REPEATS]}
repeats=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sizes=(10000 1000000 10000000)
for r in $(seq "$repeats"); do
  for n in "${sizes[@]}"; do
    start=$(date +%s%N)
    "$bin" run --backend sim --pattern random --iterations "$n" --seed 1 \
      --report "$tmp/r.json" --progress never > /dev/null 2>&1
    end=$(date +%s%N)
    rss=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["max_rss_kib"])' "$tmp/r.json")
    echo "$n $(( end - start )) $rss" >> "$tmp/samples"
  done
done
python3 - "$tmp/samples" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    n, ns, rss = map(int, line.split())
    rows.setdefault(n, []).append((ns, rss))
print(f"{'ops':>10} {'median_s':>10} {'ops_per_s':>12} {'min_rss_kib':>12} {'max_rss_kib':>12}")
base = None
for n in sorted(rows):
    ns = statistics.median(r[0] for r in rows[n])
    rss = [r[1] for r in rows[n]]
    base = base or min(rss)
    print(f"{n:>10} {ns / 1e9:>10.3f} {n / (ns / 1e9):>12.0f} {min(rss):>12} {max(rss):>12}")
last = min(r[1] for r in rows[max(rows)])
print(f"min RSS growth 1e4 -> 1e7: {100 * (last - base) / base:+.2f} % (target within 1 %)")
PY
