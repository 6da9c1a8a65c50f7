// SPDX-License-Identifier: GPL-2.0
#include "stats/smt_switches.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "stats/run_stats.h"

namespace cpuhp {

SmtSwitchStats::SmtSwitchStats(std::array<std::string, 2> modes, std::string method)
    : modes_(std::move(modes)), method_(std::move(method)) {}

void SmtSwitchStats::Add(const OpRecord& rec) {
  // No switch, or the rest of one a stop cut short (see StateFromJson).
  if (!rec.group || rec.group == cut_group_)
    return;
  if (rec.group != group_) {
    if (group_)
      Close();  // the next switch started: the last one is complete
    group_ = rec.group;
    start_ns_ = rec.start_ns;
    changed_ = 0;
    failed_ = 0;
    hook_ns_ = 0;
    faulted_ = false;
  } else {
    hook_ns_ += rec.hook_ns;  // an injected write between two of the switch's
  }
  faulted_ = faulted_ || rec.fault_injected;
  end_ns_ = rec.start_ns + rec.duration_ns;
  // An smt/control write moves many CPUs, a failed one maybe some.
  changed_ += rec.smt_control ? rec.cpus_changed : rec.err == 0 && rec.readback_ok;
  if (rec.err != 0 || !rec.readback_ok)
    ++failed_;
}

void SmtSwitchStats::Close() {
  PerMode& m = by_mode_[(group_ - 1) % 2];
  const uint64_t span = end_ns_ - start_ns_;
  m.switches.Record(span > hook_ns_ ? span - hook_ns_ : 0);
  m.with_faults += faulted_;
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
    // A latency summary with its histogram (merge pools the boots', compare
    // bootstraps an interval), and the switch's own counts.
    nlohmann::json row = SummarizeWithHistogram(m.switches);
    row.update({{"mode", modes_[i]},
                {"switches", m.switches.count()},
                {"cpus_changed", m.cpus_changed},
                {"cpus_per_switch_min", std::max(m.cpus_min, 0)},
                {"cpus_per_switch_max", m.cpus_max},
                {"failed_writes", m.failed_writes},
                {"with_injected_faults", m.with_faults}});
    to.push_back(std::move(row));
  }
  return {{"method", method_}, {"to", std::move(to)}, {"incomplete", incomplete_}};
}

nlohmann::json SmtSwitchStats::StateToJson() const {
  nlohmann::json to = nlohmann::json::array();
  for (const PerMode& m : by_mode_)
    to.push_back({{"switches", m.switches.ToJson()},
                  {"cpus_changed", m.cpus_changed},
                  {"cpus_min", m.cpus_min},
                  {"cpus_max", m.cpus_max},
                  {"failed_writes", m.failed_writes},
                  {"with_injected_faults", m.with_faults}});
  return {{"modes", modes_},         {"method", method_},         {"to", std::move(to)},
          {"cut_group", cut_group_}, {"incomplete", incomplete_}, {"group", group_},
          {"start_ns", start_ns_},   {"end_ns", end_ns_},         {"changed", changed_},
          {"failed", failed_}};
}

bool SmtSwitchStats::StateFromJson(const nlohmann::json& j, std::string* err) {
  try {
    if (j.at("modes") != nlohmann::json(modes_) || j.at("method") != method_) {
      *err = "smt switches: checkpointed for modes " + j.at("modes").dump() + ", method " +
             j.at("method").dump() + ", not this run's";
      return false;
    }
    const nlohmann::json& to = j.at("to");
    if (!to.is_array() || to.size() != 2) {
      *err = "smt switches: \"to\" is not two modes";
      return false;
    }
    std::array<PerMode, 2> by_mode;
    for (size_t i = 0; i < 2; ++i) {
      PerMode& m = by_mode[i];
      if (!m.switches.FromJson(to[i].at("switches"), err))
        return false;
      m.cpus_changed = to[i].at("cpus_changed").get<uint64_t>();
      m.cpus_min = to[i].at("cpus_min").get<int>();
      m.cpus_max = to[i].at("cpus_max").get<int>();
      m.failed_writes = to[i].at("failed_writes").get<uint64_t>();
      m.with_faults = to[i].value("with_injected_faults", uint64_t{0});
    }
    const uint64_t incomplete = j.at("incomplete").get<uint64_t>();
    const uint64_t group = j.at("group").get<uint64_t>();
    const uint64_t start_ns = j.at("start_ns").get<uint64_t>();
    const uint64_t end_ns = j.at("end_ns").get<uint64_t>();
    const int changed = j.at("changed").get<int>();
    const uint64_t failed = j.at("failed").get<uint64_t>();
    by_mode_ = std::move(by_mode);
    incomplete_ = incomplete;
    group_ = group;
    cut_group_ = j.value("cut_group", uint64_t{0});
    start_ns_ = start_ns;
    end_ns_ = end_ns;
    changed_ = changed;
    failed_ = failed;
    // A switch in progress at the checkpoint is resumed after a gap (the
    // stop, the restore, the restart): its time would include that gap.
    // It is counted incomplete, as at a stop, and its remaining writes are
    // not timed.
    if (group_) {
      cut_group_ = group_;
      Finish(false);
    }
    return true;
  } catch (const std::exception& e) {
    *err = std::string("smt switches: ") + e.what();
    return false;
  }
}

}  // namespace cpuhp
