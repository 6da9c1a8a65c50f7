# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tools/setup.sh and by each tests/*/fetch: the package index and
# downloads of the fetch step (tools/setup.sh test); tests/vm/host_lib.sh
# and tests/vm/cross_daemon.sh source it for apt_fast.

# apt_fast apt-cache|apt-get ARGS...: apt with a binary package cache of its
# own. This machine's apt keeps none (Dir::Cache::pkgcache "", as Debian's
# container images set it), so each apt-cache or apt-get download call
# parses every list again: 3-5 s of CPU, ~50 calls in the fetch step and 3 in
# each guest test. The private cache is checked by apt against the lists on
# every call and rebuilt when they change (written to a temporary file, then
# renamed: tests running side by side are safe).
apt_fast() {
  local tool=$1 d=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}/apt-pkgcache
  shift
  if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
    "$tool" -o Dir::Cache::pkgcache="$d/pkgcache.bin" -o Dir::Cache::srcpkgcache="$d/srcpkgcache.bin" "$@"
  else
    "$tool" "$@"
  fi
}

# apt_index_fresh [PKG[:ARCH]...]: runs `apt-get update` when the package
# index is older than CPUHP_APT_MAX_AGE_H hours (default 24: Debian replaces
# kernel packages on security and point releases, and an old index then
# names files the mirror no longer has) or has no candidate for a PKG.
apt_index_fresh() {
  local max_h=${CPUHP_APT_MAX_AGE_H:-24} stale="" newest
  local stamp=${CPUHP_VM_CACHE:-/var/cache/cpuhp-stress}/.apt-updated
  # The index's age: when apt last renamed a list into place (the lists
  # directory's mtime; the files themselves carry the archive's dates) or
  # when this ran `apt-get update` last (an update that changed nothing).
  newest=$({ stat -c %Y /var/lib/apt/lists "$stamp" 2>/dev/null || true; } | sort -n | tail -1)
  if [ -z "$newest" ] || [ $(( $(date +%s) - newest )) -gt $((max_h * 3600)) ]; then
    stale="the package index is older than ${max_h} h"
  fi
  if [ -z "$stale" ] && [ $# -gt 0 ]; then
    # One apt-cache call (each costs seconds on a loaded machine); a package
    # apt does not know at all prints nothing, so count the candidates.
    local have
    have=$(apt_fast apt-cache policy "$@" 2>/dev/null | awk '/^ *Candidate:/ && $2 != "(none)" {n++} END {print n + 0}')
    [ "$have" = $# ] || stale="no candidate for some of $* in the package index"
  fi
  [ -z "$stale" ] && return 0
  echo "fetch: apt-get update ($stale)" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq || return
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
}
