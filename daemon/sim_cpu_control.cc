// SPDX-License-Identifier: GPL-2.0
#include "sim_cpu_control.h"

#include <errno.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

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
  if (cfg_.stall_every && writes_ % cfg_.stall_every == 0) {
    // A write stuck "in the kernel": really blocks, for the stuck-operation
    // watchdog to see.
    timespec ts = {static_cast<time_t>(cfg_.stall_ns / 1000000000ull),
                   static_cast<long>(cfg_.stall_ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
    clock_.Advance(cfg_.stall_ns);
  }
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

namespace cpuhp {

nlohmann::json SimCpuControl::SaveState() const {
  return {{"cpus", cpus()},
          {"now_ns", clock_.now()},
          {"rng", rng_.state()},
          {"online", online_},
          {"writes", writes_}};
}

bool SimCpuControl::RestoreState(const nlohmann::json& j, std::string* err) {
  try {
    if (j.at("cpus").get<int>() != cpus()) {
      *err = "sim state is for " + std::to_string(j.at("cpus").get<int>()) + " CPUs, not " +
             std::to_string(cpus());
      return false;
    }
    std::vector<uint8_t> online = j.at("online").get<std::vector<uint8_t>>();
    if (online.size() != online_.size()) {
      *err = "sim state: online vector has the wrong size";
      return false;
    }
    clock_.Set(j.at("now_ns").get<uint64_t>());
    rng_.set_state(j.at("rng").get<std::array<uint64_t, 4>>());
    writes_ = j.at("writes").get<uint64_t>();
    online_count_ = 0;
    for (size_t c = 0; c < online.size(); ++c) {
      online_[c] = online[c] != 0;
      online_count_ += online_[c];
    }
    return true;
  } catch (const std::exception& e) {
    *err = std::string("sim state: ") + e.what();
    return false;
  }
}

}  // namespace cpuhp
