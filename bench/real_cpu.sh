#!/usr/bin/env bash
# Bench (b), root, real hotplug of one CPU (default cpu1): operations per
# second of `cpuhp-stress run` against a minimal C loop writing 0/1 to the
# same file and against stress-ng --cpu-online, in one run, interleaved so
# that drift hits all three alike. Target: cpuhp-stress >= 0.98 x the C loop.
#   real_cpu.sh CPUHP_STRESS HOTPLUG_C_LOOP [CPU] [OPS] [ROUNDS]
set -euo pipefail
bin=${1:?}; cloop=${2:?}; cpu=${3:-1}; ops=${4:-2000}; rounds=${5:-3}
f=/sys/devices/system/cpu/cpu$cpu/online
[ -w "$f" ] || { echo "real_cpu.sh: $f is not writable (root and a hotpluggable CPU needed)"; exit 1; }
tmp=$(mktemp -d)
trap 'echo 1 > "$f" 2>/dev/null || true; rm -rf "$tmp"' EXIT
have_stress_ng=0; command -v stress-ng > /dev/null && have_stress_ng=1
now() { date +%s.%N; }
declare -A total=([cpuhp]=0 [cloop]=0 [stressng]=0)
for r in $(seq "$rounds"); do
  t=$(now); "$cloop" "$cpu" "$ops" > /dev/null; total[cloop]=$(echo "${total[cloop]} + $(now) - $t" | bc -l)
  t=$(now)
  "$bin" run --pattern roundrobin --cpus "$cpu" --iterations "$ops" --seed 1 \
    --no-tracepoints --state-dir "$tmp/state" --report "$tmp/r.json" --progress never \
    > /dev/null 2>&1
  total[cpuhp]=$(echo "${total[cpuhp]} + $(now) - $t" | bc -l)
  if [ $have_stress_ng = 1 ]; then
    # stress-ng counts one bogo op per offline+online pair: ops/2 of them.
    t=$(now)
    stress-ng --cpu-online 1 --cpu-online-ops $((ops / 2)) --pathological -q > /dev/null 2>&1 || true
    total[stressng]=$(echo "${total[stressng]} + $(now) - $t" | bc -l)
  fi
done
all=$((ops * rounds))
rate() { echo "$all / $1" | bc -l; }
printf '%-28s %10s %12s\n' tool seconds writes_per_s
printf '%-28s %10.2f %12.1f\n' "C loop (pwrite 0/1)" "${total[cloop]}" "$(rate "${total[cloop]}")"
printf '%-28s %10.2f %12.1f\n' "cpuhp-stress run" "${total[cpuhp]}" "$(rate "${total[cpuhp]}")"
[ $have_stress_ng = 1 ] && printf '%-28s %10.2f %12.1f\n' "stress-ng --cpu-online" "${total[stressng]}" "$(rate "${total[stressng]}")"
echo "ratio cpuhp-stress / C loop: $(echo "scale=3; ${total[cloop]} / ${total[cpuhp]}" | bc -l) (target >= 0.98)"
[ $have_stress_ng = 1 ] && echo "ratio cpuhp-stress / stress-ng: $(echo "scale=3; ${total[stressng]} / ${total[cpuhp]}" | bc -l)"
exit 0
