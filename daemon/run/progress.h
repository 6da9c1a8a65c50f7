// SPDX-License-Identifier: GPL-2.0
// The live progress line on a terminal: ops done/target, ops/s, current p99
// per direction, ETA. Redrawn at most twice a second; silent when disabled.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "stats/run_stats.h"

namespace cpuhp {

class ProgressLine {
 public:
  ProgressLine(bool enabled, uint64_t target_ops, uint64_t duration_ns, std::FILE* out = stderr);
  void Update(const RunStats& stats);
  void Finish();  // clears the line

  // The text of the line for `ops` done after `elapsed_ns` (for tests).
  std::string Format(const RunStats& stats, uint64_t elapsed_ns) const;

 private:
  bool enabled_;
  uint64_t target_ops_;
  uint64_t duration_ns_;
  std::FILE* out_;
  uint64_t start_ns_;
  uint64_t last_draw_ns_ = 0;
  bool drawn_ = false;
};

}  // namespace cpuhp
