# shellcheck shell=bash disable=SC2154
# SPDX-License-Identifier: GPL-2.0
# Sourced by the real-CPU benches: interleaved pairs against the C loop.
#
# A pair is one run of the C loop and one run of a driver on the same CPU,
# back to back, in alternating order (odd pairs C loop first, even pairs the
# driver first), so that drift and a neighbour's load hit both alike; the
# figure of a driver is the median over the pairs of (driver ops/s) / (C loop
# ops/s), with its spread (min..max). Every driver is a shell function that
# runs once and prints "OPS SECONDS" of its operation loop alone (set-up and
# report writing excluded); any failure ends the bench with the log of the
# failed run: a run that failed is never a fast one.
#
# The caller sets: cloop (path), cpu, ops, pairs, tmp (a scratch directory),
# and calls bench_init before anything touches the CPU.
set -euo pipefail

bench_die() {
  echo "bench: $*" >&2
  exit 1
}

# Serializes with every other user of the real CPU (ctest's cpuhp_real_test
# takes the same lock) and leaves the CPU online whatever happens.
bench_init() {
  online=/sys/devices/system/cpu/cpu$cpu/online
  [ -w "$online" ] || bench_die "$online is not writable (root and a hotpluggable CPU needed)"
  [ -x "$cloop" ] || bench_die "$cloop: not an executable (the hotplug_c_loop target)"
  exec 9> /run/lock/cpuhp-real-cpu.lock
  flock 9
  trap bench_cleanup EXIT
  echo 1 > "$online"
  : > "$tmp/rows"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
}

bench_cleanup() {
  local rc=$?
  for h in "${bench_cleanup_hooks[@]}"; do "$h" || true; done
  echo 1 > "$online" 2> /dev/null || true
  [ "$(cat "$online")" = 1 ] || echo "bench: cpu$cpu is still offline: echo 1 > $online" >&2
  rm -rf "$tmp"
  exit $rc
}
bench_cleanup_hooks=()

# The C loop: "ops=N seconds=S ops_per_s=R cpu_seconds=C" -> "N S proc=C".
run_cloop() {
  local out
  out=$("$cloop" "$cpu" "$ops" 2> "$tmp/cloop.err") ||
    bench_die "C loop failed: $(cat "$tmp/cloop.err")"
  sed -n 's/^ops=\([0-9]*\) seconds=\([0-9.]*\) .* cpu_seconds=\([0-9.]*\)$/\1 \2 proc=\3/p' <<< "$out"
}

bench_cloop() {
  local res
  res=$(run_cloop) || exit 1
  [ -n "$res" ] || bench_die "C loop printed no result"
  echo "cloop:$1 $2 $res" >> "$tmp/rows"
}

# Runs driver $1 once and records "driver pair ops seconds [KEY=VALUE...]" in
# rows, as the driver prints them: proc=S, the CPU seconds of the whole
# process over its loop (the writes' kernel work included; the C loop's too),
# and trace_us=U, the tracepoints source's drain CPU per write.
bench_one() {
  local d=$1 p=$2 res
  res=$("driver_$d") || bench_die "driver $d failed (pair $p)"
  [ -n "$res" ] || bench_die "driver $d printed no result (pair $p)"
  echo "$d $p $res" >> "$tmp/rows"
}

