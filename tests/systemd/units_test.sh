#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The units pass `systemd-analyze verify` without a word and score an
# exposure of 2.0 or lower in `systemd-analyze security --offline=true`.
# systemd-analyze runs without systemd as PID 1. The units name the installed
# binary; verify checks that it exists, so the copies here name the built one.
# The exit status of a run that finished with failures (a sim run whose
# writes fail) is one the units do not restart on: a restart would start the
# whole soak again and overwrite its report. A run stopped by SIGTERM (what
# `systemctl stop` sends) exits 4, which the units count as success. A run
# that gave up on a stuck sysfs call (exit 5) is not restarted.
# usage: units_test.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1 bin=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (apt-get install systemd)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
cat > "$tmp/fails.json" <<EOF
{"backend": "sim", "pattern": "roundrobin", "cpus": "1-3", "iterations": 200, "seed": 1,
 "progress": "never", "report": "$tmp/fails-report.json", "sim": {"cpus": 4, "error_rate": 0.2}}
EOF
rc=0
"$bin" run --config "$tmp/fails.json" >"$tmp/fails.out" 2>&1 || rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 2 ] || [ ! -s "$tmp/fails-report.json" ]; then
  echo "FAIL: a sim run with failed writes exited $rc, report written: $([ -s "$tmp/fails-report.json" ] && echo yes || echo no)"
  cat "$tmp/fails.out"; status=1
fi
echo "a run that finished with failures exits $rc"
# A run stopped by SIGTERM before its target (what `systemctl stop` sends)
# exits with a status of its own, which the units count as success.
cat > "$tmp/stopped.json" <<EOF
{"backend": "sim", "pattern": "roundrobin", "cpus": "1-3", "iterations": 1000000, "seed": 1,
 "progress": "never", "report": "$tmp/stopped-report.json",
 "sim": {"cpus": 4, "stall_every": 10, "stall_ns": 20000000}}
EOF
"$bin" run --config "$tmp/stopped.json" >"$tmp/stopped.out" 2>&1 &
pid=$!
sleep 1
kill -TERM "$pid"
stop_rc=0
wait "$pid" || stop_rc=$?
if [ "$stop_rc" = 0 ] || [ "$stop_rc" = 1 ] || [ "$stop_rc" = 3 ] || [ ! -s "$tmp/stopped-report.json" ]; then
  echo "FAIL: a sim run stopped by SIGTERM exited $stop_rc (0 would say it finished), report written: $([ -s "$tmp/stopped-report.json" ] && echo yes || echo no)"
  cat "$tmp/stopped.out"; status=1
fi
echo "a run stopped by SIGTERM exits $stop_rc"
# A run whose sysfs call never returns gives up with a status of its own,
# which the units must not restart on either (the restart's restore would
# block the same way): a simulated write stalled for a minute, given up after
# 2 s.
cat > "$tmp/gaveup.json" <<EOF
{"backend": "sim", "pattern": "roundrobin", "cpus": "1-3", "iterations": 100, "seed": 1,
 "progress": "never", "report": "$tmp/gaveup-report.json", "stuck_timeout": "1s",
 "stuck_give_up": "2s", "sim": {"cpus": 4, "stall_every": 5, "stall_ns": 60000000000}}
EOF
gave_rc=0
timeout 30 "$bin" run --config "$tmp/gaveup.json" >"$tmp/gaveup.out" 2>&1 || gave_rc=$?
if [ "$gave_rc" != 5 ] || [ -e "$tmp/gaveup-report.json" ] ||
  ! grep -q "GIVING UP: cpu[0-9] o[nf]*line (op 4) has not returned after 2 s" "$tmp/gaveup.out"; then
  echo "FAIL: a sim run with a write stalled 60 s and stuck_give_up 2s exited $gave_rc (want 5, no report)"
  cat "$tmp/gaveup.out"; status=1
fi
echo "a run that gave up on a stuck call exits $gave_rc"
for unit in cpuhp-stress.service cpuhp-stress@.service; do
  name=${unit/@./@soak.}
  sed "s|/usr/local/bin/cpuhp-stress|$bin|g" "$src/systemd/$unit" > "$tmp/$name"
  grep -qx 'Restart=on-failure' "$src/systemd/$unit" || { echo "FAIL: $unit: no Restart=on-failure"; status=1; }
  prevent=$(sed -n 's/^RestartPreventExitStatus=//p' "$src/systemd/$unit" | tr '\n' ' ')
  if ! grep -qw -- "$rc" <<<"$prevent"; then
    echo "FAIL: $unit restarts a run that finished with failures (exit $rc; RestartPreventExitStatus=$prevent)"
    status=1
  fi
  if ! grep -qw -- "$gave_rc" <<<"$prevent"; then
    echo "FAIL: $unit restarts a run that gave up on a stuck call (exit $gave_rc; RestartPreventExitStatus=$prevent)"
    status=1
  fi
  success=$(sed -n 's/^SuccessExitStatus=//p' "$src/systemd/$unit" | tr '\n' ' ')
  if ! grep -qw -- "$stop_rc" <<<"$success"; then
    echo "FAIL: $unit counts a stop by systemd (exit $stop_rc) as a failure (SuccessExitStatus=$success)"
    status=1
  fi
  out=$(cd "$tmp" && systemd-analyze verify --man=no "$tmp/$name" 2>&1) || { echo "FAIL: verify $unit exited non-zero"; status=1; }
  if [ -n "$out" ]; then echo "FAIL: verify $unit says:"; echo "$out"; status=1; fi
  sec=$(systemd-analyze security --offline=true "$tmp/$name" 2>&1 || true)
  level=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' <<<"$sec")
  if [ -z "$level" ]; then echo "FAIL: no exposure level for $unit:"; echo "$sec"; status=1; continue; fi
  echo "$unit: exposure $level"
  grep '✗' <<<"$sec" | sed 's/^/  /'
  if ! awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
    echo "FAIL: $unit exposure $level > 2.0"; status=1
  fi
done
exit $status
