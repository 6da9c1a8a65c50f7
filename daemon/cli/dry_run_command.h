// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress run --dry-run N`. Exit codes: util/exit_codes.h.
#pragma once

#include <cstdint>
#include <cstdio>

#include "config/config.h"
#include "util/exit_codes.h"

namespace cpuhp {

// The first `max_ops` operations the run would do from the machine's
// current state (every write assumed to succeed); writes nothing.
int DryRunCommand(const Config& cfg, uint64_t max_ops, std::FILE* out);

}  // namespace cpuhp
