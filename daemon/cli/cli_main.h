// SPDX-License-Identifier: GPL-2.0
// The command line of cpuhp-stress: run, restore, list, compare, merge,
// report; main() sets up signals and logging, then calls CliMain.
#pragma once

#include <signal.h>

namespace cpuhp {

// Parses argv and runs the command it names; returns the exit status. A
// stop signal sets *stop (run and restore see it); list, merge, compare and
// report call default_stop_signals() first: they put nothing back, so a
// stop signal ends them as it ends any tool.
int CliMain(int argc, char** argv, volatile sig_atomic_t* stop, void (*default_stop_signals)());

}  // namespace cpuhp
