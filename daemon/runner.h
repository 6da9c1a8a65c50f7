// SPDX-License-Identifier: GPL-2.0
// The operation loop: schedule -> timed write -> readback -> timing sources
// -> statistics and operation log. Nothing in it allocates per operation.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cpu_control.h"
#include "oplog.h"
#include "run_stats.h"
#include "schedule.h"
#include "timing_source.h"

namespace cpuhp {

struct RunLimits {
  uint64_t iterations = 0;   // 0: no limit
  uint64_t duration_ns = 0;  // 0: no limit (wall time, CLOCK_MONOTONIC)
  bool stop_on_error = false;
  uint64_t interval_ns = 0;
};

struct RunOutcome {
  std::string stop_reason;  // iterations|duration|schedule_complete|error|signal|fatal
  std::string message;      // why, for error/fatal/signal
  uint64_t ops = 0;
};

class Runner {
 public:
  static constexpr size_t kMaxFirstErrors = 100;

  Runner(CpuControl* ctl, Schedule* schedule, OnlineState state, RunStats* stats,
         std::vector<TimingSource*> sources, OpLog* oplog, RunLimits limits)
      : ctl_(ctl),
        schedule_(schedule),
        state_(std::move(state)),
        stats_(stats),
        sources_(std::move(sources)),
        oplog_(oplog),
        limits_(limits) {}

  // Runs until a limit, the schedule's end, an error (with stop_on_error), a
  // fatal problem (operation log unwritable) or *stop becoming non-zero (the
  // signal number). `tick` is called about every 100 ms of wall time.
  RunOutcome Run(const volatile sig_atomic_t* stop, const std::function<void()>& tick);

  const OnlineState& state() const { return state_; }
  const std::vector<OpRecord>& first_errors() const { return first_errors_; }
  uint64_t first_errors_dropped() const { return first_errors_dropped_; }

 private:
  // A timing source asked to stop (TimingSource::WantsStop): fills *out.
  bool SourceWantsStop(RunOutcome* out);

  CpuControl* ctl_;
  Schedule* schedule_;
  OnlineState state_;
  RunStats* stats_;
  std::vector<TimingSource*> sources_;
  OpLog* oplog_;
  RunLimits limits_;
  std::vector<OpRecord> first_errors_;
  uint64_t first_errors_dropped_ = 0;
};

}  // namespace cpuhp
