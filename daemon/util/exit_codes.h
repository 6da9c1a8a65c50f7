// SPDX-License-Identifier: GPL-2.0
// The exit codes of every command: 0 ok; 1 something failed (run: an
// internal error, the restore, the report or log write; compare/report: a
// regression, a failed check); 2 bad input (config, CPU selection, unusable
// paths, unreadable reports): nothing was touched; 3 (run) the run finished,
// the machine is put back and the report written, and the report records
// failures (an operation's errno, a readback mismatch, a failed rollback, a
// stop on error). 3 is distinct so that a service does not restart a
// finished soak (RestartPreventExitStatus=3 in systemd/): a restart would
// start the whole run again and overwrite its report.
#pragma once

namespace cpuhp {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFinishedWithFailures = 3;

}  // namespace cpuhp
