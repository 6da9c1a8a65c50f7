// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress list`: the CPUs under a sysfs root, which can be hotplugged.
// Exit codes: util/exit_codes.h.
#pragma once

#include <cstdio>
#include <string>

#include "util/exit_codes.h"

namespace cpuhp {

int ListCommand(const std::string& sysfs_root, std::FILE* out);

}  // namespace cpuhp
