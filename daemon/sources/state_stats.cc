// SPDX-License-Identifier: GPL-2.0
#include "sources/state_stats.h"

#include <algorithm>
#include <cstdio>

#include "stats/run_stats.h"

namespace cpuhp {
namespace {

constexpr std::string_view kHandoff = "cpuhp_kick_ap_work";

nlohmann::json Brief(const Histogram& h) {
  return {{"count", h.count()},           {"min_ns", h.min_ns()}, {"p50_ns", h.PercentileNs(50)},
          {"p99_ns", h.PercentileNs(99)}, {"max_ns", h.max_ns()}, {"mean_ns", h.mean_ns()}};
}

// The length of a union of [begin, end) intervals added in begin order.
class SortedUnion {
 public:
  void Add(uint64_t b, uint64_t e) {
    if (e <= b)
      return;
    if (have_ && b <= cur_e_) {
      cur_e_ = std::max(cur_e_, e);
      return;
    }
    if (have_)
      total_ += cur_e_ - cur_b_;
    cur_b_ = b;
    cur_e_ = e;
    have_ = true;
  }
  uint64_t Total() const { return total_ + (have_ ? cur_e_ - cur_b_ : 0); }

 private:
  uint64_t total_ = 0, cur_b_ = 0, cur_e_ = 0;
  bool have_ = false;
};

}  // namespace

uint64_t UnionLengthNs(std::vector<std::pair<uint64_t, uint64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  SortedUnion u;
  for (const auto& [b, e] : iv)
    u.Add(b, e);
  return u.Total();
}

KernelStateStats::KernelStateStats(HotplugStates states) : states_(std::move(states)) {
  for (const auto& [n, name] : states_.by_number)
    if (name == "cpu:teardown" || name == "sched:active" || name == "cpu:bringup" ||
        name == "cpu:kick_ap")
      phase_states_.push_back(n);
}

std::string_view KernelStateStats::PhaseName(const TraceStep& s) const {
  if (s.fun == kHandoff)
    return s.fun;
  if (std::find(phase_states_.begin(), phase_states_.end(), s.idx) == phase_states_.end())
    return {};
  return s.fun.empty() ? std::string_view(states_.Name(s.idx)) : std::string_view(s.fun);
}

uint64_t KernelStateStats::SelfTimes() {
  const auto& iv = clipped_;
  const size_t n = iv.size();
  // By begin, the longer of two first, then in step order: the steps nested
  // in step i are among those after it that begin before it ends (of two
  // identical intervals the later is inside). They come in begin order, so
  // their union is one merging pass.
  order_.resize(n);
  for (size_t i = 0; i < n; ++i)
    order_[i] = static_cast<uint32_t>(i);
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    if (iv[a].first != iv[b].first)
      return iv[a].first < iv[b].first;
    if (iv[a].second != iv[b].second)
      return iv[a].second > iv[b].second;
    return a < b;
  });
  self_.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const auto [b, e] = iv[order_[k]];
    SortedUnion inner;
    // A step beginning after e could be inside only if it were empty.
    for (size_t m = k + 1; m < n && iv[order_[m]].first <= e; ++m)
      if (iv[order_[m]].second <= e)
        inner.Add(iv[order_[m]].first, iv[order_[m]].second);
    self_[order_[k]] = (e - b) - std::min(e - b, inner.Total());
  }
  SortedUnion all;
  for (uint32_t i : order_)
    all.Add(iv[i].first, iv[i].second);
  return all.Total();
}

KernelStateStats::Slot KernelStateStats::Resolve(int dir, const TraceStep& s) {
  Slot slot;
  slot.dir = dir;
  slot.where = s.where;
  slot.idx = s.idx;
  const int number = s.fun == kHandoff ? -1 : s.idx;
  const auto key = std::make_tuple(dir, static_cast<int>(s.where), number, std::string_view(s.fun));
  auto it = by_state_.find(key);
  if (it == by_state_.end())
    it = by_state_
             .emplace(StateKey{dir, static_cast<int>(s.where), number, std::string(s.fun)},
                      StateEntry{})
             .first;
  slot.state = &it->second;
  slot.fun = std::get<3>(it->first);
  const std::string_view phase = PhaseName(s);
  if (!phase.empty()) {
    auto pit = phases_.find(std::make_pair(phase, dir));
    if (pit == phases_.end())
      pit = phases_.emplace(PhaseKey{std::string(phase), dir}, PhaseEntry{}).first;
    slot.phase = &pit->second;
    slot.phase_state = s.fun == kHandoff ? std::string_view() : states_.Name(s.idx);
  }
  return slot;
}

const KernelStateStats::Slot& KernelStateStats::Lookup(int dir, const TraceStep& s) {
  const uint16_t id = s.fun_id;
  if (id == 0) {  // not from a StepMatcher
    uncached_ = Resolve(dir, s);
    return uncached_;
  }
  if (id >= slots_.size())
    slots_.resize(id + 1);
  std::vector<Slot>& slots = slots_[id];
  if (!slots.empty() && slots.front().fun != s.fun) {  // another matcher's number
    uncached_ = Resolve(dir, s);
    return uncached_;
  }
  for (const Slot& slot : slots)
    if (slot.dir == dir && slot.where == s.where && slot.idx == s.idx)
      return slot;
  slots.push_back(Resolve(dir, s));
  return slots.back();
}

void KernelStateStats::AddOperation(const OpRecord& rec, std::span<const TraceStep> steps) {
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
  clipped_.clear();
  for (const TraceStep& s : steps)
    clipped_.emplace_back(std::clamp(s.begin_ns, w0, w1), std::clamp(s.end_ns, w0, w1));
  const uint64_t sum = SelfTimes();

  for (size_t i = 0; i < steps.size(); ++i) {
    const TraceStep& s = steps[i];
    const uint64_t dur = s.end_ns - s.begin_ns;
    const Slot& slot = Lookup(dir, s);
    StateEntry& st = *slot.state;
    st.inclusive.Record(dur);
    st.total_ns += dur;
    st.self_ns += self_[i];
    st.multi = st.multi || s.multi;
    if (s.ret != 0)
      ++st.failed;
    if (slot.phase) {
      PhaseEntry& p = *slot.phase;
      if (p.state != slot.phase_state)
        p.state = slot.phase_state;
      p.where = s.where;
      p.all.Record(dur);
      p.by_online[rec.online_before].Record(dur);
    }
  }

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
