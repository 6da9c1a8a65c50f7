// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress run`: its steps, from the machine as found to the report.
// Exit codes: util/exit_codes.h.
#pragma once

#include <csignal>
#include <cstdio>
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

}  // namespace cpuhp
