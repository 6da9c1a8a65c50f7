// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress restore`, and the stale-state restore that `run` also does
// before it starts. Exit codes: util/exit_codes.h.
#pragma once

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
// file is removed once the mask is back.
bool RestoreStale(StateDir* dir, const std::string& sysfs_root, const std::string& boot_id,
                  std::FILE* out, std::string* err);
// Restores on the CPUs under `sysfs_root` (the state file's own root must
// match it).
int RestoreCommand(const std::string& state_dir, const std::string& sysfs_root, std::FILE* out);

}  // namespace cpuhp
