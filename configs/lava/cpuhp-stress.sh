#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The steps of the LAVA test definition configs/lava/cpuhp-stress.yaml, run
# from the root of a cpuhp-stress checkout on the device. The definition's
# parameters come in the environment (CONFIG, CPUS, ITERATIONS, DURATION,
# LOAD_MODULE, KDIR, BASELINE_URL, THRESHOLD, PACKAGES, BINARY, MODULE).
#
# Three ways to the binary: built here from this checkout (the default), CI's
# Debian packages (PACKAGES: .deb URLs or paths, space separated, or a
# directory holding them), installed with apt-get (their dependencies from
# the device's archive), or one the device's image already carries (BINARY:
# its path; e.g. a cross-built daemon where no package exists for the
# architecture). The module (LOAD_MODULE=true): built here against KDIR, or
# with PACKAGES cpuhp-probe-dkms's, built by DKMS for the running kernel (its
# headers are installed with the packages) and loaded with cpuhp-probe-load,
# or one the image carries (MODULE: the .ko built for the running kernel,
# loaded with insmod; it wins over the other two). The configs come from
# this checkout in every case.
#
# LAVA runs each step of a definition in a shell with `set -e`: a step that
# exits non-zero ends the definition, and whatever it did not record is lost.
# So this script records a result for every stage in every case and exits 0;
# the verdicts are the test cases:
#   install        the packages building needs (apt-get); with PACKAGES,
#                  CI's packages (downloaded, then apt-get install); with
#                  BINARY, that BINARY --version runs
#   build          CMake build of build/cpuhp-stress (skip with PACKAGES or
#                  BINARY)
#   load_module    (LOAD_MODULE=true) MODULE loaded, or the module built
#                  against KDIR and loaded, or with PACKAGES the DKMS one
#                  (cpuhp-probe-load)
#   run            cpuhp-stress run exited 0 (measurement: its exit code)
#   baseline       (BASELINE_URL set) the baseline report downloaded
#   report         cpuhp-stress report produced its test cases
#   <checks>       one per check and measurement of the report (report --format
#                  lava: no_operation_errors, faults_rolled_back, run_completed,
#                  cpus_restored, offline_p50, ..., compare_* with a baseline;
#                  a sim backend run's are named sim.<check>: never charted
#                  with measured ones)
#   cpus_online    every CPU online at the start is online at the end
# A stage that cannot run because an earlier one failed is recorded as skip.
set -u
: "${CONFIG:=configs/default.json}" "${CPUS:=}" "${ITERATIONS:=}" "${DURATION:=}"
: "${LOAD_MODULE:=false}" "${KDIR:=}" "${BASELINE_URL:=}" "${THRESHOLD:=5%}" "${PACKAGES:=}"
: "${BINARY:=}" "${MODULE:=}"
out=${CPUHP_LAVA_OUT:-/tmp/cpuhp-stress}
report=$out/report.json
mkdir -p "$out"

