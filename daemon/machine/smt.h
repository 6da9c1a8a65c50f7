// SPDX-License-Identifier: GPL-2.0
// SMT: which CPUs are sibling threads of one core, and what smt/control
// says. The sibling lists exist only for online CPUs, so they are read once,
// with every present CPU online; a mode ("on", "off", a number of threads)
// then names the CPUs it leaves online, as the kernel's
// cpu_smt_thread_allowed() does: the first N threads of each core.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "machine/cpu_control.h"

namespace cpuhp {

struct SmtTopology {
  std::string control;                  // smt/control as read ("on", "off", "4", ...)
  bool active = false;                  // smt/active
  std::vector<std::vector<int>> cores;  // each core's threads, ascending; cores by first thread
  int threads_per_core = 1;             // the most threads of any core

  // The core index of `cpu`, or -1.
  int CoreOf(int cpu) const;
};

// Reads smt/control, smt/active and every present CPU's
// thread_siblings_list. False with a one-line *err naming what is missing:
// no smt/ directory (a kernel without CONFIG_HOTPLUG_SMT), a present CPU
// offline (its topology directory is gone: bring every CPU online first), a
// list that is not a partition of the present CPUs.
bool DiscoverSmt(CpuControl* ctl, const std::vector<int>& present, SmtTopology* smt,
                 std::string* err);

// Why the SMT mode of this machine cannot be switched ("" when it can):
// smt/control says notsupported, notimplemented or forceoff, or every core
// has one thread.
std::string SmtSwitchRefusal(const SmtTopology& smt);

// The threads per core a mode leaves online: "on" all, "off" 1, "N" N (1 ..
// threads_per_core). False with *err for anything else.
bool SmtModeThreads(const SmtTopology& smt, const std::string& mode, int* threads,
                    std::string* err);

// The CPUs a mode leaves online (ascending): the first `threads` of each core.
std::vector<int> SmtModeCpus(const SmtTopology& smt, int threads);

nlohmann::json SmtToJson(const SmtTopology& smt);

}  // namespace cpuhp
