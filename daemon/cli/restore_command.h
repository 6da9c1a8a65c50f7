// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress restore`, and the stale-state restore that `run` also does
// before it starts. Exit codes: util/exit_codes.h.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "machine/restore.h"
#include "util/exit_codes.h"

namespace cpuhp {

// Puts back the mask that a run which did not finish recorded in `dir`, on
// the CPUs under `sysfs_root`: the configured root, which the file's own must
// match (it is never followed). A file from another boot than `boot_id` is
// reported on `out` and removed, its mask not applied; a mask that names CPUs
// that cannot be hotplugged, or would leave no CPU online, is refused. The
// file is removed once the mask is back. `ctl` is the control of
// `sysfs_root` (a run's, watched for stuck calls).
bool RestoreStale(StateDir* dir, const std::string& sysfs_root, CpuControl* ctl,
                  const std::string& boot_id, std::FILE* out, std::string* err);
// The stuck-call watchdog of `restore`: give up before the units'
// TimeoutStopSec (120 s) would kill it, saying what blocked.
struct StuckLimits {
  uint64_t timeout_ns = 30000000000ull;
  uint64_t give_up_ns = 90000000000ull;
};
// Restores on the CPUs under `sysfs_root` (the state file's own root must
// match it). A sysfs call stuck past limits.give_up_ns ends it with
// kExitGaveUp, state.json kept (cli/call_watch.h).
int RestoreCommand(const std::string& state_dir, const std::string& sysfs_root,
                   const StuckLimits& limits, std::FILE* out);

}  // namespace cpuhp
