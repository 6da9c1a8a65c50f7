// SPDX-License-Identifier: GPL-2.0
// The three commands behind the CLI. Exit codes: 0 ok; 1 the run finished but
// something failed (operation errors, readback mismatches, restore, report or
// log write); 2 bad input (config, CPU selection, unusable paths): nothing was
// touched.
#pragma once

#include <csignal>
#include <cstdio>
#include <string>

#include <vector>

#include "config/config.h"
#include "sources/timing_source.h"
#include "util/exit_codes.h"

namespace cpuhp {

// `stop` becomes the signal number on SIGINT/SIGTERM (set by main).
// `sources` join kernel-side timing to each operation (TimingSource); one
// that cannot start here is reported as unavailable with its reason and the
// run goes on without it.
int RunCommand(const Config& cfg, const volatile sig_atomic_t* stop, std::FILE* out,
               const std::vector<TimingSource*>& sources = {});
// The first `max_ops` operations the run would do from the machine's
// current state (every write assumed to succeed); writes nothing.
int DryRunCommand(const Config& cfg, uint64_t max_ops, std::FILE* out);
// Restores on the CPUs under `sysfs_root` (the state file's own root must
// match it).
int RestoreCommand(const std::string& state_dir, const std::string& sysfs_root, std::FILE* out);
int ListCommand(const std::string& sysfs_root, std::FILE* out);

}  // namespace cpuhp
