// SPDX-License-Identifier: GPL-2.0
#include "cli/restore_command.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/call_watch.h"
#include "faults/faults.h"
#include "machine/machine_lock.h"
#include "machine/sysfs_file.h"
#include "machine/topology.h"
#include "run/watched_cpu_control.h"
#include "sources/trace_instance.h"
#include "util/cpu_list.h"
#include "util/exit_codes.h"

namespace cpuhp {
namespace {

// Two spellings of one directory are one root; a path that does not resolve
// is compared as written.
bool SameRoot(const std::string& a, const std::string& b) {
  char ra[PATH_MAX];
  char rb[PATH_MAX];
  if (realpath(a.c_str(), ra) && realpath(b.c_str(), rb))
    return std::string(ra) == rb;
  return a == b;
}

std::string Printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return s;
}

}  // namespace

// Puts back the mask that a run which did not finish recorded in `dir`, on
// the CPUs under `sysfs_root`: the configured root, which the file's own must
// match (it is never followed). A file from another boot than `boot_id` is
// reported on `out` and removed, its mask not applied; a mask that names CPUs
// that cannot be hotplugged, or would leave no CPU online, is refused. The
// file is removed once the mask is back.
bool RestoreStale(StateDir* dir, const std::string& sysfs_root, CpuControl* ctl,
                  const std::string& boot_id, std::FILE* out, std::string* err) {
  SavedState saved;
  if (!dir->Read(&saved, err))
    return false;
  const std::string path = dir->state_path();
  // Whoever can write the file must not choose where root writes 0 and 1.
  if (!SameRoot(saved.sysfs_root, sysfs_root)) {
    *err = path + ": recorded for CPUs under " + Printable(saved.sysfs_root) + ", not " +
           sysfs_root + ": not restored (pass that --sysfs-root if it is right, else move the " +
           "file aside after checking the online CPUs by hand)";
    return false;
  }
  if (saved.boot_id != boot_id) {
    // The machine has rebooted since: the kernel brought the CPUs up as it
    // does at boot, and the old mask says nothing about this boot.
    std::fprintf(out, "%s: left by a run in boot %s, this is boot %s: online mask %s not applied\n",
                 path.c_str(), saved.boot_id.c_str(), boot_id.c_str(),
                 FormatCpuList(saved.online_at_start).c_str());
    return dir->Remove(err);
  }
  spdlog::warn("{}: a run (pid {}, started {}) did not finish: restoring online mask {} first",
               path, saved.pid, saved.started_at, FormatCpuList(saved.online_at_start));
  Topology topo;
  if (!DiscoverTopology(ctl, &topo, err))
    return false;
  // Every CPU either list names must be present here: a CPU that is not
  // would fail the restore on every try, and a mask of absent CPUs would take
  // the present ones offline.
  for (const auto& [field, cpus] :
       {std::pair<const char*, const std::vector<int>*>{"online_at_start", &saved.online_at_start},
        {"controlled", &saved.controlled}})
    for (int cpu : *cpus)
      if (!std::binary_search(topo.present.begin(), topo.present.end(), cpu)) {
        *err = path + ": \"" + field + "\" names cpu" + std::to_string(cpu) +
               ", which is not present under " + sysfs_root +
               " (present: " + FormatCpuList(topo.present) + "): not restored";
        return false;
      }
  bool any_online = false;
  for (int cpu : topo.present) {
    const bool controlled =
        std::binary_search(saved.controlled.begin(), saved.controlled.end(), cpu);
    if (controlled && !topo.IsHotpluggable(cpu)) {
      *err = path + ": \"controlled\" names cpu" + std::to_string(cpu) +
             ", which cannot be hotplugged here: not restored";
      return false;
    }
    any_online |= controlled ? std::binary_search(saved.online_at_start.begin(),
                                                  saved.online_at_start.end(), cpu)
                             : topo.IsOnline(cpu);
  }
  if (!any_online) {
    *err = path + ": online mask " + FormatCpuList(saved.online_at_start) +
           " would leave no CPU online: not restored";
    return false;
  }
  // A state left armed in hotplug/fail first: it must not fire below. Only
  // a run that injected faults can have armed one; any other leaves
  // hotplug/fail alone (what is there is not ours to write).
  if (saved.fail_may_be_armed) {
    std::vector<std::string> cleared;
    std::vector<std::string> fail_errors = ClearArmedFail(ctl, saved.controlled, &cleared);
    for (const std::string& c : cleared)
      std::fprintf(out, "cleared hotplug/fail armed on %s\n", c.c_str());
    if (!fail_errors.empty()) {
      *err = path + ": cannot clear " + fail_errors.front();
      return false;
    }
  }
  RestoreResult r = RestoreMask(ctl, saved.controlled, saved.online_at_start, saved.smt_control);
  if (!r.ok) {
    *err = path + ": restore failed: " + r.failures.front();
    return false;
  }
  std::fprintf(out, "restored online mask %s%s from %s (%d writes)\n",
               FormatCpuList(saved.online_at_start).c_str(),
               saved.smt_control.empty() ? "" : (", smt/control " + saved.smt_control).c_str(),
               path.c_str(), r.writes);
  return dir->Remove(err);
}

int RestoreCommand(const std::string& state_dir_path, const std::string& sysfs_root,
                   const StuckLimits& limits, std::FILE* out) {
  // ExecStopPost: whatever the state file holds, an exception here would
  // restore nothing and say only "terminate called".
  try {
    // The host's tracefs belongs to the real CPUs: a fake tree (tests)
    // never had an instance there, and must not remove another run's.
    if (SysfsRoot(sysfs_root).real())
      RestoreTraceInstances(out);
    StateDir dir(state_dir_path);
    std::string err;
    if (!dir.Lock(&err)) {
      spdlog::error("{}", err);
      return kExitFailed;
    }
    if (!dir.HasState()) {
      std::fprintf(out, "nothing to restore: no %s\n", dir.state_path().c_str());
      return kExitOk;
    }
    // Not under a run that holds these CPUs: it would record the result.
    MachineLock machine_lock;
    if (!machine_lock.Acquire(sysfs_root, dir.dir(), DefaultHolderRecordDir(), &err)) {
      spdlog::error("{}", err);
      return kExitFailed;
    }
    // Every read and write watched: a hung hotplug blocks reading `online`.
    InFlight in_flight;
    WatchedCpuControl ctl(NewSysfsCpuControl(sysfs_root), &in_flight);
    std::unique_ptr<StuckWatchdog> watchdog = StartCallWatchdog(
        &in_flight, ctl.inner(), limits.timeout_ns, limits.give_up_ns, "restore",
        [path = dir.state_path()] {
          return path + " is kept: run `cpuhp-stress restore` again once the kernel answers";
        });
    if (!RestoreStale(&dir, sysfs_root, &ctl, ReadBootId(), out, &err)) {
      spdlog::error("{}", err);
      return kExitFailed;
    }
    return kExitOk;
  } catch (const std::exception& e) {
    spdlog::error("restore: internal error: {}", e.what());
    return kExitFailed;
  } catch (...) {
    spdlog::error("restore: internal error");
    return kExitFailed;
  }
}

}  // namespace cpuhp
