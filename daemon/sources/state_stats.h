// SPDX-License-Identifier: GPL-2.0
// Per-state statistics from the cpuhp tracepoints, joined to the operations.
//
// Nesting rule (why the per-operation state sum never double counts): steps
// nest in time. On the control side, cpuhp_kick_ap_work (offline) and the
// bring-up wait (cpuhp_bringup_ap / bringup_cpu, online) block while the
// target CPU's cpuhp/N thread runs the AP states, and takedown_cpu's
// stop_machine runs the DYING states on the target CPU inside it. So:
//  - each state's histogram holds its own inclusive duration (enter to exit);
//  - its self time is that duration minus the union of the steps nested in
//    it (the AP states inside a hand-off), and shares and "top states" use
//    self time, so the shares add up to at most 100 %;
//  - the operation's state sum is the length of the union of all its steps,
//    clipped to the write's [start, end], and "unaccounted" is the write
//    latency minus that union: syscall entry, locking, the kworker hop,
//    and the gaps between callbacks.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/hotplug_states.h"
#include "sources/trace_parser.h"
#include "stats/histogram.h"
#include "stats/op_record.h"

namespace cpuhp {

class KernelStateStats {
 public:
  explicit KernelStateStats(HotplugStates states);
  // The step cache points into the tables.
  KernelStateStats(const KernelStateStats&) = delete;
  KernelStateStats& operator=(const KernelStateStats&) = delete;
  KernelStateStats(KernelStateStats&&) = default;
  KernelStateStats& operator=(KernelStateStats&&) = default;

  // One finished operation and the steps attributed to it (those of rec.cpu
  // that began inside the write).
  void AddOperation(const OpRecord& rec, std::span<const TraceStep> steps);

  uint64_t ops_with_steps() const { return ops_with_steps_; }
  uint64_t ops_without_steps() const { return ops_without_steps_; }

  // {"kernel_states": [...], "phases": [...], "per_operation": {...},
  //  "first_operations": [...]}; see the report schema.
  nlohmann::json ToJson() const;

  // The human summary's lines: the top `top` states by self time.
  static std::string Summary(const nlohmann::json& section, int top);

  static constexpr size_t kFirstOps = 100;

 private:
  struct StateEntry {
    Histogram inclusive;
    uint64_t total_ns = 0;
    uint64_t self_ns = 0;
    uint64_t failed = 0;  // ret != 0
    bool multi = false;
  };
  struct PhaseEntry {
    std::string state;
    StepWhere where = StepWhere::kControl;
    Histogram all;
    std::map<int, Histogram> by_online;
  };
  // The tables' keys own their strings; lookups pass the same fields with
  // string views (ViewLess) and a key is made only for a new entry.
  // (direction, where, state number, function)
  using StateKey = std::tuple<int, int, int, std::string>;
  // (phase name, direction)
  using PhaseKey = std::pair<std::string, int>;
  struct ViewLess {
    using is_transparent = void;
    template <class S>
    static std::tuple<int, int, int, std::string_view> View(const std::tuple<int, int, int, S>& k) {
      return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)};
    }
    template <class S>
    static std::pair<std::string_view, int> View(const std::pair<S, int>& k) {
      return {k.first, k.second};
    }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
  };

  // Where a step's figures go: its state's row and its phase's (or null).
  // A run has ~100 distinct (direction, where, state, function) and ~45
  // steps a write: resolved once each through the tables' string-keyed
  // maps, then through this cache by the step's fun_id (issue 31: the map
  // lookups were a fifth of a drain's CPU).
  struct Slot {
    int dir = 0;
    StepWhere where = StepWhere::kControl;
    int idx = -1;
    StateEntry* state = nullptr;
    PhaseEntry* phase = nullptr;
    std::string_view fun;          // the row's own copy of the name
    std::string_view phase_state;  // what PhaseEntry::state becomes
  };
  Slot Resolve(int dir, const TraceStep& s);
  const Slot& Lookup(int dir, const TraceStep& s);
  std::string_view PhaseName(const TraceStep& s) const;
  // Self time of each step (its clipped length minus the union of the
  // steps nested in it) into self_; returns the union of all of them.
  uint64_t SelfTimes();

  HotplugStates states_;
  std::vector<int> phase_states_;  // numbers of the states that are phases
  std::map<StateKey, StateEntry, ViewLess> by_state_;
  std::map<PhaseKey, PhaseEntry, ViewLess> phases_;
  // By fun_id, usually one or two: (direction, where, step) of one name,
  // checked, so that a step of another matcher cannot take a wrong row.
  std::vector<std::vector<Slot>> slots_;
  Slot uncached_;
  // One operation's scratch, kept to spare the allocations.
  std::vector<std::pair<uint64_t, uint64_t>> clipped_;
  std::vector<uint32_t> order_;
  std::vector<uint64_t> self_;
  Histogram state_sum_[kDirections];
  Histogram unaccounted_[kDirections];
  double max_fraction_[kDirections] = {0, 0};
  uint64_t write_total_ns_ = 0;
  uint64_t ops_with_steps_ = 0;
  uint64_t ops_without_steps_ = 0;
  uint64_t setup_ops_ = 0;  // a sweep's set-up writes: in no statistic
  nlohmann::json first_ops_ = nlohmann::json::array();
};

// Length of the union of [begin, end) intervals (sorted or not).
uint64_t UnionLengthNs(std::vector<std::pair<uint64_t, uint64_t>> iv);

}  // namespace cpuhp
