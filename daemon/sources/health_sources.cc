// SPDX-License-Identifier: GPL-2.0
#include "sources/health_sources.h"

#include <algorithm>

#include "sources/disturbance.h"
#include "sources/kmsg_health.h"
#include "util/cpu_list.h"

namespace cpuhp {

bool NewConfiguredSources(const Config& cfg, const Topology& topo, const std::vector<int>& selected,
                          std::vector<std::unique_ptr<TimingSource>>* out, std::string* err) {
  // The sim backend hotplugs no real CPU: the real kernel's log and the real
  // CPUs' wakeups say nothing about it.
  const bool sim = cfg.backend == "sim";
  if (cfg.health.enabled && !sim) {
    KmsgHealthOptions o;
    for (int k = 0; k < kKmsgKinds; ++k) {
      auto it = cfg.health.stop_kind.find(KmsgKindName(k));
      o.stop[static_cast<size_t>(k)] =
          it != cfg.health.stop_kind.end() ? it->second : cfg.health.stop_on_kernel_warning;
    }
    out->push_back(std::make_unique<KmsgHealth>(NewDevKmsgReader("/dev/kmsg"), o));
  }
  if (cfg.disturbance.enabled && !sim) {
    DisturbanceOptions o;
    o.toggled = selected;
    o.period_ns = cfg.disturbance.period_ns;
    o.fifo_priority = cfg.disturbance.fifo_priority;
    o.baseline_ns = cfg.disturbance.baseline_ns;
    if (cfg.disturbance.cpus == "auto") {
      // The CPUs that stay online: online now and never toggled.
      for (int cpu : topo.online)
        if (std::find(selected.begin(), selected.end(), cpu) == selected.end())
          o.cpus.push_back(cpu);
    } else {
      std::string perr;
      if (!ParseCpuList(cfg.disturbance.cpus, &o.cpus, &perr)) {
        *err = "/disturbance/cpus: " + perr;
        return false;
      }
      for (int cpu : o.cpus) {
        if (!topo.IsOnline(cpu)) {
          *err = "/disturbance/cpus: CPU " + std::to_string(cpu) +
                 " is not online (online: " + FormatCpuList(topo.online) + ")";
          return false;
        }
      }
    }
    out->push_back(std::make_unique<Disturbance>(std::move(o)));
  }
  return true;
}

}  // namespace cpuhp
