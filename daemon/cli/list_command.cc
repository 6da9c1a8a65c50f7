// SPDX-License-Identifier: GPL-2.0
#include "cli/list_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "machine/cpu_control.h"
#include "machine/smt.h"
#include "machine/topology.h"
#include "util/cpu_list.h"
#include "util/exit_codes.h"

namespace cpuhp {

int ListCommand(const std::string& sysfs_root, std::FILE* out) {
  auto ctl = NewSysfsCpuControl(sysfs_root);
  Topology topo;
  std::string err;
  if (!DiscoverTopology(ctl.get(), &topo, &err)) {
    spdlog::error("{}", err);
    return kExitBadInput;
  }
  auto in = [](const std::vector<int>& v, int cpu) {
    return std::binary_search(v.begin(), v.end(), cpu);
  };
  std::fprintf(out, "%5s  %-12s  %-7s  %-8s  %-9s\n", "cpu", "hotpluggable", "online", "isolated",
               "nohz_full");
  for (int cpu : topo.present) {
    std::fprintf(out, "%5d  %-12s  %-7s  %-8s  %-9s\n", cpu,
                 topo.IsHotpluggable(cpu) ? "yes" : "no", topo.IsOnline(cpu) ? "yes" : "no",
                 in(topo.isolated, cpu) ? "yes" : "no",
                 !topo.has_nohz_full_file  ? "-"
                 : in(topo.nohz_full, cpu) ? "yes"
                                           : "no");
  }
  std::fprintf(out, "present %s, online %s, hotpluggable %s\n", FormatCpuList(topo.present).c_str(),
               FormatCpuList(topo.online).c_str(), FormatCpuList(topo.hotpluggable).c_str());
  // SMT: what an smt switch would take; a machine without it says why.
  SmtTopology smt;
  if (!DiscoverSmt(ctl.get(), topo.present, &smt, &err)) {
    std::fprintf(out, "smt: unknown: %s\n", err.c_str());
    return kExitOk;
  }
  std::string cores;
  for (const std::vector<int>& core : smt.cores)
    cores += " " + FormatCpuList(core);
  const std::string refusal = SmtSwitchRefusal(smt);
  std::fprintf(out, "smt: control %s, active %d, %d thread%s per core, cores%s%s%s\n",
               smt.control.c_str(), smt.active ? 1 : 0, smt.threads_per_core,
               smt.threads_per_core == 1 ? "" : "s", cores.c_str(), refusal.empty() ? "" : "; ",
               refusal.c_str());
  return kExitOk;
}

}  // namespace cpuhp
