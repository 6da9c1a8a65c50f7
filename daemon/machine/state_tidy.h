// SPDX-License-Identifier: GPL-2.0
// What a state directory accumulates across crashes, cleared at start: the
// temporary files of atomic writes whose writer died (kill -9 between write
// and rename), and all but the newest set-aside files ("*.rejected-<stamp>").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cpuhp {

constexpr size_t kKeepRejected = 5;

// Removes from `dir` every "<name>.tmp.<pid>" whose pid is not a live process,
// and keeps only the `keep_rejected` newest "<name>.rejected-<stamp>" per
// <name> (stamps sort by time). Returns the names removed; never follows a
// subdirectory, and leaves anything it cannot parse alone.
std::vector<std::string> TidyStateDir(const std::string& dir, size_t keep_rejected);

}  // namespace cpuhp
