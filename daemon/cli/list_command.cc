// SPDX-License-Identifier: GPL-2.0
#include "cli/list_command.h"

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "machine/cpu_control.h"
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
  return kExitOk;
}

}  // namespace cpuhp
