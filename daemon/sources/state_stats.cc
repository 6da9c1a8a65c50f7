// SPDX-License-Identifier: GPL-2.0
#include "sources/state_stats.h"

#include <algorithm>
#include <cstdio>

#include "stats/run_stats.h"

namespace cpuhp {
namespace {

constexpr const char* kHandoff = "cpuhp_kick_ap_work";

nlohmann::json Brief(const Histogram& h) {
  return {{"count", h.count()},           {"min_ns", h.min_ns()}, {"p50_ns", h.PercentileNs(50)},
          {"p99_ns", h.PercentileNs(99)}, {"max_ns", h.max_ns()}, {"mean_ns", h.mean_ns()}};
}

}  // namespace

uint64_t UnionLengthNs(std::vector<std::pair<uint64_t, uint64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  uint64_t total = 0, cur_b = 0, cur_e = 0;
  bool have = false;
  for (const auto& [b, e] : iv) {
    if (e <= b)
      continue;
    if (have && b <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (have)
      total += cur_e - cur_b;
    cur_b = b;
    cur_e = e;
    have = true;
  }
  if (have)
    total += cur_e - cur_b;
  return total;
}

std::string KernelStateStats::PhaseName(const TraceStep& s) const {
  if (s.fun == kHandoff)
    return s.fun;
  const std::string state = states_.Name(s.idx);
  if (state == "cpu:teardown" || state == "sched:active" || state == "cpu:bringup" ||
      state == "cpu:kick_ap")
    return s.fun.empty() ? state : s.fun;
  return {};
}

void KernelStateStats::AddOperation(const OpRecord& rec, const std::vector<TraceStep>& steps) {
  const int dir = static_cast<int>(rec.dir);
  // A sweep's set-up write is not a measurement: counted, in no table.
  if (rec.setup) {
    ++setup_ops_;
    return;
  }
  if (steps.empty()) {
    ++ops_without_steps_;
    return;
  }
  ++ops_with_steps_;
  const uint64_t w0 = rec.start_ns, w1 = rec.start_ns + rec.duration_ns;
  auto clip = [&](const TraceStep& s) {
    return std::pair<uint64_t, uint64_t>{std::clamp(s.begin_ns, w0, w1),
                                         std::clamp(s.end_ns, w0, w1)};
  };
  std::vector<std::pair<uint64_t, uint64_t>> all;
  all.reserve(steps.size());
  for (const TraceStep& s : steps)
    all.push_back(clip(s));

  for (size_t i = 0; i < steps.size(); ++i) {
    const TraceStep& s = steps[i];
    const auto [b, e] = all[i];
    // Steps inside this one; of two identical intervals the later is inside.
    std::vector<std::pair<uint64_t, uint64_t>> inner;
    for (size_t j = 0; j < steps.size(); ++j) {
      if (j == i || all[j].first < b || all[j].second > e)
        continue;
      if (all[j] == all[i] && j < i)
        continue;
      inner.push_back(all[j]);
    }
    const uint64_t dur = s.end_ns - s.begin_ns;
    const uint64_t self = (e - b) - std::min(e - b, UnionLengthNs(std::move(inner)));
    const int number = s.fun == kHandoff ? -1 : s.idx;
    StateEntry& st = by_state_[{dir, static_cast<int>(s.where), number, s.fun}];
    st.inclusive.Record(dur);
    st.total_ns += dur;
    st.self_ns += self;
    st.multi = st.multi || s.multi;
    if (s.ret != 0)
      ++st.failed;
    std::string phase = PhaseName(s);
    if (!phase.empty()) {
      PhaseEntry& p = phases_[{phase, dir}];
      p.state = s.fun == kHandoff ? "" : states_.Name(s.idx);
      p.where = s.where;
      p.all.Record(dur);
      p.by_online[rec.online_before].Record(dur);
    }
  }

  const uint64_t sum = UnionLengthNs(all);
  const uint64_t rest = rec.duration_ns - sum;  // sum <= duration by clipping
  state_sum_[dir].Record(sum);
  unaccounted_[dir].Record(rest);
  write_total_ns_ += rec.duration_ns;
  if (rec.duration_ns)
    max_fraction_[dir] = std::max(max_fraction_[dir],
                                  static_cast<double>(sum) / static_cast<double>(rec.duration_ns));
  if (first_ops_.size() < kFirstOps) {
    first_ops_.push_back({{"i", rec.index},
                          {"cpu", rec.cpu},
                          {"dir", DirectionName(rec.dir)},
                          {"write_ns", rec.duration_ns},
                          {"state_sum_ns", sum},
                          {"unaccounted_ns", rest},
                          {"steps", steps.size()}});
  }
}

nlohmann::json KernelStateStats::ToJson() const {
  using nlohmann::json;
  json states = json::array();
  for (const auto& [key, st] : by_state_) {
    const auto& [dir, where, number, fun] = key;
    json j = Brief(st.inclusive);
    j["direction"] = DirectionName(static_cast<Direction>(dir));
    j["where"] = StepWhereName(static_cast<StepWhere>(where));
    j["function"] = fun;
    if (number < 0) {
      j["state"] = nullptr;
      j["number"] = nullptr;
      j["kind"] = "handoff";
    } else {
      const std::string name = states_.Name(number);
      j["state"] = name.empty() ? json(nullptr) : json(name);
      j["number"] = number;
      j["kind"] = st.multi ? "multi_instance" : "state";
    }
    j["total_ns"] = st.total_ns;
    j["self_ns"] = st.self_ns;
    j["failed"] = st.failed;
    j["share"] = write_total_ns_ ? static_cast<double>(st.self_ns) / write_total_ns_ : 0.0;
    states.push_back(std::move(j));
  }
  std::stable_sort(states.begin(), states.end(), [](const json& a, const json& b) {
    return a["self_ns"].get<uint64_t>() > b["self_ns"].get<uint64_t>();
  });

  json phases = json::array();
  for (const auto& [key, p] : phases_) {
    json rows = json::array();
    for (const auto& [online, h] : p.by_online) {
      json r = SummarizeWithHistogram(h);
      r["online_cpus"] = online;
      rows.push_back(std::move(r));
    }
    phases.push_back({{"name", key.first},
                      {"direction", DirectionName(static_cast<Direction>(key.second))},
                      {"state", p.state.empty() ? json(nullptr) : json(p.state)},
                      {"where", StepWhereName(p.where)},
                      {"latency", SummarizeWithHistogram(p.all)},
                      {"per_online_count", std::move(rows)}});
  }

  json per_op = json::object();
  for (int d = 0; d < kDirections; ++d) {
    per_op[std::string(DirectionName(static_cast<Direction>(d)))] = {
        {"state_sum", SummarizeWithHistogram(state_sum_[d])},
        {"unaccounted", SummarizeWithHistogram(unaccounted_[d])},
        {"max_state_sum_fraction", max_fraction_[d]}};
  }
  return {{"ops_with_steps", ops_with_steps_},
          {"ops_without_steps", ops_without_steps_},
          {"setup_ops", setup_ops_},
          {"write_total_ns", write_total_ns_},
          {"kernel_states", std::move(states)},
          {"phases", std::move(phases)},
          {"per_operation", std::move(per_op)},
          {"first_operations", first_ops_}};
}

std::string KernelStateStats::Summary(const nlohmann::json& section, int top) {
  auto ms = [](uint64_t ns) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.3f", static_cast<double>(ns) / 1e6);
    return std::string(b);
  };
  std::string out;
  char line[256];
  const auto& states = section.value("kernel_states", nlohmann::json::array());
  std::snprintf(line, sizeof(line), "kernel states (tracepoints), top %d by self time (ms)\n", top);
  out += line;
  std::snprintf(line, sizeof(line), "  %-7s %-22s %-26s %-12s %6s %8s %8s %8s %6s\n", "dir",
                "state", "function", "where", "count", "p50", "p99", "max", "share");
  out += line;
  int n = 0;
  for (const auto& s : states) {
    if (n++ >= top)
      break;
    const std::string state = s["state"].is_null() ? "-" : s["state"].get<std::string>();
    std::snprintf(line, sizeof(line), "  %-7s %-22.22s %-26.26s %-12s %6llu %8s %8s %8s %5.1f%%\n",
                  s["direction"].get<std::string>().c_str(), state.c_str(),
                  s["function"].get<std::string>().c_str(), s["where"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(s["count"].get<uint64_t>()),
                  ms(s["p50_ns"].get<uint64_t>()).c_str(), ms(s["p99_ns"].get<uint64_t>()).c_str(),
                  ms(s["max_ns"].get<uint64_t>()).c_str(), 100.0 * s["share"].get<double>());
    out += line;
  }
  return out;
}

}  // namespace cpuhp
