#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the kernel's checkpatch.pl on the module sources and the bpf source's
# programs (daemon/sources/bpf/). checkpatch is not packaged on its own in Debian: it comes from linux-source-<ver> (about
# 140 MB), fetched with apt-get download and unpacked once into
#   /var/cache/cpuhp-stress/checkpatch/<ver>/  (only scripts/ is kept)
#   tools/checkpatch.sh [--strict]
set -euo pipefail
cd "$(dirname "$0")/.."
cache=/var/cache/cpuhp-stress/checkpatch
pkg=$(apt-cache search --names-only '^linux-source-[0-9.]+$' | awk '{print $1}' | sort -V | tail -1)
[ -n "$pkg" ] || { echo "tools/checkpatch.sh: no linux-source package in the apt index (apt-get update?)" >&2; exit 2; }
ver=${pkg#linux-source-}
cp="$cache/$ver/scripts/checkpatch.pl"
if [ ! -f "$cp" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  chown _apt "$tmp" 2>/dev/null || true  # apt-get download runs as _apt
  (cd "$tmp" && apt-get download -q "$pkg" >/dev/null) ||
    { echo "tools/checkpatch.sh: apt-get download $pkg failed" >&2; exit 2; }
  dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$tmp" "./usr/src/$pkg.tar.xz"
  tar -xJf "$tmp/usr/src/$pkg.tar.xz" -C "$tmp" "$pkg/scripts/checkpatch.pl" \
      "$pkg/scripts/spelling.txt" "$pkg/scripts/const_structs.checkpatch"
  mkdir -p "$cache/$ver"
  mv "$tmp/$pkg/scripts" "$cache/$ver/"
fi
exec perl "$cp" --no-tree --terse "$@" -f kmod/cpuhp_probe.c kmod/uapi/cpuhp_probe.h \
  daemon/sources/bpf/cpuhp_phases.bpf.c daemon/sources/bpf/cpuhp_phases_abi.h
