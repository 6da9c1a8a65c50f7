// SPDX-License-Identifier: GPL-2.0
#include "machine/smt.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "util/cpu_list.h"

namespace cpuhp {

int SmtTopology::CoreOf(int cpu) const {
  for (size_t c = 0; c < cores.size(); ++c)
    if (std::binary_search(cores[c].begin(), cores[c].end(), cpu))
      return static_cast<int>(c);
  return -1;
}

bool DiscoverSmt(CpuControl* ctl, const std::vector<int>& present, SmtTopology* smt,
                 std::string* err) {
  *smt = SmtTopology();
  std::string active, ferr;
  if (int e = ctl->ReadSmtFile("control", &smt->control, &ferr); e) {
    *err = e == ENOENT ? ctl->Describe() +
                             "/smt/control: absent: this kernel has no SMT control "
                             "(CONFIG_HOTPLUG_SMT)"
                       : ferr;
    return false;
  }
  if (int e = ctl->ReadSmtFile("active", &active, &ferr); e) {
    *err = ferr;
    return false;
  }
  smt->active = active == "1";
  std::vector<int> seen;
  for (int cpu : present) {
    if (std::binary_search(seen.begin(), seen.end(), cpu))
      continue;
    std::vector<int> siblings;
    if (int e = ctl->ReadThreadSiblings(cpu, &siblings, &ferr); e) {
      *err = e == ENOENT ? ctl->Describe() + "/cpu" + std::to_string(cpu) +
                               "/topology/thread_siblings_list: absent: cpu" + std::to_string(cpu) +
                               " is offline (its topology is gone while it is): bring every "
                               "CPU online first"
                         : ferr;
      return false;
    }
    // A core's list names cpu itself and only present CPUs no other core has.
    const bool self = std::binary_search(siblings.begin(), siblings.end(), cpu);
    const auto bad = std::find_if(siblings.begin(), siblings.end(), [&](int s) {
      return !std::binary_search(present.begin(), present.end(), s) ||
             std::binary_search(seen.begin(), seen.end(), s);
    });
    if (!self || bad != siblings.end()) {
      *err =
          ctl->Describe() + "/cpu" + std::to_string(cpu) +
          "/topology/thread_siblings_list: " + FormatCpuList(siblings) +
          (self ? " names cpu" + std::to_string(*bad) + ", not present or already in another core"
                : " does not name cpu" + std::to_string(cpu));
      return false;
    }
    seen.insert(seen.end(), siblings.begin(), siblings.end());
    std::sort(seen.begin(), seen.end());
    smt->threads_per_core = std::max(smt->threads_per_core, static_cast<int>(siblings.size()));
    smt->cores.push_back(std::move(siblings));
  }
  return true;
}

std::string SmtSwitchRefusal(const SmtTopology& smt) {
  if (smt.control == "notsupported" || smt.control == "notimplemented")
    return "smt/control is \"" + smt.control + "\": this machine's SMT cannot be switched";
  if (smt.control == "forceoff")
    return "smt/control is \"forceoff\" (booted with nosmt=force): SMT stays off until reboot";
  if (smt.threads_per_core < 2)
    return "no SMT: every core has one thread (thread_siblings_list)";
  return "";
}

bool SmtModeThreads(const SmtTopology& smt, const std::string& mode, int* threads,
                    std::string* err) {
  if (mode == "on") {
    *threads = smt.threads_per_core;
    return true;
  }
  if (mode == "off") {
    *threads = 1;
    return true;
  }
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(mode.c_str(), &end, 10);
  if (mode.empty() || *end != '\0' || errno || n < 1 || n > smt.threads_per_core) {
    *err = "SMT mode \"" + mode + "\": not \"on\", \"off\" or a number of threads 1.." +
           std::to_string(smt.threads_per_core) + " (this machine's threads per core)";
    return false;
  }
  *threads = static_cast<int>(n);
  return true;
}

std::vector<int> SmtModeCpus(const SmtTopology& smt, int threads) {
  std::vector<int> out;
  for (const std::vector<int>& core : smt.cores)
    out.insert(out.end(), core.begin(),
               core.begin() + std::min<ptrdiff_t>(threads, static_cast<ptrdiff_t>(core.size())));
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json SmtToJson(const SmtTopology& smt) {
  nlohmann::json cores = nlohmann::json::array();
  for (const std::vector<int>& core : smt.cores)
    cores.push_back(FormatCpuList(core));
  return {{"control", smt.control},
          {"active", smt.active},
          {"threads_per_core", smt.threads_per_core},
          {"cores", std::move(cores)}};
}

}  // namespace cpuhp
