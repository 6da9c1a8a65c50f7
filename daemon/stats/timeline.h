// SPDX-License-Identifier: GPL-2.0
// A bounded, downsampled series of operation latency over the whole run, for
// the HTML report's timeline: at most kMaxPoints points, each covering
// ops_per_point consecutive operations (doubled, and neighbours merged, when
// the series fills up). Each point keeps per-direction min, mean and max, so
// merging two points is exact. Memory is fixed whatever the run length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "stats/op_record.h"

namespace cpuhp {

class Timeline {
 public:
  static constexpr size_t kMaxPoints = 1000;

  struct DirStats {
    uint64_t n = 0;  // successful operations
    uint64_t min_ns = 0;
    uint64_t max_ns = 0;
    double sum_ns = 0;
    void Add(uint64_t ns);
    void Merge(const DirStats& o);
  };
  struct Point {
    uint64_t first_index = 0;     // OpRecord::index of the first operation
    uint64_t first_start_ns = 0;  // its start, on the run's clock
    uint64_t ops = 0;             // operations in this point
    uint64_t failed = 0;          // of which the write returned an errno
    DirStats dir[kDirections];
  };

  void Add(const OpRecord& rec);
  uint64_t ops_per_point() const { return ops_per_point_; }
  const std::vector<Point>& points() const { return points_; }

  // {"max_points", "ops_per_point", "start_ns", "columns": [...],
  //  "points": [[...], ...]} (see report.schema.json "timeline").
  nlohmann::json ToJson() const;

  // Exact checkpoint form (sums kept as doubles); StateFromJson refuses
  // malformed input and leaves *this unchanged then.
  nlohmann::json StateToJson() const;
  bool StateFromJson(const nlohmann::json& j, std::string* err);

 private:
  void Compact();

  uint64_t ops_per_point_ = 1;
  std::vector<Point> points_;
};

}  // namespace cpuhp
