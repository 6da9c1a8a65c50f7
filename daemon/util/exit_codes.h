// SPDX-License-Identifier: GPL-2.0
// The exit codes of every command: 0 ok; 1 something failed (run: an
// internal error, the restore, the report or log write; compare/report: a
// regression, a failed check); 2 bad input (config, CPU selection, unusable
// paths, unreadable reports): nothing was touched; 3 (run) the run finished,
// the machine is put back and the report written, and the report records
// failures (an operation's errno, a readback mismatch, a failed rollback, a
// stuck write, a stop on error). 3 is distinct so that a service does not
// restart a finished soak (RestartPreventExitStatus=3 in systemd/): a restart
// would start the whole run again and overwrite its report. 4 (run)
// interrupted: a signal (SIGINT, SIGTERM, SIGQUIT) stopped the run before its
// target (iterations, duration, end of its sweep); the machine is put back,
// the report written with run_completed failing, and a checkpoint kept when
// there is a state directory (the same run started again resumes). It wins
// over 3: the report lists whatever failed before the stop. A run given no
// target ends only by a signal, and that is its 0 (or 3). The units take it
// as a clean stop (SuccessExitStatus=4 in systemd/). 5 (run, restore) gave
// up: a sysfs read or write had not returned after stuck_give_up (the
// kernel is not answering); no report, state.json and any checkpoint kept for
// the next `restore` (the units do not restart on it: the restart's own
// restore would block the same way).
#pragma once

namespace cpuhp {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFinishedWithFailures = 3;
inline constexpr int kExitInterrupted = 4;
inline constexpr int kExitGaveUp = 5;

}  // namespace cpuhp
