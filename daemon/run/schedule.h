// SPDX-License-Identifier: GPL-2.0
// Patterns: which CPU to toggle next. A schedule is a small state machine that
// looks at the current online state and its own cursor, so the same seed,
// config and starting state give the same operation sequence, and a failed
// write (the CPU did not change) never makes it emit a no-op.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "stats/op_record.h"

namespace cpuhp {

// The online state the runner keeps, indexed by CPU number.
struct OnlineState {
  std::vector<uint8_t> online;
  int count = 0;

  bool IsOnline(int cpu) const { return online[static_cast<size_t>(cpu)] != 0; }
  void Set(int cpu, bool on) {
    uint8_t& s = online[static_cast<size_t>(cpu)];
    if (s != on) {
      count += on ? 1 : -1;
      s = on;
    }
  }
};

struct ScheduleParams {
  Pattern pattern = Pattern::kRoundRobin;
  std::vector<int> cpus;  // selected, hotpluggable, ascending
  int min_online = 1;     // never fewer online CPUs (whole system); >= 1
  uint64_t seed = 0;
  SweepConfig sweep;
  // The smt pattern: every core's threads (machine/smt.h, read with every
  // CPU online) and the threads per core each of smt.modes leaves online.
  SmtConfig smt{};
  std::vector<std::vector<int>> smt_cores{};
  std::array<int, 2> smt_threads{};
};

// How far a schedule that ends by itself is (a sweep: level k of N).
struct ScheduleProgress {
  uint64_t done = 0;   // measured operations so far
  uint64_t total = 0;  // measured operations in the whole schedule
  std::string label;   // "level 3/6 (16 online)"
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // The next operation, or nullopt when the pattern is complete (sweep) or
  // stuck (error() says why).
  virtual std::optional<Operation> Next(const OnlineState& s) = 0;
  // Set when Next returned nullopt because the schedule cannot go on.
  const std::string& error() const { return error_; }
  // Pattern-specific facts for the report (sweep levels, victim).
  virtual nlohmann::json Describe() const;
  // For the progress line; nullopt for a schedule without an end of its own.
  virtual std::optional<ScheduleProgress> Progress() const { return std::nullopt; }
  // Checkpoint position (cursor, phase, RNG state): restored into a schedule
  // built from the same params, it continues the same operation sequence
  // from the same online state. RestoreState refuses a mismatched document.
  virtual nlohmann::json SaveState() const = 0;
  virtual bool RestoreState(const nlohmann::json& j, std::string* err) = 0;
  // Before a checkpoint and at the end of the run: takes in what the last
  // operation left on the machine `s` now, so that the saved position does
  // not judge it later against a machine a restart has restored (a resume
  // starts from the start mask). The operations that follow do not change.
  virtual void Settle(const OnlineState& s) { (void)s; }
  // The group (OpRecord::group) of the next operation: a group below it is
  // complete. 0: this schedule has no groups.
  virtual uint64_t next_group() const { return 0; }

 protected:
  std::string error_;
};

// Builds the schedule, checking what can be checked before any CPU is touched
// (sweep levels reachable, victim selected). `state` is the starting state.
// On error returns nullptr with a one-line *err naming the key.
std::unique_ptr<Schedule> NewSchedule(const ScheduleParams& p, const OnlineState& state,
                                      std::string* err);

// The sweep levels reachable from `state`: online counts from (CPUs that stay
// online + 1) to that + (selected CPUs other than the victim).
void SweepRange(const ScheduleParams& p, const OnlineState& state, int victim, int* lo, int* hi);

}  // namespace cpuhp
