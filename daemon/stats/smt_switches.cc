// SPDX-License-Identifier: GPL-2.0
#include "stats/smt_switches.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

namespace cpuhp {

SmtSwitchStats::SmtSwitchStats(std::array<std::string, 2> modes, std::string method)
    : modes_(std::move(modes)), method_(std::move(method)) {}

void SmtSwitchStats::Add(const OpRecord& rec) {
  if (!rec.group)
    return;
  if (rec.group != group_) {
    if (group_)
      Close();  // the next switch started: the last one is complete
    group_ = rec.group;
    start_ns_ = rec.start_ns;
    changed_ = 0;
    failed_ = 0;
  }
  end_ns_ = rec.start_ns + rec.duration_ns;
  if (rec.err == 0 && rec.readback_ok)
    ++changed_;
  else
    ++failed_;
}

void SmtSwitchStats::Close() {
  PerMode& m = by_mode_[(group_ - 1) % 2];
  m.switches.Record(end_ns_ - start_ns_);
  m.cpus_changed += static_cast<uint64_t>(changed_);
  m.cpus_min = m.cpus_min < 0 ? changed_ : std::min(m.cpus_min, changed_);
  m.cpus_max = std::max(m.cpus_max, changed_);
  m.failed_writes += failed_;
  group_ = 0;
}

void SmtSwitchStats::Finish(bool last_complete) {
  if (!group_)
    return;
  if (last_complete) {
    Close();
    return;
  }
  ++incomplete_;
  by_mode_[(group_ - 1) % 2].failed_writes += failed_;
  group_ = 0;
}

nlohmann::json SmtSwitchStats::ToJson() const {
  nlohmann::json to = nlohmann::json::array();
  for (size_t i = 0; i < 2; ++i) {
    const PerMode& m = by_mode_[i];
    const Histogram& h = m.switches;
    to.push_back({{"mode", modes_[i]},
                  {"switches", h.count()},
                  {"p50_ns", h.PercentileNs(50)},
                  {"p99_ns", h.PercentileNs(99)},
                  {"max_ns", h.max_ns()},
                  {"min_ns", h.min_ns()},
                  {"cpus_changed", m.cpus_changed},
                  {"cpus_per_switch_min", std::max(m.cpus_min, 0)},
                  {"cpus_per_switch_max", m.cpus_max},
                  {"failed_writes", m.failed_writes}});
  }
  return {{"method", method_}, {"to", std::move(to)}, {"incomplete", incomplete_}};
}

}  // namespace cpuhp
