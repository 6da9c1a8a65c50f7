// SPDX-License-Identifier: GPL-2.0
// Streaming aggregation of operation records: histograms per direction, per
// CPU and direction, and per (direction, online CPUs before the operation);
// errno counts per CPU. Memory grows with the number of CPUs and online-count
// levels seen, never with the number of operations.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "stats/histogram.h"
#include "stats/op_record.h"
#include "stats/smt_switches.h"
#include "stats/timeline.h"

namespace cpuhp {

class RunStats {
 public:
  // Sizes the per-CPU tables; CPU numbers must be below max_cpus.
  explicit RunStats(int max_cpus = 0);

  void Add(const OpRecord& rec);
  // The smt pattern's switch table, fed every record Add gets (not owned;
  // in StateToJson as "smt", so a resumed run's table spans every segment).
  void set_smt(SmtSwitchStats* smt) { smt_ = smt; }
  // The schedule's groups below `group` are complete (Schedule::next_group).
  void CloseGroupsBefore(uint64_t group) {
    if (smt_)
      smt_->CloseBefore(group);
  }

  uint64_t ops() const { return ops_; }
  uint64_t failed_ops() const { return failed_ops_; }  // write returned an errno
  uint64_t readback_mismatches() const { return readback_mismatches_; }
  // Set-up writes (OpRecord::setup): in the totals and error tables, in no
  // latency histogram.
  uint64_t setup_ops() const { return setup_ops_; }

  // Successful operations only: a failed write's latency is not a hotplug
  // latency. Failed writes are counted in errno tables.
  const Histogram& by_direction(Direction d) const { return by_dir_[static_cast<int>(d)]; }
  // Per CPU; empty histogram for a CPU never operated on.
  const Histogram& by_cpu(int cpu, Direction d) const;
  // Keyed by online CPUs before the operation.
  const std::map<int, Histogram>& by_online_count(Direction d) const {
    return by_online_[static_cast<int>(d)];
  }
  // (cpu, errno) -> count, and errno -> count.
  const std::map<std::pair<int, int>, uint64_t>& errors_by_cpu() const { return errors_by_cpu_; }
  std::map<int, uint64_t> errors_by_errno() const;
  // Downsampled latency over the run (bounded); not merged by Merge.
  const Timeline& timeline() const { return timeline_; }
  // CPUs that had at least one operation.
  std::vector<int> cpus_seen() const;

  void Merge(const RunStats& other);

  // Report sections (see daemon/report/schema/report.schema.json):
  // "totals", "directions", "per_cpu", "per_online_count", "errors",
  // "timeline". Directions and online-count levels also carry their
  // histogram's buckets ("histogram", Histogram::ToJson) for compare.
  nlohmann::json ToJson() const;

  // Full state for checkpoints (histograms serialized); FromJson refuses
  // malformed input.
  nlohmann::json StateToJson() const;
  bool StateFromJson(const nlohmann::json& j, std::string* err);

 private:
  Histogram& cpu_hist(int cpu, Direction d);

  SmtSwitchStats* smt_ = nullptr;
  uint64_t ops_ = 0;
  uint64_t failed_ops_ = 0;
  uint64_t readback_mismatches_ = 0;
  uint64_t setup_ops_ = 0;
  uint64_t setup_failed_ops_ = 0;
  // The smt pattern's smt/control writes: in no latency table (smt_).
  uint64_t smt_control_ops_ = 0;
  uint64_t smt_control_failed_ops_ = 0;
  uint64_t ops_by_dir_[kDirections] = {0, 0};
  Histogram by_dir_[kDirections];
  std::vector<Histogram> by_cpu_;  // index cpu * 2 + dir
  std::map<int, Histogram> by_online_[kDirections];
  std::map<std::pair<int, int>, uint64_t> errors_by_cpu_;
  std::map<int, uint64_t> readback_by_cpu_;                    // cpu -> readback mismatches
  std::map<std::pair<int, int>, uint64_t> failed_by_cpu_dir_;  // (cpu, direction) -> failed
  Timeline timeline_;
};

// The JSON summary of one histogram: {"count", "min_ns", "max_ns", "mean_ns",
// "stddev_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns"}.
nlohmann::json SummarizeHistogram(const Histogram& h);
// The same with the histogram itself under "histogram" (Histogram::ToJson):
// what compare needs for a confidence interval and merge to pool boots.
nlohmann::json SummarizeWithHistogram(const Histogram& h);

}  // namespace cpuhp
