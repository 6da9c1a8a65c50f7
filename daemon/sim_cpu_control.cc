// SPDX-License-Identifier: GPL-2.0
#include "sim_cpu_control.h"

#include <errno.h>

#include <algorithm>
#include <cmath>

#include "cpu_list.h"

namespace cpuhp {

SimCpuControl::SimCpuControl(const SimConfig& cfg, uint64_t seed)
    : cfg_(cfg),
      rng_(seed ^ 0x53494dull),
      online_(static_cast<size_t>(cfg.cpus), 1),
      online_count_(cfg.cpus) {}

std::string SimCpuControl::Describe() const {
  return "sim:" + std::to_string(cpus());
}

bool SimCpuControl::ReadList(const std::string& name, std::vector<int>* cpus_out, std::string* err,
                             int* err_no) {
  cpus_out->clear();
  if (name == "present" || name == "possible") {
    for (int c = 0; c < cpus(); ++c)
      cpus_out->push_back(c);
  } else if (name == "online" || name == "offline") {
    for (int c = 0; c < cpus(); ++c)
      if (online_[static_cast<size_t>(c)] == (name == "online"))
        cpus_out->push_back(c);
  } else if (name == "isolated") {
    // none
  } else if (name == "nohz_full") {
    *cpus_out = nohz_full_;
  } else {
    if (err_no)
      *err_no = ENOENT;
    *err = Describe() + "/" + name + ": cannot read: No such file or directory";
    return false;
  }
  return true;
}

int SimCpuControl::ReadOnline(int cpu, std::string* err) {
  if (!HasOnlineFile(cpu)) {
    *err = Describe() + "/cpu" + std::to_string(cpu) + "/online: open: No such file or directory";
    return -1;
  }
  return online_[static_cast<size_t>(cpu)];
}

void SimCpuControl::SetOnline(int cpu, bool online) {
  uint8_t& s = online_[static_cast<size_t>(cpu)];
  if (s != online) {
    online_count_ += online ? 1 : -1;
    s = online;
  }
}

int SimCpuControl::WriteOnline(int cpu, bool online) {
  ++writes_;
  if (!HasOnlineFile(cpu))
    return ENOENT;
  uint8_t& s = online_[static_cast<size_t>(cpu)];
  // Modeled latency: grows linearly with the online count, +- jitter.
  const uint64_t base = online ? cfg_.online_base_ns : cfg_.offline_base_ns;
  const uint64_t per_cpu = online ? cfg_.online_per_cpu_ns : cfg_.offline_per_cpu_ns;
  double ns = static_cast<double>(base + per_cpu * static_cast<uint64_t>(online_count_));
  ns *= 1.0 + cfg_.jitter * (2.0 * rng_.Unit() - 1.0);
  if (s == online) {
    clock_.Advance(500);  // the kernel returns at once when nothing changes
    return 0;
  }
  clock_.Advance(static_cast<uint64_t>(std::max(1.0, ns)));
  if (!online && online_count_ == 1)
    return EBUSY;
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->cpu == -1 || it->cpu == cpu) {
      Fault f = *it;
      faults_.erase(it);
      return f.readback ? 0 : f.err;
    }
  }
  if (cfg_.error_rate > 0 && rng_.Unit() < cfg_.error_rate)
    return EBUSY;
  SetOnline(cpu, online);
  return 0;
}

}  // namespace cpuhp
