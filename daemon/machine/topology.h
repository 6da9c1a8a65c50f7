// SPDX-License-Identifier: GPL-2.0
// What the machine has: present/possible/online CPUs, which can be hotplugged,
// isolated and nohz_full CPUs. Read once at start through CpuControl.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "machine/cpu_control.h"

namespace cpuhp {

struct Topology {
  std::vector<int> present;
  std::vector<int> possible;
  std::vector<int> online;
  std::vector<int> hotpluggable;  // present CPUs with an online file
  std::vector<int> isolated;      // empty when the file is absent
  std::vector<int> nohz_full;
  bool has_isolated_file = false;
  bool has_nohz_full_file = false;
  int max_cpu = -1;  // highest CPU number in possible/present

  bool IsOnline(int cpu) const;
  bool IsHotpluggable(int cpu) const;
};

bool DiscoverTopology(CpuControl* ctl, Topology* topo, std::string* err);
nlohmann::json TopologyToJson(const Topology& topo);

}  // namespace cpuhp
