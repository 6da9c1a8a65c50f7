#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The units pass `systemd-analyze verify` without a word and score an
# exposure of 2.0 or lower in `systemd-analyze security --offline=true`.
# systemd-analyze runs without systemd as PID 1. The units name the installed
# binary; verify checks that it exists, so the copies here name the built one.
# usage: units_test.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1 bin=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (apt-get install systemd)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for unit in cpuhp-stress.service cpuhp-stress@.service; do
  name=${unit/@./@soak.}
  sed "s|/usr/local/bin/cpuhp-stress|$bin|g" "$src/systemd/$unit" > "$tmp/$name"
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
