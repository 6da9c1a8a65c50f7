// SPDX-License-Identifier: GPL-2.0
#include "machine/topology.h"

#include <errno.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "util/cpu_list.h"

namespace cpuhp {
namespace {

bool Contains(const std::vector<int>& v, int cpu) {
  return std::binary_search(v.begin(), v.end(), cpu);
}

}  // namespace

bool Topology::IsOnline(int cpu) const {
  return Contains(online, cpu);
}
bool Topology::IsHotpluggable(int cpu) const {
  return Contains(hotpluggable, cpu);
}

bool DiscoverTopology(CpuControl* ctl, Topology* topo, std::string* err) {
  Topology t;
  if (!ctl->ReadList("present", &t.present, err) || !ctl->ReadList("possible", &t.possible, err) ||
      !ctl->ReadList("online", &t.online, err))
    return false;
  if (t.present.empty()) {
    *err = ctl->Describe() + "/present: no CPU present";
    return false;
  }
  // isolated and nohz_full are optional: older kernels or no NO_HZ_FULL.
  for (auto [name, list, has] : {std::tuple{"isolated", &t.isolated, &t.has_isolated_file},
                                 std::tuple{"nohz_full", &t.nohz_full, &t.has_nohz_full_file}}) {
    int e = 0;
    std::string ignored;
    *has = ctl->ReadList(name, list, &ignored, &e);
    if (!*has && e != ENOENT) {
      *err = ignored;
      return false;
    }
  }
  for (int cpu : t.present)
    if (ctl->HasOnlineFile(cpu))
      t.hotpluggable.push_back(cpu);
  t.max_cpu = std::max(t.present.back(), t.possible.empty() ? -1 : t.possible.back());
  *topo = std::move(t);
  return true;
}

nlohmann::json TopologyToJson(const Topology& t) {
  nlohmann::json j = {{"present", FormatCpuList(t.present)},
                      {"possible", FormatCpuList(t.possible)},
                      {"online", FormatCpuList(t.online)},
                      {"hotpluggable", FormatCpuList(t.hotpluggable)}};
  j["isolated"] = t.has_isolated_file ? nlohmann::json(FormatCpuList(t.isolated)) : nullptr;
  j["nohz_full"] = t.has_nohz_full_file ? nlohmann::json(FormatCpuList(t.nohz_full)) : nullptr;
  return j;
}

}  // namespace cpuhp