# bench_pairs DRIVER...: pairs x (C loop, driver) for every driver, the
# drivers' order rotating from pair to pair.
bench_pairs() {
  local drivers=("$@") p i d
  local n=${#drivers[@]}
  for p in $(seq "$pairs"); do
    for i in $(seq 0 $((n - 1))); do
      d=${drivers[$(((i + p) % n))]}
      if [ $((p % 2)) = 1 ]; then
        bench_cloop "$d" "$p"
        bench_one "$d" "$p"
      else
        bench_one "$d" "$p"
        bench_cloop "$d" "$p"
      fi
    done
    echo "bench: pair $p/$pairs done" >&2
  done
}

# bench_table TITLE DRIVER:LABEL...: the table of ratios, one row per driver:
# the median ratio, its min..max and a distribution-free 95 % interval of the
# median (order statistics of the pairs' ratios, binomial ranks; none under 6
# pairs): a goal such as ">= 0.98" is shown only when the interval's low end
# clears it, not by a median that the next run moves by the spread.
# CPUHP_BENCH_RATIOS=FILE also appends "DRIVER RATIO" per pair to FILE
# (pool several runs: the median of all their pairs).
bench_table() {
  local title=$1
  shift
  python3 - "$tmp/rows" "$title" "$cpu" "$ops" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)" "$@" << 'EOF'
import math, os, statistics, sys
def median_ci(xs, conf=0.95):
    """Ranks (lo, hi) of the order statistics that cover the median with at
    least conf, for n >= 6 (Bin(n, 1/2) tails); None below."""
    n = len(xs)
    if n < 6:
        return None
    k, tail = 0, 0.0  # largest k with P(Bin(n, 1/2) < k) <= (1 - conf) / 2
    while tail + math.comb(n, k) / 2**n <= (1 - conf) / 2:
        tail += math.comb(n, k) / 2**n
        k += 1
    s = sorted(xs)
    return s[k - 1], s[n - k]
rows, title, cpu, ops, load0, load1, specs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7:]
raw = os.environ.get("CPUHP_BENCH_RATIOS")
rate, cpu_us, proc, kmsg_us = {}, {}, {}, {}
for line in open(rows):
    d, p, n, s, *extra = line.split()
    rate[(d, int(p))] = int(n) / float(s)
    kv = dict(e.split("=", 1) for e in extra)
    if "trace_us" in kv:
        cpu_us.setdefault(d, []).append(float(kv["trace_us"]))
    if "kmsg_us" in kv:
        kmsg_us.setdefault(d, []).append(float(kv["kmsg_us"]))
    if "proc" in kv:  # CPU seconds per write
        proc[(d, int(p))] = float(kv["proc"]) / int(n)
print(f"{title}: cpu{cpu}, {ops} writes per run, load average {load0} before, {load1} after")
print("  tool CPU/write: the run's process CPU per write minus the C loop's in the same pair"
      " (both include the writes' kernel work), median over the pairs")
print(f"{'driver':<46} {'n':>2} {'ops/s':>7} {'C loop':>7} {'ratio':>6} {'min..max':>12} {'95% CI':>13}"
      f" {'trace CPU/write':>15} {'tool CPU/write':>14} {'kmsg/write':>10}")
for spec in specs:
    d, label = spec.split(":", 1)
    pairs = sorted(p for (k, p) in rate if k == d)
    r = [rate[(d, p)] / rate[("cloop:" + d, p)] for p in pairs]
    a = [rate[(d, p)] for p in pairs]
    c = [rate[("cloop:" + d, p)] for p in pairs]
    print(f"{label:<46} {len(r):>2} {statistics.median(a):>7.1f} {statistics.median(c):>7.1f} "
          f"{statistics.median(r):>6.3f} {min(r):>5.3f}..{max(r):<5.3f} "
          + ("%.3f..%.3f" % ci if (ci := median_ci(r)) else "(< 6 pairs)")
          + (f" {statistics.median(cpu_us[d]):>12.1f} us" if d in cpu_us else f" {'-':>15}")
          + (f" {statistics.median(t):>11.1f} us"
             if (t := [(proc[(d, p)] - proc[("cloop:" + d, p)]) * 1e6 for p in pairs
                       if (d, p) in proc and ("cloop:" + d, p) in proc]) else f" {'-':>14}")
          + (f" {statistics.median(kmsg_us[d]):>7.2f} us" if d in kmsg_us else f" {'-':>10}"))
    if raw:  # one line per pair, so that runs can be pooled
        with open(raw, "a") as f:
            f.writelines(f"{d} {x:.4f}\n" for x in r)
EOF
}
