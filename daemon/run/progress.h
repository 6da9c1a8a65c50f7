// SPDX-License-Identifier: GPL-2.0
// The live progress line on a terminal: ops done/target, ops/s, current p99
// per direction, ETA. Redrawn at most twice a second; silent when disabled.
// A sim run's line starts SIMULATED and shows the simulated time and rate
// (the clock of its latencies and of --duration); the ETA is wall time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <spdlog/sinks/sink.h>

#include "machine/cpu_control.h"
#include "run/schedule.h"
#include "stats/run_stats.h"

namespace cpuhp {

class ProgressLine {
 public:
  ProgressLine(bool enabled, uint64_t target_ops, uint64_t duration_ns, std::FILE* out = stderr);
  ~ProgressLine();
  void Update(const RunStats& stats, const ScheduleProgress* schedule = nullptr);
  void Finish();  // clears the line
  // Clears the line so that a log line starts at column 0; the next Update
  // draws it again. Called by the log sink (ProgressAwareSink).
  void Clear();
  void ClearLocked();  // Clear with the sink's lock held
  // The sim backend's clock (time since `zero_ns`: simulated time over the
  // run), read by Update on the runner's thread.
  void set_simulated_clock(Clock* clock, uint64_t zero_ns) {
    sim_clock_ = clock;
    sim_zero_ns_ = zero_ns;
  }

  // The text of the line for `ops` done after `elapsed_ns` of wall time and,
  // on the sim backend, `*simulated_ns` of simulated time (for tests).
  std::string Format(const RunStats& stats, uint64_t elapsed_ns,
                     const ScheduleProgress* schedule = nullptr,
                     const uint64_t* simulated_ns = nullptr) const;

 private:
  bool enabled_;
  uint64_t target_ops_;
  uint64_t duration_ns_;
  std::FILE* out_;
  uint64_t start_ns_;
  uint64_t last_draw_ns_ = 0;
  bool drawn_ = false;
  Clock* sim_clock_ = nullptr;
  uint64_t sim_zero_ns_ = 0;
};

// A log sink that clears the progress line in use (if any) before each
// message, so a warning never lands after "ETA 0:00:03".
std::shared_ptr<spdlog::sinks::sink> NewProgressAwareSink(
    std::shared_ptr<spdlog::sinks::sink> inner);

}  // namespace cpuhp
