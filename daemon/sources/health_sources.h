// SPDX-License-Identifier: GPL-2.0
// The timing sources the config turns on by itself: the disturbance probes
// ("disturbance") and the kernel log health checks ("health").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "machine/topology.h"
#include "sources/timing_source.h"

namespace cpuhp {

// Builds the configured sources for a run over `selected` CPUs. Returns
// false with a one-line *err naming the key on input that cannot work on
// this machine (/disturbance/cpus naming a CPU that is not online).
bool NewConfiguredSources(const Config& cfg, const Topology& topo, const std::vector<int>& selected,
                          std::vector<std::unique_ptr<TimingSource>>* out, std::string* err);

}  // namespace cpuhp
