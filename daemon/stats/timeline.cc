// SPDX-License-Identifier: GPL-2.0
#include "stats/timeline.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace cpuhp {

void Timeline::DirStats::Add(uint64_t ns) {
  min_ns = n == 0 ? ns : std::min(min_ns, ns);
  max_ns = std::max(max_ns, ns);
  sum_ns += static_cast<double>(ns);
  n++;
}

void Timeline::DirStats::Merge(const DirStats& o) {
  if (o.n == 0)
    return;
  min_ns = n == 0 ? o.min_ns : std::min(min_ns, o.min_ns);
  max_ns = std::max(max_ns, o.max_ns);
  sum_ns += o.sum_ns;
  n += o.n;
}

// Halves the resolution: point 2k absorbs point 2k+1.
void Timeline::Compact() {
  size_t out = 0;
  for (size_t i = 0; i < points_.size(); i += 2) {
    Point p = points_[i];
    if (i + 1 < points_.size()) {
      const Point& q = points_[i + 1];
      p.ops += q.ops;
      p.failed += q.failed;
      for (int d = 0; d < kDirections; d++)
        p.dir[d].Merge(q.dir[d]);
    }
    points_[out++] = p;
  }
  points_.resize(out);
  ops_per_point_ *= 2;
}

void Timeline::Add(const OpRecord& rec) {
  if (points_.empty() || points_.back().ops >= ops_per_point_) {
    if (points_.size() == kMaxPoints)
      Compact();
    if (points_.empty() || points_.back().ops >= ops_per_point_) {
      if (points_.capacity() < kMaxPoints)
        points_.reserve(kMaxPoints);
      Point p;
      p.first_index = rec.index;
      p.first_start_ns = rec.start_ns;
      points_.push_back(p);
    }
  }
  Point& p = points_.back();
  p.ops++;
  if (rec.err != 0)
    p.failed++;
  else
    p.dir[static_cast<int>(rec.dir)].Add(rec.duration_ns);
}

nlohmann::json Timeline::ToJson() const {
  using nlohmann::json;
  json points = json::array();
  for (const Point& p : points_) {
    json row = {p.first_index, p.first_start_ns, p.ops, p.failed};
    for (int d = 0; d < kDirections; d++) {
      const DirStats& s = p.dir[d];
      row.push_back(s.n);
      row.push_back(s.min_ns);
      row.push_back(s.n ? static_cast<uint64_t>(s.sum_ns / static_cast<double>(s.n) + 0.5) : 0);
      row.push_back(s.max_ns);
    }
    points.push_back(std::move(row));
  }
  return json{
      {"max_points", kMaxPoints},
      {"ops_per_point", ops_per_point_},
      {"columns",
       {"first_op", "start_ns", "ops", "failed", "offline_n", "offline_min_ns", "offline_mean_ns",
        "offline_max_ns", "online_n", "online_min_ns", "online_mean_ns", "online_max_ns"}},
      {"points", std::move(points)}};
}

nlohmann::json Timeline::StateToJson() const {
  using nlohmann::json;
  json points = json::array();
  for (const Point& p : points_) {
    json row = {p.first_index, p.first_start_ns, p.ops, p.failed};
    for (const DirStats& s : p.dir) {
      row.push_back(s.n);
      row.push_back(s.min_ns);
      row.push_back(s.max_ns);
      row.push_back(s.sum_ns);
    }
    points.push_back(std::move(row));
  }
  return json{{"ops_per_point", ops_per_point_}, {"points", std::move(points)}};
}

bool Timeline::StateFromJson(const nlohmann::json& j, std::string* err) {
  auto fail = [&](const std::string& m) {
    *err = "timeline: " + m;
    return false;
  };
  if (!j.is_object() || !j.contains("ops_per_point") || !j["ops_per_point"].is_number_unsigned() ||
      j["ops_per_point"].get<uint64_t>() == 0 || !j.contains("points") || !j["points"].is_array())
    return fail("expected {\"ops_per_point\" >= 1, \"points\": [...]}");
  const auto& rows = j["points"];
  if (rows.size() > kMaxPoints)
    return fail("more than " + std::to_string(kMaxPoints) + " points");
  std::vector<Point> points;
  for (size_t i = 0; i < rows.size(); i++) {
    const auto& r = rows[i];
    bool ok = r.is_array() && r.size() == 12;
    for (size_t k = 0; ok && k < 12; k++)
      ok = (k == 7 || k == 11) ? r[k].is_number() && r[k].get<double>() >= 0
                               : r[k].is_number_unsigned();
    if (!ok)
      return fail("points[" + std::to_string(i) + "]: expected 12 non-negative numbers");
    Point p;
    p.first_index = r[0].get<uint64_t>();
    p.first_start_ns = r[1].get<uint64_t>();
    p.ops = r[2].get<uint64_t>();
    p.failed = r[3].get<uint64_t>();
    for (size_t d = 0; d < kDirections; d++) {
      p.dir[d].n = r[4 + d * 4].get<uint64_t>();
      p.dir[d].min_ns = r[5 + d * 4].get<uint64_t>();
      p.dir[d].max_ns = r[6 + d * 4].get<uint64_t>();
      p.dir[d].sum_ns = r[7 + d * 4].get<double>();
    }
    if (p.ops == 0 || p.failed + p.dir[0].n + p.dir[1].n != p.ops)
      return fail("points[" + std::to_string(i) + "]: counts do not add up");
    points.push_back(p);
  }
  ops_per_point_ = j["ops_per_point"].get<uint64_t>();
  points_ = std::move(points);
  return true;
}

}  // namespace cpuhp
