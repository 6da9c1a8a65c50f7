// SPDX-License-Identifier: GPL-2.0
// The exit codes of every command: 0 ok; 1 the work finished but something
// failed (operation errors, readback mismatches, restore, a regression, a
// failed check, report or log write); 2 bad input (config, CPU selection,
// unusable paths, unreadable reports): nothing was touched.
#pragma once

namespace cpuhp {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

}  // namespace cpuhp
