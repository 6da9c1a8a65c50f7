#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SEED_CORPUS REGRESSIONS SECONDS [DICT]
# Replays every regression input, then fuzzes for SECONDS from a copy of the
# seed corpus (with the libFuzzer dictionary DICT if given). A crash leaves
# its input in the build dir and fails the test: add it to REGRESSIONS with
# the fix.
set -euo pipefail
fuzzer=$1; seeds=$2; regressions=$3; seconds=$4; dict=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if compgen -G "$regressions/*" > /dev/null; then
  "$fuzzer" -runs=0 "$regressions"/* 2>&1 | tail -n 3
fi
cp -r "$seeds/." "$work/"
artifacts=$(pwd)/fuzz-artifacts-$(basename "$fuzzer")
mkdir -p "$artifacts"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  ${dict:+-dict="$dict"} -artifact_prefix="$artifacts/" -print_final_stats=1 "$work" \
  2> "$work.log" || {
  tail -n 40 "$work.log"; echo "fuzz: crash; inputs in $artifacts"; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$work.log" | tail -n 3
rm -f "$work.log"