result() {  # result NAME pass|fail|skip [MEASUREMENT UNITS]
  if [ $# -ge 4 ]; then
    lava-test-case "$1" --result "$2" --measurement "$3" --units "$4"
  else
    lava-test-case "$1" --result "$2"
  fi
}
skip_rest() {  # skip_rest NAME...: stages that could not run
  for n in "$@"; do result "$n" skip; done
  exit 0
}

online_at_start=$(cat /sys/devices/system/cpu/online)

# --- install, build ---------------------------------------------------------------
export DEBIAN_FRONTEND=noninteractive
if [ -n "$BINARY" ]; then
  # The image's own binary: nothing to install or build.
  if "$BINARY" --version; then
    result install pass
    bin=$BINARY
    result build skip
  else
    echo "BINARY: $BINARY: does not run"
    result install fail
    result build skip
    skip_rest run report cpus_online
  fi
elif [ -n "$PACKAGES" ]; then
  # CI's packages: each URL downloaded, each path (or directory's *.deb)
  # copied, then installed in one apt-get call; with the module, the running
  # kernel's headers beside them, so that DKMS builds it now.
  debs=$out/debs
  rm -rf "$debs" && mkdir -p "$debs"
  got=1
  headers=""
  [ "$LOAD_MODULE" != true ] || [ -n "$MODULE" ] || [ -d "/lib/modules/$(uname -r)/build" ] ||
    headers="linux-headers-$(uname -r)"
  # From the archive only what is missing: curl for URLs, kmod for the
  # module, the running kernel's headers for DKMS. An image that already
  # holds the packages' dependencies installs CI's packages offline;
  # apt-get update runs first when something must be fetched, else only
  # when that install fails.
  fetch=""
  case " $PACKAGES " in *://*) command -v curl >/dev/null || fetch=curl ;; esac
  [ "$LOAD_MODULE" != true ] || command -v modprobe >/dev/null || fetch="$fetch kmod"
  updated=""
  if [ -n "$fetch$headers" ]; then
    apt-get update -qq || true
    updated=1
    # shellcheck disable=SC2086 # $fetch: words
    [ -z "$fetch" ] || apt-get install -y -qq --no-install-recommends $fetch || true
  fi
  for p in $PACKAGES; do
    case $p in
    *://*) curl -fsSL --retry 3 -o "$debs/${p##*/}" "$p" || { echo "PACKAGES: $p: download failed"; got=""; } ;;
    *) if [ -d "$p" ]; then
         cp "$p"/*.deb "$debs/" || { echo "PACKAGES: $p: no .deb in this directory"; got=""; }
       else
         cp "$p" "$debs/" || { echo "PACKAGES: $p: cannot read it"; got=""; }
       fi ;;
    esac
  done
  # shellcheck disable=SC2086 # $headers: one word or none
  install_debs() { apt-get install -y -qq --no-install-recommends "$debs"/*.deb $headers; }
  if [ -n "$got" ] && ls "$debs"/*.deb >/dev/null 2>&1 &&
      { install_debs || { [ -z "$updated" ] && apt-get update -qq && install_debs; }; } &&
      command -v cpuhp-stress >/dev/null; then
    result install pass
    bin=cpuhp-stress
    result build skip
  else
    result install fail
    result build skip
    skip_rest run report cpus_online
  fi
else
  # tools/setup.sh's run tier (lava_definition checks the two agree), curl for
  # the baseline, kmod for insmod, dwarves for the module's BTF (pahole: the
  # kernels with CONFIG_DEBUG_INFO_BTF_MODULES, Debian's 6.12 among them).
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential cmake \
      pkg-config libspdlog-dev nlohmann-json3-dev libcli11-dev libsystemd-dev libtracefs-dev \
      libtraceevent-dev libbpf-dev clang bpftool curl kmod dwarves; then
    result install pass
  else
    result install fail  # the build below says whether what is there suffices
  fi
  if cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPUHP_TESTS=OFF -DCPUHP_BENCH=OFF \
      -DCPUHP_FUZZ=OFF -DCPUHP_SANITIZE=OFF -DCPUHP_WERROR=OFF >"$out/cmake.log" 2>&1 &&
      cmake --build build -j "$(nproc)" >>"$out/cmake.log" 2>&1; then
    result build pass
  else
    tail -30 "$out/cmake.log"
    result build fail
    skip_rest run report cpus_online
  fi
  bin=build/cpuhp-stress
fi

# --- the module (kernel-side timing), as kmod/README.md builds it ---------------------
module_loaded=""
if [ "$LOAD_MODULE" = true ] && [ -n "$MODULE" ]; then
  if insmod "$MODULE"; then
    module_loaded=1
    result load_module pass
  else
    echo "MODULE: $MODULE: insmod failed"
    result load_module fail  # the run goes on without kernel phases
  fi
elif [ "$LOAD_MODULE" = true ] && [ -n "$PACKAGES" ]; then
  # DKMS built it when cpuhp-probe-dkms was installed (or did not: its
  # status says why)
  if cpuhp-probe-load >"$out/kmod.log" 2>&1; then
    module_loaded=1
    result load_module pass
  else
    cat "$out/kmod.log"
    dkms status cpuhp-probe 2>&1 || true
    result load_module fail  # the run goes on without kernel phases
  fi
elif [ "$LOAD_MODULE" = true ]; then
  kdir=${KDIR:-/lib/modules/$(uname -r)/build}
  if [ -z "$KDIR" ] && [ ! -d "$kdir" ]; then
    apt-get install -y -qq --no-install-recommends "linux-headers-$(uname -r)" || true
  fi
  if make -C "$kdir" M="$PWD" modules >"$out/kmod.log" 2>&1 && insmod kmod/cpuhp_probe.ko; then
    module_loaded=1
    result load_module pass
  else
    tail -30 "$out/kmod.log"
    result load_module fail  # the run goes on without kernel phases
  fi
fi

# --- run ----------------------------------------------------------------------------
set -- --config "$CONFIG" --report "$report" --progress never
[ -n "$CPUS" ] && set -- "$@" --cpus "$CPUS"
[ -n "$ITERATIONS" ] && set -- "$@" --iterations "$ITERATIONS"
[ -n "$DURATION" ] && set -- "$@" --duration "$DURATION"
rm -f "$report"
rc=0
"$bin" run "$@" || rc=$?
if [ "$rc" = 0 ]; then result run pass 0 exit_code; else result run fail "$rc" exit_code; fi

# --- report: every check a test case ----------------------------------------------------
if [ ! -s "$report" ]; then
  echo "cpuhp-stress run wrote no report ($report)"
  result report fail
else
  set --
  if [ -n "$BASELINE_URL" ]; then
    if curl -fsSL --retry 3 -o "$out/baseline.json" "$BASELINE_URL"; then
      result baseline pass
      set -- --baseline "$out/baseline.json" --threshold "$THRESHOLD"
    else
      echo "baseline $BASELINE_URL: download failed; the report is checked without it"
      result baseline fail
    fi
  fi
  # Exit 1: a check failed (its test case says which); 2: the report or an
  # argument was refused (no test cases).
  rc=0
  "$bin" report "$report" --format lava "$@" >"$out/lava.sh" 2>"$out/report.err" || rc=$?
  cat "$out/report.err"
  if [ "$rc" -le 1 ] && grep -q '^lava-test-case ' "$out/lava.sh"; then
    sh "$out/lava.sh"
    result report pass
  else
    result report fail
  fi
  "$bin" report "$report" --format text || true
fi

# --- leave the board as found -------------------------------------------------------------
[ -z "$module_loaded" ] || rmmod cpuhp_probe || true
online=$(cat /sys/devices/system/cpu/online)
echo "online CPUs: $online (at start: $online_at_start)"
if [ "$online" = "$online_at_start" ]; then result cpus_online pass; else result cpus_online fail; fi
exit 0
