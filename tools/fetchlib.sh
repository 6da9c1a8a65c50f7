# SPDX-License-Identifier: GPL-2.0
# Sourced by tools/setup.sh and by each tests/*/fetch: the package index and
# downloads of the fetch step (tools/setup.sh test).

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
    have=$(apt-cache policy "$@" 2>/dev/null | awk '/^ *Candidate:/ && $2 != "(none)" {n++} END {print n + 0}')
    [ "$have" = $# ] || stale="no candidate for some of $* in the package index"
  fi
  [ -z "$stale" ] && return 0
  echo "fetch: apt-get update ($stale)" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq || return
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
}
